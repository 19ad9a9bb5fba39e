"""Preprocessing (log floor, constant features, centring, scaling) and class labels."""

from __future__ import annotations

import warnings
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd

from certpca.errors import InputError
from certpca.sparse_factor import column_stats

from .dataset import DEFERRED_BLOCK_BYTES, Dataset, check_unique_ids, frozen, some_ids
from .readers import read_small_table


# ------------------------------------------------------------------ prepare
def prepare(
    ds: Dataset, *, center: bool = True, scale: bool = False, log2: float | None = None, copy: bool = True
) -> Dataset:
    """Transform raw values for PCA and record every step in ``preprocessing``.

    Steps, in order: ``log2(max(x, log2))`` (a floor, for expression data);
    dropping constant features (a warning; an error with ``scale`` since it
    would divide by zero); centring each feature; dividing each feature by
    sqrt(Σx²/(N−1)) as R's ``scale()`` and ``prcomp`` do: the sample standard
    deviation when centred, the root mean square when not.  For a covariance,
    ``scale`` gives the correlation matrix and ``center`` does nothing.  Sparse data stay sparse
    (:func:`_prepare_sparse`).  ``copy=False`` keeps dense data as given when no value has to change
    (no log, no constant feature, no overflow): centring and scaling are then recorded and
    ``deferred`` (see :class:`Dataset`), so wide data are not held twice.
    """
    if log2 is not None and not log2 > 0:
        raise InputError(f"`log2` floor must be positive (got {log2}); e.g. `log2=20` for microarray signals")
    if ds.is_covariance:
        return _prepare_covariance(ds, scale=scale, log2=log2)
    if ds.is_sparse:
        return _prepare_sparse(ds, center=center, scale=scale, log2=log2)
    if ds.deferred:  # prepared again: from the values as prepared so far, in the matrix's memory order
        values = ds.columns(np.arange(ds.n_features))
        values = np.asfortranarray(values) if ds.matrix.flags.f_contiguous else np.ascontiguousarray(values)
        ds = replace(ds, matrix=frozen(values), deferred=False)
    if not copy and log2 is None:
        deferred = _deferred(ds, center=center, scale=scale)
        if deferred is not None:
            return deferred
    # one copy, then every step in place (the same operations, so the same values): a wide matrix
    # otherwise passed through four copies of itself here
    X = np.array(ds.matrix)
    if log2 is not None:
        np.log2(np.maximum(X, log2, out=X), out=X)
    keep = _keep_nonconstant(ds.feature_ids, np.ptp(X, axis=0) > 0, scale)
    if not keep.all():
        X = X[:, keep]
    feature_ids = ds.feature_ids[keep]
    X, exponent = _safe_units(X, warn=not scale)  # before the sums of centring, which could overflow too
    means = sds = None
    if center:
        means = X.mean(axis=0)
        X -= means
    if scale:  # R's prcomp/scale(): sqrt(sum x^2 / (N-1)), the sd when centred, the root mean square when not
        sds = np.sqrt(np.sum(X**2, axis=0) / (X.shape[0] - 1))
        X /= sds
    X = frozen(X)
    # center and scale are kept in the data's own units (ldexp is exact), for predict
    means = None if means is None else pd.Series(np.ldexp(means, exponent), index=feature_ids, name="center")
    sds = None if sds is None else pd.Series(np.ldexp(sds, exponent), index=feature_ids, name="scale")
    exponent = 0 if scale else exponent  # scaled values are unit-free
    return _prepared(ds, X, keep, exponent, log2, center=means, scale=sds)


def _deferred(ds: Dataset, *, center: bool, scale: bool) -> Dataset | None:
    """:func:`prepare` without a copy: the means and divisors of the values as given (computed as on the
    copy, the divisors a block of features at a time), or None when some value has to change first."""
    X = ds.matrix
    if not np.all(np.ptp(X, axis=0) > 0) or _unit_exponent(_largest(X), warn=False):
        return None  # constant features to drop, or values to rescale: the copying path does both
    means = X.mean(axis=0) if center else np.zeros(X.shape[1])
    sds = np.empty(X.shape[1])
    if scale:
        step = max(1, DEFERRED_BLOCK_BYTES // (8 * X.shape[0]))
        for j in range(0, X.shape[1], step):
            block = X[:, j : j + step] - means[j : j + step] if center else X[:, j : j + step]
            sds[j : j + step] = np.sqrt(np.sum(block**2, axis=0) / (X.shape[0] - 1))
    keep = np.ones(X.shape[1], bool)
    prepared = _prepared(
        ds,
        X,
        keep,
        0,
        None,
        center=pd.Series(means, index=ds.feature_ids, name="center") if center else None,
        scale=pd.Series(sds, index=ds.feature_ids, name="scale") if scale else None,
    )
    return replace(prepared, deferred=True)


def _prepared(ds: Dataset, X, keep: np.ndarray, exponent: int, log2: float | None, *, center, scale) -> Dataset:
    """The prepared dataset: the kept features, the centring and scaling vectors (None when not
    applied) and the record of every step."""
    steps: dict = {"center": center is not None, "scale": scale is not None, "log2_floor": log2}
    steps["dropped_constant"] = [str(f) for f in ds.feature_ids[~keep]]
    if exponent:
        steps["unit_exponent"] = exponent
    preprocessing = {**ds.preprocessing, **steps}
    return replace(
        ds, matrix=X, feature_ids=ds.feature_ids[keep], preprocessing=preprocessing, center=center, scale=scale
    )


#: beyond these magnitudes, sums of squares of the values (N·D products) leave the floating-point range
SAFE_MAX, SAFE_MIN = 2.0**300, 2.0**-300


def _safe_units(X: np.ndarray, *, warn: bool) -> tuple[np.ndarray, int]:
    """X divided in place by 2^e (exact in binary floating point) when its magnitude would overflow or
    underflow in a mean or a covariance product, with e (:func:`_unit_exponent`); e = 0 and X otherwise."""
    exponent = _unit_exponent(_largest(X), warn=warn)
    return (np.ldexp(X, -exponent, out=X), exponent) if exponent else (X, 0)


def _largest(X: np.ndarray) -> float:
    """max |X| without an |X| copy (0 for an empty X)."""
    return max(float(np.max(X)), -float(np.min(X))) if X.size else 0.0


def _unit_exponent(top: float, *, warn: bool) -> int:
    """e such that values of largest magnitude ``top`` are divided by 2^e because they would overflow or
    underflow in a covariance product; 0 when they would not.  With ``warn`` (the variances stay in these
    units: no scaling follows) a warning says how to convert."""
    if top == 0.0 or SAFE_MIN <= top <= SAFE_MAX:
        return 0
    exponent = int(np.round(np.log2(top)))
    if warn:
        warnings.warn(
            f"values as {'large' if top > 1 else 'small'} as {top:.3g} were divided by 2^{exponent} so "
            f"that products stay finite; variances are in these units (multiply by 4^{exponent} for the "
            "original ones)",
            stacklevel=4,
        )
    return exponent


def _prepare_sparse(ds: Dataset, *, center: bool, scale: bool, log2: float | None) -> Dataset:
    """:func:`prepare` for a sparse matrix, which stays sparse: the means and divisors are recorded in
    ``center``/``scale`` (in the data's own units, as for dense data) and applied implicitly (see
    :class:`Dataset`).

    The log floor is applied to the stored values only when it keeps zeros zero (floor 1); any other
    floor would make every implicit zero log2(floor) and the matrix dense, so it is refused: densifying
    a single-cell matrix silently is exactly the memory blow-up sparse input avoids.
    """
    X = ds.matrix.copy()
    if log2 is not None:
        if log2 != 1:
            raise InputError(
                f"`log2={log2:g}` would turn the zeros of sparse data into log2({log2:g}) and make them dense; "
                "give `log2=1` (zeros stay zeros) or log-transform the data first (e.g. log1p)"
            )
        X.data = np.log2(np.maximum(X.data, 1.0))
        X.eliminate_zeros()
    high, low = (np.asarray(m.toarray()).ravel() for m in (X.max(axis=0), X.min(axis=0)))
    keep = _keep_nonconstant(ds.feature_ids, high > low, scale)
    X, feature_ids, high, low = X[:, keep], ds.feature_ids[keep], high[keep], low[keep]
    top = float(np.max(np.maximum(np.abs(high), np.abs(low)))) if high.size else 0.0
    exponent = _unit_exponent(top, warn=not scale)
    if exponent and scale:  # the pending division would need the matrix and its divisors in two unit systems
        raise InputError(
            f"sparse values as {'large' if top > 1 else 'small'} as {top:.3g} overflow when scaled; "
            "multiply the data by a power of two that brings them near 1, or do not scale"
        )
    if exponent:  # before the sums of the means, which could overflow too
        X.data = np.ldexp(X.data, -exponent)
    mean, sd = column_stats(X)
    if scale and not center:  # R's scale(): sqrt(sum x^2 / (N-1)), the root mean square when not centred
        sd = np.sqrt(np.asarray(X.power(2).sum(axis=0)).ravel() / (X.shape[0] - 1))
    means = pd.Series(np.ldexp(mean, exponent), index=feature_ids, name="center") if center else None
    sds = pd.Series(np.ldexp(sd, exponent), index=feature_ids, name="scale") if scale else None
    return _prepared(ds, X, keep, exponent, log2, center=means, scale=sds)


def _keep_nonconstant(feature_ids: pd.Index, varies: np.ndarray, scale: bool) -> np.ndarray:
    """Mask of features to keep; constant ones are dropped with a warning, or refused when scaling."""
    if varies.all():
        return varies
    dropped = [str(f) for f in feature_ids[~varies]]
    if scale:
        raise InputError(
            f"{len(dropped)} constant features ({some_ids(dropped)}) cannot be scaled to unit variance; "
            "remove them or do not scale"
        )
    if not varies.any():
        raise InputError("every feature is constant; there is no variance to analyse")
    warnings.warn(f"dropped {len(dropped)} constant features (zero variance): {some_ids(dropped)}", stacklevel=3)
    return varies


def _prepare_covariance(ds: Dataset, *, scale: bool, log2: float | None) -> Dataset:
    if log2 is not None:
        raise InputError("`log2` cannot be applied to a covariance matrix; apply it to the data or drop it")
    keep = _keep_nonconstant(ds.feature_ids, np.diag(ds.matrix) > 0, scale)
    C, feature_ids = ds.matrix[np.ix_(keep, keep)], ds.feature_ids[keep]
    if scale:
        d = 1 / np.sqrt(np.diag(C))
        C = C * d[:, None] * d[None, :]
        np.fill_diagonal(C, 1.0)
    dropped = [str(f) for f in ds.feature_ids[~keep]]
    steps = {"center": False, "scale": scale, "log2_floor": None, "dropped_constant": dropped}
    return replace(ds, matrix=C, feature_ids=feature_ids, preprocessing={**ds.preprocessing, **steps})


def read_labels(path: str | Path) -> pd.Series:
    """Class labels from a CSV: column ``sample`` and ``label``, or else its first two columns."""
    path = Path(path)
    if not path.is_file():
        raise InputError(f"labels file not found: {path}; check the path")
    frame = read_small_table(path, "labels file", "a CSV sample,label")
    if {"sample", "label"} <= set(frame.columns):
        frame = frame[["sample", "label"]]
    elif frame.shape[1] >= 2:
        frame = frame.iloc[:, :2]
    else:
        raise InputError(f"labels file {path.name} needs two columns (sample,label); it has {frame.shape[1]}")
    ids = [s.strip() for s in frame.iloc[:, 0]]
    check_unique_ids(ids, "sample ids in the labels file", "give one label per sample")
    labels = pd.Series(frame.iloc[:, 1].str.strip().to_numpy(), index=pd.Index(ids), name="label")
    check_labels(labels, f"labels file {path.name}")
    return labels


def check_labels(labels: pd.Series, where: str) -> None:
    """No empty label: an empty cell would silently become a class of its own."""
    empty = labels.index[labels.isna() | (labels.astype(str).str.strip() == "")]
    if len(empty):
        raise InputError(
            f"{where} has an empty label for {len(empty)} sample(s) ({some_ids(empty)}); "
            "fill them in or remove those samples"
        )


def clustering_classes(labels) -> str | None:
    """Why ``labels`` cannot score a clustering (None when they can): the Jaccard of k-means
    against the classes needs at least two classes with at least two samples each."""
    counts = pd.Series(labels).astype(str).value_counts()
    if counts.size < 2:
        return f"the labels have {counts.size} class ({', '.join(counts.index)}); it needs at least two"
    small = counts[counts < 2]
    if small.size:
        return f"class(es) {', '.join(small.index[:5])} have a single sample; each class needs at least two"
    return None


def with_labels(ds: Dataset, labels: pd.Series) -> Dataset:
    """Attach labels aligned to the dataset's sample ids (extra ids in ``labels`` are ignored)."""
    if ds.sample_ids is None:
        raise InputError("a covariance matrix has no samples to label; drop the labels")
    missing = ds.sample_ids.difference(labels.index, sort=False)
    if len(missing):
        raise InputError(
            f"labels missing for {len(missing)} sample ids ({some_ids(missing)}); add them to the labels file"
        )
    labels = labels.reindex(ds.sample_ids).rename("label")
    check_labels(labels, "the labels")
    return replace(ds, labels=labels)
