"""``certpca certify``: its own vector is the default fit's, replaced by any better one the bounds find;
``--loadings FILE --better OUT`` writes the better vector a bound found.  Checked against brute force
over the supports of pitprops (13 features; tests/brute.py)."""

import json

import numpy as np
import pandas as pd
import pytest

from certpca.cli import fitting, main
from certpca.data import read_loadings
from tests.brute import brute_force

C = pd.read_csv("data/pitprops.csv", index_col=0)
IDS = list(C.index.astype(str))


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _poor_loadings(tmp_path):
    """PC1 on three features of pitprops that are far from the k = 3 optimum."""
    opt, w_opt = brute_force(C.to_numpy(), 3)
    worst = np.argsort(np.abs(w_opt) + np.diag(C.to_numpy()) / 1e6)[:3]  # off the optimal support
    w = np.zeros(len(IDS))
    w[worst] = 1.0 / np.sqrt(3)
    path = tmp_path / "L.csv"
    pd.DataFrame({"PC1": w}, index=pd.Index(IDS, name="feature")).to_csv(path)
    return path, w, opt


def test_better_writes_the_optimum_the_exact_search_found(capsys, tmp_path):
    L, w, opt = _poor_loadings(tmp_path)
    out_file = tmp_path / "better.csv"
    argv = ["certify", "pitprops", "--k", "3", "--loadings", str(L), "--bounds", "lambda1,exact", "--better"]
    code, out, _ = run(capsys, *argv, str(out_file))
    assert code == 0 and f"Better vector written to {out_file}" in out
    assert "a better vector exists" in out
    better, name = read_loadings(out_file, IDS)  # the format the loadings were read in, the same column name
    assert name == "PC1" and np.count_nonzero(better) <= 3
    assert better @ C.to_numpy() @ better == pytest.approx(opt, rel=1e-9)
    assert w @ C.to_numpy() @ w < 0.9 * opt  # and the vector given was well below it


def test_better_never_overwrites_without_force(capsys, tmp_path):
    L, _, opt = _poor_loadings(tmp_path)
    out_file = tmp_path / "better.csv"
    out_file.write_text("keep me\n")
    argv = ["certify", "pitprops", "--k", "3", "--loadings", str(L), "--bounds", "lambda1,exact"]
    code, out, err = run(capsys, *argv, "--better", str(out_file))
    assert code == 2 and "--better" in err and "--force" in err and not out
    assert out_file.read_text() == "keep me\n"
    code, _, _ = run(capsys, *argv, "--better", str(out_file), "--force")
    better, _ = read_loadings(out_file, IDS)
    assert code == 0 and better @ C.to_numpy() @ better == pytest.approx(opt, rel=1e-9)
    code, _, err = run(capsys, *argv, "--better", str(L), "--force")  # never an input
    assert code == 2 and "--better" in err


def test_better_needs_loadings_and_is_not_written_without_a_better_vector(capsys, tmp_path):
    out_file = tmp_path / "better.csv"
    code, out, err = run(capsys, "certify", "pitprops", "--k", "3", "--better", str(out_file))
    assert code == 2 and "--better needs --loadings" in err and not out and not out_file.exists()
    _, w_opt = brute_force(C.to_numpy(), 3)
    L = tmp_path / "opt.csv"
    pd.DataFrame({"best": w_opt}, index=pd.Index(IDS, name="feature")).to_csv(L)
    argv = ["certify", "pitprops", "--k", "3", "--loadings", str(L), "--bounds", "lambda1,exact"]
    code, out, _ = run(capsys, *argv, "--better", str(out_file))
    assert code == 0 and "No better vector was found" in out and not out_file.exists()


@pytest.mark.parametrize("nonneg", [False, True])
def test_certify_without_loadings_certifies_the_optimum(capsys, nonneg):
    """Its own vector (the default fit's, or a bound's better one) is brute force's optimum, proven."""
    opt, _ = brute_force(C.to_numpy(), 4, nonneg)
    argv = ["certify", "pitprops", "--k", "4", "--bounds", "lambda1,exact", "--json"]
    code, out, _ = run(capsys, *argv, *(["--nonneg"] if nonneg else []))
    d = json.loads(out)
    assert code == 0 and d["vector"] == "certpca auto"
    assert d["value"] == pytest.approx(opt, rel=1e-9) and d["optimal"]


def test_certify_adopts_a_better_vector_for_its_own(capsys, monkeypatch):
    """With a weak own vector (thresholded PC1 in place of the default method) the exact search's optimum is
    taken, said in one line, and certified."""
    monkeypatch.setattr(fitting, "DEFAULT_METHOD", "threshold")
    opt, _ = brute_force(C.to_numpy(), 3)  # thresholded PC1: 2.3294 against 2.4753
    code, out, _ = run(capsys, "certify", "pitprops", "--k", "3", "--bounds", "lambda1,exact")
    assert code == 0 and "a better vector was found while certifying: +" in out and "exact search" in out
    assert "a better vector exists" not in out
    code, out, _ = run(capsys, "certify", "pitprops", "--k", "3", "--bounds", "lambda1,exact", "--json")
    d = json.loads(out)
    assert d["value"] == pytest.approx(opt, rel=1e-9) and d["optimal"] and len(d["support"]) <= 3
    support = [IDS.index(f) for f in d["support"]]
    assert np.linalg.eigvalsh(C.to_numpy()[np.ix_(support, support)])[-1] == pytest.approx(opt, rel=1e-9)
