"""Peak memory of fitting a wide CSV (issue 29, item 6): ``certpca fit wide.csv --k 30 --no-certify``.

A 500 × 20000 CSV (6 significant digits; the float64 matrix is 80 MB) of bench_scale.py's
synthetic data is written to a temporary folder (never into the repository).  Each row runs in a
fresh process (one BLAS thread) and reports its peak resident memory (VmHWM) minus the peak after
its imports (the interpreter with numpy, pandas and certpca's command line), over the matrix's
size; the baselines are measured in the same run: pandas' own ``read_csv`` of the file (then
``to_numpy``) and certpca's reader alone.  Goal: the fit under 2.5 × the matrix.

    PYTHONPATH=. python bench/bench_memory.py      # writes reports/bench/memory.md
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import platform
import statistics
import tempfile
import time
from pathlib import Path

import pandas as pd
from bench_scale import synthetic
from common import in_child, peak_bytes, publish

import certpca
from certpca.cli import main as cli_main
from certpca.data import read

N, D, K = 500, 20000, 30
GOAL = 2.5


def child(task: str, path: str) -> dict:
    """One row in this fresh process: seconds and peak bytes above the peak after the imports."""
    base = peak_bytes()
    t0 = time.perf_counter()
    if task == "pandas":
        pd.read_csv(path, index_col=0).to_numpy()
    elif task == "read":
        read(path)
    elif task == "cli":
        with contextlib.redirect_stdout(io.StringIO()):
            code = cli_main(["fit", path, "--k", str(K), "--no-certify"])
        if code:
            raise SystemExit(f"certpca fit exited with {code}")
    elif task == "api":
        certpca.fit(path, K)
    else:
        raise SystemExit(f"unknown task {task}")
    return {"seconds": time.perf_counter() - t0, "above": peak_bytes() - base}


ROWS = [
    ("pandas", "`pandas.read_csv(path, index_col=0).to_numpy()` (baseline)"),
    ("read", "`certpca.data.read(path)` (the reader alone)"),
    ("cli", f"`certpca fit wide.csv --k {K} --no-certify`"),
    ("api", f"`certpca.fit(path, {K})`"),
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--child", nargs=2, metavar=("TASK", "PATH"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(*args.child)))
        return
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "wide.csv"
        X = synthetic(N, D)
        matrix = X.nbytes
        frame = pd.DataFrame(X, index=[f"s{i}" for i in range(N)], columns=[f"g{j}" for j in range(D)])
        frame.to_csv(path, float_format="%.6g")
        del X, frame
        load = os.getloadavg()[0]
        runs: dict[str, list[dict]] = {task: [] for task, _ in ROWS}
        for _ in range(args.repeats):  # the rows alternate, each in a fresh process
            for task, _ in ROWS:
                out = in_child(__file__, "--child", task, str(path))
                if "error" in out:
                    raise SystemExit(f"{task}: {out['error']}")
                runs[task].append(out)
        size = path.stat().st_size
    pandas_peak = statistics.median(r["above"] for r in runs["pandas"])
    rows = [
        "# Peak memory of a wide fit (issue 29, item 6)",
        "",
        f"`PYTHONPATH=. python bench/bench_memory.py --repeats {args.repeats}`, {platform.node()}, "
        f"{os.cpu_count()} cores, one BLAS thread, load average {load:.2f}; certpca {certpca.__version__}, "
        f"pandas {pd.__version__}.",
        f"A {N} × {D} CSV ({size / 1e6:.0f} MB; the float64 matrix is {matrix / 1e6:.0f} MB) of bench_scale.py's "
        "synthetic data in a temporary folder. Each row in a fresh process, the rows alternating, median of "
        f"{args.repeats}; peak = the process's peak resident memory (VmHWM) minus its peak after the imports.",
        "",
        "| call | peak above imports (MB) | × matrix | × pandas' read | time (s) |",
        "|---|---|---|---|---|",
    ]
    for task, name in ROWS:
        above = statistics.median(r["above"] for r in runs[task])
        seconds = statistics.median(r["seconds"] for r in runs[task])
        rows.append(
            f"| {name} | {above / 1e6:.0f} | {above / matrix:.2f} | {above / pandas_peak:.2f} | {seconds:.2f} |"
        )
    cli = statistics.median(r["above"] for r in runs["cli"])
    rows += [
        "",
        f"Goal: the fit under {GOAL} × the matrix: {'met' if cli < GOAL * matrix else 'not met'} "
        f"({cli / matrix:.2f} ×; issue 29 measured 5.9 × before).",
        "What remains is the prepared matrix and the covariance's factor F = X/√(N−1) (certpca/problem.py: "
        "C = FᵀF, never D × D), one copy each; the advice on the data's scale reads the raw values a block at "
        "a time (certpca/data/advice.py).",
    ]
    publish("memory.md", "\n".join(rows) + "\n")


if __name__ == "__main__":
    main()
