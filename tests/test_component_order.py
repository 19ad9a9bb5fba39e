"""Components stay in fitting order (issue 27, part 5): a later component that adds more variance than an
earlier one is said, in a warning and in summary(), and print(fit), summary() and the AnnData store agree."""

import warnings

import anndata
import numpy as np
import pandas as pd
import pytest

import certpca


@pytest.fixture(scope="module")
def pbmc_fit():
    """pbmc --scale, EM, 5 components at k = 30: PC5 adds more variance than PC4 (issue 27)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ds = certpca.load("pbmc", scale=True)
    with pytest.warns(UserWarning, match="fitting order") as caught:
        fit = certpca.fit(ds, 30, n_components=5, method="em")
    return ds, fit, caught


def test_the_increase_is_real_and_said(pbmc_fit):
    ds, fit, caught = pbmc_fit
    # the variance each adds, computed here from the loadings and the data: Gram–Schmidt in fitting order
    Q, _ = np.linalg.qr(fit.rotation.to_numpy())
    added = [ds.problem().variance(Q[:, j]) for j in range(5)]
    up = [j for j in range(1, 5) if added[j] > min(added[:j]) * (1 + 1e-9)]
    assert up, "the example no longer shows a later component adding more"
    note = fit.order_note()
    assert note is not None and all(f"PC{j + 1} (" in note for j in up)
    assert any(note == str(w.message) for w in caught)
    assert note in fit.summary().notes


def test_print_summary_and_anndata_agree_on_the_order(pbmc_fit):
    _, fit, _ = pbmc_fit
    table = fit.summary().table
    assert list(table.columns) == [f"PC{j + 1}" for j in range(5)] == list(fit.rotation.columns)
    sdev = np.array(table.loc["Standard deviation"], dtype=float)
    np.testing.assert_allclose(sdev, fit.sdev)
    printed = str(fit).splitlines()[1].split()[1:]  # R prints "[1]" first
    np.testing.assert_allclose([float(x) for x in printed], fit.sdev, rtol=1e-3)
    adata = anndata.AnnData(
        np.zeros(fit.x.shape[:1] + (len(fit.rotation),)),
        obs=pd.DataFrame(index=fit.x.index.astype(str)),
        var=pd.DataFrame(index=fit.rotation.index.astype(str)),
    )
    fit.to_anndata(adata)
    np.testing.assert_allclose(adata.uns["spca"]["variance"], fit.additional_variance)
    np.testing.assert_allclose(adata.varm["spca_loadings"], fit.rotation.to_numpy())


def test_no_note_when_the_variances_decrease():
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        fit = certpca.fit("pitprops", 6, n_components=3)
    assert np.all(np.diff(fit.additional_variance) <= 0)
    assert fit.order_note() is None and not any(n.startswith("Order") for n in fit.summary().notes)
