"""Several components: deflation schemes and additional-variance accounting."""
import numpy as np
import pytest

from certpca.components import additional_variance, fit_components
from certpca.errors import InputError
from certpca.problem import Problem
from tests.brute import random_psd


def test_pca_components_are_the_eigenvectors():
    C = random_psd(np.random.default_rng(7), 10, "wishart")
    fit = fit_components(Problem.from_covariance(C), 10, n_components=4, method="pca")
    vals, vecs = np.linalg.eigh(C)
    np.testing.assert_allclose(fit.additional_variance, vals[::-1][:4], rtol=1e-9)
    np.testing.assert_allclose(np.abs(fit.rotation.to_numpy().T @ vecs[:, ::-1][:, :4]), np.eye(4), atol=1e-8)
    assert np.isclose(fit.cumulative[-1], vals[::-1][:4].sum() / np.trace(C))


def test_disjoint_nonnegative_components_are_orthogonal():
    X = np.abs(np.random.default_rng(3).standard_normal((30, 200))) @ np.diag(np.linspace(1, 3, 200))
    P = Problem.from_data(X - X.mean(0))
    fit = fit_components(P, 20, n_components=4, nonneg=True, deflation="disjoint", restarts=3)
    W = fit.rotation.to_numpy()
    assert np.all(W >= 0)
    assert np.all((W != 0).sum(axis=1) <= 1)         # disjoint supports
    np.testing.assert_allclose(W.T @ W, np.eye(4), atol=1e-12)
    # orthogonal components: what each adds is its own variance
    np.testing.assert_allclose(fit.additional_variance, [c.variance for c in fit.components], rtol=1e-9)


def test_additional_variance_by_hand():
    C = np.diag([4.0, 1.0, 0.5])
    s = np.sqrt(0.5)
    W = np.array([[1, 0, 0], [s, s, 0]]).T           # second at 45° to the first
    added = additional_variance(Problem.from_covariance(C), W)
    np.testing.assert_allclose(added, [4.0, 1.0])    # the second only adds the e2 direction
    W3 = np.column_stack([W, W[:, 0] * 2])           # a column in the span adds nothing
    np.testing.assert_allclose(additional_variance(Problem.from_covariance(C), W3), [4.0, 1.0, 0.0])


def test_projection_deflation_sums_to_at_most_total():
    X = np.random.default_rng(9).standard_normal((15, 60))
    P = Problem.from_data(X - X.mean(0))
    fit = fit_components(P, 8, n_components=5)
    assert np.all(np.diff(fit.cumulative) >= 0)
    assert fit.cumulative[-1] <= 1 + 1e-12
    assert all(c.cardinality == 8 for c in fit.components)


@pytest.mark.parametrize("k", [0, 61])
def test_k_out_of_range(k):
    P = Problem.from_covariance(np.eye(60))
    with pytest.raises(InputError, match="out of range"):
        fit_components(P, k)
