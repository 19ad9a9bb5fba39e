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
    python bench/bench_certify.py --cbcl-budgets [--baseline DIR]  # CBCL k = 30, 50 at 15 and 60 s (and DIR's)
    python bench/bench_certify.py --expression-only --save rows.jsonl --label "main at X"  # rows saved, not published
    python bench/bench_certify.py --expression-only --before rows.jsonl  # a before column from a saved run
    python bench/bench_certify.py --expression-only --before rows.jsonl --measured a.jsonl,b.jsonl  # both saved
    python bench/bench_certify.py --headline-only  # the first table's certificates, one JSON line each
    python bench/bench_certify.py --headline-table  # only the first table, written (the sections kept)

The issue-28 section (Schur screening, then the exact search on the features left) certifies
each row twice in one run: with the default bounds but ``screening`` ("today") and with all
of them, and lists the features left, the nodes and the seconds of screening.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from common import CHILD_ENV, REPORTS, publish
from threadpoolctl import threadpool_limits

import certpca
from certpca import datasets
from certpca.certification import certify_vector, default_bounds
from certpca.certification.certificate import DEFAULT_BUDGET
from certpca.certification.exact import DEFAULT_MAX_DIM as EXACT_DEFAULT_MAX_DIM
from certpca.solvers import solve

#: the bounds newer than the first table's "today" (issue 14's wide-data families, and those after them)
NEW = ("threshold", "dabe_sdp", "dabe_sdp_matrix", "screening")

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


def _child(root: str, argv: list[str]) -> tuple[dict | None, float, str]:
    """`python -m certpca ARGV` run from the checkout ``root`` (its certpca imported): (its JSON output or None,
    the child's CPU seconds, the last line of its stderr when it failed)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(
        [sys.executable, "-m", "certpca", *argv],
        cwd=root,
        env={**CHILD_ENV, "PYTHONPATH": root},
        capture_output=True,
        text=True,
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    if done.returncode:
        return None, cpu, (done.stderr.strip().splitlines() or ["no output"])[-1]
    return json.loads(done.stdout), cpu, ""


def _checkouts(baseline: str | None, label: str = "main") -> list[tuple[str, str]]:
    """(label, root) of this checkout and, when given, of the checkout ``baseline``: the trees a row runs on."""
    return [("branch", str(REPORTS.parent.parent))] + ([(label, baseline)] if baseline else [])


def _command(option: str, baseline: str | None, row: str, load: float) -> str:
    """The opening of a section's note: its command, what each row runs, the trees and the load."""
    return (
        f"Command: `python bench/bench_certify.py {option}"
        + (" --baseline DIR`" if baseline else "`")
        + f"; each row is `{row}` in a child process with one BLAS thread"
        + (", from this branch and (rows marked main) from the checkout DIR in turn" if baseline else "")
        + f"; {os.cpu_count()} cores shared with other jobs (load average {load:.1f} at the start, "
        f"{os.getloadavg()[0]:.1f} at the end; each row's load at its start beside it)."
    )


def _section(heading: str, note: str, columns: list[str], lines: list[str]) -> str:
    """A section of certify.md: its heading, its note and a table of ``columns`` with the rows ``lines``."""
    head = [heading, "", note, "", "| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    return "\n".join(head + lines) + "\n"


def _fit(root: str, data: str, args: str) -> dict:
    """`python -m certpca fit DATA ARGS --json` run from the checkout ``root``: the component's value, whether it
    is proven optimal (the certificate's verdict, or the exact solver's proof), the upper bound, the
    certificate's winner, and the child's CPU seconds."""
    out, cpu, error = _child(root, ["fit", data, *args.split(), "--json"])
    if out is None:
        return {"error": error, "cpu": cpu}
    comp = out["components"][0]
    if out["certificates"]:
        cert = out["certificates"][0]
        proven, upper, winner = cert["optimal"], cert["upper_bound"], cert["winner"]
    else:
        proven, upper, winner = bool(comp["extras"].get("proven")), comp["extras"].get("upper_bound"), ""
    return {"value": comp["value"], "proven": proven, "upper": upper, "winner": winner, "cpu": cpu}


def fit_section(baseline: str | None) -> str:
    """The FIT_ROWS on this checkout, and those marked on ``baseline`` (another checkout) in the same run."""
    load = os.getloadavg()[0]
    lines = []
    for data, args, compare in FIT_ROWS:
        for label, root in _checkouts(baseline if compare else None):
            row_load = os.getloadavg()[0]
            r = _fit(root, data, args)
            if "error" in r:
                cells = f"error: {r['error']} | | | | "
            else:
                upper = "" if r["upper"] is None else f"{r['upper']:.6g}"
                cells = f"{'yes' if r['proven'] else 'no'} | {r['value']:.6g} | {upper} | {r['winner']} | "
            lines.append(f"| {data} | `{args}` | {label} | {cells}{r['cpu']:.1f} | {row_load:.1f} |")
            print(lines[-1], flush=True)
    note = (
        _command("--fit-proofs", baseline, "python -m certpca fit DATA OPTIONS --json", load)
        + " 'proven' = the certificate says optimal (gap ≤ 1e-6 relative), or, with `--no-certify`, the exact "
        "solver's proof; 'value' = the component's variance, the vector the user gets; CPU s = the child's user "
        "+ system seconds."
    )
    columns = ["data", "options", "code", "proven", "value", "upper bound", "winner", "CPU s", "load"]
    return _section(FIT_HEADING, note, columns, lines)


#: the heading of the CBCL k = 30 / 50 rows at two budgets (issue 28's "CBCL k = 30 and 50: >= 99.5%")
CBCL_HEADING = '## CBCL raw k = 30 and 50 at the default budget and at 60 s (issue 28, helper "cbcl30")'

#: `certpca certify cbcl ARGS --json` rows: k, w >= 0, budget (None: the default)
CBCL_ROWS = [(k, nn, b) for b in (None, 60) for k in (30, 50) for nn in (False, True)]
CBCL_COMMAND = "python -m certpca certify cbcl --k K [--nonneg] [--budget B] --json"


def cbcl_section(baseline: str | None) -> str:
    """The CBCL_ROWS on this checkout and, in turn, on ``baseline`` (another checkout) in the same run: the
    certified fraction, the winner, the sample-space bounds' values (× the vector's value) and the matrix
    bound's Z steps, and the child's CPU seconds."""
    load = os.getloadavg()[0]
    lines = []
    for k, nonneg, budget in CBCL_ROWS:
        argv = ["certify", "cbcl", "--k", str(k), *(["--nonneg"] if nonneg else [])]
        argv += [] if budget is None else ["--budget", f"{budget:g}"]
        for label, root in _checkouts(baseline):
            row_load = os.getloadavg()[0]
            out, cpu, error = _child(root, [*argv, "--json"])
            if out is None:
                cells = f"error: {error} | | | | | |"
            else:
                by = {b["name"]: b for b in out["bounds"]}
                names = ("dabe_sdp", "dabe_sdp_matrix")
                ratio = {n: f"{by[n]['value'] / out['value']:.5f}" if n in by else "" for n in names}
                z = by.get("dabe_sdp_matrix", {}).get("params", {}).get("z_steps", "")
                cells = (
                    f"{out['value']:.6g} | {100 * out['certified_fraction']:.2f}% | {out['winner']} | "
                    f"{ratio['dabe_sdp']} | {ratio['dabe_sdp_matrix']} | {z} |"
                )
            budget_s = "default (15)" if budget is None else f"{budget:g}"
            sign = "nonneg" if nonneg else "signed"
            lines.append(f"| {k} | {sign} | {budget_s} | {label} | {cells} {cpu:.1f} | {row_load:.1f} |")
            print(lines[-1], flush=True)
    note = (
        _command("--cbcl-budgets", baseline, CBCL_COMMAND, load)
        + " dabe_sdp and dabe_sdp_matrix: their bounds × the vector's value (empty: not run); Z steps: the "
        "matrix bound's; CPU s = the child's user + system seconds."
    )
    columns = ["k", "sign", "budget (s)", "code", "value", "certified", "winner", "dabe_sdp", "dabe_sdp_matrix"]
    return _section(CBCL_HEADING, note, [*columns, "Z steps", "CPU s", "load"], lines)


def _key(name: str, kw: dict, k: int, nonneg: bool) -> str:
    return f"{name} {_prep(kw)} k={k} {'nonneg' if nonneg else 'signed'}"


def expression_rows(names: list[str] | None = None, save: str | None = None) -> dict[str, dict]:
    """Issue 28's expression rows: the default certificate (``DEFAULT_BUDGET`` of work) of the default solver's
    vector, one per row, each printed (and appended to ``save`` as a JSON line) as soon as it is measured, so a
    run cut short keeps its rows.  ``names``: only these data sets, in this order (all when None)."""
    rows = {}
    cases = EXPRESSION_CASES if not names else [c for n in names for c in EXPRESSION_CASES if c[0] == n]
    with threadpool_limits(1):
        for name, kw, k, nonneg, _goal in cases:
            P = datasets.load(name, **kw).problem()
            best = solve(P, k, nonneg=nonneg, method="auto")
            cert, cpu = _timed_certificate(P, best.weights, k, nonneg)
            row = {
                "key": _key(name, kw, k, nonneg),
                "value": cert.value,
                "fraction": cert.certified_fraction,
                "winner": cert.winner,
                "upper": cert.upper_bound,
                "cpu": cpu,
                "load": os.getloadavg()[0],
                "net_fired": cert.net_fired,
                "bounds": {b.name: [b.value / cert.value, b.seconds] for b in cert.bounds},
                "skipped": cert.skipped,
            }
            rows[row["key"]] = row
            print(json.dumps(row), flush=True)
            if save:
                with open(save, "a") as fh:
                    fh.write(json.dumps(row) + "\n")
    return rows


def _saved(paths: str) -> tuple[str, dict[str, dict]]:
    """(the label, the rows by key) of runs saved by ``--save``: comma-separated JSON-lines files, the first
    line of each naming the code it ran."""
    labels, rows = [], {}
    for path in paths.split(","):
        lines = Path(path).read_text().splitlines()
        labels.append(json.loads(lines[0])["label"])
        rows.update({r["key"]: r for r in map(json.loads, lines[1:])})
    return " and ".join(sorted(set(labels))), rows


def expression_section(
    names: list[str] | None = None,
    before: str | None = None,
    save: str | None = None,
    label: str | None = None,
    measured: str | None = None,
) -> str:
    """The expression rows (:func:`expression_rows`, or those saved in ``measured``) as a table, beside those
    of an earlier run saved by ``--save`` (``before``)."""
    load = os.getloadavg()[0]
    old: dict[str, dict] = {}
    before_label = ""
    if before:
        before_label, old = _saved(before)
    if save:
        Path(save).write_text(json.dumps({"label": label or f"certpca at {_commit()}"}) + "\n")
    if measured:
        now_label, rows = _saved(measured)
    else:
        now_label, rows = f"certpca at {_commit()}", expression_rows(names, save)
    lines = []
    for name, kw, k, nonneg, goal in EXPRESSION_CASES:
        key = _key(name, kw, k, nonneg)
        r, o = rows.get(key), old.get(key)
        was = f"{o['fraction']:.2%} | {o['winner']} | {o['cpu']:.1f}" if o else " | | "
        if r is None:
            if o is not None:  # a run cut short: what was measured before, and that 'now' was not
                lines.append(
                    f"| {name} | {_prep(kw)} | {k} | {'nonneg' if nonneg else 'signed'} | {o['value']:.6g} | {was} "
                    "| not measured | | | | |"
                )
            continue
        met = "met" if r["fraction"] >= goal else "not met"
        net = " (CPU net fired)" if r["net_fired"] else ""
        lines.append(
            f"| {name} | {_prep(kw)} | {k} | {'nonneg' if nonneg else 'signed'} | {r['value']:.6g} | {was} "
            f"| {r['fraction']:.2%} | {r['winner']} | {r['upper'] / r['value']:.4f} | {r['cpu']:.1f}{net} "
            f"| {goal:.1%}: {met} |"
        )
    head = [
        EXPRESSION_HEADING,
        "",
        f"Command: `OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python bench/bench_certify.py --expression-only"
        f"{''.join(' ' + n for n in names or [])}{' --before ' + before if before else ''}"
        f"{' --measured ' + measured if measured else ''}`: 'now' {now_label}; "
        f"{os.cpu_count()} cores shared with other jobs ({_loads(rows, load, bool(measured))}), one BLAS thread. "
        "Vector: the default solver's (`auto`). Each certificate is the default one (every applicable bound, "
        f"{DEFAULT_BUDGET:g} s of estimated work). "
        f"'before': {before_label or 'not measured'}, the same bench (`--save`). Seconds are CPU seconds of the "
        "certificate; the certified fractions do not depend on the load (budgets are estimated work, "
        "certpca/clock.py) unless the CPU safety net fired (said in the row).",
        "",
        "| data | preprocessing | k | problem | value | before | its winner | CPU s | now | winner "
        "| upper / value | CPU s | goal |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    return "\n".join(head + lines) + "\n"


def _loads(rows: dict[str, dict], start: float, measured: bool) -> str:
    """The load averages the rows were measured at (as each row saved it), else those of this run."""
    seen = [r["load"] for r in rows.values() if "load" in r]
    if seen and len(seen) == len(rows):
        return f"load average {min(seen):.1f}–{max(seen):.1f} as the rows were measured"
    if measured:
        return "the load averages of the saved runs are in the note below"
    return f"load average {start:.1f} at the start, {os.getloadavg()[0]:.1f} at the end"


def _commit() -> str:
    """The commit of the certpca imported (its git HEAD when it is a checkout, else its version)."""
    root = Path(certpca.__file__).resolve().parent.parent
    try:
        out = subprocess.run(["git", "-C", str(root), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    except OSError:
        out = None
    return out.stdout.strip() if out is not None and out.returncode == 0 else f"certpca {certpca.__version__}"


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


def _timed_certificate(P, w, k: int, nonneg: bool):
    """The default certificate of ``w`` and its CPU seconds."""
    t0 = time.process_time()
    cert = certify_vector(P, w, k, nonneg=nonneg)
    return cert, time.process_time() - t0


def headline_rows() -> None:
    """The first table's certificates, one JSON line each (certified fraction, proven, winner, CPU seconds)."""
    with threadpool_limits(1):
        for name, kw, k, nonneg, *_ in CASES:
            P = datasets.load(name, **kw).problem()
            best = _best_vector(P, k, nonneg)
            cert, cpu = _timed_certificate(P, best.weights, k, nonneg)
            row = {
                "key": _key(name, kw, k, nonneg),
                "fraction": cert.certified_fraction,
                "optimal": cert.optimal,
                "winner": cert.winner,
                "cpu": cpu,
            }
            print(json.dumps(row), flush=True)


def _prep(kw: dict) -> str:
    if "log2" in kw:
        return f"--log2 {kw['log2']:g}"
    return "--scale" if kw.get("scale") else "centred raw"


def _arguments(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line of the module docstring: at most one section to run, and its options."""
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawTextHelpFormatter
    )
    section = parser.add_mutually_exclusive_group()
    section.add_argument(
        "--expression-only",
        nargs="*",
        metavar="DATA",
        help="only the expression sets at k <= 50 (these data sets' rows, in this order; none: all)",
    )
    section.add_argument("--headline-only", action="store_true", help="the first table's rows, one JSON line each")
    section.add_argument("--headline-table", action="store_true", help="only the first table, written")
    section.add_argument("--fit-proofs", action="store_true", help="`certpca fit` on the proof cells")
    section.add_argument("--cbcl-budgets", action="store_true", help="CBCL k = 30, 50 at 15 and 60 s")
    section.add_argument("--screening-only", action="store_true", help="only the issue-28 screening section")
    parser.add_argument("--baseline", metavar="DIR", help="--fit-proofs, --cbcl-budgets: also this checkout's rows")
    parser.add_argument("--before", metavar="FILE", help="--expression-only: a saved run's rows as the before column")
    parser.add_argument("--save", metavar="FILE", help="--expression-only: this run's rows saved here, not published")
    parser.add_argument("--label", help="--expression-only --save: what the rows ran (default: certpca's commit)")
    parser.add_argument("--measured", metavar="FILES", help="--expression-only: saved runs' rows, not measured again")
    args = parser.parse_args(argv)
    expression = ("before", "save", "label", "measured")
    if args.expression_only is None and any(getattr(args, o) is not None for o in expression):
        parser.error("--before, --save, --label and --measured go with --expression-only")
    if args.baseline is not None and not (args.fit_proofs or args.cbcl_budgets):
        parser.error("--baseline goes with --fit-proofs or --cbcl-budgets")
    return args


def main(argv: list[str] | None = None):
    args = _arguments(argv)
    if args.expression_only is not None:
        section = expression_section(args.expression_only, args.before, args.save, args.label, args.measured)
        if args.save is None:
            publish("certify.md", _with_section(EXPRESSION_HEADING, section))
    elif args.headline_only:
        headline_rows()
    elif args.fit_proofs:
        publish("certify.md", _with_section(FIT_HEADING, fit_section(args.baseline)))
    elif args.cbcl_budgets:
        publish("certify.md", _with_section(CBCL_HEADING, cbcl_section(args.baseline)))
    elif args.screening_only:
        publish("certify.md", _with_section(SCREENING_HEADING, screening_section()))
    elif args.headline_table:
        publish("certify.md", _with_headline(headline_section(" --headline-table")))
    else:
        publish("certify.md", headline_section() + "\n" + screening_section() + "\n" + expression_section())


def _with_headline(section: str) -> str:
    """reports/bench/certify.md with its first table and list (all before the first section) replaced by
    ``section``, the sections as other runs wrote them."""
    path = REPORTS / "certify.md"
    text = path.read_text() if path.exists() else ""
    rest = text.find("\n## ")
    return section + ("\n" + text[rest + 1 :] if rest >= 0 else "")


def headline_section(flags: str = "") -> str:
    """The first table (CASES: the default certificate of certpca's best vector) and every bound it computed;
    ``flags``: the command's, for its note."""
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
        f"bench/bench_certify.py{flags}`; {platform.machine()}, {os.cpu_count()} cores shared with other jobs "
        f"(load average {load:.1f} at the start, {os.getloadavg()[0]:.1f} at the end), one BLAS thread; "
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
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
