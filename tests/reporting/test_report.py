"""certpca report / genes / table on small planted data (leukemia once, in test_leukemia.py).

What is checked: the sections, tables and SVGs are in the page; its numbers are the
``fit --json`` / ``certify --json`` numbers formatted by the one formatting function;
the same inputs give byte-identical HTML and tables; nothing is overwritten without
--force and nothing is written on bad input; ``certpca table`` rebuilds the tables from
the saved run without recomputing.
"""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from certpca.cli import main
from certpca.reporting.tables import fmt

K = 4


@pytest.fixture(scope="module")
def planted(tmp_path_factory):
    """30 samples x 24 features, 3 classes; two planted sparse directions carry the classes."""
    folder = tmp_path_factory.mktemp("data")
    rng = np.random.default_rng(7)
    n, d = 30, 24
    classes = np.repeat(["a", "b", "c"], 10)
    X = rng.normal(size=(n, d))
    X[:, :4] += 3.0 * (classes == "a")[:, None]
    X[:, 4:8] += 3.0 * (classes == "b")[:, None]
    samples = [f"s{i:02d}" for i in range(n)]
    features = [f"g{j:02d}" for j in range(d)]
    data = folder / "planted.csv"
    lines = ["sample," + ",".join(features)]
    lines += [s + "," + ",".join(f"{v:.6f}" for v in row) for s, row in zip(samples, X)]
    data.write_text("\n".join(lines) + "\n")
    labels = folder / "labels.csv"
    labels.write_text("sample,label\n" + "".join(f"{s},{c}\n" for s, c in zip(samples, classes)))
    with_col = folder / "with_class.csv"
    with_col.write_text("\n".join([lines[0] + ",class"] + [ln + "," + c for ln, c in zip(lines[1:], classes)]) + "\n")
    return {"data": data, "labels": labels, "with_col": with_col, "folder": folder}


def _report_args(planted, out, *extra):
    return [
        "report",
        str(planted["data"]),
        "--k",
        str(K),
        "--labels",
        str(planted["labels"]),
        "--gene-sizes",
        "2,4,8",
        "--gene-k",
        "4",
        "-o",
        str(out),
        *extra,
    ]


@pytest.fixture(scope="module")
def report(planted, tmp_path_factory, capsys_module=None):
    folder = tmp_path_factory.mktemp("report")
    out = folder / "report.html"
    import contextlib
    import io

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        rc = main(_report_args(planted, out, "--tables", str(folder / "tables"), "--json"))
    assert rc == 0
    return {
        "html": out.read_text(encoding="utf-8"),
        "run": json.loads(buf.getvalue()),
        "out": out,
        "folder": folder,
        "tables": folder / "tables",
    }


def _json_of(argv, capsys):
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


def test_sections_tables_and_svgs(report):
    html = report["html"]
    sections = ("data", "results", "samples", "path", "loadings", "stability", "genes", "glossary", "reproduce")
    for section in (*sections, "references"):
        assert f'<section id="{section}">' in html
    for table in (
        "data",
        "results-sparse",
        "results-nonneg",
        "bounds-sparse",
        "bounds-nonneg",
        "path-sparse",
        "path-nonneg",
        "features-sparse",
        "features-nonneg",
        "stability-sparse",
        "stability-nonneg",
        "genes",
        "genes-tests",
    ):
        assert f'id="tab-{table}"' in html, table
    # spectrum, path, two loadings, two heatmaps, two stability plots, two score plots, genes
    assert html.count("<svg") == 11
    assert html.count("<svg") == html.count("</svg>")
    assert "<script" not in html and "http://" not in html.split("<svg")[0]
    # nothing loaded from elsewhere: links within the page, and the heatmaps' pixels inline (data:image/png)
    assert not re.search(
        r'(src|href)="(?!#|data:image/png;base64,)', html.replace('xmlns:xlink="http://www.w3.org/1999/xlink"', "")
    )
    assert "certpca report " in html and "--k 4" in html  # the command
    assert "Sigg" in html and "Asteris" in html  # references
    assert "Date" not in "".join(re.findall(r"<metadata>.*?</metadata>", html, re.DOTALL))


def test_numbers_equal_fit_and_certify_json(planted, report, capsys, tmp_path):
    html, run = report["html"], report["run"]
    for nonneg in (False, True):
        flag = ["--nonneg"] if nonneg else []
        loadings = tmp_path / f"w{int(nonneg)}.csv"
        fit = _json_of(["fit", str(planted["data"]), "--k", str(K), *flag, "--out", str(loadings), "--json"], capsys)
        mine = next(f for f in run["fits"] if f["method"] == "em" and f["nonneg"] == nonneg)
        c, c_run = fit["components"][0], mine["fit"]["components"][0]
        assert c_run["value"] == c["value"] and c_run["loadings"] == c["loadings"]
        assert fmt(c["value"]) in html
        for _fid, w in c["loadings"].items():
            assert fmt(w, "loading") in html
        bounds = run["settings"]["bounds"]["nonneg" if nonneg else "sparse"]
        cert = _json_of(
            [
                "certify",
                str(planted["data"]),
                "--k",
                str(K),
                *flag,
                "--loadings",
                str(loadings),
                "--bounds",
                ",".join(bounds),
                "--json",
            ],
            capsys,
        )
        mc = mine["certificate"]
        for key in ("optimal", "winner"):
            assert mc[key] == cert[key], key
        # The same vector through the CSV round trip: equal up to the last bits of the products.
        for key in ("value", "upper_bound", "lower_bound", "certified_fraction"):
            assert mc[key] == pytest.approx(cert[key], rel=1e-13, abs=0), key
        assert mc["gap"] == pytest.approx(cert["gap"], rel=1e-9, abs=1e-13 * cert["upper_bound"]), "gap"
        assert fmt(cert["upper_bound"]) in html
        assert fmt(cert["certified_fraction"], "percent") in html


def test_byte_identical_html_and_tables(planted, report):
    first = report["out"].read_bytes()
    tables = {p.name: p.read_bytes() for p in sorted(report["tables"].iterdir())}
    assert len(tables) == 3 * 15  # data, genes, genes-tests; results, importance, bounds, path, features, scores × 2
    assert main(_report_args(planted, report["out"], "--tables", str(report["tables"]), "--force")) == 0
    assert report["out"].read_bytes() == first
    assert {p.name: p.read_bytes() for p in sorted(report["tables"].iterdir())} == tables
    tex = tables["results-sparse.tex"].decode()
    assert r"\toprule" in tex and r"\midrule" in tex and r"\bottomrule" in tex


def test_table_command_regenerates_tables(report, tmp_path, planted, capsys):
    saved = tmp_path / "run.json"
    saved.write_text(json.dumps(report["run"]))
    assert main(["table", str(saved), "--tables", str(tmp_path / "t")]) == 0
    again = {p.name: p.read_bytes() for p in (tmp_path / "t").iterdir()}
    assert again == {p.name: p.read_bytes() for p in report["tables"].iterdir()}
    # fit and certify JSON too
    fit = tmp_path / "fit.json"
    capsys.readouterr()
    assert main(["fit", str(planted["data"]), "--k", str(K), "--json"]) == 0
    fit.write_text(capsys.readouterr().out)
    assert main(["table", str(fit), "--tables", str(tmp_path / "f")]) == 0
    assert (tmp_path / "f" / "fit.tex").is_file() and (tmp_path / "f" / "fit-loadings.csv").is_file()
    assert main(["table", str(fit), "--tables", str(tmp_path / "f")]) == 2  # exists, no --force
    bad = tmp_path / "bad.json"
    bad.write_text('{"x": 1}')
    assert main(["table", str(bad), "--tables", str(tmp_path / "g")]) == 2
    assert not (tmp_path / "g").exists()


def test_refuses_to_overwrite_and_writes_nothing_on_bad_input(planted, tmp_path, capsys):
    out = tmp_path / "r.html"
    out.write_text("mine")
    assert main(_report_args(planted, out)) == 2
    assert out.read_text() == "mine"
    assert "--force" in capsys.readouterr().err
    fresh = tmp_path / "new.html"
    for bad in (["--k", "999"], ["--method", "nosuch"], ["--path", "x:y"], ["--bounds", "pattern"]):
        args = _report_args(planted, fresh, "--tables", str(tmp_path / "tabs"))
        i = args.index("--k")
        args[i : i + 2] = ["--k", str(K)]
        assert main(args + bad) == 2, bad
        err = capsys.readouterr().err
        assert err.startswith("certpca: error:") and err.count("\n") == 1, err
        assert not fresh.exists() and not (tmp_path / "tabs").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.html"]


def test_genes_command_and_label_column(planted, capsys):
    g = _json_of(
        [
            "genes",
            str(planted["data"]),
            "--labels",
            str(planted["labels"]),
            "--gene-k",
            "4",
            "--gene-sizes",
            "2,4",
            "--n-init",
            "20",
            "--json",
        ],
        capsys,
    )
    assert [r["selector"] for r in g["rows"]][0] == "full data"
    assert {(r["selector"], r["size"]) for r in g["rows"][1:]} == {(s, n) for s in g["selectors"] for n in (2, 4)}
    assert all(len(r["scores"]) == 20 for r in g["rows"])
    t = g["set_test"]  # the featured genes against random gene sets, not a test over k-means restarts
    assert g["tests"] == [] and t["size"] == 4 and 1 / 200 <= t["p_value"] <= 1 and 0 <= t["statistic"] <= 1
    # the label column of the data file gives the same run
    g2 = _json_of(
        [
            "genes",
            str(planted["with_col"]),
            "--labels",
            "class",
            "--gene-k",
            "4",
            "--gene-sizes",
            "2,4",
            "--n-init",
            "20",
            "--json",
        ],
        capsys,
    )
    assert g2["rows"] == g["rows"]
    assert main(["genes", str(planted["data"]), "--labels", "nosuch", "--gene-k", "4"]) == 2
    assert main(["genes", "pitprops", "--gene-k", "4"]) == 2  # a covariance has no labels


def test_conclusion_is_honest_both_ways():
    from certpca.reporting.genes import gene_conclusion as _gene_conclusion
    from certpca.reporting.saved import GeneSetTest

    base = GeneSetTest(0.7, 0.01, 199, 0.4, 0.6, 0.65, 0.5, 70, 10, 0)
    assert "better than random genes" in _gene_conclusion(base) and "p = 0.01" in _gene_conclusion(base)
    worse = GeneSetTest(0.45, 0.3, 199, 0.4, 0.6, 0.65, 0.5, 70, 10, 0)
    assert "no better than random genes" in _gene_conclusion(worse)


def test_image_loadings_and_no_labels(tmp_path):
    """Features that are pixels are drawn as images; without labels the gene section says why."""
    from certpca.data import Dataset
    from certpca.reporting import ReportOptions, compute_run, render

    rng = np.random.default_rng(1)
    X = rng.normal(size=(40, 16))
    X[:, [0, 5, 10, 15]] += rng.normal(size=(40, 1)) * 3
    import pandas as pd

    from certpca.data import pixel_ids, prepare

    ds = prepare(
        Dataset(
            "tiny", X, pd.Index(pixel_ids((4, 4))), pd.Index([f"s{i}" for i in range(40)]), None, image_shape=(4, 4)
        )
    )
    run = compute_run(ds, ReportOptions(k=4, methods="em,threshold", path="1:16:4", components=2, progress=False))
    html = render(run)
    assert "<image" in html or "data:image/png" in html  # imshow in SVG is an embedded PNG
    assert "4 × 4 images" in html and '<section id="genes">' not in html  # no labels: the section is left out
    assert 'id="tab-importance-sparse"' in html and "PC2" in html  # two components: importance shown
    assert render(run) == html
