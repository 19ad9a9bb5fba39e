"""Gene annotation: symbols beside feature ids in the terminal, the loadings file and the report."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import certpca
from certpca.cli import main
from certpca.data import read_annotation, with_annotation
from certpca.errors import InputError
from certpca.reporting import ReportOptions, compute_run, render
from certpca.reporting.tables import features_table

SYMBOLS = {"GENE1": "FCGRT", "GENE2": "MYL4", "GENE10": "CD99"}  # made-up ids → symbols for the tests only


def annotation_file(path, sep=","):
    rows = [f"description{sep}probe{sep}symbol"]  # columns found by name, in any order
    rows += [f"gene {fid.lower()}{sep}{fid}{sep}{sym}" for fid, sym in SYMBOLS.items()]
    rows.append(f"not on this array{sep}NOPE_at{sep}NOPE")
    path.write_text("\n".join(rows) + "\n")
    return path


@pytest.mark.parametrize("sep,suffix", [(",", ".csv"), ("\t", ".tsv")])
def test_read_annotation_finds_ids_symbols_and_descriptions_by_name(tmp_path, sep, suffix):
    table = read_annotation(annotation_file(tmp_path / f"ann{suffix}", sep))
    assert list(table.columns) == ["symbol", "description"] and table.index.name == "feature"
    assert table.at["GENE2", "symbol"] == "MYL4" and table.at["GENE2", "description"] == "gene gene2"


def test_series_and_frames_without_names_read_by_position():
    from_series = read_annotation(pd.Series(SYMBOLS))
    assert from_series.at["GENE10", "symbol"] == "CD99" and from_series.at["GENE10", "description"] == ""
    frame = pd.DataFrame({"a": ["X1", "X2"], "b": ["d1", "d2"]}, index=["f1", "f2"])
    assert list(read_annotation(frame).loc["f2"]) == ["X2", "d2"]


@pytest.mark.parametrize(
    "content,message",
    [
        ("probe,symbol\nGENE1,A\nGENE1,B\n", "more than once (GENE1)"),
        ("probe,symbol\n", "has no rows"),
        ("probe,symbol\nZZZ,A\n", "none of the 1 ids"),
    ],
)
def test_bad_annotations_are_named(tmp_path, content, message):
    path = tmp_path / "ann.csv"
    path.write_text(content)
    with pytest.raises(InputError, match=message.replace("(", r"\(").replace(")", r"\)")):
        certpca.load("khan", annotate=path)


def test_load_keeps_one_row_per_feature_and_blank_cells_for_the_unannotated(tmp_path):
    ds = certpca.load("khan", annotate=annotation_file(tmp_path / "ann.csv"))
    assert ds.annotation.index.equals(ds.feature_ids)
    assert ds.annotation.at["GENE1", "symbol"] == "FCGRT" and ds.annotation.at["GENE3", "symbol"] == ""
    assert "NOPE_at" not in ds.annotation.index


def test_fit_carries_the_annotation_and_the_cli_shows_and_writes_it(tmp_path, capsys):
    ann = annotation_file(tmp_path / "ann.csv")
    ds = certpca.load("khan")
    fit = certpca.fit(ds, k=40, annotate=ann)
    assert fit.annotation.index.equals(fit.rotation.index)
    out_csv = tmp_path / "loadings.csv"
    code = main(["fit", "khan", "--k", "40", "--annotate", str(ann), "--no-certify", "--out", str(out_csv)])
    out = capsys.readouterr().out
    assert code == 0
    table = pd.read_csv(out_csv, index_col=0, keep_default_na=False)
    assert list(table.columns) == ["PC1", "symbol", "description"]
    assert table.at["GENE1", "symbol"] == "FCGRT"
    np.testing.assert_allclose(table["PC1"], fit.rotation["PC1"], rtol=1e-15)
    shown = [f for f in SYMBOLS if fit.rotation.at[f, "PC1"] != 0]
    for fid in shown:
        assert f"{fid} ({SYMBOLS[fid]})" in out or fit.rotation["PC1"].abs().rank(ascending=False)[fid] > 8
    # certify reads the annotated loadings file back: the annotation columns are not components
    code = main(["certify", "khan", "--k", "40", "--loadings", str(out_csv), "--bounds", "lambda1"])
    assert code == 0 and "Certificate (k=40)" in capsys.readouterr().out


def test_the_report_names_the_selected_genes(tmp_path):
    ds = with_annotation(certpca.load("khan"), read_annotation(annotation_file(tmp_path / "ann.csv")))
    options = ReportOptions(k=60, methods="em,threshold", path="", progress=False, genes=False, bounds="lambda1,dabe")
    run = compute_run(ds, options)
    selected = {fid for f in run.fits for c in f.components for fid in c.loadings}
    assert set(run.annotation) == selected & set(SYMBOLS)
    table = features_table(run, False)
    for (_, row), (_, raw) in zip(table.display.iterrows(), table.raw.iterrows()):
        symbol = SYMBOLS.get(raw["feature"], "")
        assert raw["symbol"] == symbol
        assert row["feature"].startswith(f"{raw['feature']} ({symbol})" if symbol else raw["feature"])
    shown = [SYMBOLS[f] for f in table.raw["feature"] if f in SYMBOLS]
    assert shown, "the test needs an annotated gene among the selected ones"
    assert f"({shown[0]})" in render(run)
