"""Schur screening against brute force (tests/brute.py): a removed feature is in no support above the
level, screening at a level below OPT keeps every optimal support, and the screening bound is ≥ OPT and
proves it, with zero tolerance, signed and nonnegative, on tied optima and strongly negative correlations."""

from itertools import combinations

import numpy as np
import pytest

from certpca.certification import certify_vector
from certpca.certification.screening import screening_bound, threshold_test
from certpca.problem import Problem
from certpca.solvers.exact import exact, quick_pass, schur_prunes
from certpca.solvers.search import screen
from tests.brute import brute_force, random_psd

FAMILIES = ["wishart", "spiked", "lowrank", "posfactor", "tied", "negative"]


def _problems(n, seed):
    rng = np.random.default_rng(seed)
    for i in range(n):
        fam = FAMILIES[i % len(FAMILIES)]
        nonneg = bool((i // len(FAMILIES)) % 2)
        D = int(rng.integers(5, 10))
        k = int(rng.integers(2, min(5, D)))
        C = random_psd(rng, D, fam)
        yield fam, nonneg, D, k, C


def _best_containing(C, k, nonneg, i):
    """max of wᵀCw over unit w with supp(w) ⊆ S for some S ∋ i, |S| ≤ k (and w ≥ 0): by brute force."""
    D = C.shape[0]
    best = -np.inf
    for S in combinations([j for j in range(D) if j != i], min(k, D) - 1):
        S = sorted((i, *S))
        sub = C[np.ix_(S, S)]
        best = max(best, brute_force(sub, len(S), True)[0] if nonneg else float(np.linalg.eigvalsh(sub)[-1]))
    return best


PROBLEMS = list(_problems(240, 20261126))


def test_a_removed_feature_is_in_no_support_above_the_level():
    """The lemma, feature by feature, for the node Schur test and the quick O(D) test: at levels just below
    (1 − 1e-7) and well below the best value over supports containing i, and at OPT's fractions, a removal
    must never happen where such a support is above the level (zero tolerance); and removals do happen."""
    wrong, removed, quick, tests = [], 0, 0, 0
    for fam, nonneg, D, k, C in PROBLEMS:
        opt = brute_force(C, k, nonneg)[0]
        for i in range(D):
            best_i = _best_containing(C, k, nonneg, i)
            for level in (best_i * (1 - 1e-7), best_i * 0.98, opt * 0.995, opt, opt * 1.02):
                if not C[i, i] < level:
                    continue
                order = [i] + [j for j in range(D) if j != i]
                A = C[np.ix_(order, order)]
                tests += 1
                if schur_prunes(A, 1, k - 1, level, nonneg):
                    removed += 1
                    if best_i > level:
                        wrong.append((fam, nonneg, D, k, i, level, best_i))
                if i not in quick_pass(C, list(range(D)), k, level):
                    quick += 1
                    if best_i > level:
                        wrong.append(("quick", fam, nonneg, D, k, i, level, best_i))
    assert not wrong, wrong[:5]
    assert removed > tests // 10 and quick > tests // 20, (removed, quick, tests)


def test_screening_below_opt_keeps_every_optimal_support():
    """Screening (all passes, the threshold family included) at a level below OPT keeps every feature of
    every support whose value is above the level, in particular of every optimal support (tied ones too)."""
    lost = []
    for fam, nonneg, D, k, C in PROBLEMS:
        opt = brute_force(C, k, nonneg)[0]
        for level in (opt * (1 - 1e-7), opt * 0.99):
            F = set(screen(C, k, nonneg, level, extra=threshold_test)[0].tolist())
            for i in range(D):
                if i not in F and _best_containing(C, k, nonneg, i) > level:
                    lost.append((fam, nonneg, D, k, i, level))
    assert not lost, lost[:5]


def test_tied_optima_are_all_kept():
    """Two identical blocks: the optimal support and its twin both survive screening below OPT."""
    rng = np.random.default_rng(3)
    C = random_psd(rng, 8, "tied")
    opt, w = brute_force(C, 3, False)
    S = np.flatnonzero(w)
    twin = (S + 4) % 8
    F = screen(C, 3, False, opt * (1 - 1e-9), extra=threshold_test)[0]
    assert set(S) <= set(F) and set(twin) <= set(F)


@pytest.mark.parametrize("nonneg", [False, True])
def test_screening_bound_is_valid_and_proves_the_optimum(nonneg):
    """The bound is ≥ the brute-force OPT (zero tolerance) and, proven, within 1e-8 of it, with a vector of
    that value; on factor problems (N < D) too.  It is proven wherever screening removed a feature (else it
    leaves the search to the bound ``exact``)."""
    rng = np.random.default_rng(11 if nonneg else 12)
    bad, proven, screened = [], 0, 0
    for i, (fam, _, D, k, C) in enumerate(_problems(120, 7 + nonneg)):
        if i % 4 == 0:
            X = rng.standard_normal((max(2, D // 2), D)) @ np.linalg.cholesky(C + 1e-9 * np.eye(D)).T
            P = Problem.from_data(X)
            C = P.dense()
        else:
            P = Problem.from_covariance(C)
        opt = brute_force(C, k, nonneg)[0]
        b = screening_bound(P, k, nonneg)
        if not b.value >= opt:
            bad.append((fam, D, k, opt, b.value))
        screened += b.params["survivors"] < D
        if b.params["proven"]:
            proven += 1
            w = np.asarray(b.params["weights"])
            assert np.count_nonzero(w) <= k and (not nonneg or w.min() >= 0)
            assert w @ C @ w == pytest.approx(opt, rel=1e-8)
            assert b.value <= opt * (1 + 1e-8) + 1e-12
    assert not bad, bad[:5]
    assert proven == screened > 60


def test_default_certificate_screens_and_says_what_is_left():
    """A planted sparse spike among 60 features: the default certificate's screening leaves few features and
    proves the optimum, which the exact search over all 60 features (no screening) confirms."""
    rng = np.random.default_rng(4)
    D, k = 60, 5
    u = np.zeros(D)
    u[[3, 17, 29, 41, 55]] = [1.0, -1.0, 1.0, 1.0, -1.0]
    A = rng.standard_normal((3 * D, D))
    C = 6 * np.outer(u, u) / 5 + A.T @ A / (3 * D)
    P = Problem.from_covariance(C)
    full = exact(P, k)
    assert full.proven
    w = np.zeros(D)
    w[[3, 17, 29, 41]] = u[[3, 17, 29, 41]]  # a worse vector: the certificate must not need the optimum
    cert = certify_vector(P, w, k)
    b = next(b for b in cert.bounds if b.name == "screening")
    assert b.params["proven"] and b.params["survivors"] < D
    assert full.value <= b.value <= full.value * (1 + 1e-8)
    assert f"{b.params['survivors']} of {D} features left" in str(cert)


def _recorded(spec, calls):
    def func(problem, k, nonneg=False, **kw):
        calls.append((spec.name, nonneg))
        return spec.func(problem, k, nonneg, **kw)

    return func


@pytest.mark.parametrize("nonneg", [False, True])
def test_on_a_factor_problem_screening_first_runs_before_the_sdps_and_proves_the_optimum(nonneg, monkeypatch):
    """A planted sparse spike, 60 features and 40 samples (C held as a factor, where screening forms C and
    comes last): its first run, before the semidefinite programs, proves the optimum the exact search over all
    60 features (no screening) finds, and no costlier bound runs; on the dense problem it has no first run
    (it comes before the semidefinite programs already)."""
    import dataclasses

    from certpca.certification import REGISTRY, default_bounds
    from certpca.certification.schedule import first_runs

    rng = np.random.default_rng(4)
    D, k = 60, 5
    u = np.zeros(D)
    u[[3, 17, 29, 41, 55]] = 1.0
    X = rng.standard_normal((40, D)) + 3 * rng.standard_normal((40, 1)) * u / np.sqrt(5)
    P = Problem.from_data(X - X.mean(0))
    dense = Problem.from_covariance(P.dense())
    assert P.uses_factor and "screening" in first_runs(default_bounds(P, nonneg), P, nonneg)
    assert "screening" not in first_runs(default_bounds(dense, nonneg), dense, nonneg)
    full = exact(dense, k, nonneg)
    assert full.proven
    w = np.zeros(D)
    w[[3, 17, 29, 41]] = 1.0  # a worse vector: the certificate must not need the optimum
    calls = []  # (bound, nonneg) of every bound function the certificate calls, in order
    for name, spec in list(REGISTRY.items()):
        monkeypatch.setitem(REGISTRY, name, dataclasses.replace(spec, func=_recorded(spec, calls)))
    cert = certify_vector(P, w, k, nonneg, budget=60.0)
    assert cert.bounds[-1].name == "screening" and cert.bounds[-1].params["proven"]
    # for w ≥ 0 the threshold bound's search on its one component reaches the optimum too, a few ulps lower
    assert cert.winner == "screening" or (nonneg and cert.winner == "threshold")
    assert calls[-1] == ("screening", nonneg)  # nothing after the proof, nor a signed twin for w ≥ 0
    assert full.value <= cert.upper_bound <= full.value * (1 + 1e-8)
    assert cert.skipped["dabe_sdp"] == "the optimum is proven (no bound can be lower)"


def test_a_certificate_charges_each_quick_pass_of_screening_once(monkeypatch):
    """Screening's first quick pass is in its estimate, which the certificate charges before it starts; screen()
    then charges only the passes after it (before, the first was charged twice: 0.1 s of work on khan).  Charges of
    a quick pass (calls of ``quick_pass_seconds`` by the estimate and by screen()) are counted beside the quick
    passes screen() makes (calls of ``quick_pass``); the solver ``exact``, charged nothing up front, charges them
    all itself."""
    import certpca.certification.screening as scr
    import certpca.solvers.search as search
    from certpca.solvers import solve

    charged, made = [], []
    real_seconds, real_pass = search.quick_pass_seconds, search.quick_pass

    def seconds(n):
        charged.append(n)
        return real_seconds(n)

    def counted(C, F, k, level):
        made.append(len(F))
        return real_pass(C, F, k, level)

    monkeypatch.setattr(scr, "quick_pass_seconds", seconds)
    monkeypatch.setattr(search, "quick_pass_seconds", seconds)
    monkeypatch.setattr(search, "quick_pass", counted)
    rng = np.random.default_rng(4)
    D, k = 60, 5
    u = np.zeros(D)
    u[[3, 17, 29, 41, 55]] = [1.0, -1.0, 1.0, 1.0, -1.0]
    A = rng.standard_normal((3 * D, D))
    P = Problem.from_covariance(6 * np.outer(u, u) / 5 + A.T @ A / (3 * D))
    w = np.zeros(D)
    w[[3, 17, 29, 41]] = u[[3, 17, 29, 41]]
    cert = certify_vector(P, w, k, bounds=["lambda1", "screening"], budget=60.0)
    assert next(b for b in cert.bounds if b.name == "screening").params["passes"] >= 2
    assert len(made) >= 2 and sorted(charged) == sorted(made)  # each pass charged once, at its own size
    charged.clear(), made.clear()
    solve(P, k, method="exact")
    assert len(made) >= 2 and charged == made
