"""Wide data (D ≫ N) through dask: the implicit DaskFactor gives the in-memory components and certificates."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

import certpca
from certpca import dask_factor
from certpca import problem as problem_module
from certpca.certification import certify_components
from certpca.cli import main
from certpca.dask_factor import DaskFactor
from certpca.data import chunked as chunked_module
from certpca.data.chunked import ChunkedData, open_h5ad, open_parquet
from certpca.errors import InputError, TooLarge
from certpca.problem import Problem
from tests.test_chunked import same_fit

da = pytest.importorskip("dask.array")

CHEAP = "trace,lambda1,gershgorin"


def wide(n=30, d=500, seed=0, offset=1e2):
    """Two planted sparse components (features 0-9 and 10-19) plus noise, means far from zero."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    X[:, :10] += 3.0 * rng.standard_normal((n, 1))
    X[:, 10:20] += 2.0 * rng.standard_normal((n, 1))
    return X + offset * rng.uniform(0.5, 1.5, d)


@pytest.mark.parametrize("center,scale", [(True, False), (True, True), (False, False), (False, True)])
def test_a_wide_dask_array_fits_and_certifies_as_the_same_array_in_memory(center, scale):
    X = wide()
    chunked = ChunkedData.prepare(da.from_array(X, chunks=(30, 100)), center=center, scale=scale)
    assert chunked.covariance is None and isinstance(chunked.factor, DaskFactor)
    a, b = certpca.fit(chunked, k=10), certpca.fit(certpca.load(X, center=center, scale=scale), k=10)
    same_fit(a, b)
    ca, cb = certpca.certify(a, bounds=CHEAP), certpca.certify(b, bounds=CHEAP)
    assert ca.upper_bound == pytest.approx(cb.upper_bound, rel=1e-10)
    assert [b.name for b in ca.bounds] == [b.name for b in cb.bounds]
    for x, y in zip(ca.bounds, cb.bounds, strict=True):
        assert x.value == pytest.approx(y.value, rel=1e-10)


def test_certpca_fit_takes_a_wide_dask_array_in_row_blocks():
    X = wide(seed=1)
    a = certpca.fit(da.from_array(X, chunks=(7, 64)), k=10)
    same_fit(a, certpca.fit(X, k=10))


def test_projection_deflation_of_a_wide_dask_array_matches_in_memory():
    X = wide(seed=2)
    a = certpca.fit(da.from_array(X, chunks=(30, 100)), k=10, n_components=2)
    b = certpca.fit(X, k=10, n_components=2)
    same_fit(a, b)
    ca, cb = certify_components(a, bounds=CHEAP), certify_components(b, bounds=CHEAP)
    assert len(ca) == len(cb) == 2
    for x, y in zip(ca, cb, strict=True):
        assert x.upper_bound == pytest.approx(y.upper_bound, rel=1e-10)


def test_the_products_of_the_dask_factor_are_those_of_the_dense_factor():
    X = wide(n=12, d=90, seed=3)
    mean, sd = X.mean(axis=0), X.std(axis=0, ddof=1)
    F = (X - mean) / sd / np.sqrt(11)
    S = DaskFactor(da.from_array(X, chunks=(5, 20)), mean, sd)
    w = np.zeros(90)
    w[[3, 50]] = [0.6, 0.8]
    S = S.deflate(w)
    F = F - np.outer(F @ w, w)
    v, u = np.random.default_rng(0).standard_normal((2, 90)), np.ones((12, 2))
    scale = np.abs(F).max()
    for got, want in [
        (S.dense(), F),
        (S.matvec(v[0]), F @ v[0]),
        (S.matvec(w), F @ w),
        (S.matvec(v.T), F @ v.T),
        (S.rmatvec(u), F.T @ u),
        (S.column_norms2(), np.sum(F * F, axis=0)),
        (S.gram(), F @ F.T),
        (S.subset([5, 1, 70]).dense(), F[:, [5, 1, 70]]),
        (S.ldexp(-3).dense(), F / 8),
        (S.cross(u), F.T @ u),
    ]:
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12 * scale * 90)
    assert S.max_abs() == pytest.approx(scale, rel=1e-14)


def test_wide_blocks_of_a_scipy_sparse_matrix_agree_with_the_sparse_matrix_in_memory():
    S = sp.random(20, 300, density=0.5, random_state=2, format="csr")
    a = certpca.fit(da.from_array(S, chunks=(7, 64), asarray=False), k=5, n_components=2)
    same_fit(a, certpca.fit(S, k=5, n_components=2))


class Recorded:
    """An array that records which column ranges dask reads from it."""

    def __init__(self, X):
        self.X, self.shape, self.dtype, self.ndim, self.read = X, X.shape, X.dtype, X.ndim, []

    def __getitem__(self, key):
        self.read.append((key[1].start, key[1].stop))
        return self.X[key]


def test_a_product_with_a_sparse_vector_reads_only_the_blocks_of_its_columns():
    X = wide(seed=10)
    source = Recorded(X)
    S = DaskFactor(da.from_array(source, chunks=(30, 100)), X.mean(axis=0))
    v = np.zeros(500)
    v[[3, 250, 260]] = [1.0, -2.0, 0.5]
    source.read.clear()
    got = S.matvec(v)
    assert sorted(set(source.read)) == [(0, 100), (200, 300)]
    np.testing.assert_allclose(got, (X - X.mean(axis=0)) @ v / np.sqrt(29), rtol=1e-12)


def test_a_two_worker_local_cluster_gives_the_in_memory_result():
    distributed = pytest.importorskip("distributed")
    X = wide(seed=4)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None) as c:
        with distributed.Client(c) as client:
            # two column blocks, one per worker: each product still sums blocks made on the cluster, and costs the
            # scheduler half the tasks of five blocks
            a = certpca.fit(da.from_array(X, chunks=(30, 250)), k=10, n_components=2, client=client)
            ca = certpca.certify(a, bounds=CHEAP)
    b = certpca.fit(X, k=10, n_components=2)
    same_fit(a, b)
    assert ca.upper_bound == pytest.approx(certpca.certify(b, bounds=CHEAP).upper_bound, rel=1e-10)


def test_the_dense_factor_beyond_the_limit_is_too_large_and_its_bounds_are_skipped(monkeypatch):
    X = wide(seed=5)
    monkeypatch.setattr(problem_module, "FACTOR_BYTES", 8 * 30 * 100)
    problem = ChunkedData.prepare(da.from_array(X, chunks=(30, 100))).problem()
    with pytest.raises(TooLarge, match="dense 30 × 500 factor of the dask data"):
        problem.factor()
    a = certpca.fit(problem, k=10)
    cert = certpca.certify(a)
    assert cert.skipped and all("dask data" in why for why in cert.skipped.values())
    assert cert.upper_bound >= cert.value
    assert {b.name for b in cert.bounds} >= {"trace", "lambda1"}


def test_wide_constant_features_are_dropped_as_in_memory():
    X = wide(n=20, d=60, seed=6)
    X[:, 7] = 2.5
    with pytest.warns(UserWarning, match="dropped 1 constant"):
        chunked = ChunkedData.prepare(da.from_array(X, chunks=(20, 25)))
    assert "f8" not in chunked.feature_ids and chunked.n_features == 59
    same_fit(certpca.fit(chunked, k=5), certpca.fit(np.delete(X, 7, axis=1), k=5))


def test_neither_the_covariance_nor_the_gram_matrix_fits(monkeypatch):
    monkeypatch.setattr(chunked_module, "MAX_FEATURES", 10)
    with pytest.raises(InputError, match="N × N Gram matrix"):
        ChunkedData.prepare(da.from_array(wide(n=20, d=60)))
    assert isinstance(ChunkedData.prepare(da.from_array(wide(n=8, d=60))).problem(), Problem)


def test_a_wide_zarr_store_on_the_command_line(tmp_path, capsys):
    zarr = pytest.importorskip("zarr")
    X = wide(n=25, d=400, seed=7)
    store = zarr.open_array(str(tmp_path / "cpg.zarr"), mode="w", shape=X.shape, chunks=(25, 128), dtype="f8")
    store[:] = X
    out = tmp_path / "loadings.csv"
    assert main(["fit", str(tmp_path / "cpg.zarr"), "--k", "5", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "25 samples × 400 features (chunked)" in printed and "Certificate (k=5)" in printed
    memory = certpca.fit(X, k=5)
    np.testing.assert_allclose(pd.read_csv(out, index_col=0)["PC1"], memory.rotation["PC1"], rtol=1e-10, atol=1e-12)


def test_a_wide_h5ad_file_is_read_in_blocks_of_whole_columns(tmp_path, monkeypatch):
    ad = pytest.importorskip("anndata")
    monkeypatch.setattr(dask_factor, "BLOCK_BYTES", 8 * 25 * 150)  # blocks of 150 columns
    X = wide(n=25, d=400, seed=8)
    obs, var = pd.DataFrame(index=[f"c{i}" for i in range(25)]), pd.DataFrame(index=[f"g{j}" for j in range(400)])
    ad.AnnData(X=X, obs=obs, var=var).write_h5ad(tmp_path / "cpg.h5ad")
    chunked = open_h5ad(tmp_path / "cpg.h5ad", scale=True)
    assert chunked.array.chunks == ((25,), (150, 150, 100)) and chunked.feature_ids[0] == "g0"
    same_fit(certpca.fit(chunked, k=5), certpca.fit(certpca.load(X, scale=True), k=5))


def test_a_directory_of_parquet_files_with_features_as_rows(tmp_path, capsys):
    pytest.importorskip("pyarrow")
    X = wide(n=20, d=300, seed=9)
    table = pd.DataFrame(X.T, columns=[f"s{i}" for i in range(20)], index=pd.Index([f"cg{j}" for j in range(300)]))
    (tmp_path / "cpg").mkdir()
    table.iloc[:120].rename_axis("cpg").to_parquet(tmp_path / "cpg" / "part0.parquet")
    table.iloc[120:].rename_axis("cpg").to_parquet(tmp_path / "cpg" / "part1.parquet")
    chunked = open_parquet(tmp_path / "cpg", transpose=True)
    assert chunked.feature_ids[0] == "cg0" and chunked.sample_ids[-1] == "s19" and chunked.factor is not None
    out = tmp_path / "loadings.csv"
    argv = ["fit", str(tmp_path / "cpg"), "--chunked", "--transpose", "--k", "5", "--bounds", CHEAP, "--out", str(out)]
    assert main(argv) == 0
    assert "cpg: 20 samples × 300 features (chunked)" in capsys.readouterr().out
    memory = certpca.fit(pd.DataFrame(X, columns=table.index), k=5)
    np.testing.assert_allclose(pd.read_csv(out, index_col=0)["PC1"], memory.rotation["PC1"], rtol=1e-10, atol=1e-12)
    table.reset_index().assign(note="x").to_parquet(tmp_path / "bad.parquet")
    assert main(["fit", str(tmp_path / "bad.parquet"), "--chunked", "--k", "5"]) == 2
    assert "1 non-numeric columns" in capsys.readouterr().err
