"""EM (Sigg & Buhmann 2008) against the brute-force optimum, closed forms and published optima."""

import warnings

import numpy as np
import pandas as pd
import pytest

from certpca.errors import ConvergenceWarning
from certpca.problem import Problem
from certpca.solvers import get, solve
from certpca.solvers.base import top_k
from certpca.solvers.em import em_step
from certpca.solvers.renormalize import renormalize
from tests.brute import brute_force, random_psd

FAMILIES = ["wishart", "spiked", "lowrank", "posfactor"]
# Berk & Bertsimas (2019), certifiably optimal sparse PCA on pit props, k = 1..13.
PITPROPS_OPT = [1.000, 1.954, 2.475, 2.937, 3.406, 3.771, 3.996, 4.069, 4.139, 4.173, 4.208, 4.218, 4.219]


def pitprops():
    C = pd.read_csv("data/pitprops.csv", index_col=0)
    return Problem.from_covariance(C.to_numpy(float), feature_ids=list(C.columns))


@pytest.mark.parametrize("nonneg", [False, True])
def test_em_near_brute_force_and_feasible(nonneg):
    rng = np.random.default_rng(2026)
    ratios = []
    for trial in range(60):
        D = int(rng.integers(5, 11))
        k = int(rng.integers(1, D))
        C = random_psd(rng, D, FAMILIES[trial % 4])
        opt, _ = brute_force(C, k, nonneg)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            comp = solve(Problem.from_covariance(C), k, nonneg=nonneg, rng=np.random.default_rng(trial))
        w = comp.weights
        assert np.count_nonzero(w) <= k
        assert np.isclose(np.linalg.norm(w), 1.0)
        if nonneg:
            assert np.all(w >= 0)
        else:
            assert np.count_nonzero(w) == k  # exact cardinality for sparse PCA
        assert comp.variance <= opt * (1 + 1e-9)
        assert np.isclose(comp.variance, w @ C @ w)
        ratios.append(comp.variance / opt)
    print(
        f"\nEM / brute-force OPT ({'nonneg' if nonneg else 'sparse'}): "
        f"mean {np.mean(ratios):.4f}, min {np.min(ratios):.4f} over {len(ratios)} problems"
    )
    assert np.mean(ratios) >= 0.95


def test_em_with_k_equal_d_is_the_power_method():
    rng = np.random.default_rng(5)
    for D in (4, 8, 12):
        C = random_psd(rng, D, "wishart")
        lam1 = np.linalg.eigvalsh(C)[-1]
        comp = solve(
            Problem.from_covariance(C), D, renormalize_support=False, tol=1e-15, max_iter=100_000, stable_support=None
        )
        assert abs(comp.variance - lam1) <= 1e-8 * lam1


def test_tied_magnitudes_choose_the_lowest_indices():
    # w* proportional to the all-ones vector: every entry ties; the lowest indices win.
    C = np.ones((6, 6)) + np.eye(6)
    new, support = em_step(Problem.from_covariance(C), np.ones(6) / np.sqrt(6), 3, False)
    assert list(np.sort(support)) == [0, 1, 2]
    first, again = (solve(Problem.from_covariance(C), 3) for _ in range(2))
    np.testing.assert_array_equal(first.weights, again.weights)
    assert first.cardinality == 3
    assert np.isclose(first.variance, 4.0)  # λmax of ones(3) + I


def test_renormalisation_never_lowers_variance_and_keeps_sign():
    rng = np.random.default_rng(11)
    for trial in range(40):
        C = random_psd(rng, 9, FAMILIES[trial % 4])
        P = Problem.from_covariance(C)
        for nonneg in (False, True):
            kw = dict(nonneg=nonneg, restarts=3)
            raw = solve(P, 4, renormalize_support=False, rng=np.random.default_rng(trial), **kw)
            ref = solve(P, 4, renormalize_support=True, rng=np.random.default_rng(trial), **kw)
            assert ref.variance >= raw.variance - 1e-12
            if nonneg:
                assert np.all(ref.weights >= 0)


def test_data_and_covariance_routes_agree():
    rng = np.random.default_rng(3)
    for n, d in ((40, 9), (8, 30)):  # N > D (dense) and D > N (factor, Gram trick)
        X = rng.standard_normal((n, d)) @ rng.standard_normal((d, d))
        X -= X.mean(0)
        by_data = Problem.from_data(X)
        by_cov = Problem.from_covariance(X.T @ X / (n - 1))
        assert by_data.uses_factor == (d > n)
        for nonneg in (False, True):
            a = solve(by_data, 5, nonneg=nonneg, rng=np.random.default_rng(1))
            b = solve(by_cov, 5, nonneg=nonneg, rng=np.random.default_rng(1))
            assert np.isclose(a.variance, b.variance, rtol=1e-9)
            np.testing.assert_allclose(a.weights, b.weights, atol=1e-7)


def test_pitprops_path_below_and_near_published_optima():
    P = pitprops()
    for k, opt in enumerate(PITPROPS_OPT, start=1):
        comp = solve(P, k)
        assert comp.cardinality == k
        assert comp.variance <= opt + 5e-4  # published to 3 decimals
        assert comp.variance >= 0.98 * opt, f"k={k}: {comp.variance:.4f} vs {opt}"


def test_nonnegative_restarts_are_seeded():
    rng = np.random.default_rng(8)
    P = Problem.from_covariance(random_psd(rng, 12, "wishart"))
    a = solve(P, 4, nonneg=True, rng=np.random.default_rng(42))
    b = solve(P, 4, nonneg=True, rng=np.random.default_rng(42))
    np.testing.assert_array_equal(a.weights, b.weights)
    assert a.options["starts"] == 10 + 2 + 1 + 1  # restarts, the positive parts of ±PC1, e_j, the floor's vector


def test_non_convergence_warns_with_advice():
    P = Problem.from_covariance(random_psd(np.random.default_rng(0), 10, "wishart"))
    with pytest.warns(ConvergenceWarning, match="raise max_iter") as record:
        solve(P, 3, max_iter=1)
    # every start's warning (the floor's too) points at the caller's line
    assert {r.filename for r in record if r.category is ConvergenceWarning} == {__file__}


def test_unknown_option_is_an_input_error():
    from certpca.errors import InputError

    P = Problem.from_covariance(np.eye(3))
    with pytest.raises(InputError, match="no option"):
        solve(P, 2, tolerance=1)


def test_top_k_hint_changes_nothing():
    """A hint (any ≥ k distinct indices) gives the same indices and (k+1)-th value as a full sort."""
    rng = np.random.default_rng(3)
    for trial in range(300):
        n = int(rng.integers(8, 60))
        k = int(rng.integers(1, n))
        values = rng.integers(0, 6, n).astype(float) if trial % 2 else rng.standard_normal(n) ** 2
        order = np.lexsort((np.arange(n), -values))  # the truth: largest first, ties to the lower index
        hint = rng.choice(n, size=int(rng.integers(k, max(k + 1, n // 2))), replace=False)
        for h in (None, hint, order[:k], order[k : 2 * k] if 2 * k <= n else hint):
            if h is not None and len(h) < k:
                continue
            chosen, below = top_k(values, k, h)
            assert set(chosen) == set(order[:k])
            assert below == values[order[k]]


@pytest.mark.parametrize("nonneg", [False, True])
def test_renormalize_cache_gives_the_uncached_refit(nonneg):
    """One eigenproblem per support: a cached refit equals a fresh one, from any start on that support."""
    rng = np.random.default_rng(8)
    X = rng.standard_normal((10, 40))
    for P in (Problem.from_data(X - X.mean(0)), Problem.from_covariance(random_psd(rng, 40, "wishart"))):
        cache: dict = {}
        for _trial in range(20):
            support = rng.choice(40, size=int(rng.integers(1, 25)), replace=False)
            w = np.zeros(40)
            w[support] = np.abs(rng.standard_normal(support.size)) if nonneg else rng.standard_normal(support.size)
            w /= np.linalg.norm(w)
            fresh, value = renormalize(P, w, support, nonneg)
            cached, cached_value = renormalize(P, w, support[::-1], nonneg, cache=cache)
            again, _ = renormalize(P, w, support, nonneg, cache=cache)
            np.testing.assert_allclose(cached, fresh, atol=1e-10)
            np.testing.assert_array_equal(again, cached)
            assert value == pytest.approx(fresh @ P.dense() @ fresh, rel=1e-10) and cached_value == value
            assert value >= P.variance(w) * (1 - 1e-12)
            if not nonneg:  # the top eigenvalue of C_SS
                assert value == pytest.approx(np.linalg.eigvalsh(P.dense()[np.ix_(support, support)])[-1], rel=1e-9)


@pytest.fixture(scope="module")
def khan_scaled():
    from certpca import datasets
    from certpca.data import prepare

    return prepare(datasets.load("khan"), scale=True).problem()


def test_a_cold_fit_also_starts_from_the_thresholded_first_pc(khan_scaled):
    """On standardised khan (k = 10) EM from PC1 and e_j stops 6.5 % below EM from the refitted
    thresholded PC1 (Cadima & Jolliffe's answer), which a cold fit therefore also starts from."""
    P, k = khan_scaled, 10
    pc = P.first_pc()
    S = np.sort(np.argsort(-np.abs(pc))[:k])
    vals, vecs = np.linalg.eigh(P.submatrix(S))  # the refit on the thresholded support
    start = np.zeros(P.dim)
    start[S] = vecs[:, -1]
    em = get("em")
    run = em.run(P, k, False, start, **em.defaults)
    from_floor = renormalize(P, run.weights, run.support, False)[1]
    own = solve(P, k, starts=em.starts(P, False, None, 0))  # PC1 and e_j alone, as before
    fit = solve(P, k)
    assert from_floor > 1.05 * own.variance
    assert fit.variance >= from_floor * (1 - 1e-12)
    assert fit.options["starts"] == 3


def test_more_restarts_never_give_less_variance(khan_scaled):
    """Nonnegative k = 5: the 10 random starts once ended below ±PC1 alone (3.845 against 4.102),
    because EM ran from the floor's vector only when the floor beat every start."""
    few = solve(khan_scaled, 5, nonneg=True, restarts=0, rng=0)
    many = solve(khan_scaled, 5, nonneg=True, restarts=10, rng=0)
    assert many.variance >= few.variance * (1 - 1e-12)
    assert few.variance > 4.1


def test_nonnegative_fits_also_start_from_the_best_single_feature():
    """Raw alon (centred), k = 3: nonnegative EM from ±PC1 stops at about half of what it reaches from
    e_j, the feature of largest variance (a start the signed fit always had)."""
    from certpca import datasets

    P = datasets.load("alon").problem()
    em = get("em")
    e = np.zeros(P.dim)
    e[np.argmax(P.diag)] = 1.0
    run = em.run(P, 3, True, e, **em.defaults)
    from_e = renormalize(P, run.weights, run.support, True)[1]
    from_pc = solve(P, 3, nonneg=True, starts=em.starts(P, True, None, 0)[:-1])  # ±PC1
    fit = solve(P, 3, nonneg=True)
    assert from_e > 1.5 * from_pc.variance
    assert fit.variance >= from_e * (1 - 1e-12)
