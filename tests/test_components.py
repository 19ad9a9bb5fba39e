"""Several components: deflation schemes and additional-variance accounting."""

import numpy as np
import pytest

from certpca.components import additional_variance, fit_components
from certpca.errors import InputError
from certpca.problem import Problem
from certpca.status import Reach
from tests.brute import brute_force, random_psd


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
    assert np.all((W != 0).sum(axis=1) <= 1)  # disjoint supports
    np.testing.assert_allclose(W.T @ W, np.eye(4), atol=1e-12)
    # orthogonal components: what each adds is its own variance
    np.testing.assert_allclose(fit.additional_variance, [c.variance for c in fit.components], rtol=1e-9)


def test_additional_variance_by_hand():
    C = np.diag([4.0, 1.0, 0.5])
    s = np.sqrt(0.5)
    W = np.array([[1, 0, 0], [s, s, 0]]).T  # second at 45° to the first
    added = additional_variance(Problem.from_covariance(C), W)
    np.testing.assert_allclose(added, [4.0, 1.0])  # the second only adds the e2 direction
    W3 = np.column_stack([W, W[:, 0] * 2])  # a column in the span adds nothing
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
    with pytest.raises(InputError, match="k is out of range: got .*; choose a value from 1 to 60"):
        fit_components(P, k)


def test_disjoint_component_with_too_few_features_left_is_unreachable():
    C = np.zeros((6, 6))
    C[:4, :4] = 1.0
    C += np.diag([1.0, 1.0, 1.0, 1.0, 1.0, 0.5])  # features 0-3 correlated, 4 and 5 independent
    with pytest.warns(UserWarning, match="only 2 features are left"):
        fit = fit_components(
            Problem.from_covariance(C), 4, n_components=2, nonneg=True, deflation="disjoint", restarts=2
        )
    first, second = fit.components
    assert list(np.flatnonzero(first.weights)) == [0, 1, 2, 3]
    assert np.isclose(first.variance, brute_force(C, 4, nonneg=True)[0])
    assert np.isclose(second.variance, brute_force(C[4:, 4:], 2, nonneg=True)[0])
    assert first.status.reach is Reach.REACHED
    assert second.k == 4 and second.status.reach is Reach.UNREACHABLE
    assert "Status PC2: unreachable (only 2 features are left" in str(fit.summary())


def test_reached_and_converged_components_are_summarised_in_one_line():
    X = np.random.default_rng(9).standard_normal((15, 20))
    fit = fit_components(Problem.from_data(X - X.mean(0)), 5, n_components=2)
    assert all(c.status.reach is Reach.REACHED for c in fit.components)
    assert "Status: every component reached k and converged" in str(fit.summary())


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"n_components": 0}, "n_components is out of range: got 0; choose a value from 1 to 6"),
        ({"min_angle": 95.0}, "min_angle is out of range: got 95; choose a value from 0 to 90"),
        ({"deflation": "gram"}, "deflation must be one of projection, disjoint, quasi, joint"),
        ({"restarts": -1}, "restarts is out of range: got -1; choose a value >= 0"),
        ({"seed": -1}, "seed is out of range: got -1; choose a value >= 0"),
        ({"method": "pca", "nonneg": True}, "nonneg cannot be True for method 'pca'"),
        ({"method": "em", "deflation": "quasi"}, "'quasi' needs method='em' and nonneg=True"),
        ({"method": "em", "deflation": "joint"}, "method 'em' fits one component at a time"),
    ],
)
def test_arguments_are_named_as_python_parameters(kwargs, message):
    P = Problem.from_covariance(np.eye(6) + 0.5)
    with pytest.raises(InputError, match=message) as err:
        fit_components(P, 2, **kwargs)
    assert "--" not in str(err.value) and err.value.param is not None
