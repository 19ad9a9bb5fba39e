"""Thresholding and PCA against direct numpy computations."""

import numpy as np
import pytest

from certpca.errors import InputError
from certpca.problem import Problem
from certpca.solvers import solve
from tests.brute import random_psd


def _reference_threshold(C, k, nonneg):
    vals, vecs = np.linalg.eigh(C)
    pc = vecs[:, -1]
    best = -np.inf
    for v in (pc, -pc) if nonneg else (pc,):
        score = np.maximum(v, 0) if nonneg else np.abs(v)
        S = np.sort(np.argsort(-score, kind="stable")[:k])
        S = S[score[S] > 0]
        if S.size == 0:
            continue
        sub_vals, sub_vecs = np.linalg.eigh(C[np.ix_(S, S)])
        u = sub_vecs[:, -1] * np.sign(sub_vecs[:, -1].sum())
        if nonneg and np.any(u < 0):
            continue  # the reference only covers supports whose refit stays nonnegative
        best = max(best, sub_vals[-1])
    return best


@pytest.mark.parametrize("nonneg", [False, True])
def test_threshold_matches_direct_computation(nonneg):
    rng = np.random.default_rng(4)
    checked = 0
    for trial in range(30):
        C = random_psd(rng, 10, ["wishart", "posfactor"][trial % 2])
        ref = _reference_threshold(C, 4, nonneg)
        comp = solve(Problem.from_covariance(C), 4, method="threshold", nonneg=nonneg)
        if np.isfinite(ref):
            assert comp.variance >= ref - 1e-10
            checked += 1
        assert np.count_nonzero(comp.weights) <= 4
    assert checked >= 15


def test_pca_is_the_top_eigenvector():
    C = random_psd(np.random.default_rng(1), 12, "wishart")
    comp = solve(Problem.from_covariance(C), 3, method="pca")
    assert np.isclose(comp.variance, np.linalg.eigvalsh(C)[-1])
    assert comp.cardinality == 12


def test_pca_refuses_nonnegativity():
    with pytest.raises(InputError, match="cannot impose nonnegativity"):
        solve(Problem.from_covariance(np.eye(3)), 2, method="pca", nonneg=True)
