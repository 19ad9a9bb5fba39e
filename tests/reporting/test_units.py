"""The report names the data's rows and columns as ``Dataset.units`` does: cells and genes for AnnData,
samples and features for a CSV, in titles, captions, table headers, the data line and the CSV headers."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from certpca.io import load
from certpca.reporting import ReportOptions, compute_run, render
from certpca.reporting.tables import report_tables

#: words that name rows or columns generically
GENERIC = re.compile(r"\b(samples?|features?)\b", re.IGNORECASE)


def _matrix():
    rng = np.random.default_rng(5)
    classes = np.repeat(["B", "T", "NK"], 10)
    X = rng.normal(size=(30, 40))
    X[:, :6] += 3.0 * (classes == "B")[:, None]
    X[:, 6:12] += 3.0 * (classes == "T")[:, None]
    return X, classes


def _run(ds):
    options = ReportOptions(
        k=6,
        methods="em,threshold",
        path="1:40:3",
        path_bounds="trace,lambda1,dabe",  # the band's words, not its strength (tests/reporting/test_band.py)
        gene_sizes=(6, 12),
        gene_k=6,
        n_init=5,
        stability=6,
        progress=False,
    )
    return compute_run(ds, options)


def _prose(html: str) -> str:
    """The page's text a reader sees, less the bounds' glossary, the references and the solvers' messages
    (library text that speaks of feature-wise bounds and sample-space computations, not of the data)."""
    html = re.sub(r'<section id="(glossary|references)">.*?</section>', "", html, flags=re.S)
    html = re.sub(r'<p class="note">Solver messages:.*?</p>', "", html, flags=re.S)
    html = re.sub(r"<svg.*?</svg>", lambda m: " ".join(re.findall(r">([^<]+)<", m.group(0))), html, flags=re.S)
    return re.sub(r"<[^>]+>", " ", html)


@pytest.fixture(scope="module")
def cells():
    anndata = pytest.importorskip("anndata")
    X, classes = _matrix()
    adata = anndata.AnnData(
        X.astype(np.float32),
        obs=pd.DataFrame({"cell_type": classes}, index=[f"cell{i}" for i in range(30)]),
        var=pd.DataFrame(index=[f"GENE{j}" for j in range(40)]),
    )
    ds = load(adata, labels="cell_type")
    assert ds.units == ("cells", "genes")
    return _run(ds)


@pytest.fixture(scope="module")
def samples(tmp_path_factory):
    X, classes = _matrix()
    folder = tmp_path_factory.mktemp("csv")
    frame = pd.DataFrame(X, index=[f"s{i}" for i in range(30)], columns=[f"f{j}" for j in range(40)])
    frame.to_csv(folder / "data.csv")
    pd.Series(classes, index=frame.index, name="class").to_csv(folder / "labels.csv")
    ds = load(folder / "data.csv", labels=folder / "labels.csv")
    assert ds.units == ("samples", "features")
    return _run(ds)


def test_anndata_report_says_cells_and_genes(cells):
    html = render(cells)
    for title in (
        "The cells on the components",
        "Loadings and selected genes",
        "How stable are these genes?",
        "30 cells × 40 genes",
        "all 40 genes",
    ):
        assert title in html, title
    prose = _prose(html)
    assert GENERIC.findall(prose) == [], [prose[max(0, m.start() - 60) : m.end() + 60] for m in GENERIC.finditer(prose)]
    tables = {t.name: t for t in report_tables(cells)}
    assert "gene" in tables["features-sparse"].display.columns
    assert tables["features-sparse"].to_csv().startswith("component,rank,gene,")
    assert tables["scores-sparse"].to_csv().startswith("cell,class,")
    assert "gene" in tables["features-nonneg"].to_latex().split("\\midrule")[0]
    assert list(tables["data"].raw["quantity"][2:4]) == ["cells", "genes"]


def test_csv_report_says_samples_and_features(samples):
    html = render(samples)
    for title in ("The samples on the components", "Loadings and selected features", "How stable are these features?"):
        assert title in html, title
    # the gene-selection evaluation (its section and its headline) is named after genes whatever the data
    html = re.sub(r'<section id="genes">.*?</section>|<p><strong>Gene selection:</strong>.*?</p>', "", html, flags=re.S)
    assert not re.search(r"\b(cells?|genes?)\b", _prose(html))
    tables = {t.name: t for t in report_tables(samples)}
    assert tables["features-sparse"].to_csv().startswith("component,rank,feature,")
    assert tables["scores-sparse"].to_csv().startswith("sample,class,")


def test_the_control_probe_note_only_where_a_control_is_listed(cells):
    captions = [t.caption for t in report_tables(cells) if t.name.startswith("features-")]
    assert captions and not any("Affymetrix" in c for c in captions)
