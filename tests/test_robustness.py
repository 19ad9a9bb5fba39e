"""Issue-11 promises checked one by one: labels, gene-selection sizes, the data line, orientation, the headline."""

from __future__ import annotations

import contextlib
import gzip
import io
import json

import numpy as np
import pandas as pd
import pytest

import certpca
from certpca.cli import main
from certpca.data import Dataset, clustering_classes, prepare
from certpca.data.advice import orientation_warning
from certpca.reporting import ReportOptions, compute_run


@pytest.fixture()
def folder(tmp_path):
    X = np.random.default_rng(0).normal(size=(20, 8))
    (tmp_path / "good.csv").write_text(
        "sample,"
        + ",".join(f"g{j}" for j in range(8))
        + "\n"
        + "".join(f"s{i}," + ",".join(f"{v:.5f}" for v in r) + "\n" for i, r in enumerate(X))
    )
    (tmp_path / "one.csv").write_text("sample,label\n" + "".join(f"s{i},a\n" for i in range(20)))
    (tmp_path / "empty.csv").write_text(
        "sample,label\n" + "".join(f"s{i},{'' if i == 2 else 'ab'[i % 2]}\n" for i in range(20))
    )
    (tmp_path / "two.csv").write_text("sample,label\n" + "".join(f"s{i},{'ab'[i % 2]}\n" for i in range(20)))
    return tmp_path


def _run(argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([str(a) for a in argv])
    return code, out.getvalue(), err.getvalue()


def test_an_empty_label_is_refused_with_the_sample_named(folder):
    code, out, err = _run(["genes", folder / "good.csv", "--labels", folder / "empty.csv"])
    assert code == 2 and out == ""
    assert err.strip() == (
        "certpca: error: labels file empty.csv has an empty label for 1 sample(s) (s2); "
        "fill them in or remove those samples"
    )


def test_one_class_cannot_score_a_clustering(folder):
    assert clustering_classes(pd.Series(["a"] * 5)) is not None
    assert clustering_classes(pd.Series(["a", "a", "b"])) is not None  # b has one sample
    assert clustering_classes(pd.Series(["a", "a", "b", "b"])) is None
    code, _, err = _run(["genes", folder / "good.csv", "--labels", folder / "one.csv"])
    assert code == 2 and "the labels have 1 class (a); it needs at least two" in err
    out_file = folder / "r.html"
    code, out, err = _run(
        ["report", folder / "good.csv", "--k", "3", "--labels", folder / "one.csv", "-o", out_file, "--path", ""]
    )
    assert code == 0 and "Note: gene selection not run: the labels have 1 class" in out
    html = out_file.read_text(encoding="utf-8")
    assert '<section id="genes">' not in html and "gene selection not run" in html


def test_a_gene_selection_size_beyond_the_data_is_refused_not_clipped(folder):
    code, _, err = _run(
        [
            "report",
            folder / "good.csv",
            "--k",
            "3",
            "--labels",
            folder / "two.csv",
            "--gene-k",
            "500",
            "-o",
            folder / "r.html",
        ]
    )
    assert code == 2 and not (folder / "r.html").exists()
    assert err.strip() == (
        "certpca: error: --gene-k is out of range: got 500; choose a value from 1 to 8 (the data have 8 features)"
    )
    code, _, err = _run(
        ["genes", folder / "good.csv", "--labels", folder / "two.csv", "--gene-k", "9", "--n-init", "2"]
    )
    assert code == 2 and "--gene-k is out of range: got 9" in err
    code, out, _ = _run(
        ["genes", folder / "good.csv", "--labels", folder / "two.csv", "--n-init", "2", "--gene-sizes", "2,4", "--json"]
    )
    assert code == 0 and json.loads(out)["featured"] == 8  # default size: every feature of small data


@pytest.mark.parametrize("command", [["fit", "--k", "3"], ["certify", "--k", "3"], ["path", "--k", "1:8:3"]])
def test_every_summary_starts_with_the_shape_and_preprocessing(folder, command):
    code, out, _ = _run([command[0], folder / "good.csv", *command[1:]])
    assert code == 0 and out.splitlines()[0] == "Data: good: 20 samples × 8 features, centred"


def test_a_transposed_expression_table_is_noticed(tmp_path):
    ds = certpca.load("leukemia")
    frame = pd.DataFrame(ds.matrix[:, :300].T, index=ds.feature_ids[:300], columns=ds.sample_ids)
    frame.index.name = "id"
    frame.to_csv(tmp_path / "genes_as_rows.csv")
    assert orientation_warning(certpca.load("leukemia")) is None
    code, out, _ = _run(["fit", tmp_path / "genes_as_rows.csv", "--k", "3"])
    assert code == 0 and out.splitlines()[0] == "Data: genes_as_rows: 300 samples × 72 features, centred"
    assert "the sample ids look like feature ids (e.g. AFFX-MurIL2_at)" in out and "--transpose" in out
    code, out, _ = _run(["fit", tmp_path / "genes_as_rows.csv", "--k", "3", "--transpose"])
    assert code == 0 and "ids look like" not in out


def test_the_headline_certifies_the_best_vector_the_run_saw():
    """khan, k = 50: gpower-l0's warm-started path finds 35.6137 where the fits at k find 35.6117."""
    ds = certpca.load("khan")
    options = ReportOptions(k=50, methods="gpower-l0", nonneg_modes=(False,), path="40,50", genes=False, progress=False)
    run = compute_run(ds, options)
    best = run.best_fit(False)
    path_at_k = max(p.points[-1].value for p in run.paths_of(False))
    fit_at_k = next(f.value for f in run.fits if f.method == "gpower-l0")
    assert path_at_k > fit_at_k  # the case of the issue, reproduced
    assert best.method == "gpower-l0 (path)" and best.value == path_at_k
    assert best.certificate.value == pytest.approx(path_at_k, rel=1e-12)
    assert any("warm-started path found a better" in n for n in run.notes)


def test_a_users_table_with_ids_like_samples_as_features_is_noticed():
    X = np.random.default_rng(1).normal(size=(5, 12))
    ds = prepare(
        Dataset("t", X, pd.Index([f"GSM{100 + j}" for j in range(12)]), pd.Index([f"p{i}" for i in range(5)]), None)
    )
    assert "feature ids look like sample ids" in orientation_warning(ds)


@pytest.mark.parametrize("power", [300, -300])
def test_extreme_magnitudes_are_worked_in_safe_units_and_say_so(tmp_path, power):
    X = np.random.default_rng(4).normal(size=(15, 6))
    for name, factor in (("plain", 1.0), ("scaled", 10.0**power)):
        (tmp_path / f"{name}.csv").write_text(
            "sample,"
            + ",".join(f"g{j}" for j in range(6))
            + "\n"
            + "".join(f"s{i}," + ",".join(repr(float(v * factor)) for v in r) + "\n" for i, r in enumerate(X))
        )
    values = {}
    for name in ("plain", "scaled"):
        code, out, err = _run(["certify", tmp_path / f"{name}.csv", "--k", "3", "--json"])
        assert code == 0, err
        values[name] = json.loads(out)["value"]
    code, out, err = _run(["fit", tmp_path / "scaled.csv", "--k", "3"])
    exponent = int(out.splitlines()[0].rsplit("divided by 2^", 1)[1])
    assert code == 0 and "were divided by 2^" in err
    # variance(scaled) · 4^e = variance(plain) · 10^(2·power), compared on the log scale
    lhs = np.log(values["scaled"]) + 2 * exponent * np.log(2.0)
    assert lhs == pytest.approx(np.log(values["plain"]) + 2 * power * np.log(10.0), rel=1e-9)


def test_files_that_are_not_what_they_seem_get_their_own_message(tmp_path):
    (tmp_path / "semi.csv").write_text("sample;g1;g2\ns1;1,5;2,5\ns2;3,1;4,2\ns3;1,0;0,3\n")
    whole = gzip.compress(("sample,g1\n" + "".join(f"s{i},{i * 0.37:.5f}\n" for i in range(2000))).encode())
    (tmp_path / "trunc.csv.gz").write_bytes(whole[: len(whole) // 2])
    (tmp_path / "plain.csv.gz").write_text("sample,g1\ns1,1\n")
    expected = {
        "semi.csv": "semi.csv looks semicolon-separated (with decimal commas?); save it comma- or tab-separated "
        "with decimal points",
        "trunc.csv.gz": "trunc.csv.gz ends early (truncated); download it again or give the uncompressed file",
        "plain.csv.gz": "plain.csv.gz is not a gzip file; download it again or give the uncompressed file",
    }
    for name, message in expected.items():
        code, out, err = _run(["fit", tmp_path / name, "--k", "1"])
        assert code == 2 and out == "" and err.strip() == f"certpca: error: {message}"
