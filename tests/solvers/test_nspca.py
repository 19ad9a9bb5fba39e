"""NSPCA (Zass & Shashua 2006) against grids, closed forms and the brute-force nonnegative optimum."""

import warnings

import numpy as np
import pytest

from certpca.errors import InputError
from certpca.problem import Problem
from certpca.solvers import REGISTRY, solve
from certpca.solvers.nspca import (
    _State,
    best_nonneg,
    nspca,
    nspca_at_cardinality,
    objective,
    quartic,
)
from tests.brute import brute_force, random_psd

FAMILIES = ["wishart", "spiked", "lowrank", "posfactor"]


def test_update_is_the_global_nonnegative_maximiser_of_the_quartic():
    """Eq. (4)/(5): compare with a dense grid on [0, ub], beyond which f < 0 = f(0)."""
    rng = np.random.default_rng(0)
    three_real, interior = 0, 0
    for _ in range(3000):
        alpha = 10 ** rng.uniform(-2, 2)
        c2 = rng.standard_normal() * 10 ** rng.uniform(-1, 2)
        c1 = rng.standard_normal() * 10 ** rng.uniform(-1, 2)
        p, q = -c2 / alpha, -c1 / alpha
        three_real += (q / 2) ** 2 + (p / 3) ** 3 < 0
        # (α/8)u⁴ dominates (|c2|/2)u² once u² ≥ 4|c2|/α and |c1|u once u³ ≥ 8|c1|/α.
        ub = 1.5 * max(np.sqrt(4 * abs(c2) / alpha), np.cbrt(8 * abs(c1) / alpha), 1e-3)
        grid = np.linspace(0.0, ub, 20001)
        fg = quartic(grid, alpha, c2, c1).max()
        u = best_nonneg(alpha, c2, c1)
        interior += u > 0
        assert u >= 0
        assert quartic(u, alpha, c2, c1) >= fg - 1e-12 * max(1.0, abs(fg))
        # the grid's best point is close to u unless two maxima are (nearly) tied
        grid_u = grid[np.argmax(quartic(grid, alpha, c2, c1))]
        if abs(quartic(grid_u, alpha, c2, c1) - quartic(0.0, alpha, c2, c1)) > 1e-3 * max(1, abs(fg)):
            assert abs(grid_u - u) <= 2 * ub / 20000 + 1e-9
    assert three_real > 500 and interior > 500  # both cubic branches, both kinds of answer


def test_three_real_roots_with_the_far_root_winning():
    # f'(u) = −u³ + 3u + 1: roots ≈ −1.53, −0.35, 1.88; f(1.88) > 0 = f(0).
    u = best_nonneg(1.0, 3.0, 1.0)
    assert np.isclose(-(u**3) + 3 * u + 1, 0, atol=1e-12) and np.isclose(u, 1.8793852415718)
    # c1 < 0 and the positive local maximum is below f(0) = 0: stay at 0.
    assert best_nonneg(1.0, 1.0, -0.5) == 0.0


def _problem(rng, D, family, factor=False):
    C = random_psd(rng, D, family)
    if factor:
        vals, vecs = np.linalg.eigh(C)
        keep = vals > 1e-12 * vals[-1]
        return Problem(factor=(vecs[:, keep] * np.sqrt(vals[keep])).T), C
    return Problem.from_covariance(C), C


@pytest.mark.parametrize("L", [1, 3])
def test_output_nonnegative_and_objective_monotone(L):
    rng = np.random.default_rng(1)
    for trial in range(12):
        P, C = _problem(rng, 15, FAMILIES[trial % 4])
        lam = np.linalg.eigvalsh(C)[-1]
        for beta in (0.0, 0.05 * lam, 0.3 * lam):
            U, info = nspca(P, L, alpha=lam, beta=beta, rng=np.random.default_rng(trial), trace=True)
            assert U.shape == (15, L) and np.all(U >= 0)
            f = np.array(info["objectives"])
            assert np.all(np.diff(f) >= -1e-12 * max(1.0, abs(f).max()))
            # cached objective equals eq. (3) evaluated from scratch with the dense C
            G = U.T @ U
            direct = 0.5 * np.trace(U.T @ C @ U) - lam / 4 * np.sum((np.eye(L) - G) ** 2) - beta * U.sum()
            assert np.isclose(info["objective"], direct, rtol=1e-10, atol=1e-12)
            assert np.isclose(objective(P, U, lam, beta), direct, rtol=1e-10, atol=1e-12)


def test_factor_path_equals_dense_path():
    """C held as FᵀF (D > N) gives the same iterates as the dense matrix."""
    rng = np.random.default_rng(2)
    X = rng.standard_normal((8, 20))
    dense = Problem.from_covariance(X.T @ X / 7)
    factor = Problem.from_data(X)
    assert factor.uses_factor and not dense.uses_factor
    for L, beta in ((1, 0.0), (2, 0.1)):
        init = np.abs(np.random.default_rng(3).standard_normal((20, L)))
        Ud, _ = nspca(dense, L, alpha=2.0, beta=beta, init=init, max_iter=50)
        Uf, _ = nspca(factor, L, alpha=2.0, beta=beta, init=init, max_iter=50)
        np.testing.assert_allclose(Ud, Uf, rtol=1e-8, atol=1e-10)


def test_beta_zero_single_component_reaches_the_closed_form():
    """With L = 1, β = 0 and a positive PC1 v: u = √(1 + λ₁/α) v, F = λ₁/2 + λ₁²/(4α)."""
    rng = np.random.default_rng(4)
    for trial in range(6):
        C = random_psd(rng, 12, "posfactor")  # entrywise positive: Perron PC1 > 0
        vals, vecs = np.linalg.eigh(C)
        lam, v = vals[-1], np.abs(vecs[:, -1])
        alpha = lam * (0.5 + trial)
        U, info = nspca(
            Problem.from_covariance(C),
            1,
            alpha=alpha,
            beta=0.0,
            rng=np.random.default_rng(trial),
            tol=1e-15,
            max_iter=20000,
        )
        u = U[:, 0]
        assert np.isclose(u @ C @ u / (u @ u), lam, rtol=1e-9)
        assert np.isclose(u @ u, 1 + lam / alpha, rtol=1e-6)
        assert np.isclose(info["objective"], lam / 2 + lam**2 / (4 * alpha), rtol=1e-9)
        np.testing.assert_allclose(u / np.linalg.norm(u), v, atol=1e-5)


def test_large_alpha_makes_components_nearly_orthonormal():
    """Eq. (2): raising α drives ‖I − UᵀU‖ down (Zass & Shashua, Fig. 3a)."""
    rng = np.random.default_rng(5)
    P, _ = _problem(rng, 20, "posfactor")
    lam = P.eigenvalues()[0]
    gaps = []
    for mult in (0.3, 3.0, 30.0):
        U, _ = nspca(P, 3, alpha=mult * lam, rng=np.random.default_rng(0), max_iter=3000)
        gaps.append(np.linalg.norm(np.eye(3) - U.T @ U))
    assert gaps[0] > gaps[1] > gaps[2] and gaps[2] < 0.05


def test_bisection_reaches_cardinalities_or_reports_them():
    rng = np.random.default_rng(6)
    X = rng.standard_normal((60, 40)) + 0.8 * rng.standard_normal((60, 1)) * np.abs(rng.standard_normal(40))
    P = Problem.from_data(X - X.mean(0))
    targets = list(range(1, 41, 3))
    results, unreached = nspca_at_cardinality(P, targets, alpha=P.eigenvalues()[0], rng=np.random.default_rng(0))
    assert sorted(results) == targets
    for k, (U, info) in results.items():
        nnz = np.count_nonzero(U)
        assert np.all(U >= 0) and nnz == info["cardinality"]
        if info["reached"]:
            assert nnz == k and k not in unreached
        else:
            assert nnz < k and k in unreached
    dense0 = nspca(P, 1, alpha=P.eigenvalues()[0], rng=np.random.default_rng(0))[1]["cardinality"]
    # every target up to the β = 0 cardinality is reached except at most one jump
    below = [k for k in targets if k <= dense0]
    assert len(set(below) & set(unreached)) <= 1, (dense0, unreached)
    # above it β ≥ 0 cannot add entries: those are reported, not faked
    assert all(k in unreached for k in targets if k > dense0)
    # a single target returns (U, info)
    U, info = nspca_at_cardinality(P, 10, alpha=P.eigenvalues()[0], rng=np.random.default_rng(0))
    assert info["target"] == 10 and (np.count_nonzero(U) == 10) == info["reached"]


def test_single_component_never_beats_brute_force():
    rng = np.random.default_rng(7)
    ratios = []
    for trial in range(24):
        D = int(rng.integers(5, 10))
        k = int(rng.integers(1, D))
        C = random_psd(rng, D, FAMILIES[trial % 4])
        opt, _ = brute_force(C, k, nonneg=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            comp = solve(
                Problem.from_covariance(C), k, method="nspca", nonneg=True, rng=np.random.default_rng(trial), restarts=3
            )
        w = comp.weights
        assert np.all(w >= 0) and np.count_nonzero(w) <= k
        assert np.isclose(np.linalg.norm(w), 1.0)
        assert comp.variance <= opt * (1 + 1e-9)
        ratios.append(comp.variance / opt)
    print(f"\nNSPCA / brute-force nonneg OPT: mean {np.mean(ratios):.4f}, min {np.min(ratios):.4f}")
    assert np.mean(ratios) > 0.8


def test_plugin_is_registered_and_nonnegative_only():
    assert REGISTRY["nspca"].sparse and REGISTRY["nspca"].nonneg
    P = Problem.from_covariance(np.eye(4) + 1)
    with pytest.raises(InputError, match="nonnegative"):
        solve(P, 2, method="nspca", nonneg=False)
    with pytest.raises(InputError, match="alpha"):
        nspca(P, 1, alpha=0.0)
    C = np.array([[3.0, 1.0, 0.0], [1.0, 3.0, -0.5], [0.0, -0.5, 1.0]])
    comp = solve(Problem.from_covariance(C), 2, method="nspca", nonneg=True, restarts=2)
    assert comp.cardinality == 2 and comp.extras["reached"]
    assert np.isclose(comp.variance, brute_force(C, 2, nonneg=True)[0])  # support {0, 1}: 4
    # an exchangeable C: every entry drops at the same β, so nnz jumps 4 → 1 and k = 2 is reported;
    # the driver's floor (thresholded PC1, here the optimum) then replaces NSPCA's single feature
    comp = solve(P, 2, method="nspca", nonneg=True, restarts=1)
    assert not comp.extras["reached"] and "below the thresholded first principal component" in comp.extras["floor"]
    assert comp.cardinality == 2 and np.isclose(comp.variance, brute_force(np.eye(4) + 1, 2, nonneg=True)[0])


# ----------------------------------------------- the compiled sweep vs eq. (4)/(5) written out
def _reference_sweep(A, U, alpha, beta, entries):
    """One pass of Algorithm 1 straight from eq. (4)/(5): c₁, c₂ from the dense A and U for every entry,
    the cubic's roots from numpy.roots, the best of 0, the current value and the nonnegative roots."""
    U = U.copy()
    L = U.shape[1]
    for s, r in entries:
        others = np.arange(U.shape[0]) != s
        c1 = A[s, others] @ U[others, r] - beta
        c2 = A[s, s] + alpha - alpha * np.sum(U[others, r] ** 2)
        for q in range(L):
            if q != r:
                c1 -= alpha * U[s, q] * (U[others, r] @ U[others, q])
                c2 -= alpha * U[s, q] ** 2
        roots = np.roots([-alpha, 0.0, c2, c1])
        cands = [0.0]
        for t in roots:
            if abs(t.imag) < 1e-6 * max(1, abs(t)) and t.real > 0:
                t = t.real
                for _ in range(3):  # np.roots is inaccurate near a double root: polish with Newton
                    d2 = -3 * alpha * t * t + c2
                    t = t - (-alpha * t**3 + c2 * t + c1) / d2 if d2 != 0 else t
                cands.append(t)
        best = U[s, r] if quartic(U[s, r], alpha, c2, c1) >= 0 else 0.0
        for t in cands:
            if quartic(t, alpha, c2, c1) > quartic(best, alpha, c2, c1):  # the current value wins ties
                best = t
        U[s, r] = best
    return U


@pytest.mark.parametrize("factor", [False, True])
@pytest.mark.parametrize("L", [1, 3])
def test_compiled_sweep_equals_the_reference_sweep(factor, L):
    """The cached, compiled sweep (dense A or factor F) against eq. (4)/(5) evaluated from scratch."""
    rng = np.random.default_rng(11)
    for trial in range(8):
        D = int(rng.integers(6, 14))
        P, C = _problem(rng, D, FAMILIES[trial % 4], factor=factor)
        assert P.uses_factor == factor
        lam = np.linalg.eigvalsh(C)[-1]
        alpha, beta = lam * rng.uniform(0.3, 3), lam * rng.uniform(0, 0.3)
        U0 = np.abs(rng.standard_normal((D, L))) * (rng.random((D, L)) < 0.7)
        st = _State(P, U0)
        f0 = st.objective(alpha, beta)
        for _sweep in range(3):  # several passes: the caches carry over between them
            want = _reference_sweep(C, st.U, alpha, beta, [(s, r) for r in range(L) for s in range(D)])
            _, gain = st.sweep(alpha, beta)
            np.testing.assert_allclose(st.U, want, rtol=1e-8, atol=1e-10)
            np.testing.assert_allclose(st.G, st.U.T @ st.U, rtol=1e-10, atol=1e-10)
            f1 = objective(P, st.U, alpha, beta)
            assert np.isclose(f1 - f0, gain, rtol=1e-7, atol=1e-9 * max(1, abs(f1)))
            f0 = f1
        # the active-set pass: the nonzero entries only, in the same order
        support = st.support()
        want = _reference_sweep(C, st.U, alpha, beta, [tuple(e) for e in support])
        st.sweep(alpha, beta, support)
        np.testing.assert_allclose(st.U, want, rtol=1e-8, atol=1e-10)


def test_active_set_sweeps_reach_a_fixed_point_of_full_sweeps():
    """The stop is a full sweep that changes (almost) nothing, with or without active-set sweeps."""
    rng = np.random.default_rng(12)
    P, C = _problem(rng, 30, "spiked")
    lam = np.linalg.eigvalsh(C)[-1]
    for active in (True, False):
        U, info = nspca(
            P, 2, alpha=lam, beta=0.1 * lam, rng=np.random.default_rng(0), active=active, tol=1e-13, max_iter=5000
        )
        assert info["converged"]
        again = _reference_sweep(C, U, lam, 0.1 * lam, [(s, r) for r in range(2) for s in range(30)])
        np.testing.assert_allclose(again, U, rtol=1e-5, atol=1e-7)
