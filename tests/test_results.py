"""R-style printing: summary as text, HTML, LaTeX; JSON form."""

import json

import numpy as np

from certpca.components import fit_components
from certpca.problem import Problem


def _fit():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((40, 12)) @ rng.standard_normal((12, 12))
    P = Problem.from_data(X - X.mean(0), feature_ids=[f"gene{i}" for i in range(12)])
    return fit_components(
        P,
        4,
        n_components=3,
        nonneg=True,
        restarts=2,
        data={"name": "toy", "n_samples": 40, "n_features": 12, "preprocessing": {"center": True}},
    )


def test_summary_text_like_prcomp():
    fit = _fit()
    text = str(fit.summary())
    assert "Importance of components:" in text
    for row in ("Standard deviation", "Proportion of Variance", "Cumulative Proportion", "Cardinality"):
        assert row in text
    assert "PC1" in text and "PC3" in text
    assert f"{fit.cumulative[-1]:.4f}" in text
    np.testing.assert_allclose(fit.sdev**2, fit.additional_variance)


def test_summary_html_and_latex():
    s = _fit().summary()
    assert "<table" in s.as_html() and "Cumulative Proportion" in s.as_html()
    latex = s.as_latex()
    assert r"\toprule" in latex and r"\bottomrule" in latex and "Cardinality" in latex


def test_loadings_are_indexed_by_feature_ids():
    fit = _fit()
    L = fit.rotation
    assert list(L.columns) == ["PC1", "PC2", "PC3"]
    assert list(L.index) == [f"gene{i}" for i in range(12)]


def test_json_numbers_are_numbers():
    fit = _fit()
    d = json.loads(json.dumps(fit.to_dict(), allow_nan=False))
    c = d["components"][0]
    assert isinstance(c["value"], float) and isinstance(c["cardinality"], int)
    assert c["cardinality"] == len(c["support"]) == len(c["loadings"])
    assert np.isclose(c["pev"], fit.pev[0])
