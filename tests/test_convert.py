"""In-memory inputs (array, DataFrame, CSR/CSC, AnnData) give the same fit and certificate as the same data via CSV."""

import anndata
import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

import certpca
from certpca.datasets import data_dir
from certpca.errors import InputError


def _table(folder, n, d, seed, noise=1e-3):
    """Counts with two planted groups of co-varying features, about 30 % zeros.

    Planted: scaled data give every feature variance 1, so a solver start at the
    largest variance is a tie broken by rounding; with clear structure every start
    reaches the same optimum, and the comparison tests the data path, not the tie.
    """
    rng = np.random.default_rng(seed)
    z = rng.gamma(1.0, 2.0, size=(n, 2))
    rate = np.full((n, d), 1.5)
    rate[:, :4] += 5 * z[:, [0]]
    rate[:, 4:9] += 3 * z[:, [1]]
    X = rng.poisson(rate) * (rng.random((n, d)) < 0.7) + rng.normal(0, noise, (n, d))
    frame = pd.DataFrame(X, index=[f"c{i}" for i in range(n)], columns=[f"g{j}" for j in range(d)])
    csv = folder / f"x{n}x{d}.csv"
    frame.to_csv(csv)
    return frame, csv


@pytest.fixture(scope="module")
def table(tmp_path_factory):
    return _table(tmp_path_factory.mktemp("conv"), 40, 12, 4)


@pytest.fixture(scope="module")
def wide_table(tmp_path_factory):
    """D > N and truly sparse (no noise): the implicit factor, not a covariance."""
    return _table(tmp_path_factory.mktemp("wide"), 24, 40, 4, noise=0.0)


#: one or more bounds of each family that runs without a solver (SDPs take minutes on the wide table)
BOUNDS = "trace,lambda1,gershgorin,dabe,pattern,threshold,spannogram,split"


def _numbers(data, **kw):
    fit = certpca.fit(certpca.load(data, **kw), k=4, n_components=2, nonneg=kw.get("scale", False))
    cert = certpca.certify(fit, bounds=BOUNDS)
    return fit, cert


def _same(a, b):
    fa, ca = a
    fb, cb = b
    for x, y in zip(fa.components, fb.components):
        assert x.variance == pytest.approx(y.variance, rel=1e-10)
        np.testing.assert_allclose(np.abs(np.asarray(x.weights)), np.abs(np.asarray(y.weights)), rtol=1e-10, atol=1e-12)
    for field in ("value", "lower_bound", "upper_bound"):
        assert getattr(ca, field) == pytest.approx(getattr(cb, field), rel=1e-10)


@pytest.mark.parametrize("shape", ["table", "wide_table"], ids=["N>D", "D>N"])
@pytest.mark.parametrize("scale", [False, True], ids=["centred", "scaled"])
def test_every_in_memory_kind_matches_csv(request, shape, scale):
    """Fits and certificates from arrays, DataFrames, CSR/CSC and AnnData (dense X, sparse layer, sparse raw)
    equal those from the CSV to 1e-10 relative.

    Scaled data give every feature variance 1, and em's plain start at the largest variance is then a tie
    broken by rounding (a different local optimum for a one-ulp difference); so scaled data are fitted
    nonnegative (random and ±PC1 starts, no tie), and the plain certificate is compared on one vector.
    """
    frame, csv = request.getfixturevalue(shape)
    truth = _numbers(csv, scale=scale)
    plain = certpca.fit(certpca.load(csv, scale=True), k=4) if scale else None
    X = frame.to_numpy()
    adata = anndata.AnnData(X=X.copy(), obs=pd.DataFrame(index=frame.index), var=pd.DataFrame(index=frame.columns))
    adata.layers["counts"] = sp.csr_matrix(X)
    adata.raw = anndata.AnnData(X=sp.csr_matrix(X), obs=adata.obs, var=adata.var)
    adata.X = np.zeros_like(X)
    for data, kw in [
        (frame, {}),
        (X, {}),
        (sp.csr_matrix(X), {}),
        (sp.csc_matrix(X), {}),
        (anndata.AnnData(X=X.copy()), {}),
        (adata, {"layer": "counts"}),
        (adata, {"use_raw": True}),
    ]:
        _same(_numbers(data, scale=scale, **kw), truth)
        if plain is not None:
            problem = certpca.load(data, scale=True, **kw).problem()
            w = np.asarray(plain.components[0].weights)
            _same(
                (plain, certpca.certify(w, problem=problem, k=4, bounds=BOUNDS)),
                (plain, certpca.certify(plain, bounds=BOUNDS)),
            )
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
    assert ds.is_sparse  # raw.X is sparse and stays so; its prepared values:
    np.testing.assert_allclose(ds.columns(np.arange(765)), raw - raw.mean(axis=0), atol=1e-10)
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
    np.testing.assert_allclose(ds.columns(np.arange(12)), certpca.load(csv).matrix, rtol=1e-12, atol=1e-14)
    assert list(ds.labels) == ["a", "b"] * 20
