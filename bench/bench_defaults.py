"""The default method against every registry solver, on every bundled data set (issue 27, part 1).

For each bundled data set, raw (centred) and scaled to unit variance (``--scale``), signed and
nonnegative, and k in 5, 10, 20, 50, 100 (below D): the first component's variance wᵀCw of the
default ``auto`` beside each sparse registry solver run with its defaults through the driver, and
the time of ``auto`` over today's default ``em`` on the same problem (one fit each, timed in the
same run, one BLAS thread).  A row "loses" when some single solver's variance exceeds the default's
by more than 1e-9 relative.  Then the k = 50 fit on leukemia, ``certpca.fit`` on the loaded data,
``auto`` and ``em`` timed in alternation (median of ``--repeats``).

    PYTHONPATH=. python bench/bench_defaults.py            # writes reports/bench/defaults.md
    PYTHONPATH=. python bench/bench_defaults.py --quick    # k = 10, 50 only
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time
import warnings

from common import publish
from threadpoolctl import threadpool_limits

import certpca
from certpca import datasets
from certpca.solvers import REGISTRY, solve

KS = (5, 10, 20, 50, 100)
DEFAULT, TODAY = "auto", "em"
#: not compared: ``exact`` is the branch and bound (D ≤ 400, up to 60 s a problem), the proven optimum where it
#: finishes rather than a peer heuristic; a certified fit adopts its vector (tests/components/test_adopt.py)
NOT_COMPARED = ("exact",)


def solvers(nonneg: bool) -> list[str]:
    """The sparse registry solvers that solve this sign, the default excluded."""
    return [n for n in compared() if (REGISTRY[n].nonneg if nonneg else REGISTRY[n].signed)]


def compared() -> list[str]:
    """The sparse registry solvers the default is compared with."""
    return [n for n, s in REGISTRY.items() if s.sparse and n != DEFAULT and n not in NOT_COMPARED]


def timed_solve(problem, k, method, nonneg) -> tuple[float, float, str]:
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        c = solve(problem, k, method=method, nonneg=nonneg, rng=0)
    seconds = time.perf_counter() - t0
    return c.variance, seconds, str(c.extras.get("candidate", "")) + (" + swaps" if "swaps" in c.extras else "")


def grid(ks) -> tuple[list[str], int, int]:
    names = compared()
    head = ["data", "prep", "sign", "k", "default", *names, "best single", "default / best", "time auto/em", "won by"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    rows = losses = 0
    for name in datasets.names():
        covariance = datasets.info(name)["kind"] == "covariance"
        for scale in (False,) if covariance else (False, True):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                problem = certpca.load(name, scale=scale).problem()
            problem.eigenvalues()
            for nonneg in (False, True):
                for k in (k for k in ks if k < problem.dim):
                    em_value, em_time, _ = timed_solve(problem, k, TODAY, nonneg)
                    value, seconds, winner = timed_solve(problem, k, DEFAULT, nonneg)
                    others = {
                        n: (em_value if n == TODAY else timed_solve(problem, k, n, nonneg)[0]) for n in solvers(nonneg)
                    }
                    best = max(others, key=lambda n: others[n])
                    lost = others[best] > value * (1 + 1e-9)
                    rows += 1
                    losses += lost
                    cells = [f"{others[n]:.6g}" if n in others else "-" for n in names]
                    lines.append(
                        "| "
                        + " | ".join(
                            [
                                name,
                                "scale" if scale else "raw",
                                "nonneg" if nonneg else "signed",
                                str(k),
                                f"{value:.6g}",
                                *cells,
                                best,
                                f"{value / others[best]:.6f}" + (" **lost**" if lost else ""),
                                f"{seconds / em_time:.2f}",
                                winner,
                            ]
                        )
                        + " |"
                    )
                    print(lines[-1], flush=True)
    return lines, rows, losses


def leukemia_ratio(repeats: int) -> tuple[float, float, float]:
    """(median seconds of em, of auto, their ratio): certpca.fit(leukemia, 50) on the loaded data, alternated."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ds = certpca.load("leukemia")
    times: dict[str, list[float]] = {TODAY: [], DEFAULT: []}
    for _ in range(repeats):
        for method in (TODAY, DEFAULT):
            t0 = time.perf_counter()
            certpca.fit(ds, 50, method=method)
            times[method].append(time.perf_counter() - t0)
    em, auto = statistics.median(times[TODAY]), statistics.median(times[DEFAULT])
    return em, auto, auto / em


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="k = 10 and 50 only")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    ks = (10, 50) if args.quick else KS
    with threadpool_limits(1):
        load = os.getloadavg()[0]
        lines, rows, losses = grid(ks)
        em, auto, ratio = leukemia_ratio(args.repeats)
    text = "\n".join(
        [
            "# The default method beside every solver (reports/bench/defaults.md)",
            "",
            f"Command: `PYTHONPATH=. python bench/bench_defaults.py{' --quick' if args.quick else ''}`; "
            f"{platform.machine()}, "
            f"{os.cpu_count()} cores (shared; load average {load:.1f} at the start), one BLAS thread; "
            f"certpca {certpca.__version__}.",
            "First component, column-centred (``scale``: also unit variance); each solver with its defaults "
            f"through the driver (seed 0); the default is `{DEFAULT}`, today's was `{TODAY}` (its column).  "
            "'time auto/em' is one fit of each on the same problem in the same run; 'won by' is the candidate "
            "of `auto` that gave its vector ('+ swaps': the driver's swap search then raised it, solvers/swap.py).  "
            "`exact` (branch and bound, D ≤ 400) is not a column: it is the proven optimum where it finishes, "
            "and a certified fit adopts its vector.",
            "",
            f"**{losses} of {rows} rows** where a single registry solver beats the default.",
            "",
            f"certpca.fit(leukemia, k = 50), loaded data, signed, median of {args.repeats} alternated: "
            f"em {em:.3f} s, auto {auto:.3f} s, **ratio {ratio:.2f}** (goal: under 3).",
            "",
            *lines,
            "",
        ]
    )
    publish("defaults.md", text)


if __name__ == "__main__":
    main()
