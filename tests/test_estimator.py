"""certpca.SparsePCA as a scikit-learn estimator: check_estimator, Pipeline, GridSearchCV over k."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.decomposition import PCA
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.estimator_checks import check_estimator

import certpca
from certpca import SparsePCA
from certpca.errors import InputError
from certpca.problem import Problem


def data(n: int = 60, d: int = 12, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n, d)) @ rng.standard_normal((d, d)) + 5.0


@pytest.mark.parametrize(
    "estimator",
    [SparsePCA(), SparsePCA(n_components=2, k=1), SparsePCA(k=1, nonneg=True), SparsePCA(2, k=1, deflation="disjoint")],
    ids=["default", "sparse-2", "nonneg", "disjoint"],
)
def test_check_estimator_passes(estimator):
    # every check runs; check_array_api_input skips itself unless SCIPY_ARRAY_API is set (we take numpy only)
    results = check_estimator(estimator, on_fail=None)
    failed = [r["check_name"] for r in results if r["status"] == "failed"]
    assert not failed
    assert {r["check_name"] for r in results if r["status"] == "skipped"} <= {"check_array_api_input"}


def test_full_cardinality_equals_sklearn_pca():
    X = data()
    ours = SparsePCA(n_components=4, method="pca").fit(X)
    theirs = PCA(n_components=4).fit(X)
    signs = np.sign(np.sum(ours.components_ * theirs.components_, axis=1))
    np.testing.assert_allclose(ours.components_ * signs[:, None], theirs.components_, atol=1e-10)
    np.testing.assert_allclose(ours.explained_variance_, theirs.explained_variance_, rtol=1e-10)
    np.testing.assert_allclose(ours.explained_variance_ratio_, theirs.explained_variance_ratio_, rtol=1e-10)
    np.testing.assert_allclose(ours.transform(X) * signs, theirs.transform(X), atol=1e-9)
    assert all(c.optimal for c in ours.certificates_)
    full = SparsePCA(n_components=12, method="pca", certify=False).fit(X)
    np.testing.assert_allclose(full.inverse_transform(full.transform(X)), X, atol=1e-9)


def test_sparse_components_and_their_certificates():
    X = data()
    # bounds with a search (the exact search), as certpca.certify(fit) runs by default: the estimator's own
    # default is the cheap bounds (issue 29), tested below
    est = SparsePCA(n_components=3, k=4, random_state=1, bounds="lambda1,exact").fit(X)
    assert est.components_.shape == (3, 12) and est.n_components_ == 3
    assert np.all(np.count_nonzero(est.components_, axis=1) <= 4)
    assert est.n_iter_ == sum(c.iterations for c in est.fit_.components) > 0  # scikit-learn's n_iter_
    np.testing.assert_allclose(np.linalg.norm(est.components_, axis=1), 1.0)
    fit = certpca.fit(Problem.from_data(X - X.mean(0)), 4, n_components=3, seed=1)
    certpca.certify(fit, bounds="lambda1,exact")  # as the estimator does: a better vector found is adopted
    np.testing.assert_allclose(est.components_, fit.rotation.to_numpy().T, atol=1e-12)
    np.testing.assert_allclose(est.explained_variance_, fit.additional_variance, rtol=1e-12)
    # component l is certified on C deflated by the earlier ones, where its value is wᵀC_l w
    C = Problem.from_data(X - est.mean_)
    for w, cert in zip(est.components_, est.certificates_):
        assert np.isclose(cert.value, C.variance(w)) and cert.value <= cert.upper_bound * (1 + 1e-12)
        C = C.deflate(w)
    assert est.fit_.summary().table.loc["Optimal"].tolist() == [
        "proven" if c.optimal else "not proven" for c in est.certificates_
    ]
    # the projection on the span of non-orthogonal components is what inverse_transform gives
    W = est.components_.T
    Xc = X - est.mean_
    projected = Xc @ W @ np.linalg.solve(W.T @ W, W.T)
    np.testing.assert_allclose(est.inverse_transform(est.transform(X)), projected + est.mean_, atol=1e-9)


def test_feature_names_are_kept_from_a_dataframe():
    X = pd.DataFrame(data(d=5), columns=[f"gene{j}" for j in range(5)])
    est = SparsePCA(n_components=2, k=2).fit(X)
    assert list(est.feature_names_in_) == list(X.columns) and est.n_features_in_ == 5
    assert list(est.fit_.rotation.index) == list(X.columns)
    assert list(est.get_feature_names_out()) == ["sparsepca0", "sparsepca1"]


def test_pipeline_with_standard_scaler():
    X = data()
    pipe = make_pipeline(StandardScaler(), SparsePCA(n_components=2, k=3, random_state=0))
    scores = pipe.fit_transform(X)
    Z = StandardScaler().fit_transform(X)
    alone = SparsePCA(n_components=2, k=3, random_state=0).fit(Z)
    np.testing.assert_allclose(scores, alone.transform(Z), atol=1e-10)
    np.testing.assert_allclose(pipe.transform(X[:7]), scores[:7], atol=1e-10)


def neg_reconstruction_error(estimator, X, y=None) -> float:
    """A scorer: minus the mean squared error of reconstructing X from its scores."""
    return -float(np.mean((X - estimator.inverse_transform(estimator.transform(X))) ** 2))


@pytest.mark.parametrize("scoring", [None, neg_reconstruction_error], ids=["score", "reconstruction"])
def test_grid_search_over_k(scoring):
    X = data(n=80)
    grid = GridSearchCV(SparsePCA(n_components=2, certify=False), {"k": [1, 3, 12]}, cv=3, scoring=scoring)
    grid.fit(X)
    means = grid.cv_results_["mean_test_score"]
    assert len(means) == 3 and np.all(np.isfinite(means))
    assert grid.best_params_["k"] == [1, 3, 12][int(np.argmax(means))]
    # full cardinality keeps the most variance of held-out data here
    assert means[2] > means[0]
    assert grid.best_estimator_.k == grid.best_params_["k"]


def test_bad_parameters_name_themselves():
    X = data(d=5)
    with pytest.raises(InputError, match=r"^k is out of range: got 9; choose a value from 1 to 5"):
        SparsePCA(k=9).fit(X)
    with pytest.raises(InputError, match="^n_components is out of range"):
        SparsePCA(n_components=0).fit(X)
    with pytest.raises(InputError, match="^deflation must be one of"):
        SparsePCA(deflation="none").fit(X)
    est = SparsePCA(n_components=2).fit(X)
    with pytest.raises(InputError, match="^X has 3 columns but the estimator has 2 components"):
        est.inverse_transform(np.ones((4, 3)))


def test_the_default_certificate_is_the_cheap_bounds_and_leaves_the_fit_as_it_is():
    """Issue 29: GridSearchCV refits many times, so the estimator's default certificate costs about the
    fit (cost classes up to COST_EIGEN, no search, no clock): the components are the uncertified
    fit's, and every certificate is valid on the problem its component solved."""
    X = data()
    est = SparsePCA(n_components=3, k=4, random_state=1).fit(X)
    plain = SparsePCA(n_components=3, k=4, random_state=1, certify=False).fit(X)
    np.testing.assert_array_equal(est.components_, plain.components_)
    cheap = {"trace", "lambda1"}
    for cert in est.certificates_:
        assert {b.name for b in cert.bounds} <= cheap and cert.budget is None
        assert cert.upper_bound >= cert.value
    est_budget = SparsePCA(n_components=1, k=4, random_state=1, budget=30.0).fit(X)
    assert 29 < est_budget.certificates_[0].budget <= 30.0 and est_budget.certificates_[0].optimal
