"""The report's promise of a byte-identical page holds on a busy machine.

A report whose sample-space SDP is cut by its allotment of ``--budget`` is written twice, the second time
while two sibling processes spin on the cores, and the two HTML files are compared byte for byte
(nothing stripped).  The cut is an allotment of estimated work (certpca/clock.py, ``Work``), never a
reading of a clock, so the SDP stops at the same step both times; with a CPU-time cut the step, and
so the bound's last digits, moved with the load.
"""

from __future__ import annotations

import contextlib
import io
import json
import multiprocessing

import numpy as np
import pytest

from certpca.cli import main

pytestmark = pytest.mark.skipif(
    "fork" not in multiprocessing.get_all_start_methods(), reason="the busy siblings are forked"
)


def _spin() -> None:
    """A busy sibling: one core's worth of load until terminated."""
    while True:
        pass


@contextlib.contextmanager
def busy_siblings(count: int = 2):
    """``count`` processes spinning beside this one (the machine has 2 cores here)."""
    procs = [multiprocessing.get_context("fork").Process(target=_spin, daemon=True) for _ in range(count)]
    for p in procs:
        p.start()
    try:
        yield
    finally:
        for p in procs:
            p.terminate()
            p.join()


def _report(data, out) -> tuple[bytes, dict]:
    """The page and the saved run of the same command (the page shows the command: same path, same flags)."""
    buf = io.StringIO()
    argv = ["report", str(data), "--k", "8", "--method", "em", "--path", "", "--stability", "0"]
    argv += ["--bounds", "lambda1,dabe,dabe_sdp", "--budget", "0.6", "-o", str(out), "--force", "--json"]
    with contextlib.redirect_stdout(buf):
        assert main(argv) == 0
    return out.read_bytes(), json.loads(buf.getvalue())


def test_the_same_page_beside_busy_processes(tmp_path):
    rng = np.random.default_rng(11)
    X = rng.normal(size=(30, 120))  # wide noise: the SDP is far from converged after its 0.3 s of work
    data = tmp_path / "noise.csv"
    rows = ["sample," + ",".join(f"g{j:03d}" for j in range(X.shape[1]))]
    rows += [f"s{i:02d}," + ",".join(f"{v:.6f}" for v in row) for i, row in enumerate(X)]
    data.write_text("\n".join(rows) + "\n")

    out = tmp_path / "report.html"
    quiet, run = _report(data, out)
    with busy_siblings():
        busy, _ = _report(data, out)

    sdp = [b for f in run["fits"] for b in f["certificate"]["bounds"] if b["name"] == "dabe_sdp"]
    assert sdp and all(b["params"]["time_limit_reached"] for b in sdp)  # the cut is on the page
    # the plain certificate's dabe_sdp is the budget's one run at k (the nonnegative one reuses it): half of it
    assert "dabe_sdp used its allotment of 0.3 s of estimated work (--budget 0.6)" in quiet.decode()
    assert busy == quiet
