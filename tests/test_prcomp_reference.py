"""certpca at full cardinality against R's own prcomp, summary.prcomp and predict.prcomp.

The reference files in tests/reference/ were written by tests/reference/prcomp.R
(R 4.2.2; its version is in tests/reference/R_VERSION): prcomp on all but the last
10 samples of two bundled sets, centred and centred + scaled, 5 components, and
predict on the 10 held-out samples.  R is not needed to run these tests.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import certpca
from certpca import datasets
from certpca.data import prepare

REFERENCE = Path(__file__).parent / "reference"
HOLDOUT, RANK = 10, 5
RTOL = 1e-8
#: as prcomp.R reads them: lrs as bundled, alon log2 of the intensities floored at 20
LOG2 = {"lrs": None, "alon": 20.0}
CASES = [(name, mode) for name in ("lrs", "alon") for mode in ("center", "scale")]


def reference(name: str, mode: str, what: str) -> pd.DataFrame:
    return pd.read_csv(REFERENCE / f"{name}_{mode}_{what}.csv", index_col=None if what in ("sdev", "proportion") else 0)


def split(name: str):
    """(training Dataset, held-out samples as a raw DataFrame), the split of prcomp.R."""
    raw = datasets.raw(name)
    n = raw.n_samples
    train = replace(raw, matrix=raw.matrix[: n - HOLDOUT], sample_ids=raw.sample_ids[: n - HOLDOUT], labels=None)
    new = pd.DataFrame(raw.matrix[n - HOLDOUT :], index=raw.sample_ids[n - HOLDOUT :], columns=raw.feature_ids)
    return train, new


def relative_error(ours, theirs) -> float:
    """max |ours - R| over max |R|: relative to the scale of the matrix, so zeros do not divide."""
    ours, theirs = np.asarray(ours, dtype=float), np.asarray(theirs, dtype=float)
    return float(np.max(np.abs(ours - theirs)) / np.max(np.abs(theirs)))


def aligned(ours: pd.DataFrame, theirs: pd.DataFrame) -> pd.DataFrame:
    """``ours`` with each column's sign flipped to agree with R's (eigenvectors have no sign)."""
    signs = np.sign(np.sum(ours.to_numpy() * theirs.to_numpy(), axis=0))
    assert np.all(signs != 0)
    return ours * signs


@pytest.fixture(scope="module", params=CASES, ids=["-".join(c) for c in CASES])
def case(request):
    name, mode = request.param
    train, new = split(name)
    ds = prepare(train, center=True, scale=mode == "scale", log2=LOG2[name])
    fit = certpca.fit(ds, k=ds.n_features, n_components=RANK, method="pca")
    return name, mode, fit, new


def test_sdev_and_importance_equal_r(case):
    name, mode, fit, _ = case
    sdev = reference(name, mode, "sdev")["sdev"].to_numpy()
    assert relative_error(fit.sdev, sdev[:RANK]) < RTOL
    assert relative_error(fit.total_variance, np.sum(sdev**2)) < RTOL
    proportion = reference(name, mode, "proportion")["proportion"].to_numpy()
    assert relative_error(fit.pev, proportion[:RANK]) < RTOL
    assert relative_error(fit.cumulative, np.cumsum(proportion)[:RANK]) < RTOL
    importance = reference(name, mode, "importance").iloc[:, :RANK]
    ours = fit.importance().loc[list(importance.index)]
    assert relative_error(ours.loc["Standard deviation"], importance.loc["Standard deviation"]) < RTOL
    # summary.prcomp rounds the proportions to 5 decimals
    np.testing.assert_allclose(ours.iloc[1:].to_numpy(dtype=float), importance.iloc[1:].to_numpy(), atol=5e-6 + 1e-12)


def test_rotation_scores_and_predict_equal_r(case):
    name, mode, fit, new = case
    rotation = reference(name, mode, "rotation")
    assert list(fit.rotation.index) == list(rotation.index.astype(str))
    assert relative_error(aligned(fit.rotation, rotation), rotation) < RTOL
    x = reference(name, mode, "x")
    assert list(fit.x.index) == list(x.index.astype(str)) and list(fit.x.columns) == list(x.columns)
    assert relative_error(aligned(fit.x, x), x) < RTOL
    predicted = reference(name, mode, "predict")
    ours = fit.predict(new)
    assert list(ours.index) == list(predicted.index.astype(str))
    assert relative_error(aligned(ours, predicted), predicted) < RTOL


def test_center_and_scale_equal_r(case):
    name, mode, fit, _ = case
    center = reference(name, mode, "center")["center"]
    assert relative_error(fit.center, center) < RTOL
    if mode == "scale":
        assert relative_error(fit.scale, reference(name, mode, "scale")["scale"]) < RTOL
    else:
        assert fit.scale is False


def test_predict_on_training_data_equals_x(case):
    name, _, fit, _ = case
    train, _ = split(name)
    frame = pd.DataFrame(train.matrix, index=train.sample_ids, columns=train.feature_ids)
    np.testing.assert_allclose(fit.predict(frame), fit.x, rtol=1e-12, atol=1e-9 * np.abs(fit.x.to_numpy()).max())
    np.testing.assert_allclose(
        fit.predict(train.matrix).to_numpy(), fit.x.to_numpy(), rtol=1e-12, atol=1e-9 * np.abs(fit.x.to_numpy()).max()
    )


def test_uncentred_scaling_divides_by_the_root_mean_square_as_r():
    raw = datasets.raw("lrs")
    sub = replace(
        raw,
        matrix=raw.matrix[:100, :10],
        sample_ids=raw.sample_ids[:100],
        feature_ids=raw.feature_ids[:10],
        labels=None,
    )
    ds = prepare(sub, center=False, scale=True)
    scale = pd.read_csv(REFERENCE / "lrs_noncentred_scale.csv", index_col=0)["scale"]
    assert relative_error(ds.scale, scale) < RTOL
    fit = certpca.fit(ds, k=10, n_components=3, method="pca")
    assert fit.center is False
    x = pd.read_csv(REFERENCE / "lrs_noncentred_x.csv", index_col=0)
    assert relative_error(aligned(fit.x, x), x) < RTOL
