"""The cardinality path against solving every k on its own."""
import numpy as np

from certpca.path import fit_path
from certpca.problem import Problem
from certpca.solvers import solve


def _problem():
    X = np.random.default_rng(12).standard_normal((20, 80))
    return Problem.from_data(X - X.mean(0))


def test_threshold_path_equals_independent_fits():
    P = _problem()
    ks = [1, 3, 10, 40]
    for nonneg in (False, True):
        path = fit_path(P, ks, method="threshold", nonneg=nonneg)
        for k, comp in zip(ks, path):
            alone = solve(P, k, method="threshold", nonneg=nonneg)
            assert comp.cardinality == alone.cardinality and np.isclose(comp.variance, alone.variance)


def test_warm_em_path_is_feasible_and_close_to_cold():
    P = _problem()
    ks = list(range(1, 31))
    warm = fit_path(P, ks)
    cold = [solve(P, k) for k in ks]
    assert [c.cardinality for c in warm] == ks
    ratio = np.array([w.variance / c.variance for w, c in zip(warm, cold)])
    assert ratio.mean() > 0.99
