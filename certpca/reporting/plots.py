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
#: inches per feature in the loadings and heatmap figures (one line of 8-point text)
ROW_HEIGHT = 0.16
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
    """Nonzero loadings of each component: horizontal stems named by gene symbol where known (else by
    id), largest |w| at the top, two components a row; an image for pixels."""
    comps = fit.components
    shape, u = run.data.image_shape, Units.of(run.data.units)
    matplotlib, plt = mpl()
    with matplotlib.rc_context(STYLE):
        if shape:
            return _image_loadings(comps, shape, name)
        n = len(comps)
        ncols = min(n, 2)
        nrows = -(-n // ncols)
        tall = [max(1.6, 0.8 + ROW_HEIGHT * min(c.cardinality, max_labels)) for c in comps] + [0.0]
        heights = [max(tall[r * ncols : (r + 1) * ncols]) for r in range(nrows)]
        fig, axes = plt.subplots(
            nrows, ncols, figsize=(7.2, sum(heights)), squeeze=False, gridspec_kw={"height_ratios": heights}
        )
        for j, ax in enumerate(axes.flat):
            if j >= n:
                ax.remove()
                continue
            c = comps[j]
            items = sorted(c.loadings.items(), key=lambda kv: (-abs(kv[1]), kv[0]))
            w = np.array([v for _, v in items])
            y = np.arange(w.size)
            ax.hlines(y, 0, w, color=PALETTE[0], lw=1.2)
            ax.plot(w, y, "o", ms=3, color=PALETTE[0])
            ax.axvline(0, color="black", lw=0.6)
            ax.set_xlabel("loading")
            ax.set_title(f"PC{j + 1}: {c.cardinality} {u.cols} ({fit.method})")
            ax.set_ylim(max(w.size, 1) - 0.4, -0.6)  # largest |w| at the top
            if w.size <= max_labels:
                ax.set_yticks(
                    y, feature_names(run, [i for i, _ in items]), fontsize=SMALL_FONT if w.size > CROWDED_TICKS else 8
                )
            else:
                ax.set_ylabel(f"{u.col} rank (all {w.size} in the {u.cols} table)")
        fig.tight_layout()
    return to_svg(fig, name)


def feature_names(run: ReportRun, ids: list[str]) -> list[str]:
    """What a figure calls each feature: its gene symbol when the run's annotation gives one that no other
    of ``ids`` shares, else ``id (SYMBOL)`` or the id."""
    symbols = [run.annotation.get(f, [""])[0] for f in ids]
    counts = {s: symbols.count(s) for s in symbols}
    return [s if s and counts[s] == 1 else run.feature_label(f) for f, s in zip(ids, symbols)]


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


def class_styles(n: int) -> list[tuple[str, str]]:
    """A (colour, marker) pair per class, no two alike: matplotlib's qualitative tab10 up to 10 classes,
    tab20 up to 20, and beyond 20 the marker tells apart classes of one colour (distinct up to 160)."""
    matplotlib, _ = mpl()
    colours = [matplotlib.colors.to_hex(c) for c in matplotlib.colormaps["tab10" if n <= 10 else "tab20"].colors]
    # class i: colour i mod C, marker (i + i // C) mod 8; for one colour the markers differ since
    # i // C steps the marker by C + 1, coprime to 8 for C = 10 and 20
    return [(colours[i % len(colours)], MARKERS[(i + i // len(colours)) % len(MARKERS)]) for i in range(n)]


def _pairs(n: int) -> list[tuple[int, int]]:
    """Pairs of sparse components for the panels after PC1–PC2, so that every component is on an axis:
    (3, 4), (5, 6), ..., and (n − 1, n) when n is odd (0-based)."""
    return [(min(j, n - 2), min(j, n - 2) + 1) for j in range(2, n, 2)]


def scores(run: ReportRun, sc: Scores, name: str) -> str:
    """The samples on the sparse components beside ordinary PCA, coloured (and marked) by class.

    PC1 against PC2 beside ordinary PCA's (a strip of PC1 by class when there is one component), so a
    reader sees at once whether the few selected features separate what all features separate; then
    the further components two by two, so every one is plotted.
    """
    matplotlib, plt = mpl()
    u = Units.of(run.data.units)
    classes = sorted(set(sc.labels)) if sc.labels is not None else [None]
    styles = class_styles(len(classes))
    labels = np.array(sc.labels if sc.labels is not None else [None] * len(sc.sample_ids), dtype=object)
    mode = f"{'nonnegative sparse' if sc.nonneg else 'sparse'} PCA"
    panels = [(sc.components, (0, 1), f"{mode}\n{sc.method}, k = {run.settings.k}")]
    panels.append((sc.pca, (0, 1), f"ordinary PCA\nall {run.data.n_features} {u.cols}"))
    panels += [(sc.components, (a, b), f"{mode}: PC{a + 1} and PC{b + 1}") for a, b in _pairs(len(sc.components))]
    with matplotlib.rc_context(STYLE):
        nrows = -(-len(panels) // 2)
        fig, axes = plt.subplots(nrows, 2, figsize=(7.6, 3.4 * nrows), squeeze=False)
        for ax, (cols, (a, b), title) in zip(axes.flat, panels):
            x = np.asarray(cols[a])
            for i, cls in enumerate(classes):
                mask = labels == cls
                y = (
                    np.asarray(cols[b])[mask] if len(cols) > b else i + (np.arange(mask.sum()) % 7 - 3) * 0.05
                )  # a strip per class, jittered
                colour, marker = styles[i]
                ax.scatter(
                    x[mask],
                    y,
                    s=14,
                    marker=marker,
                    color=colour,
                    alpha=0.8,
                    lw=0.5,
                    label=cls if cls is not None else u.rows,
                )
            ax.set_xlabel(f"PC{a + 1} score")
            if len(cols) > b:
                ax.set_ylabel(f"PC{b + 1} score")
            else:
                ax.set_yticks(range(len(classes)), [str(c) for c in classes])
            ax.set_title(title)
        for ax in list(axes.flat)[len(panels) :]:
            ax.remove()
        if sc.labels is not None:
            axes[0][1].legend(
                loc="upper left", bbox_to_anchor=(1.01, 1.0), title="class", ncol=1 if len(classes) <= 14 else 2
            )
        fig.tight_layout()
    return to_svg(fig, name)


def heatmap(run: ReportRun, sc: Scores, fit: MethodFit, name: str, max_labels: int = MAX_TICK_LABELS) -> str | None:
    """The selected features across the samples: each feature's prepared values as z-scores (clipped at
    ±3), features by component and |loading|, samples by class and then by their PC1 score, with a bar
    of the classes in the score plots' colours on top."""
    ids = list(
        dict.fromkeys(
            f for c in fit.components for f, _ in sorted(c.loadings.items(), key=lambda kv: (-abs(kv[1]), kv[0]))
        )
    )
    ids = [f for f in ids if f in sc.selected]
    if not ids:
        return None
    matplotlib, plt = mpl()
    u = Units.of(run.data.units)
    values = np.array([sc.selected[f] for f in ids], dtype=float)
    sd = values.std(axis=1, keepdims=True)
    z = np.clip((values - values.mean(axis=1, keepdims=True)) / np.where(sd > 0, sd, 1.0), -3, 3)
    pc1 = np.asarray(sc.components[0], dtype=float)
    classes = sorted(set(sc.labels)) if sc.labels is not None else []
    index = {c: i for i, c in enumerate(classes)}
    code = np.array([index[c] for c in sc.labels]) if sc.labels is not None else np.zeros(pc1.size, dtype=int)
    order = np.lexsort((-pc1, code))
    with matplotlib.rc_context(STYLE):
        height = max(2.0, 1.2 + ROW_HEIGHT * min(len(ids), max_labels))
        fig, (bar, ax) = plt.subplots(
            2, 1, figsize=(7.2, height + 0.3), sharex=True, gridspec_kw={"height_ratios": [0.3, height]}
        )
        if classes:
            colours = [c for c, _ in class_styles(len(classes))]
            counts = np.bincount(code, minlength=len(classes))
            starts = np.concatenate([[0], np.cumsum(counts)[:-1]]) - 0.5
            bar.broken_barh(list(zip(starts, counts)), (-0.5, 1.0), facecolors=colours)  # vector: one box a class
            bar.set_ylim(-0.5, 0.5)
            handles = [matplotlib.patches.Patch(color=c, label=str(k)) for c, k in zip(colours, classes)]
            bar.legend(
                handles=handles,
                loc="upper left",
                bbox_to_anchor=(1.16, 1.0),
                title="class",
                ncol=1 if len(classes) <= 14 else 2,
            )
            bar.set_yticks([0], ["class"])
        else:
            bar.axis("off")
        bar.tick_params(axis="x", bottom=False, labelbottom=False)
        # a raster at one pixel a value (an inline PNG in the SVG: a vector mesh of N x k boxes would weigh
        # megabytes); the classes' bar and the lines between classes stay vector
        im = ax.imshow(z[:, order], aspect="auto", interpolation="none", cmap="RdBu_r", vmin=-3, vmax=3)
        for edge in np.flatnonzero(np.diff(code[order])) + 0.5:
            ax.axvline(edge, color="black", lw=0.6)
        if len(ids) <= max_labels:
            ax.set_yticks(
                np.arange(len(ids)), feature_names(run, ids), fontsize=SMALL_FONT if len(ids) > CROWDED_TICKS else 8
            )
        else:
            ax.set_ylabel(f"{len(ids)} selected {u.cols}")
        ax.set_xticks([])
        by = "by class, then by PC1 score" if classes else "by PC1 score"
        ax.set_xlabel(f"{pc1.size} {u.rows}, {by}")
        fig.colorbar(im, ax=[bar, ax], fraction=0.03, pad=0.02, label=f"z-score of each {u.col}")
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
