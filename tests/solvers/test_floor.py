"""No answer below the obvious one: k = 1 exactly, and never below the best single feature or
the sign-appropriate thresholded first principal component, on every bundled data set."""

import numpy as np
import pytest

from certpca import datasets
from certpca.io import load
from certpca.solvers import solve

KS = (1, 2, 3, 5, 10, 50)


def _problems():
    for name in datasets.names():
        yield name, load(name).problem()


PROBLEMS = dict(_problems())


def _threshold_value(problem, k, nonneg):
    """Thresholded PC1 refitted on its support, computed here from the dense eigenvector."""
    C = problem.dense()
    v = np.linalg.eigh(C)[1][:, -1]
    best = 0.0
    for s in (v, -v) if nonneg else (v,):
        mag = np.maximum(s, 0) if nonneg else np.abs(s)
        support = np.argsort(-mag, kind="stable")[:k]
        support = support[mag[support] > 0]
        if support.size == 0:
            continue
        sub = C[np.ix_(support, support)]
        vals, vecs = np.linalg.eigh(sub)
        if not nonneg or np.all(vecs[:, -1] >= -1e-12) or np.all(vecs[:, -1] <= 1e-12):
            best = max(best, vals[-1])
        else:  # a mixed-sign eigenvector is not feasible: keep the thresholded vector
            w = np.maximum(s[support], 0)
            best = max(best, w @ sub @ w / (w @ w))
    return best


@pytest.mark.parametrize("name", sorted(PROBLEMS))
@pytest.mark.parametrize("nonneg", [False, True])
def test_floor_on_every_bundled_data_set(name, nonneg):
    problem = PROBLEMS[name]
    diag_max = float(problem.diag.max())
    for k in (k for k in KS if k <= problem.dim):
        comp = solve(problem, k, method="em", nonneg=nonneg)
        if k == 1:
            assert comp.variance == pytest.approx(diag_max, rel=1e-12), (name, k)
        assert comp.variance >= diag_max * (1 - 1e-12), (name, k)
        if problem.dim <= 3000:
            assert comp.variance >= _threshold_value(problem, k, nonneg) * (1 - 1e-9), (name, k)
