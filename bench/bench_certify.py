"""Certified fractions on the acceptance table of issue 14, beside the published numbers and today's.

For each data set, preprocessing, k and sign constraint: certpca's best vector
(the best of EM, thresholding and, where the exact search is a default bound, the rank-2
spannogram), then the default certificate
(:func:`certpca.certification.certify_vector`, every applicable bound, cheapest first,
within its 60 s budget).  "today" is the minimum over the bounds of the default
certificate before the wide-data families (``threshold``, ``dabe_sdp``; the exact
search only up to D = 20) — computed in the same certificate; "new" is the
certificate's upper bound.  Every bound's value and
time is listed.  Asteris et al. (ICML 2014) report 44.6 %, 58 % and 86 % for
leukemia k = 50, CBCL k = 180 and LRS k = 20 (nonnegative, Figs. 5, 4, 6).  One
BLAS thread.

    python bench/bench_certify.py        # writes reports/bench/certify.md
    python bench/bench_certify.py --screening-only   # only the issue-28 section (about 20 min)
    python bench/bench_certify.py --expression-only  # only the expression sets at k <= 50 (about 30 min)
    python bench/bench_certify.py --expression-only khan cbcl  # only these data sets' rows, in this order
    python bench/bench_certify.py --fit-proofs [--baseline DIR]  # `certpca fit` on the proof cells (and DIR's)

The issue-28 section (Schur screening, then the exact search on the features left) certifies
each row twice in one run: with the default bounds but ``screening`` ("today") and with all
of them, and lists the features left, the nodes and the seconds of screening.
"""

from __future__ import annotations

import json
import os
import platform
import resource
import subprocess
import sys
import time
from contextlib import contextmanager
from dataclasses import replace

import numpy as np
from common import CHILD_ENV, REPORTS, publish
from threadpoolctl import threadpool_limits

import certpca
from certpca import datasets
from certpca.certification import REGISTRY, certify_vector, default_bounds
from certpca.certification.exact import DEFAULT_MAX_DIM as EXACT_DEFAULT_MAX_DIM
from certpca.solvers import solve

NEW = ("threshold", "dabe_sdp")

#: before issue 14 the exact search was a default bound only up to this D
OLD_EXACT_MAX_DIM = 20


def _old_default(name: str, dim: int) -> bool:
    """Was this bound in the default certificate before the wide-data families?"""
    return name not in NEW and not (name == "exact" and dim > OLD_EXACT_MAX_DIM)


CASES = [  # data, preprocessing, k, nonneg, today (issue 14), goal, time goal (s)
    ("leukemia", {}, 50, True, 0.605, 0.90, 60),
    ("leukemia", {"log2": 20}, 50, True, 0.689, 0.95, 60),
    ("leukemia", {"scale": True}, 50, True, 0.950, 0.99, 60),
    ("leukemia", {}, 50, False, 0.614, 0.95, 60),
    ("leukemia", {"log2": 20}, 50, False, 0.712, 0.98, 60),
    ("cbcl", {}, 180, True, 0.953, 0.99, 120),
    *[("lrs", {}, k, nn, None, 1.0, 60) for nn in (False, True) for k in (5, 10, 20, 40)],
    *[("cbcl", {}, 5, nn, None, 1.0, 60) for nn in (False, True)],  # a proof with hundreds of features
]


#: issue 28's acceptance rows: data, preprocessing, k, nonneg, the issue's "today", seconds allowed
SCREENING_CASES = [
    ("cbcl", {}, 10, False, 0.986, 60),
    ("cbcl", {}, 10, True, 0.984, 60),
    ("cbcl", {}, 20, False, 0.984, 60),
    ("cbcl", {"scale": True}, 10, False, 0.995, 60),
    ("lrs", {"scale": True}, 10, False, 0.993, 10),
    ("lrs", {"scale": True}, 20, False, 0.999, 10),
    *[("pbmc", {"scale": True}, k, nn, None, 60) for k in (5, 10) for nn in (False, True)],
]

#: issue 28's acceptance row "every bundled expression set, raw and --log2 20, k in {10, 20, 50}, >= 93% within the
#: default budget" (khan is log-scale already: --log2 20 floors every value, certpca refuses it), and CBCL k = 30, 50
EXPRESSION_CASES = [
    *[
        (name, kw, k, nonneg, 0.93)
        for name in ("alon", "golub", "khan", "leukemia")
        for kw in ({}, {"log2": 20})
        if not (name == "khan" and kw)
        for k in (10, 20, 50)
        for nonneg in (False, True)
    ],
    *[("cbcl", {}, k, nonneg, 0.995) for k in (30, 50) for nonneg in (False, True)],
]

#: the heading that starts the expression section of reports/bench/certify.md
EXPRESSION_HEADING = "## Expression sets at k ≤ 50 within the default budget (issue 28)"

#: the heading that starts the issue-28 section of reports/bench/certify.md
SCREENING_HEADING = "## Schur screening, then the exact search (issue 28)"


def _best_vector(P, k, nonneg):
    """certpca's best vector as the rows above choose it (the spannogram too where the exact search is a default)."""
    methods = ("em", "threshold") + (("spannogram",) if P.dim <= EXACT_DEFAULT_MAX_DIM else ())
    return max((solve(P, k, nonneg=nonneg, method=m) for m in methods), key=lambda c: c.variance)


def screening_section() -> str:
    """The issue-28 rows: today's default certificate (without screening) beside the one with it."""
    load = os.getloadavg()[0]
    lines = []
    with threadpool_limits(1):
        for name, kw, k, nonneg, issue, t_goal in SCREENING_CASES:
            P = datasets.load(name, **kw).problem()
            best = _best_vector(P, k, nonneg)
            w = best.weights
            t0 = time.perf_counter()
            old = certify_vector(
                P,
                w,
                k,
                nonneg=nonneg,
                bounds=[b for b in default_bounds(P, nonneg) if b != "screening"],
                budget=60.0,
                stop_when_optimal=True,
            )
            t_old = time.perf_counter() - t0
            t0 = time.perf_counter()
            new = certify_vector(P, w, k, nonneg=nonneg)
            t_new = time.perf_counter() - t0
            scr = next((b for b in new.bounds if b.name == "screening"), None)
            left = f"{scr.params['survivors']} of {P.dim}" if scr else "skipped"
            nodes = scr.params.get("nodes", 0) if scr else ""
            t_scr = f"{scr.seconds:.1f}" if scr else ""
            with_found = new.lower_bound / new.upper_bound
            proven = new.upper_bound - new.lower_bound <= new.tol * new.upper_bound
            met = "met" if proven and t_new <= t_goal else "not met"
            lines.append(
                f"| {name} | {_prep(kw)} | {k} | {'nonneg' if nonneg else 'signed'} | {best.method} {new.value:.6g} "
                f"| {'' if issue is None else f'{issue:.1%}'} | {old.certified_fraction:.2%} ({t_old:.0f} s) "
                f"| {new.certified_fraction:.2%} | {new.lower_bound:.6g} | {with_found:.4%} | {new.upper_bound:.6g} "
                f"| {new.winner} | {left} | {nodes} | {t_scr} | {t_new:.1f} | proven in {t_goal} s: {met} |"
            )
    head = [
        SCREENING_HEADING,
        "",
        f"Command: `OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python bench/bench_certify.py --screening-only`; "
        f"{os.cpu_count()} cores shared with other jobs (load average {load:.1f} at the start, "
        f"{os.getloadavg()[0]:.1f} at the end), one BLAS thread. Vector: the best of the rows above's solvers. "
        "'today' = the default certificate without `screening` (60 s budget, same run); 'with screening' = the "
        "default certificate; 'found' = the best feasible value a bound's search holds (the exact search's "
        "optimum), and the fraction it certifies: 'proven' when it is within 1e-6 of the upper bound.",
        "",
        "| data | preprocessing | k | problem | vector | issue | today (s) | with screening | found "
        "| found certified | upper bound | winner | features left | nodes | screening (s) | certify (s) | goal |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    return "\n".join(head + lines) + "\n"


#: the heading of the `certpca fit` proof rows (issue 28's acceptance line)
FIT_HEADING = "## `certpca fit` on the proof cells (issue 28)"

#: `certpca fit DATA ARGS --json` rows: the proof cells with the default certificate at --budget 60, then the
#: exact solver alone (the node screening of certpca/solvers/exact.py) on CBCL k = 20
FIT_ROWS = [  # data, options, also run on the baseline checkout (main vs branch: the rows issue 28 left open)
    ("cbcl", "--k 10 --budget 60", False),
    ("cbcl", "--k 10 --nonneg --budget 60", False),
    ("cbcl", "--k 20 --budget 60", True),
    ("cbcl", "--k 20 --nonneg --budget 60", True),
    ("cbcl", "--k 30 --budget 60", True),
    ("cbcl", "--scale --k 10 --budget 60", False),
    ("lrs", "--scale --k 10 --budget 60", False),
    ("lrs", "--scale --k 20 --budget 60", False),
    ("pbmc", "--scale --k 5 --budget 60", False),
    ("pbmc", "--scale --k 5 --nonneg --budget 60", False),
    ("pbmc", "--scale --k 10 --budget 60", False),
    ("pbmc", "--scale --k 10 --nonneg --budget 60", False),
    ("cbcl", "--k 20 --method exact --no-certify", True),
    ("cbcl", "--k 20 --nonneg --method exact --no-certify", True),
]


def _fit(root: str, data: str, args: str) -> dict:
    """`python -m certpca fit DATA ARGS --json` run from the checkout ``root`` (its certpca imported): the
    component's value, whether it is proven optimal (the certificate's verdict, or the exact solver's proof),
    the upper bound, the certificate's winner, and the child's CPU seconds."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(
        [sys.executable, "-m", "certpca", "fit", data, *args.split(), "--json"],
        cwd=root,
        env={**CHILD_ENV, "PYTHONPATH": root},
        capture_output=True,
        text=True,
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    if done.returncode:
        return {"error": (done.stderr.strip().splitlines() or ["no output"])[-1], "cpu": cpu}
    out = json.loads(done.stdout)
    comp = out["components"][0]
    if out["certificates"]:
        cert = out["certificates"][0]
        proven, upper, winner = cert["optimal"], cert["upper_bound"], cert["winner"]
    else:
        proven, upper, winner = bool(comp["extras"].get("proven")), comp["extras"].get("upper_bound"), ""
    return {"value": comp["value"], "proven": proven, "upper": upper, "winner": winner, "cpu": cpu}


def fit_section(baseline: str | None) -> str:
    """The FIT_ROWS on this checkout, and those marked on ``baseline`` (another checkout) in the same run."""
    here = str(REPORTS.parent.parent)
    load = os.getloadavg()[0]
    lines = []
    for data, args, compare in FIT_ROWS:
        for label, root in [("branch", here)] + ([("main", baseline)] if baseline and compare else []):
            row_load = os.getloadavg()[0]
            r = _fit(root, data, args)
            if "error" in r:
                cells = f"error: {r['error']} | | | | "
            else:
                upper = "" if r["upper"] is None else f"{r['upper']:.6g}"
                cells = f"{'yes' if r['proven'] else 'no'} | {r['value']:.6g} | {upper} | {r['winner']} | "
            lines.append(f"| {data} | `{args}` | {label} | {cells}{r['cpu']:.1f} | {row_load:.1f} |")
            print(lines[-1], flush=True)
    head = [
        FIT_HEADING,
        "",
        "Command: `python bench/bench_certify.py --fit-proofs"
        + (" --baseline DIR`" if baseline else "`")
        + "; each row is `python -m certpca fit DATA OPTIONS --json` in a child process with one BLAS thread"
        + (", from this branch and (rows marked main) from the checkout DIR in turn" if baseline else "")
        + f"; {os.cpu_count()} cores shared with other jobs (load average {load:.1f} at the start, "
        f"{os.getloadavg()[0]:.1f} at the end; each row's load at its start beside it). 'proven' = the "
        "certificate says optimal (gap ≤ 1e-6 relative), or, with `--no-certify`, the exact solver's proof; "
        "'value' = the component's variance, the vector the user gets; CPU s = the child's user + system "
        "seconds.",
        "",
        "| data | options | code | proven | value | upper bound | winner | CPU s | load |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    return "\n".join(head + lines) + "\n"


@contextmanager
def _cost_order():
    """The registry as it was before the wide-data schedule: every bound at its own cost class and share on a
    factor problem too (``BoundSpec.factor_cost``, ``factor_share`` unset), the expression section's baseline,
    in the same run."""
    saved = dict(REGISTRY)
    REGISTRY.update({n: replace(s, factor_cost=None, factor_share=None) for n, s in saved.items()})
    try:
        yield
    finally:
        REGISTRY.update(saved)


def expression_section(names: list[str] | None = None) -> str:
    """Issue 28's expression rows: the default certificate (15 CPU s) of the default solver's vector, with the
    computing order of :func:`certpca.certification.certificate.computing_order` and with the cost order.
    ``names``: only these data sets, in this order (all when None)."""
    load = os.getloadavg()[0]
    lines = []
    cases = EXPRESSION_CASES if not names else [c for n in names for c in EXPRESSION_CASES if c[0] == n]
    with threadpool_limits(1):
        for name, kw, k, nonneg, goal in cases:
            P = datasets.load(name, **kw).problem()
            best = solve(P, k, nonneg=nonneg, method="auto")
            with _cost_order():
                t0 = time.process_time()
                old = certify_vector(P, best.weights, k, nonneg=nonneg)
                t_old = time.process_time() - t0
            t0 = time.process_time()
            new = certify_vector(P, best.weights, k, nonneg=nonneg)
            t_new = time.process_time() - t0
            met = "met" if new.certified_fraction >= goal else "not met"
            lines.append(
                f"| {name} | {_prep(kw)} | {k} | {'nonneg' if nonneg else 'signed'} | {new.value:.6g} "
                f"| {old.certified_fraction:.2%} | {old.winner} | {t_old:.1f} | {new.certified_fraction:.2%} "
                f"| {new.winner} | {new.upper_bound / new.value:.4f} | {t_new:.1f} | {goal:.1%}: {met} |"
            )
            print(lines[-1], flush=True)  # a row as soon as it is measured: a run cut short keeps its rows
    head = [
        EXPRESSION_HEADING,
        "",
        f"Command: `OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python bench/bench_certify.py --expression-only"
        f"{''.join(' ' + n for n in names or [])}`; "
        f"{os.cpu_count()} cores shared with other jobs (load average {load:.1f} at the start, "
        f"{os.getloadavg()[0]:.1f} at the end), one BLAS thread. Vector: the default solver's (`auto`). Each "
        "certificate is the default one (every applicable bound, 15 CPU s budget), computed twice in one run: "
        "'cost order' computes the bounds by cost class alone (before issue 28's schedule), 'now' in "
        "`computing_order`'s order (on wide data the bounds that form the D × D covariance last, the threshold "
        "bound with half of what is left, the sample-space SDP after it). Seconds are CPU seconds of the "
        "certificate. On a loaded machine the budget's wall-clock safety net (certpca/clock.py) can end it "
        "before its CPU seconds are spent.",
        "",
        "| data | preprocessing | k | problem | value | cost order | its winner | CPU s | now | winner "
        "| upper / value | CPU s | goal |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    return "\n".join(head + lines) + "\n"


def _with_section(heading: str, section: str) -> str:
    """reports/bench/certify.md with the section under ``heading`` replaced by ``section`` (appended when
    absent), the other sections as other runs wrote them."""
    path = REPORTS / "certify.md"
    text = path.read_text() if path.exists() else ""
    if heading not in text:
        return text.rstrip("\n") + "\n\n" + section if text else section
    before, after = text.split(heading, 1)
    rest = after.find("\n## ")
    return before + section + ("\n" + after[rest + 1 :] if rest >= 0 else "")


def _prep(kw: dict) -> str:
    if "log2" in kw:
        return f"--log2 {kw['log2']:g}"
    return "--scale" if kw.get("scale") else "centred raw"


def main():
    if "--expression-only" in sys.argv:
        names = sys.argv[sys.argv.index("--expression-only") + 1 :]  # data sets to measure, in order (all: none)
        publish("certify.md", _with_section(EXPRESSION_HEADING, expression_section(names)))
        return
    if "--fit-proofs" in sys.argv:
        base = sys.argv[sys.argv.index("--baseline") + 1] if "--baseline" in sys.argv else None
        publish("certify.md", _with_section(FIT_HEADING, fit_section(base)))
        return
    if "--screening-only" in sys.argv:
        publish("certify.md", _with_section(SCREENING_HEADING, screening_section()))
        return
    rows, details = [], []
    load = os.getloadavg()[0]
    with threadpool_limits(1):
        for name, kw, k, nonneg, today_issue, goal, t_goal in CASES:
            P = datasets.load(name, **kw).problem()
            t0 = time.perf_counter()
            # where the exact search is a default bound (LRS) the rank-2 spannogram is tried too, so the vector
            # certified is the best certpca finds (on LRS signed k = 20 and 40 it beats EM and is optimal)
            best = _best_vector(P, k, nonneg)
            t_solve = time.perf_counter() - t0
            t0 = time.perf_counter()
            cert = certify_vector(P, best.weights, k, nonneg=nonneg)
            t_cert = time.perf_counter() - t0
            old = [b.value for b in cert.bounds if _old_default(b.name, P.dim)]
            today = cert.value / min(old) if old else float("nan")
            rows.append(
                (
                    name,
                    _prep(kw),
                    k,
                    P.dim,
                    nonneg,
                    best.method,
                    cert.value,
                    cert.upper_bound,
                    today,
                    cert.certified_fraction,
                    cert.winner,
                    cert.optimal,
                    t_solve,
                    t_cert,
                    today_issue,
                    goal,
                    t_goal,
                )
            )
            details.append(
                (name, _prep(kw), k, nonneg, sorted(cert.bounds, key=lambda b: b.value), cert.skipped, cert.value)
            )

    lines = [
        "# Certification benchmark (reports/bench/certify.md)",
        "",
        f"Command: `OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 python "
        f"bench/bench_certify.py`; {platform.machine()}, {os.cpu_count()} cores shared with other jobs (load average "
        f"{load:.1f} at the start, {os.getloadavg()[0]:.1f} at the end), one BLAS thread; "
        f"certpca {certpca.__version__}, numpy {np.__version__}. The default certificate "
        "(all applicable bounds, 60 s budget); 'today' = the best bound of the default list before "
        f"{', '.join(NEW)} and the exact search beyond D = {OLD_EXACT_MAX_DIM} (same run); 'issue' = "
        "the issue's measurement of today. 'optimal' = proven optimal (gap ≤ 1e-6 relative).",
        "",
        "| data | preprocessing | k | D | problem | vector | value | upper bound | today | issue | "
        "certified | optimal | winning bound | solve (s) | certify (s) | goal |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name, prep, k, D, nn, method, v, ub, today, frac, win, opt, ts, tc, tiss, goal, tg in rows:
        if goal >= 1.0:
            met = "met" if opt and tc <= tg else "not met"
            goal_s = f"proven optimal in {tg} s: {met}"
        else:
            met = "met" if frac >= goal and tc <= tg else "not met"
            goal_s = f"{goal:.0%} in {tg} s: {met}"
        lines.append(
            f"| {name} | {prep} | {k} | {D} | {'nonneg' if nn else 'signed'} | {method} | {v:.6g} "
            f"| {ub:.6g} | {today:.1%} | {'' if tiss is None else f'{tiss:.1%}'} | {frac:.2%} "
            f"| {'yes' if opt else 'no'} | {win} | {ts:.2f} | {tc:.1f} | {goal_s} |"
        )
    lines += ["", "Every bound computed (value / vector's value, seconds):", ""]
    for name, prep, k, nn, bounds, skipped, value in details:
        cells = ", ".join(f"{b.name} {b.value / value:.4f} ({b.seconds:.1f} s)" for b in bounds)
        lines.append(f"- {name} {prep} k={k} {'nonneg' if nn else 'signed'}: {cells}")
        if skipped:
            lines.append("  - skipped: " + "; ".join(f"{n}: {why}" for n, why in skipped.items()))
    text = "\n".join(lines) + "\n\n" + screening_section() + "\n" + expression_section()
    publish("certify.md", text)


if __name__ == "__main__":
    main()
