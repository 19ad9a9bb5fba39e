"""In-memory inputs (array, DataFrame, CSR/CSC, AnnData) give the same fit and certificate as the same data via CSV."""

import anndata
import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

import certpca
from certpca.datasets import data_dir
from certpca.errors import InputError


@pytest.fixture(scope="module")
def table(tmp_path_factory):
    rng = np.random.default_rng(3)
    X = rng.poisson(1.0, size=(40, 12)) * (rng.random((40, 12)) < 0.5) + rng.normal(0, 1e-3, (40, 12))
    frame = pd.DataFrame(X, index=[f"c{i}" for i in range(40)], columns=[f"g{j}" for j in range(12)])
    csv = tmp_path_factory.mktemp("conv") / "x.csv"
    frame.to_csv(csv)
    return frame, csv


def _numbers(data, **kw):
    fit = certpca.fit(certpca.load(data, **kw), k=4, n_components=2)
    cert = certpca.certify(fit)
    return fit, cert


def _same(a, b):
    fa, ca = a
    fb, cb = b
    for x, y in zip(fa.components, fb.components):
        assert x.variance == pytest.approx(y.variance, rel=1e-10)
        np.testing.assert_allclose(np.abs(np.asarray(x.weights)), np.abs(np.asarray(y.weights)), rtol=1e-10, atol=1e-12)
    for field in ("value", "lower_bound", "upper_bound"):
        assert getattr(ca, field) == pytest.approx(getattr(cb, field), rel=1e-10)


def test_every_in_memory_kind_matches_csv(table):
    frame, csv = table
    truth = _numbers(csv)
    X = frame.to_numpy()
    adata = anndata.AnnData(X=X.copy(), obs=pd.DataFrame(index=frame.index), var=pd.DataFrame(index=frame.columns))
    adata.layers["counts"] = sp.csr_matrix(X)
    adata.raw = adata.copy()
    adata.X = np.zeros_like(X)
    for data, kw in [
        (frame, {}),
        (X, {}),
        (sp.csr_matrix(X), {}),
        (sp.csc_matrix(X), {}),
        (adata, {"layer": "counts"}),
        (adata, {"use_raw": True}),
    ]:
        _same(_numbers(data, **kw), truth)
    assert list(certpca.load(frame).feature_ids) == list(frame.columns)
    assert list(certpca.load(adata, use_raw=True).sample_ids) == list(frame.index)


def test_fit_takes_in_memory_data_directly(table):
    frame, csv = table
    assert certpca.fit(frame, k=4).components[0].variance == pytest.approx(
        certpca.fit(csv, k=4).components[0].variance, rel=1e-10
    )


def test_anndata_labels_from_obs(table):
    frame, _ = table
    obs = pd.DataFrame({"cell": ["a", "b"] * 20}, index=frame.index)
    ds = certpca.load(
        anndata.AnnData(X=frame.to_numpy(), obs=obs, var=pd.DataFrame(index=frame.columns)), labels="cell"
    )
    assert list(ds.labels) == ["a", "b"] * 20


@pytest.mark.parametrize(
    "data, kw, words",
    [
        (pd.DataFrame({"a": [1.0, 2.0, 3.0], "b": ["x", "y", "z"]}), {}, "not numeric"),
        (np.array([1.0, 2.0, 3.0]), {}, "2-D"),
        (np.array([[1.0, np.nan], [2.0, 3.0], [1.0, 1.0]]), {}, "missing"),
        (np.eye(3), {"layer": "counts"}, "AnnData objects only"),
        (np.eye(3), {"transpose": True}, "apply to files"),
        ({"a": 1}, {}, "not supported"),
    ],
)
def test_bad_in_memory_input_is_one_clear_line(data, kw, words):
    with pytest.raises(InputError, match=words) as err:
        certpca.load(data, **kw)
    assert "\n" not in str(err.value)


def test_missing_layer_and_obs_column_are_named():
    adata = anndata.AnnData(X=np.eye(3) + 1.0)
    with pytest.raises(InputError, match="layer 'nope'"):
        certpca.load(adata, layer="nope")
    with pytest.raises(InputError, match="not an obs column"):
        certpca.load(adata, labels="nope")


def test_bundled_pbmc_is_raw_x_with_bulk_labels():
    adata = anndata.read_h5ad(data_dir() / "pbmc68k_reduced.h5ad")
    ds = certpca.load("pbmc")
    assert ds.shape == (700, 765)
    assert ds.labels.nunique() == 10
    raw = adata.raw.X.toarray().astype(float)
    np.testing.assert_allclose(ds.matrix, raw - raw.mean(axis=0), atol=1e-10)
    assert list(ds.labels) == list(adata.obs["bulk_labels"].astype(str))
    assert certpca.load("pbmc", labels="louvain").labels.nunique() == adata.obs["louvain"].nunique()


def test_h5ad_file_with_layer_and_obs_labels(tmp_path, table):
    frame, csv = table
    adata = anndata.AnnData(
        X=np.zeros(frame.shape),
        obs=pd.DataFrame({"cell": ["a", "b"] * 20}, index=frame.index),
        var=pd.DataFrame(index=frame.columns),
    )
    adata.layers["counts"] = sp.csr_matrix(frame.to_numpy())
    path = tmp_path / "x.h5ad"
    adata.write_h5ad(path)
    ds = certpca.load(path, layer="counts", labels="cell")
    np.testing.assert_allclose(ds.matrix, certpca.load(csv).matrix, rtol=1e-12, atol=1e-14)
    assert list(ds.labels) == ["a", "b"] * 20
