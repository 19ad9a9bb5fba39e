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
    np.testing.assert_array_equal(adata.obsm["X_spca"], fit.x.to_numpy())
    np.testing.assert_array_equal(adata.varm["spca_loadings"], fit.rotation.loc[adata.var_names].to_numpy())
    uns = adata.uns["spca"]
    assert uns["params"]["k"] == 4 and uns["params"]["n_components"] == 2 and uns["params"]["center"] is True
    np.testing.assert_allclose(uns["variance"], fit.additional_variance)
    np.testing.assert_allclose(uns["variance_ratio"], fit.pev)
    assert "certificates" not in uns
    # the scores are the centred data times the loadings, as prcomp's x
    Xc = adata.X - adata.X.mean(axis=0)
    np.testing.assert_allclose(adata.obsm["X_spca"], Xc @ adata.varm["spca_loadings"], rtol=1e-12, atol=1e-12)

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
    assert back.uns["spca"]["params"]["method"] == "em"


def test_key_added_none_leaves_the_anndata_alone_and_another_key_is_kept_apart():
    adata = toy()
    certpca.fit(adata, k=3, key_added=None)
    assert "X_spca" not in adata.obsm and "spca" not in adata.uns
    certpca.fit(adata, k=3, nonneg=True, key_added="nspca")
    assert adata.uns["nspca"]["params"]["nonneg"] is True and (adata.varm["nspca_loadings"] >= 0).all()


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
