"""GPower (ℓ1 and ℓ0, single unit) on leukemia: time, cardinality and EV for k = 10, 50, 200.

Each fit is ``solve(P, k, method="gpower-l1" | "gpower-l0")``: γ searched for the
target k (bisection with order-statistics proposals), then the driver's variational
renormalisation on the support.  EV = wᵀCw / λ1.  Times are medians of ``--repeats``
runs on one BLAS thread, with the covariance operator built beforehand (as a fit
inside ``certpca.fit`` sees it); EM is listed beside it as the in-house reference.

    python bench/bench_gpower.py            # writes reports/bench/gpower.md
"""

from __future__ import annotations

import argparse
import os
import platform
import warnings

import numpy as np
from common import publish, timed
from threadpoolctl import threadpool_limits

import certpca
from certpca.solvers import solve


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=7)
    args = ap.parse_args(argv)

    P = certpca.datasets.load("leukemia").problem()
    lam1 = P.eigenvalues()[0]
    rows = []
    with threadpool_limits(1), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for nonneg in (False, True):
            for method in ("gpower-l1", "gpower-l0", "em"):
                for k in (10, 50, 200):
                    med, best, comp = timed(lambda: solve(P, k, method=method, nonneg=nonneg), args.repeats)
                    ex = comp.extras
                    steps = len(ex.get("bisection", [])) or ""
                    trunc = ex.get("truncated")
                    note = f"cut from {trunc}" if trunc else ""
                    rows.append(
                        (
                            method + (" nonneg" if nonneg else ""),
                            k,
                            med,
                            best,
                            comp.cardinality,
                            comp.variance / lam1,
                            comp.iterations,
                            steps,
                            note,
                        )
                    )
            # one start (the paper's x0 = largest-norm column), i.e. one γ search
            e = np.zeros(P.dim)
            e[int(np.argmax(P.diag))] = 1.0
            for method in ("gpower-l1", "gpower-l0"):
                med, best, comp = timed(lambda: solve(P, 50, method=method, nonneg=nonneg, starts=[e]), args.repeats)
                rows.append(
                    (
                        method + (" nonneg" if nonneg else "") + ", paper start only",
                        50,
                        med,
                        best,
                        comp.cardinality,
                        comp.variance / lam1,
                        comp.iterations,
                        len(comp.extras["bisection"]),
                        "",
                    )
                )

    lines = [
        "# GPower benchmark (reports/bench/gpower.md)\n",
        f"Command: `python bench/bench_gpower.py`; leukemia (72 × 12582, column-centred), "
        f"machine: {platform.machine()}, {os.cpu_count()} cores, one BLAS thread; "
        f"certpca {certpca.__version__}, numpy {np.__version__}. "
        f"EV = wᵀCw / λ1 after renormalisation on the support; time = median (min) of "
        f"{args.repeats} fits, γ search included, load average {os.getloadavg()[0]:.1f} at the end "
        f"(other jobs share the machine: compare rows, not machines). GPower runs from its "
        f"starts (sparse: paper's x0 and PC1; nonneg: x0, (PC1)₊, (−PC1)₊), each with its own "
        f"γ search; 'γ tried' and 'iterations' are those of the winning start / of all starts.\n",
        "| method | k | time (s) | min (s) | cardinality | EV | iterations | γ tried | note |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for method, k, med, best, card, ev, its, steps, note in rows:
        lines.append(f"| {method} | {k} | {med:.4f} | {best:.4f} | {card} | {ev:.4f} | {its} | {steps} | {note} |")
    text = "\n".join(lines) + "\n"
    publish("gpower.md", text)


if __name__ == "__main__":
    main()
