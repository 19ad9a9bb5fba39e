"""The command line: outputs, JSON, loadings CSV, and one-line errors with exit code 2."""

import json

import numpy as np
import pandas as pd
import pytest

import certpca
from certpca.cli import main


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_fit_bundled_leukemia_prints_summary(capsys):
    code, out, err = run(capsys, "fit", "leukemia", "--k", "50", "--nonneg", "--no-certify")
    assert code == 0
    assert "Importance of components:" in out and "Cardinality" in out
    assert out.startswith("Data: leukemia: 72 samples × 12582 features, centred\n")
    assert out.count("Data: ") == 1  # not again among the summary's notes
    assert "Upper bound" not in out  # --no-certify


def test_fit_certifies_every_component_and_writes_scores(capsys, tmp_path):
    """Each component's certificate is of the problem it solved (checked against brute force in
    tests/certification/test_components.py); the scores file is the prepared data times the loadings."""
    scores, loadings = tmp_path / "scores.csv", tmp_path / "loadings.csv"
    argv = ["fit", "lrs", "--k", "5", "--components", "3", "--bounds", "lambda1,dabe"]
    code, out, err = run(capsys, *argv, "--scores", str(scores), "--out", str(loadings))
    assert code == 0, err
    assert out.count("Certificate (k=5)") == 3 and "Certified fraction" in out
    assert f"Scores written to {scores}" in out
    ds = certpca.load("lrs")
    x = pd.read_csv(scores, index_col=0)
    W = pd.read_csv(loadings, index_col=0)
    assert (
        x.index.name == "sample" and list(x.index) == list(ds.sample_ids) and list(x.columns) == ["PC1", "PC2", "PC3"]
    )
    np.testing.assert_allclose(x.to_numpy(), ds.matrix @ W.loc[ds.feature_ids].to_numpy(), rtol=1e-12, atol=1e-12)
    code, out, _ = run(capsys, *argv, "--scores", str(scores), "--force", "--json")
    d = json.loads(out)
    assert d["files"] == {"scores": str(scores)}
    assert len(d["certificates"]) == 3 and all(c["upper_bound"] >= c["value"] for c in d["certificates"])


def test_fit_scores_of_a_covariance_are_refused_before_writing(capsys, tmp_path):
    target = tmp_path / "scores.csv"
    code, out, err = run(capsys, "fit", "pitprops", "--k", "3", "--scores", str(target))
    assert code == 2 and out == "" and not target.exists()
    assert err == "certpca: error: --scores needs samples, and a covariance matrix has none; drop --scores\n"


def test_fit_json_and_loadings_csv(capsys, tmp_path):
    out_csv = tmp_path / "loadings.csv"
    code, out, err = run(capsys, "fit", "pitprops", "--k", "4", "--components", "2", "--out", str(out_csv), "--json")
    assert code == 0
    d = json.loads(out)
    assert [c["cardinality"] for c in d["components"]] == [4, 4]
    L = pd.read_csv(out_csv, index_col=0)
    assert list(L.columns) == ["PC1", "PC2"] and L.index.name == "feature"
    assert L.index[0] == "topdiam"
    for j, comp in enumerate(d["components"]):
        assert sorted(L.index[L.iloc[:, j] != 0]) == sorted(comp["support"])
        w = L.iloc[:, j].to_numpy()
        C = pd.read_csv("data/pitprops.csv", index_col=0).to_numpy()
        assert np.isclose(w @ C @ w, comp["value"], rtol=1e-12)


def test_fit_reads_user_csv_with_options(capsys, tmp_path):
    rng = np.random.default_rng(0)
    X = pd.DataFrame(
        rng.standard_normal((12, 30)), columns=[f"g{i}" for i in range(30)], index=[f"s{i}" for i in range(12)]
    )
    X.T.to_csv(tmp_path / "genes_by_row.tsv", sep="\t")
    code, out, _ = run(
        capsys,
        "fit",
        str(tmp_path / "genes_by_row.tsv"),
        "--transpose",
        "--scale",
        "--k",
        "5",
        "--method",
        "threshold",
        "--json",
    )
    assert code == 0
    d = json.loads(out)
    assert d["data"]["n_samples"] == 12 and d["data"]["n_features"] == 30
    assert np.isclose(d["total_variance"], 30.0)  # unit variances after --scale


@pytest.mark.parametrize(
    "argv, message",
    [
        (["fit", "no_such_file.csv", "--k", "3"], "no_such_file.csv"),
        (["fit", "pitprops", "--k", "0"], "out of range"),
        (["fit", "pitprops", "--k", "14"], "out of range"),
        (["fit", "pitprops", "--k", "3", "--method", "nope"], "unknown method 'nope'"),
        (["fit", "pitprops", "--k", "3", "--method", "pca", "--nonneg"], "nonnegativity"),
        (["fit", "pitprops", "--k", "3", "--restarts", "-1"], "restarts"),
        (["fit", "pitprops", "--k", "three"], "invalid int value"),
        (["fit", "pitprops"], "--k"),
        (["fit", "pitprops", "--k", "3", "--out", "missing_dir/x.csv"], "does not exist"),
    ],
)
def test_bad_input_is_one_line_exit_2(capsys, argv, message):
    code, out, err = run(capsys, *argv)
    assert code == 2
    assert out == ""
    assert err.startswith("certpca: error:") and message in err
    assert err.count("\n") == 1 and "Traceback" not in err


def test_bad_file_content_writes_nothing(capsys, tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("id,a,b\ns1,1,x\ns2,2,3\ns3,4,5\n")
    target = tmp_path / "out.csv"
    target.write_text("keep me")
    code, out, err = run(capsys, "fit", str(bad), "--k", "1", "--out", str(target), "--force")
    assert code == 2 and "non-numeric" in err
    assert target.read_text() == "keep me"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.csv", "out.csv"]


def test_data_list_and_solvers(capsys):
    code, out, _ = run(capsys, "data", "list")
    assert code == 0 and "leukemia" in out and "12582" in out
    code, out, _ = run(capsys, "solvers", "--json")
    names = {s["name"] for s in json.loads(out)}
    assert {"em", "threshold", "pca"} <= names


def test_data_list_and_solvers_fit_in_100_columns(capsys):
    for argv in (["data", "list"], ["solvers"]):
        code, out, _ = run(capsys, *argv)
        lines = out.splitlines()
        assert code == 0 and max(map(len, lines)) <= 100, max(lines, key=len)
    assert "Zass, R. & Shashua, A. (2006)" in out  # the references are still printed, wrapped


def test_console_script_entry_point():
    import subprocess
    import sys

    r = subprocess.run(
        [sys.executable, "-m", "certpca", "fit", "pitprops", "--k", "2", "--json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["components"][0]["cardinality"] == 2


# ----------------------------------------------------------------- certify
def test_certify_pitprops_optimal_json(capsys):
    code, out, _ = run(capsys, "certify", "pitprops", "--k", "5", "--json")
    assert code == 0
    d = json.loads(out)
    assert d["optimal"] is True and abs(d["value"] - 3.406) < 5e-4  # Berk & Bertsimas
    assert d["upper_bound"] >= d["value"] and d["gap"] == d["upper_bound"] - d["value"]
    assert min(b["value"] for b in d["bounds"]) == d["upper_bound"]
    assert d["winner"] in {b["name"] for b in d["bounds"]}


def test_certify_audits_fit_loadings(capsys, tmp_path):
    L = tmp_path / "L.csv"
    assert main(["fit", "pitprops", "--k", "4", "--components", "2", "--out", str(L)]) == 0
    capsys.readouterr()
    code, out, _ = run(
        capsys,
        "certify",
        "pitprops",
        "--k",
        "4",
        "--loadings",
        str(L),
        "--component",
        "PC1",
        "--bounds",
        "lambda1,gershgorin",
        "--json",
    )
    assert code == 0
    d = json.loads(out)
    C = pd.read_csv("data/pitprops.csv", index_col=0).to_numpy()
    w = pd.read_csv(L, index_col=0)["PC1"].to_numpy()
    assert np.isclose(d["value"], w @ C @ w, rtol=1e-12)
    assert {b["name"] for b in d["bounds"]} == {"lambda1", "gershgorin"}
    lam1 = np.linalg.eigvalsh(C)[-1]
    assert d["value"] <= d["upper_bound"] <= lam1 * (1 + 1e-8)  # λ1 was one of the two bounds


def test_certify_loadings_with_missing_ids_are_zero(capsys, tmp_path):
    L = tmp_path / "partial.csv"
    L.write_text("feature,w\ntopdiam,0.7\nlength,0.7\n")
    code, out, _ = run(capsys, "certify", "pitprops", "--k", "2", "--loadings", str(L), "--json")
    assert code == 0
    d = json.loads(out)
    assert sorted(d["support"]) == ["length", "topdiam"]


@pytest.mark.parametrize(
    "content, argv, message",
    [
        ("feature,PC1\ntopdiam,0.5\nnope,0.5\n", [], "not in the data"),
        ("feature,PC1\ntopdiam,0.6\nlength,-0.8\n", ["--nonneg"], "negative"),
        ("feature,PC1\ntopdiam,0\nlength,0\n", [], "zero vector"),
        ("feature,PC1\ntopdiam,0.6\nlength,0.8\nmoist,0.1\n", [], "nonzeros but k = 2"),
        ("feature,PC1\ntopdiam,0.6\nlength,x\n", [], "not a number"),
        ("feature,PC1\ntopdiam,0.6\ntopdiam,0.8\n", [], "appears twice"),
        ("feature,PC1\ntopdiam,0.6\n", ["--component", "3"], "out of range"),
        ("feature,PC1\ntopdiam,0.6\n", ["--bounds", "lambda1,magic"], "unknown bound"),
    ],
)
def test_certify_rejects_bad_loadings(capsys, tmp_path, content, argv, message):
    L = tmp_path / "L.csv"
    L.write_text(content)
    code, out, err = run(capsys, "certify", "pitprops", "--k", "2", "--loadings", str(L), *argv)
    assert code == 2 and out == ""
    assert err.startswith("certpca: error:") and message in err and err.count("\n") == 1


def test_certify_missing_loadings_file(capsys):
    code, _, err = run(capsys, "certify", "pitprops", "--k", "2", "--loadings", "nowhere.csv")
    assert code == 2 and "not found" in err


def test_python_certify_attaches_to_fit():
    import certpca

    fit = certpca.fit("pitprops", 6)
    cert = certpca.certify(fit)
    assert fit.certificates == [cert] and cert.optimal
    assert abs(cert.value - 3.771) < 5e-4
    assert "certified 100.00%" in str(fit.summary())
