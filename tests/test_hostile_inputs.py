"""Property tests: whatever table or argument a user hands the command line, the promise holds.

The promise (README): exit code 0, or 2 with one line on stderr naming the problem; the
input files byte-identical afterwards; no partial output file.  Examples are bounded for
CI; set CERTPCA_HYPOTHESIS_EXAMPLES (e.g. 2000) for a longer search.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import os
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from certpca.cli import main

EXAMPLES = int(os.environ.get("CERTPCA_HYPOTHESIS_EXAMPLES", "40"))
SETTINGS = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=EXAMPLES <= 40,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def _run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


def _files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}


def _check_promise(code: int, err: str, before: dict[str, bytes], folder: Path, written: set[str]) -> None:
    assert code in (0, 2), (code, err)
    event(f"exit {code}")
    if code == 2:
        lines = [ln for ln in err.splitlines() if ln.strip()]
        assert len(lines) == 1 and lines[0].startswith("certpca: error: "), err
    else:
        assert "Traceback" not in err and "internal error" not in err, err
    after = _files(folder)
    for name, content in before.items():
        assert after[name] == content, f"{name} was changed"  # inputs untouched
    new = set(after) - set(before)
    assert new <= (written if code == 0 else set()), new  # no partial or stray file
    assert not [n for n in after if n.startswith(".") or n.endswith(".tmp")], after


cells = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True, width=64).map(repr),
    st.integers(-(10**6), 10**6).map(str),
    st.sampled_from(["", "NA", "nan", "x", "1,5", "1e999", "-", " 3 ", '"q"', "é", "<b>"]),
)


@st.composite
def tables(draw):
    n, d = draw(st.integers(1, 7)), draw(st.integers(1, 6))
    sep = draw(st.sampled_from([",", ";", "\t"]))
    header = ["sample", *[draw(st.sampled_from([f"g{j}", f"gène{j}", f"g{j}"])) for j in range(d)]]
    clean = draw(st.booleans())  # half the tables are well formed, so the success path is explored too
    value = st.floats(-1e6, 1e6, allow_nan=False).map(lambda v: f"{v:.6g}") if clean else cells
    rows = [[f"s{i}", *[draw(value) for _ in range(d)]] for i in range(n)]
    text = "\n".join(sep.join(r) for r in [header, *rows]) + "\n"
    encoding = draw(st.sampled_from(["utf-8", "latin-1"]))
    raw = text.encode(encoding, errors="replace")
    gz = draw(st.booleans())
    if gz:
        raw = gzip.compress(raw, mtime=0)
    cut = None if clean else draw(st.one_of(st.none(), st.integers(0, max(len(raw) - 1, 0))))
    if cut is not None:
        raw = raw[:cut]
    return raw, ".csv.gz" if gz else (".tsv" if sep == "\t" else ".csv")


@SETTINGS
@given(tables(), st.sampled_from(["fit", "certify", "path"]), st.integers(1, 4))
def test_any_table_gives_an_answer_or_one_line(table, command, k):
    raw, suffix = table
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        data = folder / f"data{suffix}"
        data.write_bytes(raw)
        before = _files(folder)
        argv = [command, str(data), "--k", str(k)]
        if command == "certify":
            argv += ["--bounds", "trace,lambda1,gershgorin"]
        code, _, err = _run(argv)
        _check_promise(code, err, before, folder, set())


def _good_table(folder: Path) -> Path:
    X = np.random.default_rng(0).normal(size=(12, 6))
    path = folder / "good.csv"
    path.write_text(
        "sample,"
        + ",".join(f"g{j}" for j in range(6))
        + "\n"
        + "".join(f"s{i}," + ",".join(f"{v:.5f}" for v in row) + "\n" for i, row in enumerate(X))
    )
    return path


numbers = st.one_of(
    st.integers(-5, 40).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.sampled_from(["", "x", "1:3", "3:1", "2,2", "1:6:3", "-0", "1e400"]),
)
#: valid values twice as likely as anything, so most examples get past the first check
plausible = st.one_of(st.integers(1, 6).map(str), st.integers(1, 3).map(str), numbers)


@SETTINGS
@given(
    command=st.sampled_from(["fit", "certify", "path"]),
    k=plausible,
    seed=st.one_of(st.integers(0, 9).map(str), plausible),
    extra=st.sampled_from(
        [[], ["--nonneg"], ["--tol"], ["--budget"], ["--restarts"], ["--components"], ["--method"], ["--bounds"]]
    ),
    extra_value=plausible,
    out=st.sampled_from([None, "out.csv", "good.csv", "missing/out.csv"]),
)
def test_any_argument_gives_an_answer_or_one_line(command, k, seed, extra, extra_value, out):
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        data = _good_table(folder)
        before = _files(folder)
        argv = [command, str(data), "--k", k, "--seed", seed]
        if (
            extra
            and not (command != "certify" and extra[0] in ("--tol", "--budget"))
            and not (command == "certify" and extra[0] in ("--components", "--restarts", "--method"))
            and not (command == "path" and extra[0] in ("--components", "--tol", "--budget"))
        ):
            argv += extra + ([] if extra[0] == "--nonneg" else [extra_value])
        if out is not None and command in ("fit", "path"):
            argv += ["--out", str(folder / out)]
        code, _, err = _run(argv)
        written = {out} if out is not None and "/" not in out and command in ("fit", "path") else set()
        _check_promise(code, err, before, folder, written)


# ------------------------------------------------------------------ examples found by an audit
#: files beside good.csv for the examples below (name -> content)
SIDE_FILES = {
    "empty.csv": "",
    "blank.csv": "\n",
    "existing.csv": "keep me\n",
    "ids.csv": "sample\n" + "".join(f"s{i}\n" for i in range(12)),
    "latin1.json": b"\x80\x81{}",
    "infinite.csv": "feature,PC1\ng0,inf\ng1,1\n",
    "zeros.csv": "feature,PC1\ng0,0\ng1,0\n",
    "dense.csv": "feature,PC1\n" + "".join(f"g{j},1\n" for j in range(6)),
    "signed.csv": "feature,PC1\ng0,1\ng1,-1\n",
    "two.csv": "sample,g0,g1\ns0,1,2\ns1,3,5\n",
    "single.csv": "sample,cls,g0\n" + "".join(f"s{i},{'ab'[i % 2]},{i % 5}\n" for i in range(12)),
    "labelled.csv": "sample,cls,g0,g1,g2\n"
    + "".join(f"s{i},{'ab'[i % 2]},{i % 3},{i % 5},{i % 7}\n" for i in range(12)),
}


def _one_line_refusal(tmp_path: Path, argv: list[str], message: str) -> None:
    """Exit code 2, one 'certpca: error:' line containing ``message``, every file as it was, none new (run from
    ``tmp_path``, so that also holds for a default output name)."""
    data = _good_table(tmp_path)
    (tmp_path / "figures").mkdir()
    for name, content in SIDE_FILES.items():
        (tmp_path / name).write_bytes(content if isinstance(content, bytes) else content.encode())
    before = _files(tmp_path)
    home = os.getcwd()
    os.chdir(tmp_path)  # a default output (report.html) would land here, and be seen as new
    try:
        code, out, err = _run([str(data) if a == "DATA" else a.replace("@", f"{tmp_path}/") for a in argv])
    finally:
        os.chdir(home)
    assert code == 2, (code, err)
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("certpca: error: "), err
    assert message in lines[0], lines[0]
    assert "Traceback" not in err
    assert _files(tmp_path) == before  # existing outputs untouched, nothing new
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([*before, "figures"])


@pytest.mark.parametrize(
    "argv, message",
    [
        # an empty or undelimited side file was a csv.Error from the sniffer: an internal error, exit 1
        (["fit", "DATA", "--k", "2", "--annotate", "@empty.csv"], "annotation file empty.csv is empty; give a CSV"),
        (["fit", "DATA", "--k", "2", "--annotate", "@blank.csv"], "annotation file blank.csv is empty; give a CSV"),
        (["genes", "DATA", "--labels", "@empty.csv"], "labels file empty.csv is empty; give a CSV sample,label"),
        (["genes", "DATA", "--labels", "@blank.csv"], "labels file blank.csv is empty; give a CSV sample,label"),
        (["fit", "DATA", "--k", "2", "--annotate", "@blank.csv", "-o", "@existing.csv", "--force"], "is empty"),
        # pandas' sniffer split a one-column file at a letter: "1 duplicate sample ids in the labels file ()"
        (["genes", "DATA", "--labels", "@ids.csv"], "labels file ids.csv needs two columns (sample,label); it has 1"),
        # an unknown --path-method was told to be added to --method
        (
            ["report", "DATA", "--k", "2", "--path-method", "magic"],
            "--path-method names unknown method(s) magic; choose",
        ),
        # one feature: "CE needs a samples × features matrix with at least two features; got shape (12, 1)"
        (["genes", "@single.csv", "--labels", "cls"], "gene selection compares subsets of features; the data have 1"),
        # a folder was "not found"
        (["fit", "DATA", "--k", "2", "--annotate", "@figures"], "figures is a folder; give a CSV of feature id"),
        (
            ["certify", "DATA", "--k", "2", "--loadings", "@figures"],
            "is a folder; give the CSV that 'certpca fit --out'",
        ),
        (["table", "@figures", "--tables", "@tables"], "figures is a folder; give the saved --json output"),
        # a saved run given as data was read as a table: "fit.json has a header but no data rows"
        (["fit", "@latin1.json", "--k", "2"], "latin1.json is JSON, not a data table; give a CSV/TSV"),
        # bytes that are not UTF-8 were a UnicodeDecodeError, an internal error
        (["table", "@latin1.json", "--tables", "@tables"], "latin1.json is not JSON (not UTF-8 text); give the --json"),
        # a loadings column that cannot be certified was refused in Python's words (w, nonneg=True)
        (["certify", "DATA", "--k", "2", "--loadings", "@infinite.csv"], "loading of feature 'g0' in column 'PC1'"),
        (["certify", "DATA", "--k", "2", "--loadings", "@zeros.csv"], "column 'PC1' of"),
        (["certify", "DATA", "--k", "2", "--loadings", "@dense.csv"], "has 6 nonzeros but k = 2; raise --k to 6"),
        (["certify", "DATA", "--k", "2", "--nonneg", "--loadings", "@signed.csv"], "negative loadings; drop --nonneg"),
        (["certify", "DATA", "--k", "2", "--loadings", "@empty.csv"], "; give the CSV that 'certpca fit --out' writes"),
        # an empty list of bounds ran none ("no bound could be computed: "); report's --path-bounds was called --bounds
        (["certify", "DATA", "--k", "2", "--bounds", ","], "--bounds names no bound; give some of trace, lambda1"),
        (
            ["report", "DATA", "--k", "2", "--path-bounds", "magic", "-o", "@existing.csv", "--force"],
            "--path-bounds names",
        ),
        # a method unable to honour the sign constraint was told in Python's words (use nonneg=False or method='auto')
        (["fit", "DATA", "--k", "2", "--nonneg", "--method", "pca"], "; drop --nonneg or use --method auto"),
        (["fit", "DATA", "--k", "2", "--method", "nspca"], "; add --nonneg or use --method auto"),
        (["genes", "@labelled.csv", "--labels", "cls", "--method", "pca"], "--method pca cannot impose nonnegativity"),
        # two samples: 'a fit needs 2 to 1'
        (["stability", "@two.csv", "--k", "1"], "stability needs at least 3 samples"),
        # options that do nothing with the others given were silently ignored
        (["certify", "DATA", "--k", "2", "--component", "2"], "--component picks a column of --loadings; give"),
        (
            ["certify", "DATA", "--k", "2", "--loadings", "@signed.csv", "--component", ""],
            "--component  is not a column",
        ),
        (["fit", "DATA", "--k", "2", "--no-certify", "--bounds", "trace"], "--no-certify skips the certificates that"),
        (["fit", "DATA", "--k", "2", "--no-certify", "--budget", "5", "-o", "@existing.csv", "--force"], "--budget"),
        # a folder below a file was a NotADirectoryError, an internal error
        (["reproduce", "sigg2008-fig2", "-o", "@existing.csv/figures"], "cannot create folder"),
        # a negative seed was refused after the --out folder had been made
        (["reproduce", "zass2006-fig5", "--quick", "--seed", "-1", "-o", "@new"], "--seed is out of range"),
        # 'all' beside other names was called an unknown method, though it is one alone
        (["report", "DATA", "--k", "2", "--method", "all,em"], "--method takes all alone"),
        (["report", "DATA", "--k", "2", "--path-method", "em,all"], "--path-method takes all alone"),
    ],
)
def test_bad_input_found_by_the_audit_is_one_line(tmp_path, argv, message):
    _one_line_refusal(tmp_path, argv, message)


def _h5ad(folder: Path) -> None:
    import anndata  # imported here: only these examples need it
    import pandas as pd

    X = np.random.default_rng(0).normal(size=(12, 6))
    obs = pd.DataFrame({"cls": ["ab"[i % 2] for i in range(12)]}, index=[f"s{i}" for i in range(12)])
    adata = anndata.AnnData(X=X, obs=obs, var=pd.DataFrame(index=[f"g{j}" for j in range(6)]))
    adata.layers["counts"] = np.abs(X)
    adata.write_h5ad(folder / "cells.h5ad")
    (folder / "broken.h5ad").write_text("not HDF5")


@pytest.mark.parametrize(
    "argv, message",
    [
        # the in-memory reader spoke Python (use_raw, layer) where the lazy one says the flags
        (["fit", "@cells.h5ad", "--k", "2", "--use-raw"], "this AnnData has no raw; drop --use-raw"),
        (["fit", "@cells.h5ad", "--k", "2", "--use-raw", "--layer", "counts"], "--layer and --use-raw are exclusive"),
        (
            ["fit", "@cells.h5ad", "--k", "2", "--layer", "x"],
            "layer 'x' is not in this AnnData (layers: counts); give one of them or drop --layer",
        ),
        (
            ["genes", "@cells.h5ad", "--labels", "kind"],
            "labels 'kind' is not an obs column (columns: cls); give one of them",
        ),
        (["fit", "@broken.h5ad", "--k", "2", "-o", "@existing.csv", "--force"], "as an .h5ad file: Unable"),
    ],
)
def test_an_h5ad_refusal_names_the_flags_and_the_fix(tmp_path, argv, message):
    _h5ad(tmp_path)
    _one_line_refusal(tmp_path, argv, message)


def test_running_out_of_memory_is_one_line_naming_the_fix_not_an_internal_error(tmp_path, monkeypatch):
    """An option that asks for more memory than the machine has (``fit --restarts 1000000000`` asked numpy for
    96.9 GiB) was 'internal error: MemoryError ... please report this'; it is the user's option, not a bug."""
    import certpca.cli.fitting as fitting

    def too_big(args):
        raise MemoryError("Unable to allocate 96.9 GiB for an array with shape (1000000000, 13)")

    monkeypatch.setattr(fitting, "_open", too_big)
    out = tmp_path / "loadings.csv"
    code, _, err = _run(["fit", "pitprops", "--k", "3", "--restarts", "1000000000", "--out", str(out)])
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert code == 2 and len(lines) == 1, err
    assert lines[0].startswith("certpca: error: not enough memory (Unable to allocate 96.9 GiB"), err
    assert "--restarts" in lines[0] and "internal error" not in err
    assert not out.exists()
