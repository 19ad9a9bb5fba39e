"""Calibration of budgets: CPU seconds used against seconds of estimated work charged (certpca/clock.py).

For each bundled data set (raw and ``--log2 20`` for the microarrays but khan, already on a log scale,
and issue 29's promise rows) the default certificate of certpca's own vector (``certpca certify``'s) runs
with the default budget, one BLAS thread, in this process; per bound it records the work charged (by the
bound's own steps, or its estimate: ``BoundSpec.work_on``) and the CPU seconds it took.  A ratio
CPU / work near 1 means the estimates hold; a budget is a promise only while the whole certificate's
ratio stays under about 1.2.  All rows are measured in one run; the load average is given beside each row.

    PYTHONPATH=. python bench/bench_work.py [--only khan,alon]   # writes reports/bench/work.md
"""

from __future__ import annotations

import argparse
import os
import platform
import time
import warnings
from collections import defaultdict

from common import publish
from threadpoolctl import threadpool_limits

from certpca import clock
from certpca.certification import certificate
from certpca.certification.certificate import DEFAULT_BUDGET, certify_vector
from certpca.certification.spec import BoundSpec
from certpca.io import load
from certpca.solvers import DEFAULT_METHOD, solve
from certpca.validation import check_random_state

#: (data set, load options, k, nonneg)
CASES = [
    ("leukemia", {}, 50, False),
    ("leukemia", {"log2": 20}, 50, False),
    ("khan", {}, 50, False),
    ("khan", {}, 50, True),
    ("golub", {}, 50, False),
    ("golub", {"log2": 20}, 50, False),
    ("alon", {}, 50, False),
    ("alon", {"log2": 20}, 50, False),
    ("pbmc", {}, 30, False),
    ("lrs", {}, 50, False),
    ("cbcl", {}, 50, False),
    ("khan", {"scale": True}, 10, True),
    ("alon", {"log2": 20}, 10, True),
    ("lrs", {"scale": True}, 50, True),
]


class Ledger:
    """Per bound: CPU seconds inside it and work charged to the certificate's allotment from the moment the
    certificate reads its estimate (``BoundSpec.work_on``, just before charging it) to the next bound's."""

    def __init__(self):
        self.current = "(none)"
        self.cpu: dict[str, float] = defaultdict(float)
        self.work: dict[str, float] = defaultdict(float)

    def __enter__(self):
        computed, charge, work_on = certificate._computed, clock.Work.charge, BoundSpec.work_on
        self.saved = computed, charge, work_on
        ledger = self

        def named_work_on(spec, problem, k):
            ledger.current = spec.name
            return work_on(spec, problem, k)

        def timed_computed(name, *args, **kwargs):
            t0 = time.process_time()
            try:
                return computed(name, *args, **kwargs)
            finally:
                ledger.cpu[name] += time.process_time() - t0

        def counted_charge(work, seconds):
            if work.parent is None:
                ledger.work[ledger.current] += seconds
            charge(work, seconds)

        certificate._computed = timed_computed
        clock.Work.charge = counted_charge
        BoundSpec.work_on = named_work_on
        return self

    def __exit__(self, *exc):
        certificate._computed, clock.Work.charge, BoundSpec.work_on = self.saved


def label(name: str, opts: dict, k: int, nonneg: bool) -> str:
    flags = "".join(f" --{o} {v}" if v is not True else f" --{o}" for o, v in opts.items())
    return f"{name}{flags} --k {k}{' --nonneg' if nonneg else ''}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="comma-separated data set names")
    only = parser.parse_args().only
    warnings.simplefilter("ignore")
    rows = [
        "# Budgets in estimated work: calibration (issue 29)",
        "",
        f"`PYTHONPATH=. python bench/bench_work.py`, {platform.node()}, {os.cpu_count()} cores, one BLAS thread;",
        f"the default certificate (budget {DEFAULT_BUDGET:g} s of work) of `certpca certify`'s own vector.",
        "Work: seconds charged to the budget; CPU: process seconds inside the bounds (the vector's fit excluded).",
        "",
        "| certificate | load | work s | CPU s | CPU / work | per bound: CPU / work s | upper bound |",
        "|---|---|---|---|---|---|---|",
    ]
    ratios = []
    for name, opts, k, nonneg in CASES:
        if only and name not in only.split(","):
            continue
        with threadpool_limits(1):
            problem = load(name, **opts).problem()
            w = solve(problem, k, method=DEFAULT_METHOD, nonneg=nonneg, rng=check_random_state(0)).weights
            load_avg = os.getloadavg()[0]
            with Ledger() as ledger:
                t0 = time.process_time()
                cert = certify_vector(problem, w, k, nonneg)
                cpu = time.process_time() - t0
        parts = ", ".join(
            f"{b} {ledger.cpu[b]:.2f}/{ledger.work[b]:.2f}"
            for b in sorted(ledger.cpu, key=lambda b: -ledger.cpu[b])
            if ledger.cpu[b] >= 0.05 or ledger.work[b] >= 0.05
        )
        ratio = cpu / max(cert.budget_used, 1e-9)
        ratios.append(ratio)
        rows.append(
            f"| `{label(name, opts, k, nonneg)}` | {load_avg:.2f} | {cert.budget_used:.2f} | {cpu:.2f} | "
            f"{ratio:.2f} | {parts} | {cert.upper_bound:.6g} [{cert.winner}] |"
        )
        print(rows[-1], flush=True)
    if ratios:
        rows += ["", f"CPU / work over the rows: {min(ratios):.2f} .. {max(ratios):.2f}."]
    publish("work.md" if not only else "work-partial.md", "\n".join(rows) + "\n")


if __name__ == "__main__":
    main()
