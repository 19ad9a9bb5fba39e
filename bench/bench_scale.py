"""Reading and certifying wide data (D ≫ N): time and peak memory against pandas, and their growth in D.

Synthetic data, generated here from a seed (nothing large is committed): a rank-5
signal on 1000 features plus unit noise, each feature scaled by a log-normal
factor (σ = 0.5), as expression tables have unequal variances.

1. Reading a 500 × 20000 table as CSV (6 significant digits, ~92 MB) and as
   parquet: ``certpca.data.read`` against ``pandas.read_csv(path, index_col=0)``
   and ``pandas.read_parquet``, each in its own process (peak memory =
   VmHWM minus the process's peak after importing the reader), medians
   of ``--repeats`` runs, alternating.
2. Certifying k = 50 on it: certpca's EM vector, then the cheap bounds and
   the default certificate (``certify_vector``, every applicable bound within
   the 60 s budget), with every bound's time.
3. Growth in D at N = 100: ``certpca.fit(X, k=50)`` (load without a copy, the
   operator's factor centred as it is formed, EM) and ``certpca.certify`` with the cheap bounds (trace, λ1, Gershgorin,
   dABE, pattern; 60 s budget), each size in its own process, peak memory
   including X; the growth exponent is the slope of log(time) or log(peak
   memory) against log(D) between the first and last size.  The sizes of
   ``--dask-sizes`` are also fitted through dask on the threaded scheduler
   (``dask.array.from_array(X, chunks=(100, 2**16))``: the implicit DaskFactor of
   certpca/dask_factor.py, one pass over the column blocks per product).

One BLAS thread (``OMP_NUM_THREADS=1``).

    python bench/bench_scale.py                 # writes reports/bench/scale.md
    python bench/bench_scale.py --sizes 1e4,1e5 # skip D = 10^6
    python bench/bench_scale.py --growth-only   # section 3 alone, replaced in reports/bench/scale.md
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
from common import CHEAP, REPORTS, in_child, peak_bytes, publish

import certpca

BUDGET = 60.0


def synthetic(n: int, d: int, seed: int = 0) -> np.ndarray:
    """Seeded low rank + noise: X = (Z Wᵀ + E)·diag(s), W nonzero on 1000 features, s log-normal.

    Built in place a block of features at a time, so generating it peaks at about the matrix itself.
    """
    rng = np.random.default_rng(seed)
    rank, active = 5, min(d, 1000)
    Z = rng.standard_normal((n, rank))
    W = np.zeros((d, rank))
    W[rng.choice(d, active, replace=False)] = rng.standard_normal((active, rank)) * 2
    scale = np.exp(rng.normal(0.0, 0.5, d))
    X = rng.standard_normal((n, d))
    step = 1 << 16
    for j in range(0, d, step):
        X[:, j : j + step] += Z @ W[j : j + step].T
    X *= scale
    return X


# ---------------------------------------------------------------- children
def child(task: str, arg: str) -> dict:
    """One measurement in this (fresh) process; printed as JSON by ``--child``."""
    if task in ("read-certpca", "read-pandas"):
        from certpca.data import read

        base = peak_bytes()
        t0 = time.perf_counter()
        if task == "read-certpca":
            shape = read(arg).matrix.shape
        elif arg.endswith(".parquet"):
            shape = pd.read_parquet(arg).to_numpy().shape
        else:
            shape = pd.read_csv(arg, index_col=0).to_numpy().shape
        return {"seconds": time.perf_counter() - t0, "peak": peak_bytes(), "base": base, "shape": shape}
    if task in ("grow", "grow-dask"):
        if task == "grow-dask":
            import dask.array as da  # imported before the baseline, as certpca is
        base = peak_bytes()  # after importing certpca: the interpreter and libraries
        t0 = time.perf_counter()
        X = synthetic(100, int(float(arg)))
        t1 = time.perf_counter()
        after_data = peak_bytes()
        fit = certpca.fit(X if task == "grow" else da.from_array(X, chunks=(100, 2**16)), k=50)
        t2 = time.perf_counter()
        after_fit = peak_bytes()
        cert = certpca.certify(fit, bounds=CHEAP, budget=BUDGET)
        t3 = time.perf_counter()
        return {
            "generate": t1 - t0,
            "fit": t2 - t1,
            "certify": t3 - t2,
            "base": base,
            "after_data": after_data,
            "after_fit": after_fit,
            "peak": peak_bytes(),
            "matrix": X.nbytes,
            "fraction": cert.certified_fraction,
            "winner": cert.winner,
            "bounds": {b.name: b.seconds for b in cert.bounds},
            "skipped": cert.skipped,
        }
    raise SystemExit(f"unknown child task {task}")


def run_child(task: str, arg: str = "") -> dict:
    result = in_child(__file__, "--child", task, arg)
    if "error" in result:
        raise RuntimeError(f"child {task} {arg} failed: {result['error']}")
    return result


def slope(xs, ys) -> float:
    """Growth exponent between the first and last point of a log-log curve."""
    return float(np.log(ys[-1] / ys[0]) / np.log(xs[-1] / xs[0]))


# ------------------------------------------------------------------ main
def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--sizes", default="1e4,1e5,1e6", help="feature counts D for the growth table (N = 100)")
    ap.add_argument("--dask-sizes", default="1e4,1e5,1e6", help="the sizes also fitted through dask (threads)")
    ap.add_argument("--growth-only", action="store_true", help="run section 3 alone and replace it in scale.md")
    ap.add_argument("--child", nargs=2, metavar=("TASK", "ARG"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(child(*args.child)))
        return

    if args.growth_only:
        growth = growth_section(args)
        out = REPORTS / "scale.md"
        head, sep, _ = out.read_text().partition(GROWTH_TITLE)
        if not sep:
            raise SystemExit(f"{out} has no section {GROWTH_TITLE!r}: run without --growth-only")
        publish("scale.md", head + "\n".join(growth) + "\n")
        return
    lines = ["# Wide-data benchmark (reports/bench/scale.md)\n"]
    lines.append(
        f"Command: `python bench/bench_scale.py --sizes {args.sizes} --dask-sizes {args.dask_sizes}`; "
        f"machine: {platform.machine()}, "
        f"{os.cpu_count()} cores shared with other jobs (load average {os.getloadavg()[0]:.1f} at the start), "
        f"one BLAS thread; certpca {certpca.__version__}, numpy {np.__version__}, "
        f"pandas {pd.__version__}. Synthetic seeded data: rank-5 signal on 1000 features + unit noise, "
        "log-normal feature scales.\n"
    )
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "wide.csv"
        X = synthetic(500, 20000)
        pd.DataFrame(X, index=[f"s{i}" for i in range(500)], columns=[f"g{j}" for j in range(20000)]).to_csv(
            path, float_format="%.6g"
        )
        matrix = X.nbytes
        size = path.stat().st_size
        del X
        parquet = path.with_suffix(".parquet")
        pd.read_csv(path, index_col=0).to_parquet(parquet)
        lines.append(
            f"## Reading a 500 × 20000 table (CSV {size / 1e6:.0f} MB, parquet {parquet.stat().st_size / 1e6:.0f} MB; "
            f"the matrix is {matrix / 1e6:.0f} MB)\n"
        )
        lines.append(
            "Each read in a fresh process, readers alternating, median of "
            f"{args.repeats}; peak memory is the process's peak minus its peak after importing the reader.\n"
        )
        lines.append("| file | reader | time (s) | × pandas | peak memory (MB) | × matrix |")
        lines.append("|---|---|---|---|---|---|")
        for fmt, where, pandas_call in (
            ("CSV", path, "pandas.read_csv(index_col=0)"),
            ("parquet", parquet, "pandas.read_parquet"),
        ):
            times: dict[str, list[float]] = {"certpca": [], "pandas": []}
            mems: dict[str, list[float]] = {"certpca": [], "pandas": []}
            for _ in range(args.repeats):
                for who in ("certpca", "pandas"):
                    r = run_child(f"read-{who}", str(where))
                    times[who].append(r["seconds"])
                    mems[who].append(r["peak"] - r["base"])
            t_c, t_p = statistics.median(times["certpca"]), statistics.median(times["pandas"])
            m_c, m_p = statistics.median(mems["certpca"]), statistics.median(mems["pandas"])
            lines.append(
                f"| {fmt} | certpca.data.read | {t_c:.2f} | {t_c / t_p:.2f} | {m_c / 1e6:.0f} | {m_c / matrix:.2f} |"
            )
            lines.append(f"| {fmt} | {pandas_call} | {t_p:.2f} | 1.00 | {m_p / 1e6:.0f} | {m_p / matrix:.2f} |")
        lines.append("")
        lines.append("Goals: ≤ 1.2 × pandas' time, ≤ 2 × the matrix's memory.\n")

        from threadpoolctl import threadpool_limits

        from certpca.certification import certify_vector
        from certpca.io import load
        from certpca.solvers import solve

        with threadpool_limits(1):
            for nonneg in (False, True):
                t0 = time.perf_counter()
                ds = load(path)
                P = ds.problem()
                t_load = time.perf_counter() - t0
                comp = solve(P, 50, nonneg=nonneg)
                t0 = time.perf_counter()
                cheap = certify_vector(P, comp.weights, 50, nonneg, bounds=CHEAP, budget=BUDGET)
                t_cheap = time.perf_counter() - t0
                t0 = time.perf_counter()
                cert = certify_vector(P, comp.weights, 50, nonneg)
                t_cert = time.perf_counter() - t0
                kind = "nonnegative" if nonneg else "sparse"
                lines.append(f"## Certifying k = 50 ({kind}) at 500 × 20000 (goal < 5 s)\n")
                lines.append(
                    f"Loading and preparing (centring) took {t_load:.2f} s; the vector is certpca's EM fit. "
                    f"The cheap bounds (`{CHEAP}`): **{t_cheap:.2f} s**, certified "
                    f"{100 * cheap.certified_fraction:.2f} % (winner `{cheap.winner}`). The default certificate "
                    f"(every applicable bound, cheapest first, within its 60 s budget): **{t_cert:.2f} s**, "
                    f"certified {100 * cert.certified_fraction:.2f} % (winner `{cert.winner}`); its bounds:\n"
                )
                lines.append("| bound | value | time (s) |")
                lines.append("|---|---|---|")
                for b in sorted(cert.bounds, key=lambda b: b.value):
                    lines.append(f"| {b.name} | {b.value:.8g} | {b.seconds:.2f} |")
                for name, why in cert.skipped.items():
                    lines.append(f"| {name} | skipped: {why} | – |")
                lines.append("")

    lines += growth_section(args)
    publish("scale.md", "\n".join(lines) + "\n")


GROWTH_TITLE = "## Growth in D at N = 100 (k = 50)"


def growth_section(args) -> list[str]:
    """Section 3: each size in memory, then each of ``--dask-sizes`` through dask on the threaded scheduler."""
    sizes = [int(float(s)) for s in args.sizes.split(",")]
    dask_sizes = [int(float(s)) for s in args.dask_sizes.split(",") if s]
    rows = [("numpy", d, run_child("grow", str(d))) for d in sizes]
    rows += [("dask", d, run_child("grow-dask", str(d))) for d in dask_sizes]
    lines = [GROWTH_TITLE + "\n"]
    if args.growth_only:
        lines.append(
            f"Command: `python bench/bench_scale.py --growth-only --sizes {args.sizes} --dask-sizes "
            f"{args.dask_sizes}` (load average {os.getloadavg()[0]:.1f} at the start).\n"
        )
    lines.append(
        "Each size in a fresh process: generate X (seeded, in place), `certpca.fit(X, k=50)` (load: X held as "
        "given, centring deferred; the operator's factor, centred as it is formed; EM), then "
        f'`certpca.certify(fit, bounds="{CHEAP}", budget={BUDGET:g})`. '
        "Peak memory is the process's peak minus its peak after importing certpca, so it includes X itself; "
        "× matrix divides it by X's size. The goal at 100 × 10⁶: fit and certify in under 2 minutes, peak under "
        "3 × the matrix. Rows `dask` fit `dask.array.from_array(X, chunks=(100, 2**16))` instead, on the "
        "threaded scheduler: the implicit factor (certpca/dask_factor.py), every product one pass over the "
        "column blocks; a bound that needs the whole factor densifies it when it is under `FACTOR_BYTES` "
        "(1 GiB), as for sparse data.\n"
    )
    lines.append(
        "| data | D | matrix (MB) | generate (s) | fit (s) | certify (s) | peak after fit (× matrix) | "
        "peak after certify (MB, × matrix) | certified (winner) | per bound (s) | skipped |"
    )
    lines.append("|---|---|---|---|---|---|---|---|---|---|---|")
    for kind, d, r in rows:
        per = ", ".join(f"{n} {s:.2f}" for n, s in r["bounds"].items())
        skipped = "; ".join(f"{n}: {w}" for n, w in r["skipped"].items()) or "–"
        m = r["matrix"]
        lines.append(
            f"| {kind} | {d:.0e} | {m / 1e6:.0f} | {r['generate']:.2f} | {r['fit']:.2f} | {r['certify']:.2f} | "
            f"{(r['after_fit'] - r['base']) / m:.2f} | {(r['peak'] - r['base']) / 1e6:.0f}, "
            f"{(r['peak'] - r['base']) / m:.2f} | {100 * r['fraction']:.2f} % ({r['winner']}) | {per} | {skipped} |"
        )
    lines.append("")
    for kind in ("numpy", "dask"):
        some = [(d, r) for k, d, r in rows if k == kind]
        if len(some) > 1:
            ds_ = [d for d, _ in some]
            cols = {
                "fit": [r["fit"] for _, r in some],
                "certify": [r["certify"] for _, r in some],
                "peak memory": [max(r["peak"] - r["base"], 1) for _, r in some],
            }
            lines.append(
                f"Growth exponents, {kind} (slope of log against log D, first to last size; 1 = linear in D): "
                + ", ".join(f"{name} {slope(ds_, ys):.2f}" for name, ys in cols.items())
                + ".\n"
            )
    return lines


if __name__ == "__main__":
    main()
