"""Issue 29's acceptance rows for budgets: a certificate returns within its budget (the estimator's rows:
bench/bench_estimator.py).

Each CLI row runs ``python -m certpca certify ...`` (or ``fit``, whose components share the budget) in a child
process (one BLAS thread) with the
default budget (15 seconds of estimated work, ``DEFAULT_BUDGET``) and reports its wall and CPU seconds
(the child's user + system time, the vector's fit included) over the budget: the budget counts estimated
work calibrated to CPU seconds (bench/bench_work.py), so CPU/budget is the promise (≤ 1.2 is the
acceptance) and wall/budget follows it on a quiet machine; the load average is given beside.  Then
``certpca.certify(fit, budget=10)`` on pbmc with 5 components at k = 30, and with its default budget.

    PYTHONPATH=. python bench/bench_budgets.py      # writes reports/bench/budgets.md
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import subprocess
import sys
import time
import warnings

from common import CHILD_ENV, publish
from threadpoolctl import threadpool_limits

import certpca
from certpca.certification.certificate import DEFAULT_BUDGET

CLI_ROWS = [
    ["certify", "khan", "--k", "10", "--scale", "--nonneg"],
    ["certify", "alon", "--k", "10", "--log2", "20", "--nonneg"],
    ["certify", "lrs", "--k", "50", "--scale", "--nonneg"],
    ["fit", "leukemia", "--k", "50", "--nonneg", "--components", "3", "--log2", "20"],
]


def cli_row(args: list[str]) -> tuple[float, float, str]:
    """(wall seconds, CPU seconds, what it certified) of ``certpca`` with ``args``: a certificate's first
    line, or a fit's certified fraction per component."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, "-m", "certpca", *args], env=CHILD_ENV, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    fractions = [x.split("certified ")[1].split(",")[0] for x in out.stdout.splitlines() if " Certificate " in x]
    if args[0] == "fit" and fractions:
        net = "; the CPU safety net decided" if "CPU safety net" in out.stdout else ""
        return wall, cpu, "certified " + " / ".join(fractions) + net
    line = next((x for x in out.stdout.splitlines() if x.startswith("Certificate")), out.stderr.strip()[-200:])
    used = next((x.strip() for x in out.stdout.splitlines() if "budget: used" in x), "")
    return wall, cpu, f"{line.split(': ', 1)[-1]} ({used})"


def main() -> None:
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args()
    warnings.simplefilter("ignore")
    rows = [
        "# Budgets (issue 29)",
        "",
        f"`PYTHONPATH=. python bench/bench_budgets.py`, {platform.node()}, {os.cpu_count()} cores, one BLAS thread.",
        "The budget counts seconds of estimated work (certpca/clock.py), calibrated to CPU seconds; wall seconds",
        "follow on a quiet machine and stretch with the load (load average: 1-minute value when the row started).",
        "",
        "| command | budget (s of work) | wall s | CPU s | CPU / budget | wall / budget | load | certified |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for a in CLI_ROWS:
        load = os.getloadavg()[0]
        wall, cpu, line = cli_row(a)
        b = DEFAULT_BUDGET
        rows.append(
            f"| `certpca {' '.join(a)}` | {b:g} | {wall:.1f} | {cpu:.1f} | {cpu / b:.2f} | {wall / b:.2f} "
            f"| {load:.2f} | {line} |"
        )
    rows += [
        "",
        "| call | budget (s of work) | used | wall s | CPU s | load | CPU net decided | certified (per component) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    with threadpool_limits(1):
        for budget in (10, None):  # a fresh fit each: a problem's memoised work is not charged again
            fit = certpca.fit("pbmc", 30, n_components=5)
            load = os.getloadavg()[0]
            cpu0, t0 = time.process_time(), time.perf_counter()
            certpca.certify(fit, budget=budget)
            wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
            fractions = ", ".join(f"{100 * c.certified_fraction:.2f}%" for c in fit.certificates if c is not None)
            used = sum(c.budget_used for c in fit.certificates if c is not None)
            net = "yes" if any(c is not None and c.net_fired for c in fit.certificates) else "no"
            call = "certpca.certify(fit)" if budget is None else f"certpca.certify(fit, budget={budget})"
            rows.append(
                f"| `{call}`, pbmc k = 30, 5 components | {DEFAULT_BUDGET if budget is None else budget:g} | "
                f"{used:.2f} | {wall:.1f} | {cpu:.1f} | {load:.2f} | {net} | {fractions} |"
            )
    publish("budgets.md", "\n".join(rows) + "\n")


if __name__ == "__main__":
    main()
