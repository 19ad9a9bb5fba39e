"""What a careful analyst would say about the values before sparse PCA: raw intensities, raw counts, controls.

Sparse PCA on raw microarray intensities or raw counts selects the brightest
features: their variance grows with their mean.  Expression data are usually
analysed on a log scale, so the report and the terminal say so when the values
look raw.  The tests are simple and stated in the message, so a reader can judge
them.
"""

from __future__ import annotations

import re

import numpy as np

from .dataset import Dataset

#: Affymetrix control probe sets and ERCC spike-ins: not genes, worth flagging when they are selected
CONTROL_IDS = re.compile(r"^(AFFX[-_]|ERCC[-_])", re.IGNORECASE)
#: ids of expression features (probe sets, Ensembl genes, spike-ins) and of samples (GEO, TCGA, "sample 3")
FEATURE_LIKE = re.compile(r"^(AFFX[-_]|ERCC[-_]|ENS[A-Z]*G\d{6}|\d+(_[a-z])?_at$|[A-Za-z0-9.-]+_(s_|x_|i_|g_|f_)?at$)")
SAMPLE_LIKE = re.compile(r"^(GSM\d+|TCGA-|sample[ _-]?\d+|patient[ _-]?\d+|s\d+$)", re.IGNORECASE)
#: a largest value this many times the median of the positive values reads as an unlogged scale
RAW_RATIO = 50.0
#: below this largest value, data are on a log (or otherwise compressed) scale already
RAW_MAX = 1000.0


def is_control(feature_id: str) -> bool:
    """True for an Affymetrix control probe set (``AFFX-``) or an ERCC spike-in (``ERCC-``)."""
    return bool(CONTROL_IDS.match(str(feature_id)))


def raw_values(ds: Dataset) -> np.ndarray | None:
    """The values as read (before centring and scaling), or None for a covariance or log-transformed data.

    Sparse data give their stored values (and one 0 when some are implicit), not an N × D array:
    what the advice looks at (extremes, positive values, whole numbers) is the same.
    """
    if ds.is_covariance or ds.preprocessing.get("log2_floor") is not None:
        return None
    if not isinstance(ds.matrix, np.ndarray):  # sparse
        zeros = ds.matrix.nnz < ds.matrix.shape[0] * ds.matrix.shape[1]
        return np.concatenate([ds.matrix.data, [0.0]]) if zeros else np.array(ds.matrix.data)
    X = np.asarray(ds.matrix, dtype=float)
    if ds.deferred:  # held as given
        return X
    exponent = int(ds.preprocessing.get("unit_exponent", 0))
    if exponent:  # values beyond 2^±300 were divided by 2^exponent; center is in the data's own units
        X = np.ldexp(X, exponent)
    if ds.scale is not None:
        X = X * ds.scale.to_numpy()
    if ds.center is not None:
        X = X + ds.center.to_numpy()
    return X


def orientation_warning(ds: Dataset) -> str | None:
    """A sentence when the table looks transposed: most sample ids look like feature ids, or most
    feature ids like sample ids (``--transpose`` reads a features × samples table)."""
    if ds.is_covariance or ds.sample_ids is None:
        return None

    def share(ids, pattern):
        return sum(bool(pattern.match(str(i))) for i in ids) / max(len(ids), 1)

    if share(ds.sample_ids, FEATURE_LIKE) > 0.5:
        return (
            f"the sample ids look like feature ids (e.g. {ds.sample_ids[0]}): is the table features × "
            "samples? Then give --transpose"
        )
    if share(ds.feature_ids, SAMPLE_LIKE) > 0.5:
        return (
            f"the feature ids look like sample ids (e.g. {ds.feature_ids[0]}): is the table features × "
            "samples? Then give --transpose"
        )
    return None


def preprocessing_advice(ds: Dataset) -> list[str]:
    """Sentences of advice on the orientation and scale of ``ds`` (empty when nothing looks amiss)."""
    X = raw_values(ds)
    advice: list[str] = []
    turned = orientation_warning(ds)
    if turned:
        advice.append(turned)
    if X is not None and X.size:
        top = float(X.max())
        positive = X[X > 0]
        ratio = top / float(np.median(positive)) if positive.size else 0.0
        integers = bool(np.all(np.abs(X - np.round(X)) < 1e-9))
        if integers and X.min() >= 0 and top > RAW_MAX:
            advice.append(
                f"the values look like raw counts (whole numbers up to {top:.6g}): sparse PCA will "
                "favour the most abundant features; log-transform them first (log1p after "
                "library-size normalisation, as single-cell tools do)"
            )
        elif top > RAW_MAX and ratio > RAW_RATIO:
            negatives = int((X < 0).sum())
            neg = f", {negatives} negative values" if negatives else ""
            advice.append(
                f"the values look like raw intensities (largest {top:.6g}, {ratio:.0f} times the median "
                f"positive value{neg}): sparse PCA will favour the brightest features; expression "
                "data are usually analysed on a log scale, e.g. --log2 20 (log2 with a floor of 20)"
            )
    controls = [str(f) for f in ds.feature_ids if is_control(f)]
    if controls:
        advice.append(
            f"{len(controls)} features are control probes or spike-ins (AFFX-/ERCC- ids, e.g. "
            f"{controls[0]}); they are marked in the tables when selected"
        )
    return advice


__all__ = [
    "CONTROL_IDS",
    "FEATURE_LIKE",
    "SAMPLE_LIKE",
    "is_control",
    "orientation_warning",
    "preprocessing_advice",
    "raw_values",
]
