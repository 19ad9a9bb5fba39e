"""Every registered method on the same problems, in one run.

Nonnegative sparse PCA, first component, column-centred data: leukemia (72 x
12582) at k = 50 and CBCL faces (2429 x 361) at k = 180.  EV = wᵀCw / λ1.
Times are one fit through the driver (starts, renormalisation) with one BLAS
thread; random starts use seed 0 and the default 10 restarts, except NSPCA: one
random start (its β bisection re-runs coordinate ascent dozens of times).

    python bench/bench_solvers.py        # writes reports/bench/solvers.md
"""

from __future__ import annotations

import os
import platform
import time
import warnings

import numpy as np
from common import publish
from threadpoolctl import threadpool_limits

import certpca
from certpca import datasets
from certpca.solvers import REGISTRY, solve

CASES = [("leukemia", 50), ("cbcl", 180)]


def main():
    lines = [
        "# Solvers side by side (reports/bench/solvers.md)",
        "",
        f"Command: `python bench/bench_solvers.py`; {platform.machine()}, {os.cpu_count()} cores, "
        f"one BLAS thread; certpca {certpca.__version__}. Nonnegative, first component, "
        "column-centred; EV = wᵀCw/λ1.",
        "",
        "| data | k | method | EV | cardinality | time (s) | note |",
        "|---|---|---|---|---|---|---|",
    ]
    with threadpool_limits(1):
        for name, k in CASES:
            P = datasets.load(name).problem()
            lam1 = float(P.eigenvalues()[0])
            for method, solver in REGISTRY.items():
                if not (solver.sparse and solver.nonneg):
                    continue
                restarts = 1 if method == "nspca" else 10
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always")
                    t0 = time.perf_counter()
                    comp = solve(P, k, method=method, nonneg=True, rng=np.random.default_rng(0), restarts=restarts)
                    seconds = time.perf_counter() - t0
                note = "; ".join(sorted({str(w.message).split(";")[0] for w in caught}))
                if method == "spannogram":
                    note = (
                        note + "; " if note else ""
                    ) + f"exact d = {comp.extras['d']}, OPT_d/λ1 = {comp.extras['opt_d'] / lam1:.4f}"
                if method == "nspca" and not comp.extras.get("reached", True):
                    note = (
                        f"β bisection did not reach k: the cardinality jumps from "
                        f"{comp.extras.get('nearest_above')} to {comp.extras.get('nearest_below')} nonzeros"
                    )
                if "floor" in comp.extras:  # the result shown is the driver's floor, not the method's own
                    note = (note + "; " if note else "") + comp.extras["floor"]
                lines.append(
                    f"| {name} | {k} | {method} | {comp.variance / lam1:.4f} | {comp.cardinality} "
                    f"| {seconds:.3f} | {note} |"
                )
                print(lines[-1], flush=True)
    text = "\n".join(lines) + "\n"
    publish("solvers.md", text)


if __name__ == "__main__":
    main()
