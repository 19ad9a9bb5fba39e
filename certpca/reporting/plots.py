"""Figures of a report as inline SVG strings (matplotlib, Agg, no display needed).

Deterministic: ``svg.hashsalt`` is fixed per figure, the SVG carries no Date,
text stays text (``svg.fonttype = none``), and every id in a figure is
prefixed with the figure's name so several SVGs can share one HTML page.
"""

from __future__ import annotations

import io
import re

import numpy as np

from certpca.data import pixel_ids
from certpca.reporting.formats import Units
from certpca.reporting.saved import GeneSelection, MethodFit, ReportRun, SavedComponent, SavedStability, Scores

#: feature ids are written under the stems up to this many loadings (more would not be legible)
MAX_TICK_LABELS = 60
#: above this many ids the tick labels get the smaller font
CROWDED_TICKS = 25
#: horizontal offset (in features) between the two selectors' points in the gene-selection figure
DODGE = 1.2
PALETTE = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf"]
#: markers and dash patterns, so lines that coincide (methods that find the same component) stay distinguishable
MARKERS = ["o", "s", "^", "D", "v", "P", "X", "*"]
DASHES = ["-", "--", "-.", ":"]
#: the smallest font of any figure (points; 9 px on screen is the legibility floor)
SMALL_FONT = 7.5


def mpl():
    """matplotlib (Agg backend) and pyplot, imported on first use: they add about 0.4 s to an import."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    return matplotlib, plt


#: rc parameters of every certpca figure (text as text in SVG, no top/right spines)
STYLE = {
    "svg.fonttype": "none",
    "font.size": 9,
    "axes.titlesize": 10,
    "axes.labelsize": 9,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "legend.frameon": False,
    "legend.fontsize": 8,
    "font.family": "sans-serif",
    "font.sans-serif": ["DejaVu Sans", "Helvetica", "Arial", "sans-serif"],
}


def to_svg(fig, name: str) -> str:
    """The figure as an ``<svg>`` element with ids prefixed by ``name``."""
    matplotlib, plt = mpl()
    buf = io.StringIO()
    with matplotlib.rc_context({"svg.hashsalt": f"certpca-{name}", **STYLE}):
        fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None}, bbox_inches="tight")
    plt.close(fig)
    svg = buf.getvalue()
    svg = svg[svg.index("<svg") :]
    svg = re.sub(r'id="([^"]+)"', lambda m: f'id="{name}-{m.group(1)}"', svg)
    svg = re.sub(r"url\(#([^)]+)\)", lambda m: f"url(#{name}-{m.group(1)})", svg)
    svg = re.sub(r'href="#([^"]+)"', lambda m: f'href="#{name}-{m.group(1)}"', svg)
    svg = svg.replace("<svg ", f'<svg role="img" aria-label="{name}" ', 1)
    return svg.strip() + "\n"


def spectrum(run: ReportRun) -> str:
    """Share of the total variance of the largest eigenvalues, and its cumulative sum."""
    ev = np.asarray(run.data.eigenvalues, dtype=float)
    share = ev / run.data.total_variance
    matplotlib, plt = mpl()
    with matplotlib.rc_context(STYLE):
        fig, ax = plt.subplots(figsize=(6.4, 2.8))
        x = np.arange(1, ev.size + 1)
        ax.bar(x, share, color=PALETTE[0], width=0.7)
        ax.plot(x, np.cumsum(share), color=PALETTE[1], marker="o", ms=3, lw=1, label="cumulative")
        ax.set_xlabel("eigenvalue index")
        ax.set_ylabel("share of total variance")
        ax.set_xticks(x[:: max(1, ev.size // 10)])
        ax.set_ylim(0, 1)
        ax.annotate(f"λ1: {share[0]:.1%}", (1, share[0]), xytext=(8, 4), textcoords="offset points")
        ax.legend(loc="center right")
        ax.set_title(f"Spectrum of the covariance (largest {ev.size} eigenvalues)")
    return to_svg(fig, "spectrum")


def path(run: ReportRun) -> str | None:
    """Variance vs cardinality per method, with the certified band (Asteris et al. 2014, Fig. 4–6)."""
    if not run.bands:
        return None
    matplotlib, plt = mpl()
    lam1 = run.data.lambda1
    methods = sorted({p.method for p in run.paths})
    colour = {m: PALETTE[i % len(PALETTE)] for i, m in enumerate(methods)}
    with matplotlib.rc_context(STYLE):
        n = len(run.bands)
        fig, axes = plt.subplots(1, n, figsize=(3.4 * n + 0.4, 3.2), squeeze=False, sharey=True)
        for ax, band in zip(axes[0], run.bands):
            ks = np.array([p.k for p in band.points])
            best = np.array([p.best_value for p in band.points]) / lam1
            upper = np.array([p.upper_bound for p in band.points]) / lam1
            ax.fill_between(ks, best, upper, color="#bbbbbb", alpha=0.5, lw=0, label="certified band (OPT lies inside)")
            ax.plot(ks, upper, color="black", ls="--", lw=1, label="upper bound")
            for p in run.paths_of(band.nonneg):
                i = methods.index(p.method)
                ax.plot(
                    [q.k for q in p.points],
                    np.array([q.value for q in p.points]) / lam1,
                    marker=MARKERS[i % len(MARKERS)],
                    ms=4 + (len(methods) - i),
                    mfc="none",
                    ls=DASHES[i % len(DASHES)],
                    lw=1.2,
                    color=colour[p.method],
                    label=p.method,
                )
            ax.axvline(run.settings.k, color="#888888", lw=0.8, ls=":")
            ax.set_xscale("log")
            ax.set_xlabel("cardinality k")
            ax.set_title("nonnegative sparse" if band.nonneg else "sparse")
            ax.set_ylim(0, min(1.05, max(1e-9, float(np.nanmax(upper))) * 1.05))
        axes[0][0].set_ylabel("variance / λ1")
        handles, labels = axes[0][-1].get_legend_handles_labels()
        fig.legend(handles, labels, loc="lower center", ncol=min(len(labels), 4), bbox_to_anchor=(0.5, -0.12))
        fig.tight_layout()
    return to_svg(fig, "path")


def loadings(run: ReportRun, fit: MethodFit, name: str, max_labels: int = MAX_TICK_LABELS) -> str:
    """Nonzero loadings of each component: a stem plot with feature ids, or an image for pixels."""
    comps = fit.components
    shape, u = run.data.image_shape, Units.of(run.data.units)
    matplotlib, plt = mpl()
    with matplotlib.rc_context(STYLE):
        if shape:
            return _image_loadings(comps, shape, name)
        n = len(comps)
        fig, axes = plt.subplots(n, 1, figsize=(7.2, 2.6 * n), squeeze=False)
        for j, (ax, c) in enumerate(zip(axes[:, 0], comps)):
            items = sorted(c.loadings.items(), key=lambda kv: (-abs(kv[1]), kv[0]))
            ids = [i for i, _ in items]
            w = np.array([v for _, v in items])
            x = np.arange(w.size)
            ax.vlines(x, 0, w, color=PALETTE[0], lw=1)
            ax.plot(x, w, "o", ms=2.5, color=PALETTE[0])
            ax.axhline(0, color="black", lw=0.6)
            ax.set_ylabel("loading")
            ax.set_title(f"PC{j + 1}: {c.cardinality} nonzero loadings by {fit.method}, largest |w| first")
            if w.size <= max_labels:
                ax.set_xticks(x)
                ax.set_xticklabels(ids, rotation=90, fontsize=SMALL_FONT if w.size > CROWDED_TICKS else 8)
            else:
                ax.set_xlabel(f"{u.col} rank (names of all {w.size} in the {u.cols} table)")
            ax.set_xlim(-1, max(w.size, 1))
        fig.tight_layout()
    return to_svg(fig, name)


def _image_loadings(comps: list[SavedComponent], shape: list[int], name: str) -> str:
    _, plt = mpl()
    order = _pixel_order(shape)
    pos = {f: i for i, f in enumerate(order)}
    n = len(comps)
    fig, axes = plt.subplots(1, n, figsize=(2.4 * n + 0.6, 2.6), squeeze=False)
    for j, (ax, c) in enumerate(zip(axes[0], comps)):
        img = np.zeros(int(shape[0]) * int(shape[1]))
        for f, v in c.loadings.items():
            if f in pos:
                img[pos[f]] = v
        m = float(np.abs(img).max()) or 1.0
        im = ax.imshow(img.reshape(shape), cmap="RdBu_r", vmin=-m, vmax=m, interpolation="nearest")
        ax.set_xticks([])
        ax.set_yticks([])
        ax.set_title(f"PC{j + 1} ({c.cardinality} pixels)")
    fig.colorbar(im, ax=list(axes[0]), shrink=0.8, label="loading")
    return to_svg(fig, name)


def _pixel_order(shape: list[int]) -> list[str]:
    return list(pixel_ids((int(shape[0]), int(shape[1]))))


def scores(run: ReportRun, sc: Scores, name: str) -> str:
    """The samples on the sparse components beside ordinary PCA, coloured by class.

    PC1 against PC2 (a strip of PC1 by class when there is one component), so a reader
    sees at once whether the few selected features separate what all features separate.
    """
    matplotlib, plt = mpl()
    u = Units.of(run.data.units)
    classes = sorted(set(sc.labels)) if sc.labels is not None else [None]
    labels = np.array(sc.labels if sc.labels is not None else [None] * len(sc.sample_ids), dtype=object)
    with matplotlib.rc_context(STYLE):
        fig, axes = plt.subplots(1, 2, figsize=(7.6, 3.3), squeeze=False)
        panels = (
            (
                axes[0][0],
                sc.components,
                f"{'nonnegative ' if sc.nonneg else ''}sparse PCA ({sc.method}), k = {run.settings.k}",
            ),
            (axes[0][1], sc.pca, f"ordinary PCA (all {u.cols})"),
        )
        for ax, cols, title in panels:
            x = np.asarray(cols[0])
            for i, cls in enumerate(classes):
                mask = labels == cls
                y = (
                    np.asarray(cols[1])[mask] if len(cols) > 1 else i + (np.arange(mask.sum()) % 7 - 3) * 0.05
                )  # a strip per class, jittered
                ax.scatter(
                    x[mask],
                    y,
                    s=14,
                    marker=MARKERS[i % len(MARKERS)],
                    color=PALETTE[i % len(PALETTE)],
                    alpha=0.8,
                    lw=0.5,
                    label=cls if cls is not None else u.rows,
                )
            ax.set_xlabel("PC1 score")
            if len(cols) > 1:
                ax.set_ylabel("PC2 score")
            else:
                ax.set_yticks(range(len(classes)), [str(c) for c in classes])
            ax.set_title(title)
        if sc.labels is not None:
            axes[0][1].legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), title="class")
        fig.tight_layout()
    return to_svg(fig, name)


def genes(run: ReportRun) -> str | None:
    """Jaccard mean ± sd against the number of selected features (Sigg & Buhmann 2008, Fig. 4)."""
    g: GeneSelection | None = run.genes
    if not g:
        return None
    matplotlib, plt = mpl()
    u = Units.of(run.data.units)
    with matplotlib.rc_context(STYLE):
        fig, ax = plt.subplots(figsize=(6.4, 3.2))
        full = g.rows[0]
        ax.axhspan(full.mean - full.sd, full.mean + full.sd, color="#cccccc", alpha=0.5, lw=0)
        ax.axhline(full.mean, color="black", lw=1, label=f"full data ({full.n_features} {u.cols})")
        for i, sel in enumerate(g.selectors):
            rows = [r for r in g.rows if r.selector == sel]
            x = np.array([r.size for r in rows])
            # the two selectors side by side, DODGE features apart, so their error bars do not overlap
            ax.errorbar(
                x + (i - 0.5) * DODGE,
                [r.mean for r in rows],
                yerr=[r.sd for r in rows],
                marker="o",
                ms=3,
                lw=1.2,
                capsize=2,
                color=PALETTE[i + (1 if i else 0)],
                label=sel,
            )
        ax.axvline(g.featured, color="#888888", lw=0.8, ls=":")
        ax.set_xlabel(f"number of selected {u.cols}")
        ax.set_ylabel(f"Jaccard (mean ± sd, {g.n_init} runs)")
        ax.set_ylim(0, 1)
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0))  # outside the axes: never over the data
        ax.set_title(f"k-means on selected {u.cols} vs the known classes")
        fig.tight_layout()
    return to_svg(fig, "genes")


def stability(run: ReportRun, record: SavedStability, name: str) -> str:
    """Selection frequency over the halves against |loading| on all samples: the selected features (filled)
    and those only some halves chose (open, at 0), with the threshold as a line."""
    matplotlib, plt = mpl()
    u = Units.of(run.data.units)
    with matplotlib.rc_context(STYLE):
        fig, ax = plt.subplots(figsize=(6.4, 3.0))
        chosen = [r for r in record.rows if r.selected]
        others = [r for r in record.rows if not r.selected]
        ax.scatter(
            [abs(r.loading) for r in chosen],
            [r.frequency for r in chosen],
            s=14,
            color=PALETTE[0],
            label=f"selected on all {u.rows} ({len(chosen)})",
        )
        if others:
            ax.scatter(
                [0.0] * len(others),
                [r.frequency for r in others],
                s=14,
                facecolors="none",
                edgecolors=PALETTE[1],
                label=f"selected only in halves ({len(others)})",
            )
        ax.axhline(record.threshold, color="#888888", lw=0.8, ls=":")
        ax.set_xlabel(f"|loading| on all {u.rows}")
        ax.set_ylabel(f"frequency ({record.n_subsamples} halves)")
        ax.set_ylim(-0.02, 1.02)
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0))
        fig.tight_layout()
    return to_svg(fig, name)
