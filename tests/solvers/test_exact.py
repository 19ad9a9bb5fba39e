"""The solver ``exact`` through the driver against brute force (tests/brute.py): the optimum with its proof,
or at its limit a feasible vector with a valid proven gap, never an unproven claim."""

import warnings

import numpy as np
import pytest

import certpca
from certpca.errors import ConvergenceWarning, InputError
from certpca.problem import Problem
from certpca.solvers import REGISTRY, solve
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


def test_exact_is_registered_and_refuses_beyond_its_size_limit():
    assert "exact" in REGISTRY
    rng = np.random.default_rng(0)
    X = rng.standard_normal((20, 401))
    with pytest.raises(InputError, match="limited to D ≤ 400"):
        solve(Problem.from_data(X), 3, method="exact")


def test_fit_with_method_exact_on_pitprops_is_proven():
    """certpca.fit(..., method="exact") on pitprops k = 6: the optimum of brute force over its 13 features."""
    fit = certpca.fit("pitprops", k=6, method="exact")
    P = certpca.load("pitprops").problem()
    opt, _ = brute_force(P.dense(), 6)
    comp = fit.components[0]
    assert comp.variance == pytest.approx(opt, rel=1e-9) and comp.extras["proven"]


def test_exact_time_limit_is_estimated_work_so_the_search_stops_at_the_same_node_on_any_machine():
    """time_limit buys time_limit / node_seconds(D) nodes, whatever the clock says: with 2.5 nodes' worth
    the search expands exactly 3 (the third is charged after it starts), its vector stays feasible, its
    bound valid against brute force, and the warning gives the reason, not an iteration count."""
    from certpca.solvers.exact import node_seconds

    C = random_psd(np.random.default_rng(0), 14, "wishart")  # 16 nodes to its proof
    opt, _ = brute_force(C, 5)
    runs = []
    for _ in range(2):
        with pytest.warns(ConvergenceWarning, match="stopped at its limit .* s of estimated work"):
            runs.append(solve(Problem.from_covariance(C), 5, method="exact", time_limit=2.5 * node_seconds(14)))
    for comp in runs:
        assert comp.extras["nodes"] == 3 and not comp.extras["proven"]
        assert comp.variance <= opt * (1 + 1e-12) <= comp.extras["upper_bound"] * (1 + 1e-12)
    assert runs[0].extras == runs[1].extras
