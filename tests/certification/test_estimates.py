"""Searches steered by Lanczos estimates (numerics.lmax_estimate) still return valid bounds.

From LANCZOS_MIN rows the dabe, dspca, pattern and threshold searches over ρ evaluate an
estimate of λmax and bound only their best points.  Here the threshold is lowered: small
problems take that path and meet brute force with zero tolerance, and a planted problem
through ARPACK checks validity and that the search loses nothing.
"""

import numpy as np
import pytest

import certpca.certification.duals as duals
import certpca.certification.numerics as numerics
import certpca.certification.threshold as threshold
from certpca.certification.duals import dabe_bound, dspca_dual_bound, pattern_bound
from certpca.certification.lowrank import split_bound
from certpca.certification.numerics import ESTIMATE_FINALISTS, lmax_estimate, minimize_1d
from certpca.certification.threshold import threshold_bound
from certpca.clock import Deadline, Work
from certpca.problem import Problem
from tests.brute import brute_force, random_psd

BOUNDS = {
    "dabe": dabe_bound,
    "dspca": dspca_dual_bound,
    "pattern": pattern_bound,
    "split": split_bound,
    "threshold": threshold_bound,
}


def _lanczos_from(monkeypatch, n):
    for module in (numerics, duals, threshold):
        monkeypatch.setattr(module, "LANCZOS_MIN", n)


def test_minimize_1d_evaluates_the_bound_only_at_the_best_estimates():
    calls = []

    def f(x):
        calls.append(x)
        return (x - 0.3) ** 2 + 1.0

    def guess(x):  # a biased estimate whose minimiser is off f's
        return (x - 0.35) ** 2

    value, arg = minimize_1d(f, 0.0, 1.0, estimate=guess)
    assert len(calls) == ESTIMATE_FINALISTS
    assert value == f(arg) and arg in calls
    assert abs(arg - 0.35) < 0.01  # the point the estimate chose, bounded by f itself


def test_past_its_deadline_an_estimated_search_bounds_one_point():
    calls = []

    def f(x):
        calls.append(x)
        return x * x + 1.0

    value, arg = minimize_1d(f, -1.0, 1.0, estimate=lambda x: x * x, deadline=Deadline(0.0))
    assert len(calls) == 1 and value == f(arg)


def test_lmax_estimate_matches_lapack_on_array_and_operator():
    rng = np.random.default_rng(3)
    A = rng.standard_normal((400, 350)) * rng.uniform(0.1, 5, 350)
    M = A.T @ A
    exact = np.linalg.eigvalsh(M)[-1]
    assert abs(lmax_estimate(M) - exact) <= 1e-8 * exact
    import scipy.sparse.linalg as sla

    op = sla.LinearOperator(M.shape, matvec=lambda v: A.T @ (A @ v))
    assert abs(lmax_estimate(op) - exact) <= 1e-8 * exact
    assert lmax_estimate(np.zeros((350, 350))) >= 0.0  # M·v0 = 0: the fallback, not an ARPACK error


@pytest.mark.parametrize("seed", [0, 1])
def test_estimated_searches_are_never_below_brute_force(monkeypatch, seed):
    _lanczos_from(monkeypatch, 2)  # every search of this test goes through the estimates
    rng = np.random.default_rng(seed)
    bad = []
    for t in range(24):
        D = int(rng.integers(5, 11))
        k = int(rng.integers(1, D))
        nonneg = bool(t % 2)
        if t % 3 == 0:
            X = rng.standard_normal((int(rng.integers(3, D)), D)) * rng.uniform(0.1, 3, D)
            P = Problem.from_data(X - X.mean(axis=0))
        else:
            P = Problem.from_covariance(random_psd(rng, D, ["wishart", "spiked", "lowrank", "posfactor"][t % 4]))
        opt, _ = brute_force(P.dense(), k, nonneg)
        for name, bound in BOUNDS.items():
            value = bound(P, k, nonneg).value
            if value < opt:
                bad.append((t, name, value, opt))
    assert not bad


@pytest.mark.parametrize("factor", [False, True])
def test_planted_spike_through_lanczos(monkeypatch, factor):
    """C = I + θvvᵀ with v uniform on k features: OPT = 1 + θ exactly (wᵀCw = 1 + θ(vᵀw)²); at D = 420
    and a threshold of 400 the estimates come from ARPACK, not from the LAPACK fallback."""
    _lanczos_from(monkeypatch, 400)
    D, k, theta = 420, 10, 3.0
    v = np.zeros(D)
    v[np.arange(0, D, D // k)[:k]] = 1 / np.sqrt(k)
    if factor:  # C = FᵀF with F = [I; √θ vᵀ]: D + 1 ≥ LANCZOS_MIN rows
        P = Problem(factor=np.vstack([np.eye(D), np.sqrt(theta) * v]))
    else:
        P = Problem.from_covariance(np.eye(D) + theta * np.outer(v, v))
    assert P.dim >= numerics.LANCZOS_MIN
    for name in ("dabe", "pattern", "threshold"):
        value = BOUNDS[name](P, k).value
        assert value >= 1 + theta, name
        assert value <= (1 + theta) * 1.001, (name, value)  # the spike is found: the search lost nothing


def _threshold_problems(seed, n):
    """Small problems with several thresholded components: factor and dense, signed and w ≥ 0."""
    rng = np.random.default_rng(seed)
    for t in range(n):
        D = int(rng.integers(8, 14))
        if t % 2:
            X = rng.standard_normal((int(rng.integers(3, D)), D)) * rng.uniform(0.1, 3, D)
            P = Problem.from_data(X - X.mean(axis=0))
        else:
            P = Problem.from_covariance(random_psd(rng, D, ["wishart", "spiked", "lowrank", "posfactor"][t % 4]))
        yield P, int(rng.integers(2, D - 2)), bool(t % 3 == 0)


def test_a_cut_threshold_search_starts_at_the_largest_rho():
    """The search runs from the largest ρ down, where an evaluation is cheapest: with no work allotted it
    bounds that one point (the largest pair value, the grid's top), and the bound is still valid."""
    for P, k, nonneg in _threshold_problems(4, 12):
        b = threshold_bound(P, k, nonneg, time_limit=Work(0.0))
        pairs = threshold.sorted_pairs(P, nonneg)
        assert b.params["rho"] == float(pairs.key[0])
        assert b.value >= brute_force(P.dense(), k, nonneg)[0]


def test_the_rank2_pass_never_worsens_a_cut_estimated_search(monkeypatch):
    """Under the same allotment the search without the rank-2 pass bounds the plain best point only; with
    it that point is bounded too, before any rank-2 finalist, so the bound is never larger, even when the
    allotment abandons the rank-2 bound of the best estimate (it then falls back to a plain bound that can
    be worse than the plain best's)."""
    _lanczos_from(monkeypatch, 2)
    worse = []
    for P, k, nonneg in _threshold_problems(0, 12):
        full = Work()
        threshold_bound(P, k, nonneg, time_limit=full)
        for share in np.linspace(0.1, 0.9, 9):  # allotments that cut the search at every stage
            seconds = share * full.used()
            plain = threshold_bound(P, k, nonneg, rank2=False, time_limit=Work(seconds)).value
            both = threshold_bound(P, k, nonneg, time_limit=Work(seconds)).value
            if both > plain:
                worse.append((P.dim, k, nonneg, share, plain, both))
    assert not worse, worse[:3]
