"""Data read in row blocks through dask: the same components, certificates and scores as in memory."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

import certpca
from certpca.cli import main
from certpca.data.chunked import ChunkedData, moments, open_h5ad, open_zarr
from certpca.errors import InputError

da = pytest.importorskip("dask.array")

BOUNDS = "lambda1,gershgorin,dabe,exact"


def planted(n=600, d=30, seed=0, offset=1e3):
    """Two planted sparse components (features 0-5 and 6-11, well separated so that every solver
    start finds them) plus noise, far from zero so that an uncentred sum of squares loses digits."""
    rng = np.random.default_rng(seed)
    U = np.zeros((2, d))
    U[0, :6], U[1, 6:12] = 3.0, 1.5
    X = rng.standard_normal((n, 2)) @ U + rng.standard_normal((n, d))
    return X + offset * rng.uniform(0.5, 1.5, d)


def same_fit(a, b, rtol=1e-10):
    np.testing.assert_allclose(a.rotation, b.rotation, rtol=rtol, atol=rtol)
    np.testing.assert_allclose(a.additional_variance, b.additional_variance, rtol=rtol)
    scale = np.abs(b.x.to_numpy()).max()
    np.testing.assert_allclose(a.x, b.x, rtol=rtol, atol=rtol * scale)


@pytest.mark.parametrize("center,scale", [(True, False), (True, True), (False, False)])
def test_a_dask_array_fits_and_certifies_as_the_same_array_in_memory(center, scale):
    X = planted()
    chunked = ChunkedData.prepare(da.from_array(X, chunks=(77, 30)), center=center, scale=scale)
    memory = certpca.load(X, center=center, scale=scale)
    np.testing.assert_allclose(
        chunked.covariance, memory.problem().dense(), rtol=1e-10, atol=1e-10 * memory.problem().trace
    )
    a, b = certpca.fit(chunked, k=6, n_components=2), certpca.fit(memory, k=6, n_components=2)
    same_fit(a, b)
    ca, cb = certpca.certify(a, bounds=BOUNDS), certpca.certify(b, bounds=BOUNDS)
    assert ca.upper_bound == pytest.approx(cb.upper_bound, rel=1e-10) and ca.optimal == cb.optimal
    np.testing.assert_allclose(a.predict(pd.DataFrame(X, columns=a.rotation.index)), a.x, rtol=1e-9, atol=1e-9)


def test_moments_merge_blocks_of_any_size_exactly_as_one_pass():
    X = planted(n=101, d=7)
    n, mean, cross = moments(da.from_array(X, chunks=(13, 3)))
    centred = X - X.mean(axis=0)
    assert n == 101
    np.testing.assert_allclose(mean, X.mean(axis=0), rtol=1e-14)
    np.testing.assert_allclose(cross, centred.T @ centred, rtol=1e-10, atol=1e-10 * np.trace(centred.T @ centred))


def test_blocks_of_a_scipy_sparse_matrix_agree_with_the_dense_matrix():
    S = sp.random(
        1500, 40, density=0.05, random_state=3, format="csr", data_rvs=lambda m: np.log1p(np.arange(m) % 7 + 1)
    )
    chunked = ChunkedData.prepare(da.from_array(S, chunks=(200, 40), asarray=False))
    memory = certpca.load(S.toarray())
    same_fit(certpca.fit(chunked, k=5), certpca.fit(memory, k=5))


def test_constant_features_are_dropped_or_refused_as_in_memory():
    X = planted(n=50, d=6)
    X[:, 2] = 4.0
    with pytest.warns(UserWarning, match="dropped 1 constant"):
        chunked = ChunkedData.prepare(da.from_array(X, chunks=(10, 6)))
    assert list(chunked.feature_ids) == ["f1", "f2", "f4", "f5", "f6"]
    with pytest.raises(InputError, match="cannot be scaled"):
        ChunkedData.prepare(da.from_array(X, chunks=(10, 6)), scale=True)


def test_a_zarr_store_on_the_command_line(tmp_path, capsys):
    zarr = pytest.importorskip("zarr")
    X = planted(n=200, d=12)
    store = zarr.open_array(str(tmp_path / "cells.zarr"), mode="w", shape=X.shape, chunks=(50, 12), dtype="f8")
    store[:] = X
    store.attrs["feature_ids"] = [f"gene{j}" for j in range(12)]
    chunked = open_zarr(tmp_path / "cells.zarr")
    assert chunked.name == "cells" and chunked.feature_ids[0] == "gene0"
    out = tmp_path / "loadings.csv"
    assert main(["fit", str(tmp_path / "cells.zarr"), "--k", "4", "--bounds", "lambda1", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "200 samples × 12 features (chunked)" in printed and "Certificate (k=4)" in printed
    memory = certpca.fit(certpca.load(pd.DataFrame(X, columns=[f"gene{j}" for j in range(12)])), k=4)
    np.testing.assert_allclose(pd.read_csv(out, index_col=0)["PC1"], memory.rotation["PC1"], rtol=1e-10, atol=1e-12)
    assert main(["fit", str(tmp_path / "cells.zarr"), "--k", "4", "--log2", "1"]) == 2
    assert "--log2 do(es) not apply to data read in chunks" in capsys.readouterr().err
    assert main(["fit", "pitprops", "--k", "4", "--scheduler", "127.0.0.1:1"]) == 2
    assert "--scheduler applies to data read in chunks" in capsys.readouterr().err


def test_a_two_worker_local_cluster_gives_the_in_memory_result():
    distributed = pytest.importorskip("distributed")
    X = planted(n=400, d=20, seed=5)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=None) as cluster:
        with distributed.Client(cluster) as client:
            a = certpca.fit(da.from_array(X, chunks=(50, 20)), k=5, n_components=2, client=client)
    same_fit(a, certpca.fit(X, k=5, n_components=2))


def _cells_h5ad(path):
    """An AnnData of sparse log counts (CSR, float32, as scanpy writes them) with a layer and raw."""
    ad = pytest.importorskip("anndata")
    X = sp.random(700, 30, density=0.2, random_state=1, format="csr", dtype=np.float32)
    X.data = np.log1p(10 * X.data)
    obs, var = pd.DataFrame(index=[f"c{i}" for i in range(700)]), pd.DataFrame(index=[f"g{j}" for j in range(30)])
    adata = ad.AnnData(X=X, obs=obs, var=var, layers={"doubled": 2 * X})
    adata.raw = adata[:, :20].copy()
    adata.write_h5ad(path)
    return adata


def test_an_h5ad_file_read_lazily_gives_the_in_memory_fit(tmp_path):
    adata = _cells_h5ad(tmp_path / "cells.h5ad")
    chunked = open_h5ad(tmp_path / "cells.h5ad", rows=128)
    assert chunked.name == "cells" and chunked.sample_ids[3] == "c3" and chunked.feature_ids[0] == "g0"
    assert chunked.array.chunks[0][0] == 128  # read 128 cells at a time, never whole
    same_fit(certpca.fit(chunked, k=5), certpca.fit(certpca.load(adata.copy()), k=5))
    doubled = certpca.fit(open_h5ad(tmp_path / "cells.h5ad", layer="doubled"), k=5)
    assert doubled.components[0].variance == pytest.approx(4 * certpca.fit(chunked, k=5).components[0].variance)
    raw = open_h5ad(tmp_path / "cells.h5ad", use_raw=True)
    assert raw.n_features == 20 and raw.feature_ids[-1] == "g19"
    with pytest.raises(InputError, match="layer 'counts' is not in"):
        open_h5ad(tmp_path / "cells.h5ad", layer="counts")


def test_an_h5ad_file_on_the_command_line_with_chunked(tmp_path, capsys):
    adata = _cells_h5ad(tmp_path / "cells.h5ad")
    out = tmp_path / "loadings.csv"
    argv = ["fit", str(tmp_path / "cells.h5ad"), "--chunked", "--k", "4", "--bounds", "lambda1", "--out", str(out)]
    assert main(argv) == 0
    assert "700 samples × 30 features (chunked)" in capsys.readouterr().out
    memory = certpca.fit(certpca.load(adata.copy()), k=4)
    np.testing.assert_allclose(pd.read_csv(out, index_col=0)["PC1"], memory.rotation["PC1"], rtol=1e-10, atol=1e-12)
    assert main(["fit", "pitprops", "--k", "4", "--chunked"]) == 2
    assert "--chunked applies to .h5ad files and parquet" in capsys.readouterr().err
    assert main(["fit", str(tmp_path / "cells.h5ad"), "--chunked", "--k", "4", "--log2", "1"]) == 2
    assert "--log2 do(es) not apply to data read in chunks" in capsys.readouterr().err
