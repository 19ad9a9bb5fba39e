"""NSPCA speed (one k = 50 fit, against the pre-numba implementation) and the CBCL cardinality path.

Part 1, speed: one β search for k = 50 nonnegative nonzeros from one random
start (``nspca_at_cardinality``, α = λ₁), timed against the implementation at
``--baseline-rev`` (pure-Python coordinate ascent, loaded from git) in the same
run, on CBCL as the path below uses it, on CBCL as ``certpca.load("cbcl")``
gives it, and on leukemia column subsets; on the whole of leukemia, where the
baseline does not finish in minutes, the variance is compared with nonnegative
EM (``certpca.fit("leukemia", k=50, nonneg=True)``).  Also the import cost of
numba and the JIT compile, each in a fresh interpreter.

Part 2, the path: CBCL faces at target cardinalities 10..300 (step 10), as in
Sigg & Buhmann 2008, Fig. 3 left.

Data: CBCL faces (2429 × 361), centred and standardised to unit variance
(Sigg & Buhmann Sec. 5: "the features were standardized to unit variance"),
with the first PC projected out (P.deflate(P.first_pc())) so that the
nonnegativity constraint bites.  For each α in ``--alphas`` (multiples of λ₁ of
the deflated C) one β-bisection path from one random nonnegative start, warm
started (see certpca.solvers.nspca); a target counts as reached by NSPCA when
some α hits it exactly.  EV = uᵀCu/‖u‖² of the NSPCA vector (not renormalised)
as a share of λ₁ of the deflated C; the "EM" column is emPCA (nonneg, same k,
10 restarts) for reference.

    python bench/bench_nspca.py            # writes reports/bench/nspca.md
    python bench/bench_nspca.py --quick    # part 1 without the slow baseline rows
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path
from types import ModuleType

import numpy as np
from common import REPORTS, publish
from threadpoolctl import threadpool_limits

import certpca
from certpca import datasets
from certpca.problem import Problem
from certpca.solvers import solve
from certpca.solvers.nspca import nspca_at_cardinality

ROOT = Path(__file__).resolve().parent.parent
BASELINE_REV = "70159ed"  # the last commit with the pure-Python sweep


def load_baseline(rev: str) -> ModuleType:
    """certpca/solvers/nspca.py as of ``rev``, imported as certpca.solvers._nspca_baseline."""
    src = subprocess.run(
        ["git", "-C", str(ROOT), "show", f"{rev}:certpca/solvers/nspca.py"], capture_output=True, text=True, check=True
    ).stdout
    spec = importlib.util.spec_from_loader("certpca.solvers._nspca_baseline", loader=None)
    mod = importlib.util.module_from_spec(spec)
    mod.__package__ = "certpca.solvers"
    sys.modules[spec.name] = mod
    exec(compile(src, f"{rev}:certpca/solvers/nspca.py", "exec"), mod.__dict__)  # noqa: S102 - our own source at rev
    return mod


def one_fit(search, P: Problem, k: int, seed: int) -> tuple[float, float, dict]:
    """Seconds, EV = uᵀCu/‖u‖² and info of one β search for k nonzeros from one random start."""
    t0 = time.perf_counter()
    U, info = search(P, k, alpha=float(P.eigenvalues()[0]), rng=np.random.default_rng(seed))
    sec = time.perf_counter() - t0
    u = U[:, 0]
    return sec, (P.variance(u) / float(u @ u) if u.any() else 0.0), info


def fresh_python(code: str, env: dict | None = None, repeats: int = 3) -> float:
    """Median wall seconds of ``code`` in new interpreters (the worktree first on the path)."""
    times = []
    for i in range(repeats):
        extra = {key: value.format(i=i) for key, value in (env or {}).items()}
        out = subprocess.run(
            [sys.executable, "-c", f"import time\nt = time.perf_counter()\n{code}\nprint(time.perf_counter() - t)"],
            capture_output=True,
            text=True,
            check=True,
            cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT), **extra},
        )
        times.append(float(out.stdout.split()[-1]))
    return statistics.median(times)


def startup_costs() -> list[str]:
    """Table rows: import of certpca and of numba, the first compiled call with a warm and a cold cache."""
    kernel = (
        "import certpca.solvers._nspca_kernel as k, numpy as np; U = np.ones((3, 1)); "
        "k.sweep(U, U.T @ U, np.ones((1, 3)), np.ones(3), np.eye(3), False, 1.0, 0.0, "
        "np.array([[0, 0]]))"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", "import certpca, sys; print('numba' in sys.modules)"],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    ).stdout.strip()
    with tempfile.TemporaryDirectory() as cold:
        rows = [
            (f"`import certpca` (loads numba: {loaded})", fresh_python("import certpca")),
            ("`import certpca; import numba`", fresh_python("import certpca, numba")),
            (
                "`import certpca` + first NSPCA sweep, compiled code from numba's disk cache",
                fresh_python("import certpca; " + kernel),
            ),
            (
                "`import certpca` + first NSPCA sweep, empty cache (JIT compile of the kernel)",
                fresh_python("import certpca; " + kernel, {"NUMBA_CACHE_DIR": cold + "/{i}"}),
            ),
        ]
    return [f"| {what} | {sec:.2f} |" for what, sec in rows]


def speed_rows(args) -> list[str]:
    """Table rows of part 1: new and baseline k = 50 searches on the same problems, in this run."""
    old = load_baseline(args.baseline_rev)
    X = datasets.load("cbcl", scale=True).matrix
    P0 = Problem.from_data(X)
    leuk = datasets.load("leukemia").problem()
    cases = [
        ("CBCL scaled, PC1 projected out (the path below)", P0.deflate(P0.first_pc()), True),
        ('CBCL as `certpca.load("cbcl")`', datasets.load("cbcl").problem(), True),
        ("leukemia, first 1000 genes", leuk.subset(np.arange(1000)), not args.quick),
        ("leukemia, first 3000 genes", leuk.subset(np.arange(3000)), not args.quick),
        ("leukemia, all 12582 genes", leuk, False),
    ]
    nspca_at_cardinality(cases[0][1], 5)  # compile (or load from the cache) outside the timings
    rows = []
    for name, P, with_old in cases:
        new = [one_fit(nspca_at_cardinality, P, 50, args.seed) for _ in range(args.repeats)]
        sec = statistics.median(t for t, _, _ in new)
        _, ev, info = new[0]
        lam1 = float(P.eigenvalues()[0])
        got = f"{info['cardinality']}" + (
            "" if info["reached"] else f" (jumps {info['nearest_above']}→{info['nearest_below']})"
        )
        if with_old:
            osec, oev, oinfo = one_fit(old.nspca_at_cardinality, P, 50, args.seed)
            base = (
                f"{osec:.3f} | {oinfo['evaluations']} | {osec / sec:.0f}× | {oev / lam1:.4f} | {(ev - oev) / oev:+.2e}"
            )
        else:
            base = "not run |  |  |  | "
        rows.append(f"| {name} | {P.dim} | {got} | {sec:.3f} | {info['evaluations']} | {ev / lam1:.4f} | {base} |")
    if not args.quick:  # one k is one local optimum: the spread over targets and starts
        P = cases[0][1]
        lam1 = float(P.eigenvalues()[0])
        pairs = [
            (one_fit(nspca_at_cardinality, P, k, seed), one_fit(old.nspca_at_cardinality, P, k, seed))
            for k in range(20, 200, 20)
            for seed in (0, 1)
        ]
        rel = np.array([(n[1] - o[1]) / o[1] for n, o in pairs])
        tn, to = sum(n[0] for n, _ in pairs), sum(o[0] for _, o in pairs)
        rows.append(
            f"| CBCL (the path below), k = 20, 40, …, 180 × seeds 0, 1: {len(pairs)} searches | {P.dim} | "
            f"{sum(n[2]['reached'] for n, _ in pairs)} reached | {tn:.3f} | "
            f"{sum(n[2]['evaluations'] for n, _ in pairs)} | "
            f"mean {np.mean([n[1] for n, _ in pairs]) / lam1:.4f} | "
            f"{to:.3f} | {sum(o[2]['evaluations'] for _, o in pairs)} | {to / tn:.0f}× | "
            f"mean {np.mean([o[1] for _, o in pairs]) / lam1:.4f} | mean {rel.mean():+.1e}, "
            f"{int(np.sum(rel > 1e-9))} higher, {int(np.sum(rel < -1e-9))} lower, range "
            f"[{rel.min():+.1e}, {rel.max():+.1e}] |"
        )
    t0 = time.perf_counter()
    em = certpca.fit(certpca.load("leukemia"), 50, nonneg=True, seed=args.seed)
    esec = time.perf_counter() - t0
    c = em.components[0]
    _, ev, _ = one_fit(nspca_at_cardinality, leuk, 50, args.seed)
    lam1 = float(leuk.eigenvalues()[0])
    rows.append(
        f"| leukemia, nonnegative EM (`certpca.fit(..., k=50, nonneg=True)`, 10 restarts) | {leuk.dim} | "
        f"{c.cardinality} | {esec:.3f} | | {c.variance / lam1:.4f} | | | | | NSPCA/EM variance "
        f"{ev / c.variance:.3f} |"
    )
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--alphas", type=float, nargs="+", default=[1.0, 3.0])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--no-em", action="store_true", help="skip the emPCA reference column")
    ap.add_argument("--out", type=Path, default=REPORTS / "nspca.md")
    ap.add_argument("--baseline-rev", default=BASELINE_REV, help="git revision of the baseline nspca.py")
    ap.add_argument("--repeats", type=int, default=3, help="timed repeats of each new k = 50 fit")
    ap.add_argument("--quick", action="store_true", help="skip the leukemia-subset baseline rows")
    args = ap.parse_args(argv)
    targets = list(range(10, 301, 10))

    startup = startup_costs()
    with threadpool_limits(1):
        speed = speed_rows(args)
        X = datasets.load("cbcl", scale=True).matrix
        P0 = Problem.from_data(X)
        P = P0.deflate(P0.first_pc())
        lam1 = float(P.eigenvalues()[0])
        paths = {}
        for a in args.alphas:
            t0 = time.perf_counter()
            results, unreached = nspca_at_cardinality(P, targets, alpha=a * lam1, rng=np.random.default_rng(args.seed))
            paths[a] = (results, unreached, time.perf_counter() - t0)
        em = {}
        if not args.no_em:
            for k in targets:
                t0 = time.perf_counter()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    c = solve(P, k, method="em", nonneg=True, rng=np.random.default_rng(args.seed))
                em[k] = (c.variance, c.cardinality, time.perf_counter() - t0)

    rows = []
    for k in targets:
        best = None
        for a, (results, _, _) in paths.items():
            U, info = results[k]
            u = U[:, 0]
            ev = float(P.variance(u) / (u @ u)) / lam1 if u.any() else 0.0
            cand = (info["reached"], ev, a, info)
            if best is None or cand[:2] > best[:2]:
                best = cand
        reached, ev, a, info = best
        rows.append(
            (
                k,
                info["cardinality"],
                reached,
                ev,
                a,
                info["beta"],
                info["search_seconds"],
                *(em.get(k, (np.nan, 0, np.nan))),
            )
        )

    lines = [
        "# NSPCA: speed, and the CBCL cardinality path",
        "",
        f"`python bench/bench_nspca.py` — {platform.processor() or platform.machine()}, one BLAS thread, "
        f"seed {args.seed}, {os.cpu_count()} cores shared with other jobs (timings are noisy: compare "
        "ratios within one run).",
        "",
        "## One k = 50 fit: compiled sweep vs the pure-Python baseline",
        "",
        f"One β search for 50 nonzeros (`nspca_at_cardinality`, one random nonnegative start, α = λ₁), "
        f"median of {args.repeats}; baseline = `certpca/solvers/nspca.py` at {args.baseline_rev}, one run, "
        "same start. EV = uᵀCu/(‖u‖²λ₁). Fits = β values evaluated. Rel. EV = (new − old)/old.",
        "",
        "| problem | D | k reached | time s | fits | EV | baseline time s | baseline fits | speed-up | "
        "baseline EV | rel. EV |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
        *speed,
        "",
        "Start-up (fresh interpreter, median of 3):",
        "",
        "| what | seconds |",
        "| --- | ---: |",
        *startup,
        "",
        "## NSPCA on CBCL faces (PC1 projected out), target cardinalities 10..300",
        "",
        f"`python bench/bench_nspca.py` — {platform.processor() or platform.machine()}, one BLAS thread, "
        f"seed {args.seed}. C: 361 standardised pixels, PC1 projected out, λ₁ = {lam1:.4f}.",
        "NSPCA: one random nonnegative start, β bisected (relative interval 1e-5, warm starts) "
        f"for α ∈ {{{', '.join(f'{a:g}·λ₁' for a in args.alphas)}}}; the row shows the best α that "
        "reached k (else the densest solution below k). EV = uᵀCu/(‖u‖²λ₁), no renormalisation. "
        "Time = bisection seconds for that target on that α's path (cached evaluations are shared "
        "between targets, so later targets are cheaper).",
        "",
        "| k target | k reached | reached | EV NSPCA | α/λ₁ | β | time s | EV EM (nonneg) | EM k | EM time s |",
        "| ---: | ---: | :---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for k, kr, ok, ev, a, beta, sec, emv, emk, ems in rows:
        lines.append(
            f"| {k} | {kr} | {'yes' if ok else 'no'} | {ev:.4f} | {a:g} | {beta:.5g} | {sec:.2f} | "
            f"{emv / lam1:.4f} | {emk} | {ems:.2f} |"
        )
    unreached = [r[0] for r in rows if not r[2]]
    lines += [
        "",
        "Per α: "
        + "; ".join(
            f"α = {a:g}·λ₁: {len(targets) - len(u)}/{len(targets)} reached in {s:.1f} s, not reached {u}"
            for a, (_, u, s) in paths.items()
        ),
        "",
        f"**Not reached by any α: {unreached if unreached else 'none'}.**",
        "Targets above the cardinality of the β = 0 solution cannot be reached: β ≥ 0 only removes "
        "entries, and the nonnegative local optimum at β = 0 uses fewer pixels than that. "
        "(EM's nonnegative solution saturates at 160 pixels: more nonzeros add no variance.)",
    ]
    text = "\n".join(lines) + "\n"
    publish("nspca.md", text, args.out)


if __name__ == "__main__":
    main()
