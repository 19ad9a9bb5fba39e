"""The solver ``exact`` through the driver against brute force (tests/brute.py): the optimum with its proof,
or at its limit a feasible vector with a valid proven gap, never an unproven claim."""

import warnings

import numpy as np
import pytest

import certpca
from certpca.errors import ConvergenceWarning, InputError
from certpca.problem import Problem
from certpca.solvers import REGISTRY, solve
from certpca.solvers.exact import MAX_DIM
from certpca.solvers.search import MAX_SCREEN_DIM
from certpca.status import Convergence
from tests.brute import brute_force, random_psd

FAMILIES = ["wishart", "spiked", "lowrank", "posfactor"]


@pytest.mark.parametrize("nonneg", [False, True])
def test_exact_solver_returns_the_brute_force_optimum_with_its_proof(nonneg):
    rng = np.random.default_rng(5 + nonneg)
    for i in range(24):
        D = int(rng.integers(5, 11))
        k = int(rng.integers(2, D))
        C = random_psd(rng, D, FAMILIES[i % 4])
        opt, _ = brute_force(C, k, nonneg)
        comp = solve(Problem.from_covariance(C), k, method="exact", nonneg=nonneg)
        w = comp.loadings.to_numpy()
        assert np.count_nonzero(w) <= k and (not nonneg or w.min() >= 0)
        assert comp.variance == pytest.approx(opt, rel=1e-9)
        assert comp.extras["proven"] and comp.status.convergence is Convergence.CONVERGED
        assert comp.extras["upper_bound"] >= opt  # zero tolerance: a valid bound
        assert comp.extras["upper_bound"] <= opt * (1 + 1e-8)


def test_exact_solver_at_its_limit_gives_a_feasible_vector_and_a_valid_gap():
    """One node only: not proven, says so, and its upper bound is still ≥ the brute-force optimum."""
    rng = np.random.default_rng(8)
    stopped = 0
    for i in range(12):
        C = random_psd(rng, 11, FAMILIES[i % 4])
        opt, _ = brute_force(C, 4)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            comp = solve(Problem.from_covariance(C), 4, method="exact", node_limit=1)
        assert comp.variance <= opt * (1 + 1e-12)
        assert comp.extras["upper_bound"] >= opt
        if not comp.extras["proven"]:
            stopped += 1
            assert comp.status.convergence is Convergence.ITERATION_LIMIT
            assert "proven gap" in comp.status.convergence_reason
            assert comp.extras["gap"] == pytest.approx(comp.extras["upper_bound"] - comp.variance)
    assert stopped > 0  # the limit was reached somewhere: the branch above ran


def test_exact_is_registered_and_refuses_beyond_its_size_limits():
    """Above MAX_SCREEN_DIM features it refuses before any work; when screening leaves more than MAX_DIM
    (an isotropic problem: nothing can be screened), it says how many were left."""
    assert "exact" in REGISTRY
    rng = np.random.default_rng(0)
    with pytest.raises(InputError, match=f"limited to D ≤ {MAX_SCREEN_DIM}"):
        solve(Problem.from_covariance(np.eye(MAX_SCREEN_DIM + 1)), 3, method="exact")
    C = np.eye(450) + 1e-3 * random_psd(rng, 450, "wishart") / 450
    with pytest.raises(InputError, match=f"searches at most {MAX_DIM} features; screening left 450 of 450"):
        solve(Problem.from_covariance(C), 3, method="exact")


def test_exact_screens_a_wide_problem_down_and_proves_the_planted_optimum():
    """D = 600 > MAX_DIM: a block of 8 nearly equicorrelated features among 592 independent ones of smaller
    variance.  C is block diagonal, so OPT(k) = max(brute force over the block, the largest single variance
    outside it); screening removes the independent features and the search proves OPT."""
    rng = np.random.default_rng(4)
    for nonneg in (False, True):
        block = 10 * (0.6 * np.ones((8, 8)) + 0.4 * np.eye(8) + 0.05 * random_psd(rng, 8, "wishart") / 8)
        C = np.diag(rng.uniform(1.0, 9.0, 600))
        C[:8, :8] = block
        opt = max(brute_force(block, 4, nonneg)[0], float(np.max(np.diag(C)[8:])))
        comp = solve(Problem.from_covariance(C), 4, method="exact", nonneg=nonneg)
        assert comp.extras["proven"] and comp.extras["survivors"] <= 8
        assert comp.variance == pytest.approx(opt, rel=1e-9)
        assert comp.extras["upper_bound"] >= opt


def test_fit_with_method_exact_on_pitprops_is_proven():
    """certpca.fit(..., method="exact") on pitprops k = 6: the optimum of brute force over its 13 features."""
    fit = certpca.fit("pitprops", k=6, method="exact")
    P = certpca.load("pitprops").problem()
    opt, _ = brute_force(P.dense(), 6)
    comp = fit.components[0]
    assert comp.variance == pytest.approx(opt, rel=1e-9) and comp.extras["proven"]


def test_exact_time_limit_is_estimated_work_so_the_search_stops_at_the_same_node_on_any_machine(monkeypatch):
    """time_limit is estimated work, never a clock: with a clock that jumps an hour at every reading (a
    CPU-time deadline would stop at once) the search stops at the same node with the same answer; stopped
    early, its vector is feasible, its bound valid against brute force, and the warning gives the reason."""
    from certpca import clock
    from certpca.solvers.exact import node_seconds

    C = random_psd(np.random.default_rng(0), 14, "wishart")  # 16 nodes to its proof
    opt, _ = brute_force(C, 5)
    runs, readings = [], iter(range(0, 10**9, 3600))
    for jumpy in (False, True):
        if jumpy:
            monkeypatch.setattr(clock, "now", lambda: float(next(readings)))
        with pytest.warns(ConvergenceWarning, match="stopped at its limit .* s of estimated work"):
            runs.append(solve(Problem.from_covariance(C), 5, method="exact", time_limit=2.5 * node_seconds(14)))
    for comp in runs:
        assert comp.extras["nodes"] >= 1 and not comp.extras["proven"]
        assert comp.variance <= opt * (1 + 1e-12) <= comp.extras["upper_bound"] * (1 + 1e-12)
    assert runs[0].extras == runs[1].extras
