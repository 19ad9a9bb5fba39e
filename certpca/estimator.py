"""A scikit-learn estimator for sparse and nonnegative sparse PCA with certificates.

    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    pipe = make_pipeline(StandardScaler(), certpca.SparsePCA(n_components=3, k=10))
    scores = pipe.fit_transform(X)

It follows scikit-learn's estimator contract: the constructor only stores its
arguments; ``fit`` validates the data with scikit-learn's own helpers and sets
the fitted attributes (names ending in ``_``); ``transform`` refuses to run before
``fit``.  The arithmetic is certpca's: the components come from
:func:`certpca.components.fit_components` on the covariance of the centred data,
each with a certificate of optimality from :func:`certpca.certification.certify_vector`.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.utils.validation import check_array, check_is_fitted, validate_data

from .certification.registry import cheap_bounds
from .components import DEFLATIONS, certify_fit, fit_components
from .errors import InputError
from .problem import Problem
from .validation import check_cardinality, check_choice

#: seeds drawn from a numpy RandomState or Generator lie below this
_SEED_LIMIT = 2**31 - 1


class SparsePCA(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """Sparse principal components, at most ``k`` nonzero loadings each, with certificates.

    Parameters
    ----------
    n_components : int — number of components (at most the number of features).
    k : int or None — nonzero loadings per component; None means every feature
        (plain PCA by the chosen method).  A value above the number of features
        is an error, not silently clipped.
    nonneg : bool — nonnegative loadings.
    method : str — a certpca solver (``em``, ``gpower-l0``, ``nspca``, ``pca``, ...).
    deflation : str — ``projection``, ``disjoint``, ``quasi`` or ``joint``
        (:mod:`certpca.components`).
    restarts : int — random restarts of the method.
    random_state : None, int, numpy RandomState or Generator — the seed.  Unlike
        scikit-learn's usual convention, None means the fixed seed 0 (certpca's
        rule: every result is reproducible); pass a RandomState for fresh draws.
    certify : bool — compute ``certificates_`` when fitting.
    bounds : list or comma-separated str, or None — the bounds to certify with.  None, without a
        ``budget``: the cheap bounds (trace and λ1: ``cheap_bounds``), a certificate
        that costs about the fit itself, since ``GridSearchCV`` refits many times, and that depends on
        no clock; the strong one is one call away (``certpca.certify(est.fit_)``, 15 s by default).
    budget : float or None — seconds of estimated work (certpca/clock.py) for the certificates of all the
        components together; with ``bounds=None`` it selects every applicable bound, cheapest first, within it.

    Attributes
    ----------
    components_ : (n_components_, n_features_in_) — unit-norm sparse loadings, as
        scikit-learn's PCA stores its principal axes (R's ``rotation`` transposed).
    explained_variance_ : the variance each component adds beyond the span of the
        earlier ones (:attr:`certpca.Fit.additional_variance`; the eigenvalues at full k).
    explained_variance_ratio_ : that variance over the total variance of the data.
    mean_ : the feature means subtracted before the covariance (R's ``center``).
    n_components_ : components found (fewer than asked when disjoint supports run out).
    n_iter_ : iterations the method ran, summed over the components (each component's count is
        ``fit_.components[i].iterations``), as scikit-learn's SparsePCA records them.
    n_features_in_, feature_names_in_ : as every scikit-learn estimator records them.
    certificates_ : one :class:`certpca.Certificate` per component (None without
        ``certify``, or for an all-zero component): the value and a proven upper
        bound on the best value possible on the problem the component solved
        (:func:`certpca.components.certify_fit`, which adopts a better vector a bound finds): C deflated by the earlier
        components (projection, and quasi and joint read the same way), or C
        restricted to the features they left (disjoint).
    fit_ : the :class:`certpca.Fit`, with its ``summary()``.
    """

    def __init__(
        self,
        n_components=1,
        *,
        k=None,
        nonneg=False,
        method="auto",
        deflation="projection",
        restarts=10,
        random_state=None,
        certify=True,
        bounds=None,
        budget=None,
    ):
        self.n_components = n_components
        self.k = k
        self.nonneg = nonneg
        self.method = method
        self.deflation = deflation
        self.restarts = restarts
        self.random_state = random_state
        self.certify = certify
        self.bounds = bounds
        self.budget = budget

    def fit(self, X, y=None):
        """Centre X (samples × features) and fit the components of its covariance; y is ignored."""
        X = validate_data(self, X, dtype=np.float64, ensure_min_samples=2)
        d = X.shape[1]
        k = check_cardinality(d if self.k is None else self.k, d, "k")
        n_components = check_cardinality(self.n_components, d, "n_components")
        deflation = check_choice(self.deflation, DEFLATIONS, "deflation")
        names = getattr(self, "feature_names_in_", None)
        ids = [str(n) for n in names] if names is not None else [f"x{j}" for j in range(d)]
        self.mean_ = X.mean(axis=0)
        problem = Problem.from_data(X, feature_ids=ids, mean=self.mean_)  # centred inside the factor: one copy
        fit = fit_components(
            problem,
            k,
            n_components=n_components,
            method=self.method,
            nonneg=bool(self.nonneg),
            deflation=deflation,
            seed=_seed(self.random_state),
            restarts=self.restarts,
            data={"name": "X", "n_samples": X.shape[0], "n_features": d, "preprocessing": {"center": True}},
        )
        if self.certify:  # first: a better vector found while certifying is adopted (certify_fit)
            cheap = self.bounds is None and self.budget is None
            certify_fit(
                fit, bounds=cheap_bounds(problem, bool(self.nonneg)) if cheap else self.bounds, budget=self.budget
            )
        W = np.column_stack([c.weights for c in fit.components])
        self.components_ = W.T.copy()
        self.n_components_ = W.shape[1]
        self.n_iter_ = sum(int(c.iterations) for c in fit.components)
        self.explained_variance_ = np.asarray(fit.additional_variance, dtype=float)
        self.explained_variance_ratio_ = np.asarray(fit.pev, dtype=float)
        self.certificates_ = list(fit.certificates) or [None] * self.n_components_
        self.fit_ = fit
        return self

    def transform(self, X):
        """Scores: the centred X times the loadings (R's ``predict.prcomp``; scikit-learn's PCA)."""
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return (X - self.mean_) @ self.components_.T

    def inverse_transform(self, X):
        """Data from scores: least squares in the span of the components, plus the mean.

        For orthonormal components this is scores × ``components_`` + ``mean_`` as in
        scikit-learn's PCA; for non-orthogonal sparse ones the pseudo-inverse of the
        loadings gives the projection of the data on their span.
        """
        check_is_fitted(self)
        X = check_array(X, dtype=np.float64)
        if X.shape[1] != self.n_components_:
            raise InputError.bad_argument(
                "X",
                f"has {X.shape[1]} columns but the estimator has "
                f"{self.n_components_} components; give scores from transform",
            )
        return X @ np.linalg.pinv(self.components_.T) + self.mean_

    def score(self, X, y=None) -> float:
        """Fraction of the variance of X (centred by ``mean_``) that its projection on the components keeps.

        1 − ‖Xc − X̂c‖² / ‖Xc‖², larger is better: GridSearchCV's default score.
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        centred = X - self.mean_
        residual = centred - (self.inverse_transform(self.transform(X)) - self.mean_)
        total = float(np.sum(centred**2))
        return 1.0 - float(np.sum(residual**2)) / total if total > 0 else 0.0

    @property
    def _n_features_out(self) -> int:
        """Number of output columns, for ``get_feature_names_out`` (sparsepca0, sparsepca1, ...)."""
        return self.n_components_


def _seed(random_state) -> int:
    """An integer seed: None is 0 (certpca's reproducible default); a RandomState or Generator draws one."""
    if random_state is None:
        return 0
    if isinstance(random_state, np.random.RandomState):
        return int(random_state.randint(_SEED_LIMIT))
    if isinstance(random_state, np.random.Generator):
        return int(random_state.integers(_SEED_LIMIT))
    return random_state


__all__ = ["SparsePCA"]
