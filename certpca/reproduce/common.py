"""Shared pieces of the experiments: the result record, settings, figure and table helpers."""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from certpca.messages import quiet
from certpca.paths import fit_path
from certpca.reporting.plots import STYLE, mpl
from certpca.reporting.tables import Table, fmt

PAPERS = {
    "sigg2008": "Sigg, C. D. & Buhmann, J. M. (2008). Expectation-maximization for sparse and non-negative PCA. ICML.",
    "asteris2014": "Asteris, M., Papailiopoulos, D. S. & Dimakis, A. G. (2014). Nonnegative sparse PCA with "
    "provable guarantees. ICML.",
    "zass2006": "Zass, R. & Shashua, A. (2006). Nonnegative sparse PCA. NIPS.",
    "journee2008": "Journée, M., Nesterov, Yu., Richtárik, P. & Sepulchre, R. (2008). Generalized power method "
    "for sparse PCA (talk slides; JMLR 2010).",
}


@dataclass
class Result:
    name: str
    title: str
    paper: str
    figure: object  # a matplotlib Figure
    tables: list = field(default_factory=list)
    published: list = field(default_factory=list)  # dicts: quantity, published, ours, verdict, why
    notes: list = field(default_factory=list)
    seconds: float = 0.0


@dataclass
class Settings:
    quick: bool = False
    seed: int = 0


# ----------------------------------------------------------------- helpers
def figure(ncols=1, w=3.6, h=3.0):
    """A row of ``ncols`` axes in the report's style: ``(fig, axes)`` with axes[0][j]."""
    matplotlib, plt = mpl()
    with matplotlib.rc_context(STYLE):
        return plt.subplots(1, ncols, figsize=(w * ncols + 0.4, h), squeeze=False)


def table(name, caption, rows, formats=None):
    """A Table whose display strings come from report.tables.fmt (one kind per column)."""
    formats = formats or {}
    disp = [
        {c: (v if isinstance(v, str) or c not in formats else fmt(v, formats[c])) for c, v in r.items()} for r in rows
    ]
    disp = [
        {c: (fmt(v) if isinstance(v, float) else ("–" if v is None else str(v))) for c, v in r.items()} for r in disp
    ]
    return Table(name, caption, pd.DataFrame(disp), pd.DataFrame(rows))


def published_table(res: Result):
    rows = [
        {
            "quantity": p["quantity"],
            "published": p["published"],
            "ours": p["ours"],
            "agrees": p["verdict"],
            "why / note": p.get("why", ""),
        }
        for p in res.published
    ]
    return table("published-vs-ours", f"{res.title}: the paper's numbers and claims beside ours", rows)


def sklearn_sparse_pca():
    """scikit-learn's SparsePCA class, or None: scikit-learn is an optional comparison (the bench extra)."""
    try:
        from sklearn.decomposition import SparsePCA  # here: optional, and 1 s to import

        return SparsePCA
    except ImportError:
        return None


def sklearn_at(X, k, seed, steps=10):
    """scikit-learn SparsePCA (1 component), α bracketed by doubling then bisected (geometric midpoints)
    for the largest support of at most k nonzeros; returns (unit weights, α, seconds of all fits)."""
    SparsePCA = sklearn_sparse_pca()
    t = 0.0

    def fit(a):
        nonlocal t
        t0 = time.perf_counter()
        with quiet():
            warnings.simplefilter("ignore")
            w = SparsePCA(n_components=1, alpha=a, random_state=seed, max_iter=200).fit(X).components_[0]
        t += time.perf_counter() - t0
        return w

    lo, hi, best = None, 1.0, None
    for _ in range(30):
        w = fit(hi)
        if np.count_nonzero(w) <= k:
            best = (w, hi) if np.count_nonzero(w) else None
            break
        lo, hi = hi, hi * 4
    if lo is None:
        lo = hi / 1e3
    for _ in range(steps):
        if best is not None and np.count_nonzero(best[0]) == k:
            break
        a = float(np.sqrt(lo * hi))
        w = fit(a)
        nnz = int(np.count_nonzero(w))
        if nnz > k:
            lo = a
        else:
            hi = a
            if nnz and (best is None or nnz > np.count_nonzero(best[0])):
                best = (w, a)
    if best is None:
        return None, None, t
    return best[0] / np.linalg.norm(best[0]), best[1], t


def path_values(P, ks, method, nonneg, seed, **options):
    """The components of ``method``'s path over ``ks``, solver warnings silenced."""
    with quiet():
        warnings.simplefilter("ignore")
        return fit_path(P, ks, method=method, nonneg=nonneg, seed=seed, **options)


def pct(x):
    return fmt(x, "percent")


# ----------------------------------------------------------- experiment 1
