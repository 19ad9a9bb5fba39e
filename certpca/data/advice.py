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
#: a largest value this many times the median of the positive values reads as an unlogged scale
RAW_RATIO = 50.0
#: below this largest value, data are on a log (or otherwise compressed) scale already
RAW_MAX = 1000.0


def is_control(feature_id: str) -> bool:
    """True for an Affymetrix control probe set (``AFFX-``) or an ERCC spike-in (``ERCC-``)."""
    return bool(CONTROL_IDS.match(str(feature_id)))


def raw_values(ds: Dataset) -> np.ndarray | None:
    """The values as read (before centring and scaling), or None for a covariance or log-transformed data."""
    if ds.is_covariance or ds.preprocessing.get("log2_floor") is not None:
        return None
    X = np.asarray(ds.matrix, dtype=float)
    if ds.scale is not None:
        X = X * ds.scale.to_numpy()
    if ds.center is not None:
        X = X + ds.center.to_numpy()
    return X


def preprocessing_advice(ds: Dataset) -> list[str]:
    """Sentences of advice on the scale of ``ds`` (empty when nothing looks amiss)."""
    X = raw_values(ds)
    advice: list[str] = []
    if X is not None and X.size:
        top = float(X.max())
        positive = X[X > 0]
        ratio = top / float(np.median(positive)) if positive.size else 0.0
        integers = bool(np.all(np.abs(X - np.round(X)) < 1e-9))
        if integers and X.min() >= 0 and top > RAW_MAX:
            advice.append(f"the values look like raw counts (whole numbers up to {top:.6g}): sparse PCA will "
                          "favour the most abundant features; log-transform them first (log1p after "
                          "library-size normalisation, as single-cell tools do)")
        elif top > RAW_MAX and ratio > RAW_RATIO:
            negatives = int((X < 0).sum())
            neg = f", {negatives} negative values" if negatives else ""
            advice.append(f"the values look like raw intensities (largest {top:.6g}, {ratio:.0f} times the median "
                          f"positive value{neg}): sparse PCA will favour the brightest features; expression "
                          "data are usually analysed on a log scale, e.g. --log2 20 (log2 with a floor of 20)")
    controls = [str(f) for f in ds.feature_ids if is_control(f)]
    if controls:
        advice.append(f"{len(controls)} features are control probes or spike-ins (AFFX-/ERCC- ids, e.g. "
                      f"{controls[0]}); they are marked in the tables when selected")
    return advice


__all__ = ["CONTROL_IDS", "is_control", "preprocessing_advice", "raw_values"]
