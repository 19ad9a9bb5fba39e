"""Sigg & Buhmann (ICML 2008): Figs. 2, 3 and 4 on the bundled data."""

from __future__ import annotations

import time
import warnings
from typing import Any

import numpy as np

from certpca import datasets
from certpca.components import fit_components
from certpca.reporting.genes import gene_selection_run
from certpca.reporting.plots import PALETTE
from certpca.solvers import solve
from certpca.solvers.nspca import nspca_at_cardinality

from .common import PAPERS, Result, Settings, figure, path_values, pct, quiet, sklearn_at, sklearn_sparse_pca, table


def sigg2008_fig2(s: Settings) -> Result:
    """Fig. 2: variance against cardinality for every sparse method on CBCL and leukemia, with timings.

    Long because one experiment builds its figure, two tables and the published-vs-ours
    rows from the same fits; split up, the fits would be passed between the pieces.
    """
    res = Result(
        "sigg2008-fig2", "Sigg & Buhmann 2008, Fig. 2: variance vs cardinality, sparse PCA", PAPERS["sigg2008"], None
    )
    grids = {
        "cbcl": [1, 5, 10, 20, 40, 70, 100, 150, 200, 300] if not s.quick else [5, 20, 60],
        "leukemia": [1, 5, 10, 20, 50, 100, 200, 500, 1000] if not s.quick else [5, 20, 60],
    }
    sk_grid = {"cbcl": [10, 50, 150], "leukemia": [50]} if not s.quick else {}
    sk_ok = sklearn_sparse_pca() is not None
    if not sk_ok:
        res.notes.append("scikit-learn is not importable: its SparsePCA is left out.")
    elif s.quick:
        res.notes.append("--quick: scikit-learn's SparsePCA (α bisection, many fits per k) is left out.")
    else:
        res.notes.append(
            "scikit-learn's SparsePCA: α bracketed and bisected (≤ 10 steps) for at most K nonzeros, "
            "at K = 10, 50, 150 on CBCL and only K = 50 on leukemia, where one fit takes 5–14 s; "
            "its variance is that of its own (not renormalised) unit loadings."
        )
    fig, axes = figure(3)
    rows, renorm_gain, methods = (
        [],
        [],
        ["em", "em (no renormalisation)", "threshold", "gpower-l1", "gpower-l0", "spannogram (d=2)"],
    )
    for ax, name in zip(axes[0], ("cbcl", "leukemia")):
        ds = datasets.load(name, scale=True)
        P = ds.problem()
        lam1 = float(P.eigenvalues()[0])
        ks = sorted(set(k for k in grids[name] + sk_grid.get(name, []) if k <= P.dim))
        curves = {
            "em": path_values(P, ks, "em", False, s.seed),
            "em (no renormalisation)": path_values(P, ks, "em", False, s.seed, renormalize_support=False),
            "threshold": path_values(P, ks, "threshold", False, s.seed),
            "gpower-l1": path_values(P, ks, "gpower-l1", False, s.seed),
            "gpower-l0": path_values(P, ks, "gpower-l0", False, s.seed),
        }
        with quiet():
            warnings.simplefilter("ignore")
            curves["spannogram (d=2)"] = [
                solve(P, k, method="spannogram", rng=np.random.default_rng(s.seed)) for k in ks
            ]
        vals = {m: [c.variance / lam1 for c in cs] for m, cs in curves.items()}
        sk = {}
        if sk_ok and not s.quick:
            for k in sk_grid[name]:
                w, a, t = sklearn_at(ds.matrix, k, s.seed)
                if w is not None:
                    sk[k] = (P.variance(w) / lam1, int(np.count_nonzero(w)), a, t)
        for i, m in enumerate(methods):
            ax.plot(
                ks, vals[m], marker="o", ms=2.5, lw=1, color=PALETTE[i], label=m, ls="--" if "no renorm" in m else "-"
            )
        if sk:
            ax.plot(
                [v[1] for v in sk.values()],
                [v[0] for v in sk.values()],
                "s",
                color="black",
                ms=4,
                label="sklearn SparsePCA",
            )
        ax.set_xscale("log")
        ax.set_xlabel("cardinality K")
        ax.set_ylabel("variance / λ1")
        ax.set_title(f"{name} (standardised, D = {P.dim})")
        for j, k in enumerate(ks):
            r = {"data": name, "k": k, **{m: vals[m][j] for m in methods}}
            if sk_ok and not s.quick:
                r["sklearn SparsePCA"] = sk[k][0] if k in sk else None
                r["sklearn nnz"] = sk[k][1] if k in sk else None
            rows.append(r)
            renorm_gain.append(vals["em"][j] - vals["em (no renormalisation)"][j])
    axes[0][0].legend(loc="lower right", fontsize=6)
    # running time vs K on leukemia (cold single fits)
    ds = datasets.load("leukemia", scale=True)
    P = ds.problem()
    P.eigenvalues()
    tks = [5, 20, 100, 500] if not s.quick else [10, 60]
    trows: list[dict[str, Any]] = []
    ax = axes[0][2]
    for i, m in enumerate(["em", "threshold", "gpower-l0", "gpower-l1"]):
        ts = []
        for k in tks:
            with quiet():
                warnings.simplefilter("ignore")
                c = solve(P, k, method=m, rng=np.random.default_rng(s.seed))
            ts.append(c.seconds)
            trows.append({"method": m, "k": k, "seconds": c.seconds})
        ax.plot(tks, ts, marker="o", ms=2.5, lw=1, color=PALETTE[i], label=m)
    for v in sk.values() if sk else []:
        trows.append({"method": "sklearn SparsePCA (α bisection, all fits)", "k": v[1], "seconds": v[3]})
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("cardinality K")
    ax.set_ylabel("seconds (one fit)")
    ax.set_title("running time, leukemia")
    ax.legend(fontsize=6)
    fig.tight_layout()
    res.figure = fig
    fmts = {m: "fraction" for m in methods + ["sklearn SparsePCA"]}
    res.tables.append(
        table(
            "variance",
            "Variance / λ1 of the first sparse PC by method and cardinality K (standardised features)",
            rows,
            fmts,
        )
    )
    res.tables.append(
        table(
            "time",
            "Seconds per fit on leukemia (this machine; compare rows, not machines)",
            trows,
            {"seconds": "seconds"},
        )
    )
    em_t = [r["seconds"] for r in trows if r["method"] == "em"]
    res.published += [
        {
            "quantity": "renormalisation closes the gap (Fig. 2 left/middle)",
            "published": "figure only (no numbers)",
            "ours": f"EM gains {max(renorm_gain):.4f} λ1 at most, {min(renorm_gain):.4f} at least",
            "verdict": "yes" if min(renorm_gain) >= -1e-9 else "no",
            "why": "our EM stops once the support is stable, so un-renormalised weights are already close",
        },
        {
            "quantity": "EM time hardly depends on K (Fig. 2 right)",
            "published": "figure only (Matlab, 2.2 GHz)",
            "ours": f"{min(em_t):.3f}–{max(em_t):.3f} s over K = {tks[0]}..{tks[-1]}",
            "verdict": "yes" if max(em_t) < 10 * max(min(em_t), 1e-3) else "no",
            "why": "absolute times are machine-dependent; only the shape is compared",
        },
    ]
    res.notes.append(
        "PathSPCA and Zou et al.'s SPCA of the paper are not in certpca; thresholding, GPower and "
        "the spannogram stand in, scikit-learn's SparsePCA is the peer users know."
    )
    return res


# ----------------------------------------------------------- experiment 2
def sigg2008_fig3(s: Settings) -> Result:
    """Fig. 3: nonnegative components of CBCL (cumulative variance, cardinality, overlap) by method.

    Long for the same reason as :func:`sigg2008_fig2`: figure, tables and verdicts share the fits.
    """
    res = Result(
        "sigg2008-fig3", "Sigg & Buhmann 2008, Fig. 3: nonnegative sparse PCA on CBCL faces", PAPERS["sigg2008"], None
    )
    P0 = datasets.load("cbcl", scale=True).problem()
    P = P0.deflate(P0.first_pc())
    lam1 = float(P.eigenvalues()[0])
    ks = list(range(10, 301, 20)) if not s.quick else [20, 60]
    restarts = 3 if not s.quick else 1
    L = 10 if not s.quick else 2
    fig, axes = figure(3)
    t0 = time.perf_counter()
    em = path_values(P, ks, "em", True, s.seed)
    t_em = (time.perf_counter() - t0) / len(ks)
    rng = np.random.default_rng(s.seed)
    best = {k: 0.0 for k in ks}
    t0 = time.perf_counter()
    for _ in range(restarts):
        with quiet():
            warnings.simplefilter("ignore")
            results, unreached = nspca_at_cardinality(P, ks, 1, alpha=lam1, rng=rng)
        for k in ks:
            if k in unreached:
                continue
            U, _info = results[k]
            u = U[:, 0]
            if np.linalg.norm(u) > 0:
                best[k] = max(best[k], P.variance(u / np.linalg.norm(u)) / lam1)
    t_ns = (time.perf_counter() - t0) / len(ks)
    ax = axes[0][0]
    ax.plot(ks, [c.variance / lam1 for c in em], marker="o", ms=2.5, color=PALETTE[0], label="EM nonneg")
    ax.plot(
        [k for k in ks if best[k] > 0],
        [best[k] for k in ks if best[k] > 0],
        marker="s",
        ms=2.5,
        color=PALETTE[1],
        label=f"NSPCA (α = λ1, best of {restarts})",
    )
    ax.set_xlabel("cardinality K")
    ax.set_ylabel("variance / λ1")
    ax.set_title("CBCL, PC1 projected out")
    ax.legend(fontsize=6)
    rows = [{"k": k, "EM nonneg": c.variance / lam1, "NSPCA": best[k] or None} for k, c in zip(ks, em)]
    res.tables.append(
        table(
            "variance",
            "Nonnegative sparse PC, CBCL (standardised, PC1 projected out): "
            "variance / λ1 by K; NSPCA β bisected (– where its cardinality map jumps over K)",
            rows,
            {"EM nonneg": "fraction", "NSPCA": "fraction"},
        )
    )
    tr = P.trace

    def cum(fit):
        return np.cumsum(fit.additional_variance) / tr

    with quiet():
        warnings.simplefilter("ignore")
        fits_mid = {
            "EM nonneg, disjoint K = 20": fit_components(
                P, 20, n_components=L, nonneg=True, deflation="disjoint", seed=s.seed
            ),
            f"NSPCA joint, {20 * L} nonzeros": fit_components(
                P, 20, n_components=L, method="nspca", nonneg=True, deflation="joint", seed=s.seed
            ),
            "EM (signed), K = 20": fit_components(P, 20, n_components=L, seed=s.seed),
        }
        fits_right = {
            "EM nonneg, quasi 85°": fit_components(
                P, 20, n_components=L, nonneg=True, deflation="quasi", min_angle=85.0, seed=s.seed, restarts=1
            ),
            f"NSPCA joint, {20 * L} nonzeros": fits_mid[f"NSPCA joint, {20 * L} nonzeros"],
        }
    crow = []
    for ax, fits, title in (
        (axes[0][1], fits_mid, "orthogonal components"),
        (axes[0][2], fits_right, "quasi-orthogonal (≥ 85°)"),
    ):
        for i, (label, f) in enumerate(fits.items()):
            c = cum(f)
            ax.plot(np.arange(1, c.size + 1), c, marker="o", ms=2.5, color=PALETTE[i], label=label)
            for j, v in enumerate(c):
                crow.append({"panel": title, "method": label, "components": j + 1, "cumulative variance": v})
        ax.set_xlabel("number of components")
        ax.set_ylabel("cumulative variance / trace")
        ax.set_title(title)
        ax.legend(fontsize=6)
    fig.tight_layout()
    res.figure = fig
    res.tables.append(
        table(
            "cumulative",
            "Cumulative additional variance / trace of L components",
            crow,
            {"cumulative variance": "percent"},
        )
    )
    em_mid = cum(fits_mid["EM nonneg, disjoint K = 20"])[-1]
    ns = cum(fits_mid[f"NSPCA joint, {20 * L} nonzeros"])[-1]
    quasi = cum(fits_right["EM nonneg, quasi 85°"])
    both = [k for k in ks if best[k] > 0]
    em_wins = sum(c.variance / lam1 >= best[k] - 1e-9 for k, c in zip(ks, em) if k in both)
    res.published += [
        {
            "quantity": "EM ≥ NSPCA along K (Fig. 3 left)",
            "published": "figure only: EM above at every K",
            "ours": f"EM ≥ NSPCA at {em_wins} of {len(both)} K where NSPCA reached K",
            "verdict": "yes" if em_wins == len(both) else "partly",
            "why": "NSPCA's β ↦ nnz map jumps over some K",
        },
        {
            "quantity": "mean seconds per K, EM vs NSPCA",
            "published": "0.4 s vs 24 s (ratio 60)",
            "ours": f"{t_em:.3f} s vs {t_ns:.3f} s (ratio {t_ns / max(t_em, 1e-9):.0f})",
            "verdict": "yes" if t_ns > t_em else "no",
            "why": "ours: warm-started path and bisection with cached evaluations; theirs: Matlab, cold",
        },
        {
            "quantity": f"cumulative variance after {L} orthogonal components (Fig. 3 middle)",
            "published": "figure only: EM significantly above NSPCA",
            "ours": f"EM {pct(em_mid)} vs NSPCA {pct(ns)}",
            "verdict": "yes" if em_mid > ns else "no",
            "why": "",
        },
        {
            "quantity": "quasi-orthogonal: EM first, NSPCA cumulative (Fig. 3 right)",
            "published": "figure only: EM more in the first components, NSPCA more cumulatively",
            "ours": f"EM quasi {pct(quasi[-1])} vs NSPCA {pct(ns)} after {L}",
            "verdict": "yes" if ns > quasi[-1] else "no: EM quasi is also ahead cumulatively",
            "why": "our NSPCA uses α = λ1 and one β for all columns",
        },
    ]
    if s.quick:
        res.notes.append(f"--quick: K grid {ks}, {restarts} NSPCA restart(s), L = {L} components.")
    return res


# ----------------------------------------------------------- experiment 3
def sigg2008_fig4(s: Settings) -> Result:
    res = Result(
        "sigg2008-fig4",
        "Sigg & Buhmann 2008, Fig. 4: unsupervised gene selection on leukemia",
        PAPERS["sigg2008"],
        None,
    )
    sizes = [10, 20, 30, 40, 50, 70, 100, 150, 200] if not s.quick else [10, 70]
    n_init = 100 if not s.quick else 10
    fig, axes = figure(2, w=3.8)
    rows = []
    preparations: tuple[tuple[str, dict[str, Any]], ...] = (
        ("centred raw", {}),
        ("log2 floor 20, centred", {"log2": 20}),
    )
    for ax, (label, kw) in zip(axes[0], preparations):
        ds = datasets.load("leukemia", **kw)
        g = gene_selection_run(ds, sizes=sizes, featured=70, n_init=n_init, seed=s.seed)
        full = g.rows[0]
        ax.axhspan(full.mean - full.sd, full.mean + full.sd, color="#cccccc", alpha=0.5, lw=0)
        ax.axhline(full.mean, color="black", lw=1, label="full data")
        for i, sel in enumerate(g.selectors):
            rr = [r for r in g.rows if r.selector == sel]
            ax.errorbar(
                np.array([r.size for r in rr]) + (i - 0.5) * 1.5,
                [r.mean for r in rr],
                yerr=[r.sd for r in rr],
                marker="o",
                ms=2.5,
                capsize=2,
                color=PALETTE[i],
                label=sel,
            )
        ax.set_ylim(0, 1)
        ax.set_xlabel("number of selected genes")
        ax.set_ylabel(f"Jaccard (mean ± sd, {n_init} runs)")
        ax.set_title(f"leukemia, {label}")
        ax.legend(fontsize=6, loc="lower right")
        for r in g.rows:
            rows.append(
                {
                    "preprocessing": label,
                    "selector": r.selector,
                    "genes": r.size,
                    "mean": r.mean,
                    "sd": r.sd,
                }
            )
        at70 = next(r for r in g.rows if r.size == 70 and r.selector.startswith("nonneg"))
        t = g.set_test
        against_random = "" if t is None else f"; against random 70-gene sets p = {t.p_value:.3g}"
        res.published.append(
            {
                "quantity": f"Jaccard, 70-gene component vs full data ({label})",
                "published": "component significantly better than full data",
                "ours": f"{at70.mean:.3f} vs {full.mean:.3f} (mean over {n_init} initialisations{against_random})",
                "verdict": "yes" if at70.mean > full.mean else "no",
                "why": "the paper does not state its preprocessing, and the claim depends on it; its significance "
                "came from tests over k-means restarts of the same data, which are not independent samples, so "
                "we compare the means and test the genes against random gene sets instead",
            }
        )
    fig.tight_layout()
    res.figure = fig
    res.tables.append(
        table(
            "jaccard",
            f"k-means (k = 3, {n_init} initialisations) Jaccard on selected genes",
            rows,
            {"mean": "fraction", "sd": "fraction", "genes": "int"},
        )
    )
    res.notes.append(
        "On centred raw data the 70-gene component scores below the full data, so the paper's "
        "claim does not hold there; after log2 with floor 20 it holds. Both are shown."
    )
    return res


# ----------------------------------------------------------- experiment 4
