"""Certificates of later components against brute force on the problem each one solved."""

import numpy as np
import pytest

from certpca.certification.components import certify_components
from certpca.components import fit_components
from certpca.problem import Problem
from tests.brute import brute_force


def _deflated(C: np.ndarray, W: np.ndarray, upto: int) -> np.ndarray:
    """(I − wwᵀ) C (I − wwᵀ) applied for the first ``upto`` columns of W, written out densely."""
    for j in range(upto):
        w = W[:, j] / np.linalg.norm(W[:, j])
        P = np.eye(len(w)) - np.outer(w, w)
        C = P @ C @ P
    return C


@pytest.mark.parametrize("nonneg", [False, True])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_projection_components_are_certified_on_the_deflated_covariance(nonneg, seed):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((12, 9)) @ np.diag(np.linspace(2.0, 0.5, 9))
    C = np.cov(X, rowvar=False)
    fit = fit_components(Problem.from_covariance(C), 3, n_components=3, nonneg=nonneg, seed=seed)
    W = np.column_stack([c.weights for c in fit.components])
    certs = certify_components(fit, bounds="trace,lambda1,gershgorin,dabe,exact")
    for j, cert in enumerate(certs):
        Cj = _deflated(C, W, j)
        w = W[:, j] / np.linalg.norm(W[:, j])
        opt = brute_force(Cj, 3, nonneg=nonneg)[0]
        assert cert.value == pytest.approx(w @ Cj @ w, rel=1e-12)
        assert cert.upper_bound >= opt * (1 - 1e-12)  # a valid bound on the deflated problem
        assert cert.optimal == (opt - cert.value <= 1e-6 * cert.upper_bound)  # exact runs at D = 9


def test_disjoint_components_are_certified_on_the_unused_features():
    rng = np.random.default_rng(5)
    C = np.cov(rng.standard_normal((15, 10)), rowvar=False)
    fit = fit_components(Problem.from_covariance(C), 3, n_components=3, deflation="disjoint", nonneg=True)
    certs = certify_components(fit, bounds="trace,lambda1,exact")
    used: list[int] = []
    for comp, cert in zip(fit.components, certs):
        free = [i for i in range(10) if i not in used]
        opt = brute_force(C[np.ix_(free, free)], 3, nonneg=True)[0]
        assert cert.value == pytest.approx(comp.variance, rel=1e-12)  # no deflation: the variance on C
        assert cert.upper_bound >= opt * (1 - 1e-12) and cert.optimal == (opt - cert.value <= 1e-6 * opt)
        used += list(np.flatnonzero(comp.weights))


def test_the_last_component_is_not_deflated(monkeypatch):
    # a deflated factor is two copies of it: fitting and certifying n components deflate n − 1 times
    rng = np.random.default_rng(0)
    X = rng.standard_normal((8, 30))
    P = Problem.from_data(X - X.mean(axis=0))
    calls = []
    deflate = Problem.deflate

    def counted(self, w):
        calls.append(1)
        return deflate(self, w)

    monkeypatch.setattr(Problem, "deflate", counted)
    for n in (1, 3):
        calls.clear()
        fit = fit_components(P, 4, n_components=n)
        assert len(calls) == n - 1
        calls.clear()
        certs = certify_components(fit, bounds="trace,lambda1")
        assert len(calls) == n - 1 and len(certs) == n
        assert all(c.upper_bound >= c.value for c in certs)
