"""EM speed and explained variance beside scikit-learn's SparsePCA, in one run.

Measures, on column-centred real data with one BLAS thread for every method:
one k = 50 component on leukemia (72 x 12582) and CBCL faces (2429 x 361),
sparse and nonnegative; the whole path k = 1..300 on leukemia; and
SparsePCA (n_components = 1) with alpha bisected until its cardinality is 50.
EV = wᵀCw / λ1 with w normalised.  Times are medians of ``--repeats`` runs and
include building the covariance operator and its first eigenvector.

Issue 16's goals are measured against the minimal numpy EM of bench/minimal_em.py in
the same run, the two timed in alternation: one k = 50 fit from the data matrix
(certpca ≤ 1.5x the baseline at equal or higher EV) and the warm-started path
k = 1..300 (≤ 0.5 s sparse, ≤ 1 s nonnegative).  What each kind of start buys (e_j, the
floor's vector, the nonnegative default's 10 random starts) is measured too: on every bundled data
set, centred and standardised, the variance with and without them.

    python bench/bench_em.py            # writes reports/bench/em.md
"""

from __future__ import annotations

import argparse
import platform
import time

import minimal_em
import numpy as np
from common import publish, timed
from threadpoolctl import threadpool_limits

import certpca
from certpca import datasets
from certpca.data import prepare
from certpca.paths import fit_path
from certpca.problem import Problem
from certpca.solvers import get, solve


def sparsepca_at_cardinality(X, k, max_steps=20):
    """Bisect SparsePCA's alpha (log scale) until the component has k nonzeros."""
    from sklearn.decomposition import SparsePCA

    lo, hi, steps, total = 1e-3, None, 0, 0.0
    best = None
    alpha = 1.0
    while steps < max_steps:
        steps += 1
        t0 = time.perf_counter()
        w = SparsePCA(n_components=1, alpha=alpha, random_state=0).fit(X).components_[0]
        total += time.perf_counter() - t0
        nnz = np.count_nonzero(w)
        if best is None or abs(nnz - k) < abs(np.count_nonzero(best[1]) - k):
            best = (alpha, w)
        if nnz == k:
            break
        if nnz > k:  # too dense: more penalty
            lo = alpha
            alpha = alpha * 10 if hi is None else np.sqrt(alpha * hi)
        else:
            hi = alpha
            alpha = np.sqrt(lo * hi)
    return best[0], best[1], steps, total


def alternated(fns, repeats):
    """Median wall and CPU seconds of each function, timed in turns (so a shared machine's load
    falls on all of them alike), and each one's last result."""
    wall: list[list[float]] = [[] for _ in fns]
    cpu: list[list[float]] = [[] for _ in fns]
    results = [None] * len(fns)
    for _ in range(max(1, repeats)):
        for i, fn in enumerate(fns):
            t0, c0 = time.perf_counter(), time.process_time()
            results[i] = fn()
            cpu[i].append(time.process_time() - c0)
            wall[i].append(time.perf_counter() - t0)
    return [(float(np.median(w)), float(np.median(c))) for w, c in zip(wall, cpu)], results


def against_minimal_em(X, ids, lam1, repeats):
    """Rows (what, nonneg, certpca (wall, CPU), its EV, baseline (wall, CPU), its EV, converged baseline
    (wall, CPU), its EV)."""
    ev = lambda w: float(np.sum((X @ w) ** 2)) / (X.shape[0] - 1) / lam1 / float(w @ w)  # noqa: E731  C = XᵀX/(N−1)
    out = []
    # also certpca from the minimal EM's own starts (sparse: PC1 alone; nonnegative: restarts=0, i.e. ±PC1, e_j
    # and the floor's vector), which separates the driver's overhead from the price of the extra starts
    variants = [
        ("", False, lambda P: solve(P, 50)),
        ("", True, lambda P: solve(P, 50, nonneg=True)),
        (", from PC1 alone", False, lambda P: solve(P, 50, starts=[P.first_pc()])),
        (", restarts = 0", True, lambda P: solve(P, 50, nonneg=True, restarts=0)),
    ]
    for label, nonneg, fit in variants:
        (tc, tb, tt), (comp, wb, wt) = alternated(
            [
                lambda: fit(Problem.from_data(X, ids)),
                lambda: minimal_em.fit(X, 50, nonneg),
                lambda: minimal_em.fit(X, 50, nonneg, tol=1e-6),
            ],
            repeats,
        )
        out.append(("one k = 50 fit from the data" + label, nonneg, tc, comp.variance / lam1, tb, ev(wb), tt, ev(wt)))
    P = Problem.from_data(X, ids)
    P.first_pc()
    ks = range(1, 301)
    for nonneg in (False, True):
        (tc, tb), (comps, ws) = alternated(
            [lambda: fit_path(P, ks, nonneg=nonneg), lambda: minimal_em.path(X, ks, nonneg)], 5
        )
        mean_c = float(np.mean([c.variance for c in comps])) / lam1
        mean_b = float(np.mean([ev(w) for w in ws]))
        out.append(("path k = 1..300, warm-started", nonneg, tc, mean_c, tb, mean_b, None, None))
    return out


#: the starts of one fit, added one kind at a time (the last three are the defaults' kinds)
STAGES = ("PC1 (sparse) or ±PC1 (nonneg)", "+ e_j", "+ floor", "+ random")


def start_gains(ks=(3, 5, 10, 20, 50, 100)):
    """Rows (data, standardised, nonneg, k, the variance after each of STAGES, the seconds of each; NaN
    where a stage does not apply) over every bundled data set: what each kind of start buys."""
    em = get("em")
    out = []
    for name in datasets.names():
        raw = datasets.load(name)
        for scale in (False, True):
            P = prepare(raw, scale=scale).problem()
            for nonneg in (False, True):
                fixed = em.starts(P, nonneg, None, 0)  # PC1 or ±PC1, then e_j
                for k in (k for k in ks if k < P.dim):
                    fits = [
                        lambda: solve(P, k, nonneg=nonneg, starts=fixed[:-1]),
                        lambda: solve(P, k, nonneg=nonneg, starts=fixed),
                        lambda: solve(P, k, nonneg=nonneg, restarts=0),  # a cold fit: the floor's start too
                    ] + ([lambda: solve(P, k, nonneg=nonneg, restarts=10, rng=0)] if nonneg else [])
                    runs = [timed(fit, 1) for fit in fits]
                    pad = [float("nan")] * (len(STAGES) - len(runs))
                    values, seconds = [c.variance for _, _, c in runs] + pad, [t for t, _, _ in runs] + pad
                    out.append((name, scale, nonneg, k, values, seconds))
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--no-sklearn", action="store_true", help="skip the SparsePCA peer")
    args = ap.parse_args(argv)

    rows, lines = [], []
    with threadpool_limits(1):
        for name in ("leukemia", "cbcl"):
            ds = datasets.load(name)
            X, ids = ds.matrix, ds.feature_ids
            ready = Problem.from_data(X, ids)
            lam1 = ready.eigenvalues()[0]
            ready.first_pc()
            for method in ("em", "threshold"):
                for nonneg in (False, True):
                    t_ready, _, comp = timed(lambda: solve(ready, 50, method=method, nonneg=nonneg), args.repeats)
                    t_setup, _, _ = timed(
                        lambda: solve(Problem.from_data(X, ids), 50, method=method, nonneg=nonneg), args.repeats
                    )
                    label = ("EM (+refit)" if method == "em" else "thresholding") + (" nonneg" if nonneg else "")
                    rows.append((name, label, t_ready, t_setup, comp.variance / lam1, comp.cardinality, ""))
            if not args.no_sklearn:
                alpha, w, steps, total = sparsepca_at_cardinality(X, 50)
                from sklearn.decomposition import SparsePCA

                t, _, comp = timed(
                    lambda: SparsePCA(n_components=1, alpha=alpha, random_state=0).fit(X), max(1, args.repeats // 2)
                )
                w = comp.components_[0] / np.linalg.norm(comp.components_[0])
                rows.append(
                    (
                        name,
                        "sklearn SparsePCA",
                        None,
                        t,
                        ready.variance(w) / lam1,
                        int(np.count_nonzero(w)),
                        f"alpha={alpha:.4g} after {steps} fits ({total:.1f} s tuning)",
                    )
                )

        ds = datasets.load("leukemia")
        P = Problem.from_data(ds.matrix, ds.feature_ids)
        lam1 = P.eigenvalues()[0]
        goals = against_minimal_em(ds.matrix, ds.feature_ids, lam1, 25)
        gains = start_gains()
        t_path, _, comps = timed(lambda: fit_path(P, range(1, 301)), 3)
        t_cold, _, cold = timed(lambda: [solve(P, k) for k in range(1, 301)], 1)

    ev_path = np.array([c.variance for c in comps]) / lam1
    ev_cold = np.array([c.variance for c in cold]) / lam1
    lines.append("# EM benchmark (reports/bench/em.md)\n")
    lines.append(
        f"Command: `python bench/bench_em.py`; machine: {platform.machine()}, "
        f"{__import__('os').cpu_count()} cores, one BLAS thread; certpca {certpca.__version__}, "
        f"numpy {np.__version__}. Column-centred data; EV = wᵀCw / λ1; k = 50; medians of "
        f"{args.repeats} runs.\n"
    )
    lines.append(
        "*fit*: the solver on a ready covariance operator (its first eigenvector cached, as Sigg & "
        "Buhmann cache the initialisation across K); *from data*: building the operator and PC1 "
        "from the data matrix too, which is what one SparsePCA fit does.\n"
    )
    lines.append("| data | method | fit (s) | from data (s) | EV | cardinality | note |")
    lines.append("|---|---|---|---|---|---|---|")
    for name, method, t_ready, t_setup, ev, card, note in rows:
        ready_cell = "–" if t_ready is None else f"{t_ready:.4f}"
        lines.append(f"| {name} | {method} | {ready_cell} | {t_setup:.4f} | {ev:.4f} | {card} | {note} |")
    lines.append("")
    lines.append("| leukemia path k = 1..300 | time (s) | mean EV | EV at k = 10 / 50 / 100 / 300 |")
    lines.append("|---|---|---|---|")
    for label, t, ev in (
        ("EM warm-started along the path (certpca.path.fit_path)", t_path, ev_path),
        ("EM from its own starts at every k", t_cold, ev_cold),
    ):
        lines.append(
            f"| {label} | {t:.2f} | {ev.mean():.4f} | {ev[9]:.4f} / {ev[49]:.4f} / {ev[99]:.4f} / {ev[299]:.4f} |"
        )
    lines.append("")
    lines.append(
        "Issue 16 on leukemia, against the minimal numpy EM of bench/minimal_em.py timed in turns with "
        "certpca in this run (EM from PC1 until the support repeats, then the refit; *converged*: until "
        "w moves < 1e-6).  Times are medians of 25 fits or 5 paths, wall / CPU seconds (the machine is "
        "shared: CPU time is the steadier); path EV is the mean over k = 1..300.  The nonnegative default "
        "runs EM from ±PC1, e_j, the floor's vector and 10 random nonnegative starts (Sigg & Buhmann, Sec. 3.2), "
        "*restarts = 0* without the random ones; the sparse default from PC1, e_j and the floor's vector, "
        "*from PC1 alone* from the minimal EM's one start.\n"
    )
    lines.append(
        "| leukemia | problem | certpca (s) | EV | minimal EM (s) | EV | ratio wall / CPU | goal | met (wall / CPU) "
        "| converged minimal EM (s) | EV |"
    )
    lines.append("|---|---|---|---|---|---|---|---|---|---|---|")
    yes = lambda ok: "yes" if ok else "no"  # noqa: E731
    for what, nonneg, tc, evc, tb, evb, tt, evt in goals:
        if what.startswith("one"):
            goal = "≤ 1.5x at ≥ EV"
            met = [yes(tc[i] <= 1.5 * tb[i] and evc >= evb * (1 - 1e-12)) for i in (0, 1)]  # EVs' rounding
        else:
            limit = 1.0 if nonneg else 0.5
            goal = f"≤ {limit} s, EV ≥ minimal EM's"
            met = [yes(tc[i] <= limit and evc >= evb * (1 - 1e-12)) for i in (0, 1)]
        conv = "–" if tt is None else f"{tt[0]:.4f} / {tt[1]:.4f} | {evt:.4f}"
        lines.append(
            f"| {what} | {'nonnegative' if nonneg else 'sparse'} | {tc[0]:.4f} / {tc[1]:.4f} | {evc:.4f} | "
            f"{tb[0]:.4f} / {tb[1]:.4f} | {evb:.4f} | {tc[0] / tb[0]:.2f} / {tc[1] / tb[1]:.2f} | {goal} | "
            f"{met[0]} / {met[1]} | {conv} |"
        )
    lines.append("")
    lines.append(
        "What each kind of start buys (EM on every bundled data set, centred and standardised, sparse and "
        f"nonnegative, k = 3, 5, 10, 20, 50, 100: {len(gains)} problems), each kind added to the ones before: "
        "PC1 (sparse) or the positive parts of ±PC1 (nonnegative); *+ e_j*, the best single feature; *+ floor*, "
        "the floor's vector (the better of e_j and thresholded PC1, refitted), which a cold fit runs EM from; "
        "*+ random*, the 10 random nonnegative starts (rng = 0).  The default is all of them.  Gains are "
        "relative to the stage before; time is the median ratio to the first stage.\n"
    )
    for i in range(1, len(STAGES)):
        gain = [g[4][i] / g[4][i - 1] - 1 for g in gains if not np.isnan(g[4][i])]
        rel = [g[5][i] / g[5][0] for g in gains if not np.isnan(g[5][i])]
        lines.append(
            f"- {STAGES[i]}: higher in {sum(x > 1e-9 for x in gain)} of {len(gain)}, lower in "
            f"{sum(x < -1e-9 for x in gain)}, largest gain {100 * max(gain):.2f} %; time {np.median(rel):.2f}x"
        )
    lines.append("")
    lines.append(f"| data | standardised | problem | k | {STAGES[0]} | " + " | ".join(STAGES[1:]) + " |")
    lines.append("|---|---|---|---|---|" + "---|" * (len(STAGES) - 1))
    for name, scale, nonneg, k, values, _ in gains:
        up = [values[i] / values[i - 1] - 1 for i in range(1, len(STAGES))]
        if max(x for x in up if not np.isnan(x)) > 1e-9:
            cells = ["–" if np.isnan(x) else f"{100 * x:+.2f} %" for x in up]
            lines.append(
                f"| {name} | {yes(scale)} | {'nonnegative' if nonneg else 'sparse'} | {k} | {values[0]:.6g} | "
                + " | ".join(cells)
                + " |"
            )
    sk = {r[0]: r for r in rows if r[1] == "sklearn SparsePCA"}
    em = {r[0]: r for r in rows if r[1] == "EM (+refit)"}
    if sk:
        lines.append("")
        for name in sk:
            lines.append(
                f"- {name}: one SparsePCA fit at its tuned alpha takes {sk[name][3] / em[name][2]:.0f}x "
                f"the EM fit time ({sk[name][3] / em[name][3]:.0f}x EM from the data matrix), "
                f"with EV {sk[name][4]:.4f} against EM's {em[name][4]:.4f}; tuning alpha to k = 50 took "
                f"{sk[name][6].split('(')[1].rstrip(')')}."
            )
    text = "\n".join(lines) + "\n"
    publish("em.md", text)


if __name__ == "__main__":
    main()
