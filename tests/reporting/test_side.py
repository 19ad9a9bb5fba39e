"""The report's side work in child processes (certpca/reporting/side.py): the same run as in one process.

The gene selection, the stability refits, the nonnegative fits and the paths run in forked children beside
the certificates, and the band's bounds on a pool; the saved run and the page must be the same as when
everything runs in the report's own process (``jobs=1``; the seconds of the steps aside), and a child's
value and exceptions must reach the parent.
"""

import json
import os

import numpy as np
import pandas as pd
import pytest

from certpca.data import Dataset, prepare
from certpca.errors import InputError
from certpca.reporting.html import render
from certpca.reporting.options import ReportOptions
from certpca.reporting.run import compute_run
from certpca.reporting.side import Side, can_fork, cores

pytestmark = pytest.mark.skipif(not can_fork(2), reason="no fork start method here")


def test_a_side_job_runs_in_a_child_and_its_value_comes_back():
    assert Side(os.getpid, fork=True).result() != os.getpid()
    assert Side(os.getpid, fork=False).result() == os.getpid()
    assert Side(lambda: {"a": np.arange(3)}, fork=True).result()["a"].tolist() == [0, 1, 2]


def test_a_side_jobs_exception_is_raised_in_the_parent():
    def bad():
        raise InputError("labels are missing")

    with pytest.raises(InputError, match="labels are missing"):
        Side(bad, fork=True).result()


def _labelled():
    rng = np.random.default_rng(3)
    n, d = 24, 14
    classes = np.repeat(["a", "b", "c"], 8)
    X = rng.normal(size=(n, d))
    X[:, :3] += 3.0 * (classes == "a")[:, None]
    X[:, 3:6] += 3.0 * (classes == "b")[:, None]
    samples = pd.Index([f"s{i}" for i in range(n)])
    labels = pd.Series(classes, index=samples, name="class")
    return prepare(Dataset("side", X, pd.Index([f"g{j}" for j in range(d)]), samples, labels))


def test_the_run_is_the_same_with_side_processes_or_without():
    ds = _labelled()
    options = ReportOptions(
        k=3,
        methods="em,threshold",
        path_bounds="trace,lambda1,dabe",
        genes=True,
        gene_sizes=(2, 5),
        n_init=3,
        stability=4,
        progress=False,
    )
    runs = []
    for jobs in (2, 1):
        saved = json.loads(compute_run(ds, options, jobs=jobs).to_json())
        assert saved["genes"] and saved["stability"]  # both side jobs ran
        runs.append(_timeless(saved))
    assert runs[0] == runs[1]


@pytest.mark.parametrize("support", ["", ",screening"])
def test_the_page_is_the_same_on_one_process_or_two(support):
    """Both sign constraints, a path whose band computes costly bounds (threshold, the sample-space SDP) within
    a budget that cuts them, three methods: the saved run and the page byte for byte.  With screening (a support
    hint) the nonnegative certificate beside the plain one waits for its best vector (reporting/beside.py)."""
    ds = _labelled()
    options = ReportOptions(
        k=4,
        methods="em,threshold,gpower-l0",
        path="1,2,3,5,8",
        bounds="trace,lambda1,gershgorin,dabe,split,threshold,dabe_sdp" + support,
        genes=False,
        stability=0,
        budget=0.5,
        progress=False,
    )
    runs = {jobs: compute_run(ds, options, jobs=jobs) for jobs in (1, 2)}
    saved = {jobs: json.loads(run.to_json()) for jobs, run in runs.items()}
    assert {p["nonneg"] for p in saved[1]["paths"]} == {False, True}
    assert any(b["winner"] in ("threshold", "dabe_sdp", "split") for band in saved[1]["bands"] for b in band["points"])
    assert _timeless(saved[1]) == _timeless(saved[2])
    pages = {(run, jobs): render(runs[run], jobs=jobs) for run in (1, 2) for jobs in (1, 2)}  # figures beside
    assert len(set(pages.values())) == 1
    assert pages[1, 2].count("<svg") >= 2 * 2  # each sign constraint's loadings and scores at least


def test_one_place_decides_the_processes():
    assert cores(1) == 1 and not can_fork(1)
    assert cores(None) >= 1
    assert can_fork(2) == (cores(2) == 2)


def _timeless(obj):
    """The saved run without its seconds (the only fields that change from run to run)."""
    if isinstance(obj, dict):
        return {key: _timeless(v) for key, v in obj.items() if "seconds" not in key and key != "budget_used"}
    if isinstance(obj, list):
        return [_timeless(v) for v in obj]
    return obj
