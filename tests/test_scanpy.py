"""scanpy's own tools on certpca's output: a fit stored under scanpy's PCA keys is used as its PCA."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pytest

import certpca
from certpca import datasets

sc = pytest.importorskip("scanpy")
anndata = pytest.importorskip("anndata")


@pytest.fixture
def pbmc():
    path, _ = datasets.h5ad("pbmc")
    adata = anndata.read_h5ad(path)
    for key in ("X_pca", "X_umap"):  # the bundled file carries scanpy's own results; start clean
        del adata.obsm[key]
    del adata.varm["PCs"], adata.uns["pca"], adata.uns["neighbors"]
    return adata


def test_neighbors_umap_and_pca_plots_run_on_the_sparse_components(pbmc, tmp_path):
    fit = certpca.fit(pbmc, k=10, n_components=3, key_added="pca")
    # scanpy's default: the highly variable genes only, the others load zero in varm["PCs"]
    assert adata_genes(pbmc, fit) == int(pbmc.var["highly_variable"].sum())
    assert pbmc.obsm["X_pca"].dtype == np.float32 and pbmc.varm["PCs"].shape == (pbmc.n_vars, 3)
    assert (np.count_nonzero(pbmc.varm["PCs"], axis=0) <= 10).all()
    sc.pp.neighbors(pbmc, use_rep="X_pca", n_neighbors=10)
    sc.tl.umap(pbmc, random_state=0)
    assert pbmc.obsm["X_umap"].shape == (pbmc.n_obs, 2) and np.isfinite(pbmc.obsm["X_umap"]).all()
    sc.pl.pca_loadings(pbmc, components="1,2", show=False)
    sc.pl.pca(pbmc, color="bulk_labels", show=False)
    sc.pl.pca_variance_ratio(pbmc, show=False)
    plt.close("all")
    # the neighbour graph is built on certpca's scores, not on a PCA scanpy computed itself
    assert pbmc.uns["neighbors"]["params"]["use_rep"] == "X_pca"
    np.testing.assert_array_equal(pbmc.obsm["X_pca"], fit.x.to_numpy(dtype=np.float32))


def test_a_named_key_is_used_as_scanpy_uses_key_added(pbmc):
    certpca.fit(pbmc, k=10, n_components=2, key_added="mypca")
    assert {"mypca"} <= set(pbmc.obsm) and {"mypca"} <= set(pbmc.varm) and {"mypca"} <= set(pbmc.uns)
    sc.pp.neighbors(pbmc, use_rep="mypca", n_neighbors=10, key_added="sparse")
    assert pbmc.obsp["sparse_connectivities"].shape == (pbmc.n_obs, pbmc.n_obs)


def adata_genes(adata, fit) -> int:
    """Genes the fit used: the rows of its rotation."""
    assert set(fit.rotation.index) <= set(adata.var_names)
    return len(fit.rotation.index)
