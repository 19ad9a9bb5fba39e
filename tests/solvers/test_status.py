"""The status vocabulary set by the driver, checked against brute force and closed forms."""

import json
import warnings

import numpy as np
import pytest

from certpca.problem import Problem
from certpca.solvers import REGISTRY, solve
from certpca.solvers.base import fix_sign
from certpca.status import Convergence, Reach
from tests.brute import brute_force


def test_fewer_than_k_is_data_allow_fewer_when_brute_force_agrees():
    # feature 2 is anticorrelated with the others: under w ≥ 0 adding it only costs variance
    C = np.array([[2.0, 1.0, -1.0], [1.0, 2.0, -1.0], [-1.0, -1.0, 2.0]])
    opt, w_opt = brute_force(C, 3, nonneg=True)
    assert np.count_nonzero(w_opt) == 2 and np.isclose(opt, 3.0)  # the optimum uses 2 of 3
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the data explain the shortfall: no warning
        comp = solve(Problem.from_covariance(C), 3, nonneg=True, restarts=2)
    assert np.isclose(comp.variance, opt) and comp.cardinality == 2
    assert comp.status.reach is Reach.DATA_ALLOW_FEWER and "2 of 3" in comp.status.reach_reason


def test_exactly_k_is_reached_and_converged():
    rng = np.random.default_rng(1)
    A = rng.standard_normal((8, 8))
    C = A @ A.T
    comp = solve(Problem.from_covariance(C), 3)
    assert comp.cardinality == 3
    assert comp.status.reach is Reach.REACHED and comp.status.convergence is Convergence.CONVERGED
    assert np.isclose(comp.variance, brute_force(C, 3)[0])


def test_iteration_limit_and_not_iterative():
    rng = np.random.default_rng(2)
    A = rng.standard_normal((12, 12))
    P = Problem.from_covariance(A @ A.T)
    with pytest.warns(UserWarning, match="did not converge"):
        comp = solve(P, 4, max_iter=1, stable_support=None, tol=1e-300)
    assert comp.status.convergence is Convergence.ITERATION_LIMIT and not comp.converged
    assert "1 iterations" in comp.status.convergence_reason
    for method, reach in (("threshold", Reach.REACHED), ("pca", Reach.NOT_SPARSE)):
        comp = solve(P, 12 if method == "pca" else 4, method=method)
        assert comp.status.convergence is Convergence.NOT_ITERATIVE and comp.status.reach is reach


def test_nspca_jump_over_k_is_unreachable():
    # exchangeable C: by symmetry every entry of u is equal, so nnz(β) jumps from 4 to 0 (or 1)
    # the driver then falls back to its floor (thresholded PC1 on two features, variance 3)
    P = Problem.from_covariance(np.eye(4) + 1)
    nspca = REGISTRY["nspca"]
    start = next(iter(nspca.starts(P, True, np.random.default_rng(0), 0)))
    run = nspca.run(P, 2, True, start)
    assert np.count_nonzero(run.weights) != 2
    assert run.reach is Reach.UNREACHABLE and "jumps over 2" in run.reach_reason
    comp = solve(P, 2, method="nspca", nonneg=True, restarts=1)
    assert comp.cardinality == 2 and np.isclose(comp.variance, 3.0) and comp.status.reach is Reach.REACHED
    assert "thresholded first principal component" in comp.extras["floor"]


def test_status_is_serialised_as_strings():
    C = np.array([[2.0, 1.0, -1.0], [1.0, 2.0, -1.0], [-1.0, -1.0, 2.0]])
    d = json.loads(json.dumps(solve(Problem.from_covariance(C), 3, nonneg=True).to_dict()))
    assert d["status"]["reach"] == "data_allow_fewer" and d["status"]["convergence"] == "converged"
    assert d["converged"] is True and d["cardinality"] == 2


def test_fix_sign_closed_form():
    np.testing.assert_array_equal(fix_sign(np.array([0.1, -0.9, 0.3]), False), [-0.1, 0.9, -0.3])
    np.testing.assert_array_equal(fix_sign(np.array([-0.5, 0.5]), False), [0.5, -0.5])  # first on ties
    np.testing.assert_array_equal(fix_sign(np.array([0.2, 0.0]), True), [0.2, 0.0])
    np.testing.assert_array_equal(fix_sign(np.zeros(3), False), np.zeros(3))
