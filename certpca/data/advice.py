"""What a careful analyst would say about the values before sparse PCA: raw intensities, raw counts, controls.

Sparse PCA on raw microarray intensities or raw counts selects the brightest
features: their variance grows with their mean.  Expression data are usually
analysed on a log scale, so the report and the terminal say so when the values
look raw.  The tests are simple and stated in the message, so a reader can judge
them.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

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
#: the raw values are read this many bytes of features at a time (a few temporaries of this size each)
BLOCK_BYTES = 2**22


def is_control(feature_id: str) -> bool:
    """True for an Affymetrix control probe set (``AFFX-``) or an ERCC spike-in (``ERCC-``)."""
    return bool(CONTROL_IDS.match(str(feature_id)))


def raw_blocks(ds: Dataset) -> Iterator[np.ndarray]:
    """The values as read (before centring and scaling), a block of features at a time; none for a
    covariance or log-transformed data.

    Blocks of about ``BLOCK_BYTES``, so the advice on wide data holds no second copy of the
    matrix.  Sparse data give their stored values (and one 0 when some are implicit), not an N × D
    array: what the advice looks at (extremes, positive values, whole numbers) is the same.
    """
    if ds.is_covariance or ds.preprocessing.get("log2_floor") is not None:
        return iter(())
    if not isinstance(ds.matrix, np.ndarray):  # sparse
        zeros = ds.matrix.nnz < ds.matrix.shape[0] * ds.matrix.shape[1]
        return iter([ds.matrix.data, np.zeros(1)] if zeros else [ds.matrix.data])
    return _dense_raw_blocks(ds)


def _dense_raw_blocks(ds: Dataset) -> Iterator[np.ndarray]:
    """:func:`raw_blocks` of a dense matrix: the prepared values undone (scale, centre, unit exponent)."""
    X = np.asarray(ds.matrix, dtype=float)
    exponent = 0 if ds.deferred else int(ds.preprocessing.get("unit_exponent", 0))
    scale = None if ds.deferred or ds.scale is None else ds.scale.to_numpy()
    center = None if ds.deferred or ds.center is None else ds.center.to_numpy()
    step = max(1, BLOCK_BYTES // (8 * max(X.shape[0], 1)))
    for j in range(0, X.shape[1], step):
        block = X[:, j : j + step]
        if exponent:  # values beyond 2^±300 were divided by 2^exponent; center is in the data's own units
            block = np.ldexp(block, exponent)
        if scale is not None:
            block = block * scale[j : j + step]
        if center is not None:
            block = block + center[j : j + step]
        yield block


@dataclass(frozen=True)
class RawSummary:
    """What the advice reads off the raw values: extremes, negatives, whole numbers, median positive."""

    top: float
    bottom: float
    negatives: int
    integers: bool
    median_positive: float  # 0 when no value is positive


def raw_summary(ds: Dataset) -> RawSummary | None:
    """:class:`RawSummary` of the raw values in two passes over :func:`raw_blocks` (None when there are none):
    the first finds the extremes and counts, the second gathers the positive values into one array
    for their median (at most the matrix's size, never a copy of it with its temporaries)."""
    top, bottom, negatives, positives, integers, size = -np.inf, np.inf, 0, 0, True, 0
    for block in raw_blocks(ds):
        if not block.size:
            continue
        size += block.size
        top, bottom = max(top, float(block.max())), min(bottom, float(block.min()))
        negatives += int(np.count_nonzero(block < 0))
        positives += int(np.count_nonzero(block > 0))
        integers = integers and bool(np.all(np.abs(block - np.round(block)) < 1e-9))
    if not size:
        return None
    gathered, at = np.empty(positives), 0
    for block in raw_blocks(ds):
        values = block[block > 0]
        gathered[at : at + values.size] = values
        at += values.size
    median = float(np.median(gathered, overwrite_input=True)) if positives else 0.0
    return RawSummary(top, bottom, negatives, integers, median)


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
    raw = raw_summary(ds)
    advice: list[str] = []
    turned = orientation_warning(ds)
    if turned:
        advice.append(turned)
    if raw is not None:
        top = raw.top
        ratio = top / raw.median_positive if raw.median_positive else 0.0
        if raw.integers and raw.bottom >= 0 and top > RAW_MAX:
            advice.append(
                f"the values look like raw counts (whole numbers up to {top:.6g}): sparse PCA will "
                "favour the most abundant features; log-transform them first (log1p after "
                "library-size normalisation, as single-cell tools do)"
            )
        elif top > RAW_MAX and ratio > RAW_RATIO:
            neg = f", {raw.negatives} negative values" if raw.negatives else ""
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
    "RawSummary",
    "raw_blocks",
    "raw_summary",
]
