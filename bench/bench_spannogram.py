"""Time the exact d = 2 spannogram on leukemia (72 × 12582), k = 50.

Column-centred data, ``Problem.from_data`` (C is never formed).  For sparse and
nonnegative PCA: wall time of :func:`certpca.solvers.spannogram.spannogram`
(median of ``--repeats`` runs, eigen-decomposition cached after the first),
the candidate supports found by the pruned angular sweep, value/λ₁ of the
returned vector on the full C, opt_d/λ₁ of the rank-d surrogate, and the
data-dependent bound of Asteris et al. (ICML 2014, Sec. 2.1) as the certify
layer computes it (:func:`certpca.certification.spannogram_bound`, with its margins;
not timed).  Also the d = 3
deterministic grid net (ε = 0.05) and, with ``--d3-exact``, exact d = 3; with
``--before REV`` also exact d = 3 through the Alg. 2 enumeration
(certpca/solvers/spannogram/vertices.py) as it was at git revision REV, loaded
with ``git show`` and run in the same process on the same surrogate, so the
speed-up and the equality of OPT_3 are measured in one run.

    python bench/bench_spannogram.py --d3-exact --before 52891e0   # writes reports/bench/spannogram.md
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import platform
import statistics
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pandas as pd
from common import publish

import certpca.solvers.spannogram as spannogram_package
from certpca import datasets
from certpca.certification import NotApplicable, spannogram_bound
from certpca.solvers.spannogram import spannogram

VERTICES = "certpca/solvers/spannogram/vertices.py"


def vertices_at(rev: str):
    """The module certpca/solvers/spannogram/vertices.py as it was at git revision ``rev``
    (imported inside the package, so its relative imports resolve to today's helpers)."""
    root = Path(__file__).resolve().parent.parent
    source = subprocess.run(
        ["git", "show", f"{rev}:{VERTICES}"], cwd=root, check=True, capture_output=True, text=True
    ).stdout
    name = "certpca.solvers.spannogram._vertices_before"
    spec = importlib.util.spec_from_loader(name, loader=None)
    module = importlib.util.module_from_spec(spec)
    module.__package__ = "certpca.solvers.spannogram"
    sys.modules[name] = module
    exec(compile(source, f"{rev}:{VERTICES}", "exec"), module.__dict__)
    return module


@contextmanager
def enumeration(module):
    """spannogram() with Alg. 2's candidate supports taken from ``module`` (None: today's)."""
    saved = spannogram_package.vertex_supports
    if module is not None:
        spannogram_package.vertex_supports = module.vertex_supports
    try:
        yield
    finally:
        spannogram_package.vertex_supports = saved


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--k", type=int, default=50)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--d3-exact", action="store_true", help="also run exact d = 3 (patch-pruned Alg. 2)")
    ap.add_argument(
        "--before",
        metavar="REV",
        help=f"also run exact d = 3 with {VERTICES} at git revision REV (before the speed-up: minutes)",
    )
    args = ap.parse_args(argv)
    before = vertices_at(args.before) if args.before else None

    t0 = time.perf_counter()
    ds = datasets.load("leukemia")
    X = ds.matrix
    P = ds.problem()
    lam1 = float(P.eigenvalues()[0])  # computes and caches the spectrum
    t_load = time.perf_counter() - t0

    runs = [(2, None, args.repeats, None), (3, "grid", 1, None)]
    if args.d3_exact:
        runs.append((3, None, 1, None))
    if before is not None:
        runs.append((3, None, 1, args.before))
    rows, opt3 = [], {}
    for (d, net, reps, rev), nonneg in [(r, nn) for r in runs for nn in (False, True)]:
        times, res = [], None
        with enumeration(before if rev else None):
            for _ in range(reps):
                cpu = time.process_time()
                res = spannogram(P, args.k, nonneg=nonneg, d=d, net=net, epsilon=0.05)
                times.append((res.seconds, time.process_time() - cpu))
        try:
            bound = spannogram_bound(P, args.k, nonneg, d=d, net=net, epsilon=0.05).value
        except NotApplicable:  # a truncated exact enumeration proves no bound
            bound = float("nan")
        if d == 3 and net is None:
            opt3.setdefault(nonneg, []).append((rev, res.opt_d, res.n_candidates, statistics.median(times)[0]))
        rows.append(
            {
                "problem": "nonnegative" if nonneg else "sparse",
                "method": f"d={d} "
                + (res.method if net is None else f"{res.method} ε={res.epsilon:.3f}")
                + (f" (vertices.py at {rev})" if rev else ""),
                "k": args.k,
                "time (s, median)": statistics.median(t for t, _ in times),
                "CPU (s)": statistics.median(c for _, c in times),
                "candidates": res.n_candidates,
                "value/λ1": res.value / lam1,
                "opt_d/λ1": res.opt_d / lam1,
                "bound/λ1": bound / lam1,
                "value/bound": res.value / bound,
                "nnz": int(np.count_nonzero(res.weights)),
            }
        )
    table = pd.DataFrame(rows)
    fmt = {c: "{:.3f}" for c in table.columns if table[c].dtype.kind == "f"}
    text = table.to_string(index=False, formatters={c: f.format for c, f in fmt.items()})
    md_table = table.to_markdown(index=False, floatfmt=".4f") if _has_tabulate() else "```\n" + text + "\n```"
    header = (
        f"# Spannogram on leukemia {X.shape[0]} × {X.shape[1]}, k = {args.k}\n\n"
        f"`python bench/bench_spannogram.py --k {args.k} --repeats {args.repeats}"
        f"{' --d3-exact' if args.d3_exact else ''}{f' --before {args.before}' if args.before else ''}`; "
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
        f"numpy {np.__version__}.  Loading, centring and the eigen-decomposition took "
        f"{t_load:.2f} s (not in the times below).  Bound = opt_d + λ_{{d+1}} (exact) "
        "or opt_d/(1−ε)² + λ_{d+1} (net), Asteris et al. 2014 Sec. 2.1 and 6; "
        "value/bound is the certified fraction from this bound alone (they report "
        "44.6 % for nonnegative k = 50 with d = 3, ε = 0.1).  Times: median of "
        f"{args.repeats} runs for d = 2, one run otherwise.\n\n"
    )
    notes = []
    for nonneg, found in opt3.items():
        if len(found) == 2:
            (_, now, n_now, t_now), (rev, was, n_was, t_was) = found
            notes.append(
                f"- exact d = 3, {'nonnegative' if nonneg else 'sparse'}: {t_was / t_now:.0f}x faster than "
                f"vertices.py at {rev} ({t_was:.1f} s → {t_now:.1f} s); OPT_3 {now!r} now, {was!r} then "
                f"({'equal' if now == was else 'DIFFERENT'}); {n_now} candidate supports now, {n_was} then."
            )
    publish("spannogram.md", header + md_table + "\n" + ("\n" + "\n".join(notes) + "\n" if notes else ""))


def _has_tabulate():
    try:
        import tabulate  # noqa: F401

        return True
    except ImportError:
        return False


if __name__ == "__main__":
    main()
