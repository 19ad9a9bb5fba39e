"""Unsupervised gene selection, evaluated as Sigg & Buhmann (2008, §5.3) did.

Sigg & Buhmann followed the protocol of Varshavsky et al. (2006): select a
subset of features, cluster the samples with k-means (k = number of classes)
on those features from 100 random initialisations of the centroids, and score
each clustering against the known classes with the pair-counting Jaccard
coefficient (Ben-Hur et al. 2002).  They compared the support of the first
nonnegative sparse principal component with Varshavsky et al.'s "simple
ranking" (SR) by the contribution-to-entropy (CE) criterion, and with the full
data.

Pieces
------
:func:`pair_jaccard`
    Jaccard score of two partitions from their contingency table.
:func:`kmeans_jaccard`
    ``n_init`` seeded k-means runs (Lloyd to convergence from random data
    points), each scored by :func:`pair_jaccard`.
:func:`ce_scores`, :func:`ce_ranking`
    Varshavsky et al.'s leave-one-out SVD-entropy contributions and SR order.
:func:`gene_selection`
    One row per (selector, size) plus the full-data baseline.
:func:`gene_set_test`
    Do selected features separate the classes better than as many random ones (a Monte Carlo test)?

Preprocessing
-------------
Sigg & Buhmann (§5): "for unsupervised gene selection, not standardizing the
variance led to significantly better results".  Pass the *centred raw* data,
``certpca.datasets.load("leukemia")`` (centred, not scaled, no log).  k-means
and the Jaccard score do not depend on the centring; the CE ranking and the
sparse PC do, and both see the matrix exactly as given.

References
----------
Sigg, C. D. & Buhmann, J. M. (2008). Expectation-maximization for sparse and
non-negative PCA. ICML, §5.3 and Fig. 4.
Varshavsky, R., Gottlieb, A., Linial, M. & Horn, D. (2006). Novel unsupervised
feature filtering of biological data. Bioinformatics 22(14), e507–e513.
Ben-Hur, A., Elisseeff, A. & Guyon, I. (2002). A stability based method for
discovering structure in clustered data. PSB 7, 6–17.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable, Mapping, Sequence

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from certpca.components import fit_components
from certpca.data import Dataset
from certpca.errors import ConvergenceWarning, InputError

Selector = Callable[[Dataset, int], Sequence]


def _one_thread():
    """Run BLAS/LAPACK single-threaded inside: k-means' many small products.

    Measured on 2 busy cores: 12582 leave-one-out eigvalsh of 72 × 72 (the CE
    ranking before :mod:`certpca._secular`) took 71–134 s with OpenBLAS
    threads and 9–11 s with one.
    """
    return threadpool_limits(limits=1)


__all__ = [
    "pair_jaccard",
    "kmeans",
    "kmeans_jaccard",
    "load_kmeans",
    "svd_entropy",
    "ce_scores",
    "ce_ranking",
    "best_partition_jaccard",
    "gene_set_test",
    "sparse_pc_selector",
    "ce_selector",
    "gene_selection",
]


# ------------------------------------------------------------------ Jaccard
def _codes(labels, what: str) -> np.ndarray:
    """Integer codes 0..c-1 of a 1-D label vector (any hashable values)."""
    arr = np.asarray(labels)
    if arr.ndim != 1:
        raise InputError(f"{what} must be one label per sample (1-D); got shape {arr.shape}")
    if arr.size and pd.isna(pd.Series(arr)).any():
        raise InputError(f"{what} contains missing values; give every sample a label")
    codes, _ = pd.factorize(arr, sort=False)
    return codes


def pair_jaccard(labels_true, labels_pred) -> float:
    """Pair-counting Jaccard score of two partitions of the same samples.

    Over all pairs of samples, ``n11`` counts pairs in the same group in both
    partitions, ``n10`` pairs together only in ``labels_true`` and ``n01``
    pairs together only in ``labels_pred``; the score is
    ``n11 / (n11 + n10 + n01)`` (Ben-Hur et al. 2002; Varshavsky et al. 2006).
    It is symmetric, invariant to renaming the groups, and 1 exactly when the
    partitions are equal.

    Computed from the contingency table ``n_ij`` in O(n + c_true · c_pred):
    ``n11 = Σ C(n_ij, 2)``, ``n11 + n10 = Σ_i C(a_i, 2)``,
    ``n11 + n01 = Σ_j C(b_j, 2)`` with row sums ``a`` and column sums ``b``.
    When no pair is together in either partition (both all singletons, so
    equal) the score is 1.
    """
    a = _codes(labels_true, "labels_true")
    b = _codes(labels_pred, "labels_pred")
    if a.size != b.size:
        raise InputError(f"labels_true has {a.size} samples but labels_pred has {b.size}; give one label per sample")
    if a.size == 0:
        raise InputError("no samples to compare; give at least one label")
    return _jaccard_of_codes(a, b)


def _jaccard_of_codes(a: np.ndarray, b: np.ndarray) -> float:
    """:func:`pair_jaccard` of two checked partitions given as integer codes 0..c-1 (any numbering)."""
    ca, cb = a.max() + 1, b.max() + 1
    table = np.bincount(a * cb + b, minlength=ca * cb).astype(np.int64)

    def pairs(counts: np.ndarray) -> int:
        return int((counts * (counts - 1) // 2).sum())

    n11 = pairs(table)
    together_true = pairs(table.reshape(ca, cb).sum(axis=1))
    together_pred = pairs(table.reshape(ca, cb).sum(axis=0))
    denominator = together_true + together_pred - n11  # n11 + n10 + n01
    return 1.0 if denominator == 0 else n11 / denominator


# ------------------------------------------------------------------ k-means
#: Lloyd iterations before k-means stops with a ConvergenceWarning
KMEANS_MAX_ITER = 300


def kmeans(X, n_clusters: int, *, rng: np.random.Generator, max_iter: int = KMEANS_MAX_ITER):
    """One run of Lloyd's k-means from ``n_clusters`` distinct random data points.

    Runs until no assignment changes (or ``max_iter``, with a
    :class:`ConvergenceWarning`), compiled (:mod:`certpca._lloyd`).  A cluster that becomes empty is given the
    point farthest from its own centroid (Matlab's ``EmptyAction='singleton'``,
    as Sigg & Buhmann used Matlab), taken from a cluster with more than one
    point; ties go to the lowest index, so a run is a deterministic function
    of ``rng``.  Distance ties go to the lowest cluster index.

    Returns ``(labels, centroids, inertia, n_iter)``.

    scipy's ``kmeans2`` was not used: it runs a fixed number of iterations
    (``iter``) rather than to convergence, and leaves empty clusters where
    they were.
    """
    X = np.asarray(X, dtype=float)
    n = X.shape[0]
    if not 1 <= n_clusters <= n:
        raise InputError(f"n_clusters must be between 1 and the number of samples ({n}); got {n_clusters}")
    X, mu, xx = _centred(X)
    labels, centroids, n_iter = _lloyd(X, np.ascontiguousarray(X), xx, n_clusters, rng, max_iter)
    return labels, centroids + mu, _inertia(X, xx, labels, centroids), n_iter


def _inertia(X: np.ndarray, xx: np.ndarray, labels: np.ndarray, centroids: np.ndarray) -> float:
    """Within-cluster sum of squared distances of centred ``X`` (squared row norms ``xx``)."""
    at = centroids[labels]
    d2 = np.maximum(xx - 2.0 * np.einsum("ij,ij->i", X, at) + np.einsum("ij,ij->i", at, at), 0.0)
    return float(d2.sum())


def _centred(X: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(X − mean, the mean, squared row norms): k-means is translation-invariant, and centring keeps
    the squared-norm expansion of the distances accurate."""
    mu = X.mean(axis=0)
    X = X - mu
    return X, mu, np.einsum("ij,ij->i", X, X)


def _lloyd(
    X: np.ndarray, rows: np.ndarray, xx: np.ndarray, n_clusters: int, rng, max_iter: int
) -> tuple[np.ndarray, np.ndarray, int]:
    """Lloyd's iterations of :func:`kmeans` on centred ``X`` (``rows``: the same in C order; compiled,
    :mod:`certpca._lloyd`): (labels, centroids, iterations)."""
    from certpca._lloyd import lloyd  # late: numba loads only for k-means

    centroids = X[rng.choice(X.shape[0], size=n_clusters, replace=False)].copy()
    labels = np.empty(X.shape[0], dtype=np.int64)
    n_iter = lloyd(X, rows, xx, labels, centroids, max_iter)
    if not n_iter:
        warnings.warn(f"k-means did not converge in {max_iter} iterations", ConvergenceWarning, stacklevel=3)
    return labels, centroids, n_iter or max_iter


def load_kmeans() -> None:
    """Load k-means' compiled loop (:mod:`certpca._lloyd`, from numba's disk cache: about 0.5 s of CPU in a fresh
    process) by a run on two points in either memory order (the whole data's rows come in C order, the gene
    evaluation's columns of a wider matrix in Fortran order), so that a process forked afterwards (the report's
    gene-set test, reporting/genes.py) shares it instead of loading its own copy."""
    two = np.array([[0.0, 1.0], [1.0, 0.0]])
    for points in (two, np.asfortranarray(two)):
        kmeans(points, 2, rng=np.random.default_rng(0))


def kmeans_jaccard(X, labels, n_clusters: int | None = None, n_init: int = 100, seed: int = 0) -> np.ndarray:
    """Jaccard scores of ``n_init`` independent k-means runs against ``labels``.

    Each run starts from ``n_clusters`` distinct samples drawn at random
    (Sigg & Buhmann: "100 random initializations of the centroids") and runs
    Lloyd's algorithm to convergence (:func:`kmeans`).  Run ``r`` uses its own
    generator, ``SeedSequence(seed).spawn(n_init)[r]``, so scores are
    reproducible for a fixed ``seed`` and the initial points of run ``r`` are
    the same sample indices whatever features are used (a paired design
    across feature subsets).

    Parameters
    ----------
    X
        Samples × features (the selected features only).
    labels
        The true class of each sample.
    n_clusters
        k; default the number of distinct labels.
    """
    X = np.asarray(X, dtype=float)
    if X.ndim != 2 or X.shape[1] == 0:
        raise InputError(f"X must be samples × features with at least one feature; got shape {X.shape}")
    truth = _codes(labels, "labels")
    if truth.size != X.shape[0]:
        raise InputError(f"X has {X.shape[0]} samples but labels has {truth.size}; give one label per sample")
    if not np.isfinite(X).all():
        raise InputError("X contains NaN or infinite values; clean or impute them first")
    k = int(truth.max() + 1) if n_clusters is None else int(n_clusters)
    if n_init < 1:
        raise InputError(f"n_init must be at least 1; got {n_init}")
    if not 1 <= k <= X.shape[0]:
        raise InputError(f"n_clusters must be between 1 and the number of samples ({X.shape[0]}); got {k}")
    X, _, xx = _centred(_isometric(X))  # once for all runs: what kmeans() would do in each
    rows = np.ascontiguousarray(X)
    scores = np.empty(n_init)
    with _one_thread():
        for r, child in enumerate(np.random.SeedSequence(seed).spawn(n_init)):
            pred, _, _ = _lloyd(X, rows, xx, k, np.random.default_rng(child), KMEANS_MAX_ITER)
            scores[r] = _jaccard_of_codes(truth, pred)  # pred: cluster indices 0..k-1, already codes
    return scores


def _isometric(X: np.ndarray) -> np.ndarray:
    """Centred rows in at most N coordinates with the same pairwise distances.

    k-means only ever measures distances between samples and means of
    samples, all in the row space of the centred ``X``.  With ``Xᵀ = QR``
    (Q orthonormal columns) ``X = RᵀQᵀ`` and the rows of ``Rᵀ`` (N × N) have
    the same distances: 72 × 12582 becomes 72 × 72, the same clustering up
    to rounding, ~170× less work per iteration.
    """
    X = X - X.mean(axis=0)
    n, d = X.shape
    if d <= n:
        return X
    r = np.linalg.qr(X.T, mode="r")
    return np.ascontiguousarray(np.asarray(r).T)


# --------------------------------------------------------------- CE ranking
def _entropy(eigenvalues: np.ndarray, n_values: int) -> np.ndarray:
    """Normalised SVD-entropy from squared singular values along the last axis."""
    ev = np.clip(eigenvalues, 0.0, None)
    v = ev / ev.sum(axis=-1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(v > 0, v * np.log(v), 0.0)
    return -terms.sum(axis=-1) / np.log(n_values)


def svd_entropy(X) -> float:
    """Varshavsky et al.'s SVD-entropy ``E = -(1/log N) Σ_j V_j log V_j``.

    ``V_j = s_j² / Σ_k s_k²`` with ``s`` the singular values of ``X`` and
    ``N = min(X.shape)`` the number of singular values, so ``0 ≤ E ≤ 1``.
    The orientation does not matter (Varshavsky et al. write genes × samples;
    certpca's matrices are samples × features: same singular values).
    """
    X = np.asarray(X, dtype=float)
    s = np.linalg.svd(X, compute_uv=False)
    return float(_entropy(s**2, max(min(X.shape), 2)))


#: the largest batch of leave-one-out weights (features × N) :func:`ce_scores` holds at once
CE_BATCH_BYTES = 32 * 2**20


def ce_scores(X, *, chunk: int = 4096) -> np.ndarray:
    """Each feature's contribution to the entropy, ``CE_i = E(X) − E(X without feature i)``.

    Varshavsky et al. (2006), eq. (2)–(3).  ``E`` is :func:`svd_entropy` with
    the normaliser ``log N`` of the full matrix in both terms (any constant
    normaliser gives the same ranking; it only rescales CE).  ``X`` is used as
    given: no centring or scaling here.

    The leave-one-out spectra come from one eigendecomposition of the smaller
    Gram matrix, ``UΛUᵀ``: with N samples and D features, if N ≤ D removing
    feature ``x_i`` is the rank-one downdate ``XXᵀ − x_i x_iᵀ``, whose
    eigenvalues are the roots of ``1 − Σ_k z_k²/(λ_k − μ) = 0`` with
    ``z = Uᵀx_i`` (Golub 1973; Bunch, Nielsen & Sorensen 1978);
    otherwise it deletes row and column i of ``XᵀX``, whose eigenvalues are
    the roots of ``Σ_k U_ik²/(λ_k − μ) = 0``.  Both are solved in
    :mod:`certpca._secular`, O(min(N, D)²) per feature instead of an
    eigendecomposition, in batches of ``chunk`` features and at most
    ``CE_BATCH_BYTES``.
    """
    X = np.asarray(X, dtype=float)
    if X.ndim != 2 or X.shape[1] < 2:
        raise InputError(f"CE needs a samples × features matrix with at least two features; got shape {X.shape}")
    if not np.isfinite(X).all():
        raise InputError("X contains NaN or infinite values; clean or impute them first")
    norm = np.linalg.norm(X)
    if norm == 0:
        raise InputError("X is all zeros; there is no spectrum to rank features by")
    X = X / norm  # entropy is scale-invariant; keeps the Gram entries O(1)
    n, d = X.shape
    n_values = max(min(n, d), 2)
    chunk = max(1, min(chunk, CE_BATCH_BYTES // (8 * min(n, d))))
    with _one_thread():
        return _leave_one_out(X, n_values, chunk)


def _leave_one_out(X: np.ndarray, n_values: int, chunk: int) -> np.ndarray:
    from certpca._secular import modified_eigenvalues  # late: numba loads only for CE

    n, d = X.shape
    downdate = n <= d
    lam, U = np.linalg.eigh(X @ X.T if downdate else X.T @ X)
    e_all = _entropy(lam, n_values)
    ce = np.empty(d)
    out = np.empty((min(chunk, d), lam.size))
    for start in range(0, d, chunk):
        stop = min(start + chunk, d)
        # one row of weights z² per left-out feature: z = Uᵀx_i (downdate) or row i of U (deletion)
        weights = np.square(X[:, start:stop].T @ U if downdate else U[start:stop])
        rows = out[: stop - start]
        modified_eigenvalues(lam, np.ascontiguousarray(weights), 1.0 if downdate else 0.0, rows)
        ce[start:stop] = e_all - _entropy(rows, n_values)
    return ce


def ce_ranking(X) -> np.ndarray:
    """Column indices of ``X`` by CE, largest first: Varshavsky et al.'s simple ranking (SR).

    SR selects the top ``m`` features of this order.  Ties keep column order.
    """
    return np.argsort(-ce_scores(X), kind="stable")


# ---------------------------------------------------------------- selectors
def sparse_pc_selector(nonneg: bool = True, **fit_options) -> Selector:
    """Selector: the support of the first (nonnegative) sparse PC of cardinality ``size``.

    Fits the dataset as given (:func:`certpca.components.fit_components`), with ``fit_options``
    (``method``, ``seed``, ``restarts``, ...).  The support may hold fewer than
    ``size`` features when the data do not allow ``size`` nonzeros; the
    ``n_features`` column of :func:`gene_selection` records what was used.
    """

    def select(dataset: Dataset, size: int) -> list:
        fit = fit_components(dataset.problem(), int(size), nonneg=nonneg, **fit_options)
        return fit.components[0].support

    select.__name__ = f"{'nonneg_' if nonneg else ''}sparse_pc"
    return select


def ce_selector() -> Selector:
    """Selector: the top ``size`` features by CE simple ranking (:func:`ce_ranking`).

    The ranking is computed once per dataset and reused across sizes.
    """
    cache: dict = {}

    def select(dataset: Dataset, size: int) -> list:
        if cache.get("dataset") is not dataset:
            # CE ranks every feature: it needs the whole prepared matrix (dense, also for sparse data)
            cache.update(dataset=dataset, order=ce_ranking(dataset.columns(np.arange(dataset.n_features))))
        return list(dataset.feature_ids[cache["order"][: int(size)]])

    select.__name__ = "ce_simple_ranking"
    return select


# ----------------------------------------------------------- gene selection
def gene_selection(
    dataset: Dataset,
    sizes: Sequence[int] | int,
    *,
    selectors: Mapping[str, Selector],
    n_init: int = 100,
    seed: int = 0,
    baseline: str = "full data",
) -> pd.DataFrame:
    """Jaccard scores of k-means on selected feature subsets (Sigg & Buhmann Fig. 4).

    For every selector and size, ``selector(dataset, size)`` returns feature
    ids; the samples are clustered on those prepared columns (``dataset.columns``) by
    :func:`kmeans_jaccard` (k = number of classes, ``n_init`` runs, the same
    ``seed`` for every subset).  The first row is the full-data baseline.

    Pass the centred raw data (``certpca.datasets.load(name)``): Sigg &
    Buhmann did not standardise variance for this experiment.

    Returns
    -------
    DataFrame with one row per (selector, size): ``selector``, ``size``,
    ``n_features`` (features actually used), ``mean``, ``sd`` (ddof=1),
    ``min``, ``max``, ``scores`` (the ``n_init`` raw scores, an array),
    ``features`` (the ids), ``seconds`` (selection time).  ``attrs`` records
    the dataset, its preprocessing, ``n_init`` and ``seed``.
    """
    if dataset.is_covariance or dataset.labels is None:
        raise InputError("gene selection needs labelled samples × features data; give `labels`")
    sizes = [int(sizes)] if isinstance(sizes, (int, np.integer)) else [int(s) for s in sizes]
    bad = [s for s in sizes if not 1 <= s <= dataset.n_features]
    if bad:
        raise InputError(f"sizes {bad} are outside 1..{dataset.n_features} (the number of features)")
    labels = dataset.labels.to_numpy()

    def row(name: str, size: int, ids: list, columns: np.ndarray, seconds: float) -> dict:
        scores = kmeans_jaccard(dataset.columns(columns), labels, n_init=n_init, seed=seed)
        return {
            "selector": name,
            "size": size,
            "n_features": int(columns.size),
            "mean": float(scores.mean()),
            "sd": float(scores.std(ddof=1)) if scores.size > 1 else float("nan"),
            "min": float(scores.min()),
            "max": float(scores.max()),
            "scores": scores,
            "features": ids,
            "seconds": seconds,
        }

    rows = [row(baseline, dataset.n_features, list(dataset.feature_ids), np.arange(dataset.n_features), 0.0)]
    for name, select in selectors.items():
        for size in sizes:
            t0 = time.perf_counter()
            ids = list(select(dataset, size))
            seconds = time.perf_counter() - t0
            columns = dataset.feature_ids.get_indexer(ids)
            if (columns < 0).any() or len(ids) == 0:
                missing = [i for i, c in zip(ids, columns) if c < 0][:5]
                raise InputError(
                    f"selector {name!r} returned {len(ids)} ids at size {size}, "
                    f"unknown to the dataset: {missing}; return feature ids of this dataset"
                )
            rows.append(row(name, size, ids, columns, seconds))
    frame = pd.DataFrame(rows)
    frame.attrs.update(
        dataset=dataset.name,
        preprocessing=dict(dataset.preprocessing),
        n_init=n_init,
        seed=seed,
        n_clusters=int(pd.Series(labels).nunique()),
    )
    return frame


# ---------------------------------------------------------- gene-set test
def best_partition_jaccard(X, labels, *, n_init: int = 10, seed: int = 0) -> float:
    """Jaccard agreement of ``labels`` with k-means on ``X`` (k = number of classes), keeping of
    ``n_init`` seeded runs the one of least within-cluster sum of squares (the usual k-means
    practice), so the score is one number per feature set, not a distribution over restarts."""
    X = np.asarray(X, dtype=float)
    truth = _codes(labels, "labels")
    k = int(truth.max() + 1)
    X, _, xx = _centred(_isometric(X))
    rows = np.ascontiguousarray(X)
    best, best_pred = np.inf, truth
    for child in np.random.SeedSequence(seed).spawn(n_init):
        pred, centroids, _ = _lloyd(X, rows, xx, k, np.random.default_rng(child), KMEANS_MAX_ITER)
        inertia = _inertia(X, xx, pred, centroids)
        if inertia < best:
            best, best_pred = inertia, pred.copy()
    return _jaccard_of_codes(truth, best_pred)


def gene_set_test(dataset: Dataset, features: Sequence, *, n_sets: int = 199, n_init: int = 10, seed: int = 0) -> dict:
    """Do the selected features separate the classes better than as many features chosen at random?

    Statistic: T(S) = :func:`best_partition_jaccard` of the classes with k-means on the columns S.
    Null hypothesis H0: S is no better than a set of |S| features drawn uniformly at random, without
    replacement, from all D features — then T(S) and the T(S_b) of ``n_sets`` such random sets are
    exchangeable, and the Monte Carlo p-value p = (1 + #{b : T(S_b) ≥ T(S)}) / (1 + n_sets) is valid
    at every level (Davison & Hinkley 1997, §4.2).  It assumes the selection did not use the labels
    (sparse PCA and a variance ranking do not); the samples are whatever the data are, so the test
    speaks of these samples' classes, not of a new cohort.  For reference it also scores the |S|
    features of largest variance and all features.

    Returns a dict: ``statistic``, ``p_value``, ``n_sets``, ``null`` (the random sets' T),
    ``null_mean``, ``null_q95``, ``top_variance``, ``all_features``, ``size``, ``n_init``, ``seed``.
    """
    if dataset.is_covariance or dataset.labels is None:
        raise InputError("a gene-set test needs labelled samples × features data; attach labels")
    columns = dataset.feature_ids.get_indexer(list(features))
    if (columns < 0).any() or columns.size == 0:
        raise InputError("features must be ids of the data set's features; give at least one")
    if n_sets < 1 or n_init < 1:
        raise InputError(f"n_sets and n_init must be at least 1; got {n_sets} and {n_init}")
    labels = dataset.labels.to_numpy()
    size, d = int(columns.size), dataset.n_features

    def score(cols: np.ndarray) -> float:
        return best_partition_jaccard(dataset.columns(np.sort(cols)), labels, n_init=n_init, seed=seed)

    variances = np.concatenate([dataset.columns(np.arange(j, min(j + 4096, d))).var(axis=0) for j in range(0, d, 4096)])
    top = np.argsort(-variances, kind="stable")[:size]
    rng = np.random.default_rng(np.random.SeedSequence(seed).spawn(1)[0])
    with _one_thread():
        observed = score(columns)
        null = np.array([score(rng.choice(d, size=size, replace=False)) for _ in range(n_sets)])
        top_variance, all_features = score(top), score(np.arange(d))
    return {
        "statistic": observed,
        "p_value": float((1 + np.count_nonzero(null >= observed)) / (1 + n_sets)),
        "n_sets": int(n_sets),
        "null": null,
        "null_mean": float(null.mean()),
        "null_q95": float(np.quantile(null, 0.95)),
        "top_variance": top_variance,
        "all_features": all_features,
        "size": size,
        "n_init": int(n_init),
        "seed": int(seed),
    }
