"""`certpca report leukemia --k 50` (and the other reports of issue 29): time and band, before (a git revision)
and after (this tree), one run.

    python bench/bench_report.py [--before REV] [--repeats N] [--jobs leukemia,leukemia-log2,pbmc]

Each report runs in a fresh process with one BLAS thread under ``/usr/bin/time -v`` (wall, CPU, peak
RSS); the saved run (``--json``) gives the band along the path and the headline certificate. before =
``git archive REV`` unpacked into a temporary folder, run from there; after = this tree. Runs alternate
(before, after, before, ...) so both see the same load, after one untimed run of each tree (numba
compiles its kernels into a cache per tree); the table gives the load average beside the
times and the ratio after / before of the medians, per job (``--jobs``: the reports of ``JOBS``, each timed
as above; the band and step tables are for the first). Writes the section at the top of
reports/bench/report.md (the older sections below it are kept).
"""

from __future__ import annotations

import argparse
import io
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from common import CHILD_ENV, REPORTS

ROOT = Path(__file__).resolve().parent.parent
#: the reports timed: the README's main job with and without ``--log2 20``, and pbmc's (issue 29's goals)
JOBS = {
    "leukemia": ["report", "leukemia", "--k", "50"],
    "leukemia-log2": ["report", "leukemia", "--k", "50", "--log2", "20"],
    "pbmc": ["report", "pbmc", "--k", "30", "--labels", "bulk_labels"],
}
OPTIONS = ["--force", "--json"]
#: the untimed first run of each tree: the cheapest report that runs every compiled kernel
WARMUP_JOB = "pbmc"
MARK = "<!-- bench/bench_report.py: this section is rewritten by the script -->"
WARM = ", after one untimed run of each (numba caches its kernels)"
END = "<!-- end of bench/bench_report.py's section -->"


def run(tree: Path, out: Path, job: str) -> dict:
    """One report from ``tree``: wall and CPU seconds (its child processes included), peak RSS, load average,
    and the saved run."""
    load = os.getloadavg()[0]
    cmd = ["/usr/bin/time", "-v", sys.executable, "-m", "certpca", *JOBS[job], *OPTIONS, "-o", str(out)]
    proc = subprocess.run(cmd, cwd=tree, env=CHILD_ENV, capture_output=True, text=True, check=True)
    stats = {key.strip(): value for key, _, value in (line.rpartition(": ") for line in proc.stderr.splitlines())}
    h, m, s = ([0, 0] + stats["Elapsed (wall clock) time (h:mm:ss or m:ss)"].split(":"))[-3:]
    return {
        "wall": 3600 * float(h) + 60 * float(m) + float(s),
        "cpu": float(stats["User time (seconds)"]) + float(stats["System time (seconds)"]),
        "rss_mb": int(stats["Maximum resident set size (kbytes)"]) / 1024,
        "load": load,
        "run": json.loads(proc.stdout),
    }


def timeless(saved):
    """The saved run without what changes from run to run or between the trees' invocations: the seconds
    and the command (its output file)."""
    if isinstance(saved, dict):
        return {key: timeless(v) for key, v in saved.items() if "seconds" not in key and key != "command"}
    if isinstance(saved, list):
        return [timeless(v) for v in saved]
    return saved


def band_summary(saved: dict) -> dict:
    """Per sign, the band's minimum certified fraction over k ≥ 2, its value at the headline k, and the
    headline certificate's upper bound."""
    out = {}
    k = saved["settings"]["k"]
    for band in saved["bands"]:
        sign = "nonneg" if band["nonneg"] else "sparse"
        points = [p for p in band["points"] if p["k"] >= 2]
        at_k = next(p for p in band["points"] if p["k"] == k)
        fits = [f for f in saved["fits"] if f["nonneg"] == band["nonneg"]]
        head = max(fits, key=lambda f: f["certificate"]["value"])["certificate"]
        out[sign] = {
            "min": min(p["certified_fraction"] for p in points),
            "at_min": min(points, key=lambda p: p["certified_fraction"])["k"],
            "band_at_k": at_k["upper_bound"],
            "head": head["upper_bound"],
            "head_fraction": head["certified_fraction"],
            "bounds": band["bounds"],
        }
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--before", default="b8f8df2")
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--no-warmup", dest="warmup", action="store_false", help="skip the untimed first run per tree")
    ap.add_argument("--jobs", default="leukemia", help="comma-separated names of JOBS")
    ap.add_argument("--before-tree", help="an unpacked tree of --before to run (e.g. with numba's caches filled)")
    ap.add_argument("--together", action="store_true", help="run before and after at the same time (same load)")
    args = ap.parse_args()
    jobs = args.jobs.split(",")
    rev = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    with tempfile.TemporaryDirectory() as tmp:
        before = Path(args.before_tree) if args.before_tree else Path(tmp) / "before"
        if not args.before_tree:
            before.mkdir()
            archive = subprocess.run(["git", "archive", args.before], cwd=ROOT, capture_output=True, check=True)
            with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
                tar.extractall(before, filter="data")
        for tree in (before, ROOT) if args.warmup else ():  # numba compiles its kernels once per tree
            run(tree, Path(tmp) / "warmup.html", WARMUP_JOB)
        by_job: dict[str, dict[str, list[dict]]] = {job: {"before": [], "after": []} for job in jobs}
        trees = {"before": before, "after": ROOT}
        for _ in range(args.repeats):
            for job in jobs:
                if args.together:
                    with ThreadPoolExecutor(2) as pool:
                        done = dict(zip(trees, pool.map(lambda n: run(trees[n], Path(tmp) / f"{n}.html", job), trees)))
                else:
                    done = {n: run(tree, Path(tmp) / f"{n}.html", job) for n, tree in trees.items()}
                for name, result in done.items():
                    by_job[job][name].append(result)
                    print(job, name, {k: v for k, v in result.items() if k != "run"}, flush=True)
    runs = by_job[jobs[0]]
    bands = {n: band_summary(rs[-1]["run"]) for n, rs in runs.items()}
    lines = [
        MARK,
        "# Reports' time, band and headline certificates (issue 29, parts 5 and 6)",
        "",
        f"Command: `python bench/bench_report.py --before {args.before} --repeats {args.repeats} --jobs {args.jobs}"
        f"{' --before-tree DIR' if args.before_tree else ''}{' --together' if args.together else ''}"
        f"{'' if args.warmup else ' --no-warmup'}` "
        f"(each report: `OMP_NUM_THREADS=1 /usr/bin/time -v python -m certpca REPORT {' '.join(OPTIONS)} -o OUT.html`, "
        "CPU of its child processes included); "
        f"before = `{args.before}` ({'an unpacked tree with warm caches' if args.before_tree else 'git archive'}), "
        f"after = this tree at {rev.stdout.strip()}; "
        f"{'before and after run at the same time' if args.together else 'runs alternate'}, "
        f"medians of {args.repeats}{WARM if args.warmup else ''}; "
        f"{os.cpu_count()} cores shared with other jobs.",
    ]
    for job in jobs:
        rs = by_job[job]
        med = {n: {f: statistics.median(r[f] for r in v) for f in ("wall", "cpu", "rss_mb")} for n, v in rs.items()}
        lines += [
            "",
            f"`certpca {' '.join(JOBS[job])}`:",
            "",
            "| | wall (s) | CPU user + system (s) | peak RSS (MB) | load average at the start of each run |",
            "|---|---|---|---|---|",
        ]
        for n in ("before", "after"):
            loads = ", ".join(f"{r['load']:.2f}" for r in rs[n])
            lines.append(f"| {n} | {med[n]['wall']:.1f} | {med[n]['cpu']:.1f} | {med[n]['rss_mb']:.0f} | {loads} |")
        ratio = {f: med["after"][f] / med["before"][f] for f in ("wall", "cpu", "rss_mb")}
        lines.append(f"| after / before | {ratio['wall']:.2f} | {ratio['cpu']:.2f} | {ratio['rss_mb']:.2f} | |")
        same = all(timeless(a["run"]) == timeless(rs["before"][0]["run"]) for a in rs["after"] + rs["before"])
        verdict = "yes" if same else "NO"
        lines += ["", f"Every saved run the same as before's first (seconds, command aside): {verdict}."]
        lines += ["", "| | sign | headline upper bound | headline certified | band's minimum over k ≥ 2 (at k) |"]
        lines += ["|---|---|---|---|---|"]
        for n in ("before", "after"):
            for sign, b in band_summary(rs[n][-1]["run"]).items():
                lines.append(
                    f"| {n} | {sign} | {b['head']:.10g} | {100 * b['head_fraction']:.2f} % | "
                    f"{100 * b['min']:.2f} % (k = {b['at_min']}) |"
                )
    lines += [
        "",
        f"`{jobs[0]}`: the band along the path (k = "
        + ", ".join(map(str, runs["after"][-1]["run"]["settings"]["path"]))
        + "):",
        "",
        "| | sign | band's minimum over k ≥ 2 (at k) | band at k = 50 | headline upper bound | headline certified |",
        "|---|---|---|---|---|---|",
    ]
    for n in ("before", "after"):
        for sign, b in bands[n].items():
            lines.append(
                f"| {n} | {sign} | {100 * b['min']:.2f} % (k = {b['at_min']}) | {b['band_at_k']:.10g} | "
                f"{b['head']:.10g} | {100 * b['head_fraction']:.2f} % |"
            )
    lines += ["", f"`{jobs[0]}`, per step, wall seconds (the saved run's `step_seconds`, last run of each):", ""]
    steps = {n: rs[-1]["run"]["step_seconds"] for n, rs in runs.items()}
    lines += ["| step | before | after |", "|---|---|---|"]
    for step in sorted(set(steps["before"]) | set(steps["after"])):
        b, a = steps["before"].get(step), steps["after"].get(step)
        lines.append(f"| {step} | {'' if b is None else f'{b:.2f}'} | {'' if a is None else f'{a:.2f}'} |")
    path = REPORTS / "report.md"
    old = path.read_text() if path.exists() else ""
    kept = old.split(END + "\n", 1)[1] if END in old else old
    text = "\n".join([*lines, END]) + "\n"
    path.write_text(text + "\n" + kept)
    print(text)


if __name__ == "__main__":
    main()
