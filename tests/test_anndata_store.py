"""A fit stored in an AnnData as scanpy's sc.pp.pca stores PCA: obsm, varm, uns, and back from .h5ad."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import certpca

anndata = pytest.importorskip("anndata")


def toy(n: int = 40, d: int = 12, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 3)) @ rng.standard_normal((3, d)) + 0.3 * rng.standard_normal((n, d))
    obs = pd.DataFrame({"cell_type": np.repeat(["a", "b"], n // 2)}, index=[f"c{i}" for i in range(n)])
    var = pd.DataFrame(index=[f"g{j}" for j in range(d)])
    return anndata.AnnData(X=X, obs=obs, var=var)


def test_fit_stores_scores_loadings_and_parameters_in_place(tmp_path):
    adata = toy()
    fit = certpca.fit(adata, k=4, n_components=2)
    assert adata.obsm["X_spca"].dtype == np.float32  # as sc.pp.pca stores its scores
    np.testing.assert_array_equal(adata.obsm["X_spca"], fit.x.to_numpy(dtype=np.float32))
    np.testing.assert_array_equal(adata.varm["spca_loadings"], fit.rotation.loc[adata.var_names].to_numpy())
    uns = adata.uns["spca"]
    assert uns["params"]["k"] == 4 and uns["params"]["n_components"] == 2 and uns["params"]["center"] is True
    np.testing.assert_allclose(uns["variance"], fit.additional_variance)
    np.testing.assert_allclose(uns["variance_ratio"], fit.pev)
    assert "certificates" not in uns
    # the scores are the centred data times the loadings, as prcomp's x
    Xc = adata.X - adata.X.mean(axis=0)
    np.testing.assert_allclose(adata.obsm["X_spca"], Xc @ adata.varm["spca_loadings"], rtol=1e-6, atol=1e-6)

    certpca.certify(fit, bounds="lambda1,dabe,exact")
    fit.to_anndata(adata)
    certs = adata.uns["spca"]["certificates"]
    assert list(certs["upper_bound"]) == [c.upper_bound for c in fit.certificates]
    assert list(certs["optimal"]) == [c.optimal for c in fit.certificates]

    path = tmp_path / "stored.h5ad"
    adata.write_h5ad(path)
    back = anndata.read_h5ad(path)
    np.testing.assert_array_equal(back.obsm["X_spca"], adata.obsm["X_spca"])
    np.testing.assert_array_equal(back.varm["spca_loadings"], adata.varm["spca_loadings"])
    np.testing.assert_array_equal(back.uns["spca"]["certificates"]["upper_bound"], certs["upper_bound"])
    assert back.uns["spca"]["params"]["method"] == fit.options["method"] == "auto"  # the default method, stored


def test_inplace_false_leaves_the_anndata_alone_and_key_added_means_what_it_means_in_scanpy():
    adata = toy()
    certpca.fit(adata, k=3, inplace=False)
    assert "X_spca" not in adata.obsm and "spca" not in adata.uns
    fit = certpca.fit(adata, k=3, nonneg=True, key_added="nspca")
    # scanpy's sc.pp.pca(key_added="nspca") writes obsm, varm and uns under the one name
    assert adata.uns["nspca"]["params"]["nonneg"] is True and (adata.varm["nspca"] >= 0).all()
    np.testing.assert_array_equal(adata.obsm["nspca"], fit.x.to_numpy(dtype=np.float32))
    assert "X_nspca" not in adata.obsm and "nspca_loadings" not in adata.varm
    certpca.fit(adata, k=3, n_components=2, key_added="pca")  # scanpy's own PCA keys
    assert adata.obsm["X_pca"].shape == (40, 2) and adata.varm["PCs"].shape == (12, 2) and "pca" in adata.uns


def test_mask_var_follows_scanpy_highly_variable_genes_by_default():
    adata = toy(d=12)
    adata.var["highly_variable"] = np.arange(12) < 8
    fit = certpca.fit(adata, k=3, n_components=2)
    assert list(fit.rotation.index) == [f"g{j}" for j in range(8)]
    assert adata.uns["spca"]["params"]["mask_var"] == "highly_variable"
    assert not adata.varm["spca_loadings"][8:].any()  # genes outside the mask load zero, as in scanpy
    # the same as a fit of the highly variable genes alone, and mask_var=None fits every gene
    alone = certpca.fit(adata[:, :8].copy(), k=3, n_components=2, inplace=False)
    np.testing.assert_array_equal(fit.rotation.to_numpy(), alone.rotation.to_numpy())
    assert len(certpca.fit(adata, k=3, mask_var=None, inplace=False).rotation) == 12
    with pytest.raises(certpca.InputError, match="mask_var 'nope' is not a var column"):
        certpca.fit(adata, k=3, mask_var="nope")


def test_a_fit_of_raw_with_more_genes_keeps_its_loadings_in_uns():
    full = toy(d=15)
    adata = full[:, :10].copy()
    adata.raw = full
    fit = certpca.fit(adata, k=3, use_raw=True)
    assert "spca_loadings" not in adata.varm
    pd.testing.assert_frame_equal(adata.uns["spca"]["loadings"], fit.rotation)
    assert adata.uns["spca"]["params"]["use_raw"] is True
    assert list(fit.rotation.index) == [f"g{j}" for j in range(15)]


def test_storing_into_other_cells_is_refused():
    fit = certpca.fit(toy(), k=3, key_added=None)
    with pytest.raises(certpca.InputError, match="cells are not those of the fit"):
        fit.to_anndata(toy(n=30))
