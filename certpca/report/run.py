"""The computation behind a report: one JSON-able dict, the *saved run*.

``compute_run`` gathers, for one data set and one cardinality k,

- the fits of every requested method, sparse and nonnegative (exactly what
  ``certpca fit DATA --k K --method M [--nonneg] --json`` prints, same seed);
- one certificate per fit: the upper bounds on OPT(k, nonneg) do not depend on
  the vector (the support-specific ``pattern`` bound is left out), so they are
  computed once per sign constraint on the best vector and shared; each
  method's value, lower bound and certified fraction are its own, exactly as
  ``certpca certify --loadings fit.csv --bounds ... --json`` gives them;
- the variance–cardinality path of every method on a coarse grid with the
  certified band (best value found .. best upper bound from cheap bounds);
- the gene-selection evaluation of Sigg & Buhmann (2008, §5.3) when the data
  carry class labels.

Everything in the dict is deterministic for fixed inputs and seed except the
``seconds`` fields, which the report shows only with ``timings=True``.
"""
from __future__ import annotations

import platform
import warnings
from contextlib import contextmanager
from dataclasses import replace

import numpy as np

from certpca.version import __version__
from certpca.certify import REGISTRY as BOUNDS
from certpca.certify import certify_vector, parse_bounds
from certpca.components import fit_components
from certpca.data import Dataset
from certpca.errors import InputError
from certpca.paths import fit_path
from certpca.validation import parse_grid
from certpca.results import jsonable
from certpca.solvers import REGISTRY as SOLVERS

FORMAT = "certpca-run/1"

#: methods run when none are named (those present in the registry)
DEFAULT_METHODS = ("em", "threshold", "gpower-l1", "gpower-l0", "spannogram")
#: registered methods left out of the default list, and why
NOT_DEFAULT = {
    "pca": "dense PCA, not sparse: its variance is λ1, shown in the data section",
    "nspca": "slow on wide data (one nonnegative fit of leukemia, 72 x 12582, took over 2 minutes); "
             "ask for it with --methods nspca",
    "quasi": "quasi-orthogonal EM solves a QP per iteration; ask for it with --methods quasi",
}
#: methods left out of the path by default (all are still fitted and certified at k), and why
SLOW_ON_PATH = {
    "spannogram": "its exact rank-2 sweep costs about a second per k on wide data (12 s for the leukemia "
                  "path); add it with --path-methods",
    "nspca": "one fit per k is slow on wide data; add it with --path-methods",
    "quasi": "one QP per iteration; add it with --path-methods",
}
#: bounds for the headline k: every vector-independent bound of cost class <= 3 that fits the size
HEADLINE_BOUNDS = ("trace", "lambda1", "gershgorin", "perron", "dabe", "dspca", "dnn", "spannogram", "split")
#: bounds for the band along the path (cheap: O(D) and one eigenvalue problem, plus dABE, which is
#: computed once per k on the plain problem and shared by the nonnegative band, where it is valid too)
PATH_BOUNDS = ("trace", "lambda1", "dabe")
ASTERIS = ("Asteris, M., Papailiopoulos, D. & Dimakis, A. G. (2014). Nonnegative sparse PCA with provable "
           "guarantees. Proceedings of the 31st International Conference on Machine Learning.")
GENE_REFS = (
    "Sigg, C. D. & Buhmann, J. M. (2008). Expectation-maximization for sparse and non-negative PCA. "
    "Proceedings of the 25th International Conference on Machine Learning.",
    "Varshavsky, R., Gottlieb, A., Linial, M. & Horn, D. (2006). Novel unsupervised feature filtering of "
    "biological data. Bioinformatics, 22(14), e507-e513.",
    "Ben-Hur, A., Elisseeff, A. & Guyon, I. (2002). A stability based method for discovering structure in "
    "clustered data. Pacific Symposium on Biocomputing, 7, 6-17.",
    "Armstrong, S. A. et al. (2002). MLL translocations specify a distinct gene expression profile that "
    "distinguishes a unique leukemia. Nature Genetics, 30, 41-47.",
)
GENE_SIZES = (10, 20, 30, 40, 50, 60, 70, 80, 100, 120, 150, 200)
GENE_K = 70
GENE_METHOD = "em"


# ------------------------------------------------------------------ helpers
def choose_methods(methods, nonneg_modes) -> tuple[list[str], dict]:
    """The methods to run and, for each registered one left out, the reason."""
    if methods is None:
        chosen = [m for m in DEFAULT_METHODS if m in SOLVERS]
        skipped = {m: NOT_DEFAULT.get(m, "not in the default list; ask for it with --methods " + m)
                   for m in SOLVERS if m not in chosen}
    else:
        names = [m.strip() for m in methods.split(",")] if isinstance(methods, str) else list(methods)
        names = [m for m in names if m]
        if names == ["all"]:
            names = [m for m in SOLVERS if SOLVERS[m].sparse]
        unknown = [m for m in names if m not in SOLVERS]
        if unknown:
            raise InputError(f"unknown method(s) {', '.join(unknown)}; choose from {', '.join(SOLVERS)} "
                             "(certpca solvers)")
        if not names:
            raise InputError("--methods is empty; name at least one method (certpca solvers)")
        chosen = list(dict.fromkeys(names))
        skipped = {}
    for m in list(chosen):
        s = SOLVERS[m]
        if not s.sparse:
            chosen.remove(m)
            skipped[m] = NOT_DEFAULT["pca"] if m == "pca" else "not a sparse method"
        elif all(nn and not s.nonneg for nn in nonneg_modes):
            chosen.remove(m)
            skipped[m] = "cannot impose nonnegativity"
    if not chosen:
        raise InputError("none of the methods applies to this problem; see 'certpca solvers'")
    return chosen, dict(sorted(skipped.items()))


def versions() -> dict:
    import jinja2
    import matplotlib
    import pandas
    import scipy
    return {"certpca": __version__, "python": platform.python_version(), "numpy": np.__version__,
            "scipy": scipy.__version__, "pandas": pandas.__version__, "matplotlib": matplotlib.__version__,
            "jinja2": jinja2.__version__}


def _certificate_for(shared, problem, w, k, nonneg):
    """The certificate of w from bounds already computed for (problem, k, nonneg).

    Follows :func:`certpca.certify.certify_vector` exactly: value of the
    normalised w, lower bound = max(value, feasible values the bounds found).
    """
    w = np.asarray(w, dtype=float)
    w = w / np.linalg.norm(w)
    value = problem.variance(w)
    lower = value
    for b in shared.bounds:
        fv = b.params.get("feasible_value") if isinstance(b.params, dict) else None
        if fv is not None and np.isfinite(fv) and not (b.name == "pattern" and nonneg):
            lower = max(lower, float(fv))
    return replace(shared, value=value, lower_bound=lower)


def _applicable(names, problem, nonneg) -> list[str]:
    return [n for n in names if n in BOUNDS and (nonneg or not BOUNDS[n].nonneg_only)
            and (BOUNDS[n].max_dim is None or problem.dim <= BOUNDS[n].max_dim)]


def _band_bound(problem, name, k, nonneg, cache):
    """One bound for the band.  A bound of the plain problem is valid for w >= 0 too, so the costly
    ones (cost class >= 3) are computed once per k, on the plain problem, and shared by both bands."""
    spec = BOUNDS[name]
    shared = spec.cost >= 3 and not spec.nonneg_only
    b = spec.func(problem, k, False if shared else nonneg)
    if shared:
        cache[(name, k)] = b
    return b


@contextmanager
def _quiet():
    """Solver warnings become notes in the run instead of lines on stderr."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield caught


def _progress(total: int, enabled: bool | None):
    try:
        from tqdm import tqdm
    except ImportError:  # pragma: no cover - tqdm is a dependency
        return None
    import sys
    disable = (not sys.stderr.isatty()) if enabled is None else not enabled
    return tqdm(total=total, disable=disable, desc="certpca report", unit="step", leave=False,
                bar_format="{desc}: {n_fmt}/{total_fmt} {postfix} [{elapsed}]")


class _Steps:
    """Progress bar over the steps, and the wall-clock seconds of each (kept in the run, not shown)."""

    def __init__(self, total, enabled):
        import time
        self.bar = _progress(total, enabled)
        self.clock = time.perf_counter
        self.last = self.clock()
        self.seconds: dict[str, float] = {}

    def __call__(self, label):
        now = self.clock()
        self.seconds[label] = round(now - self.last, 3)
        self.last = now
        if self.bar is not None:
            self.bar.set_postfix_str(label, refresh=False)
            self.bar.update(1)

    def close(self):
        if self.bar is not None:
            self.bar.close()


# --------------------------------------------------------------- the data
def describe_data(ds: Dataset, problem, n_eigen: int = 20) -> dict:
    ev = problem.eigenvalues()
    total = problem.trace
    d = ds.describe()
    d.update({
        "total_variance": float(total),
        "lambda1": float(ev[0]),
        "lambda1_share": float(ev[0] / total) if total > 0 else float("nan"),
        "eigenvalues": [float(x) for x in ev[:n_eigen]],
        "image_shape": list(ds.image_shape) if ds.image_shape else None,
    })
    if ds.labels is not None:
        counts = ds.labels.value_counts(sort=False)
        d["class_counts"] = {str(k): int(v) for k, v in sorted(counts.items(), key=lambda kv: str(kv[0]))}
        d["n_classes"] = int(counts.size)
    return d


# ------------------------------------------------------------ gene selection
def gene_selection_run(ds: Dataset, *, sizes=GENE_SIZES, featured: int = GENE_K, method: str = GENE_METHOD,
                       n_init: int = 100, seed: int = 0, alpha: float = 0.05, step=None) -> dict:
    """Sigg & Buhmann §5.3 on ``ds`` as prepared: k-means Jaccard of feature subsets.

    The nonnegative sparse components are the warm-started ``method`` path over
    ``sizes`` (plus ``featured``); the CE simple ranking is Varshavsky et al.'s.
    At ``featured`` features the component is compared with the full data and
    with the CE ranking by Welch's t-test and Mann–Whitney U over the runs.
    """
    from certpca import evaluate as ev

    if ds.labels is None or ds.is_covariance:
        raise InputError("gene selection needs labelled samples x features data; give --labels FILE|COLUMN")
    dim = ds.n_features
    sizes = sorted({min(int(s), dim) for s in [*sizes, featured] if int(s) >= 1})
    featured = min(int(featured), dim)
    problem = ds.problem()
    step = step or (lambda label: None)
    with _quiet() as caught:
        path = fit_path(problem, sizes, method=method, nonneg=True, seed=seed)
    step("gene selection: nonnegative sparse path")
    supports = {c.k: c.support for c in path}
    nspc = f"nonnegative sparse PC ({method})"
    ce = "CE simple ranking"
    ce_select = ev.ce_selector()
    ce_select(ds, 1)  # rank once (the slow part), then reuse
    step("gene selection: CE ranking")
    frame = ev.gene_selection(ds, sizes, selectors={nspc: lambda d, s: supports[s], ce: ce_select},
                              n_init=n_init, seed=seed)
    step("gene selection: k-means x Jaccard")
    rows = []
    for r in frame.itertuples(index=False):
        rows.append({"selector": r.selector, "size": int(r.size), "n_features": int(r.n_features),
                     "mean": float(r.mean), "sd": float(r.sd), "min": float(r.min), "max": float(r.max),
                     "scores": [float(x) for x in r.scores],
                     "features": None if r.selector == "full data" else [str(f) for f in r.features]})
    by = {(r["selector"], r["size"]): r for r in rows}
    full = rows[0]
    at = {"full data": full, nspc: by[(nspc, featured)], ce: by[(ce, featured)]}
    tests = [ev.compare(at[nspc]["scores"], full["scores"], names=(f"{nspc}, {featured} features", "full data"),
                        alpha=alpha),
             ev.compare(at[nspc]["scores"], at[ce]["scores"],
                        names=(f"{nspc}, {featured} features", f"CE ranking, {featured} features"), alpha=alpha)]
    return jsonable({
        "sizes": sizes, "featured": featured, "method": method, "n_init": n_init, "seed": seed,
        "alpha": alpha, "n_clusters": int(frame.attrs["n_clusters"]), "selectors": [nspc, ce],
        "preprocessing": dict(ds.preprocessing), "rows": rows, "tests": tests,
        "conclusion": _gene_conclusion(tests[0], dict(ds.preprocessing)),
        "notes": sorted({str(w.message) for w in caught}),
    })


def _gene_conclusion(test: dict, preprocessing: dict) -> str:
    from certpca.results import _describe_preprocessing
    prep = _describe_preprocessing(preprocessing)
    paper = ("Sigg & Buhmann (2008, Fig. 4) report the 70-gene nonnegative sparse component "
             "significantly better than the full data.")
    if test["significant"] and test["difference"] > 0:
        holds = "This holds here"
    elif test["significant"]:
        holds = "This does not hold here: the component scores significantly lower than the full data"
    else:
        holds = "This does not hold here: no significant difference from the full data"
    return f"{paper} {holds} (preprocessing: {prep}; {test['verdict']})."


# -------------------------------------------------------------- the run
def compute_run(ds: Dataset, *, k: int, methods=None, nonneg_modes=(False, True), components: int = 1,
                path="1:300:8", path_methods=None, seed: int = 0, bounds=None, path_bounds=None, genes: bool | None = None,
                gene_sizes=GENE_SIZES, gene_k: int = GENE_K, n_init: int = 100, command: str = "",
                progress: bool | None = None) -> dict:
    """Fits, certificates, path, band and gene selection for ``ds`` at cardinality ``k``."""
    problem = ds.problem()
    dim = problem.dim
    problem.check_cardinality(k)
    problem.check_cardinality(components, "--components")
    nonneg_modes = [bool(m) for m in nonneg_modes]
    chosen, skipped = choose_methods(methods, nonneg_modes)
    ks = parse_grid(path, dim) if path else []
    if ks and k not in ks:
        ks = sorted({*ks, k})
    if path_methods is None:
        on_path = [m for m in chosen if m not in SLOW_ON_PATH]
        path_skipped = {m: SLOW_ON_PATH[m] for m in chosen if m in SLOW_ON_PATH}
    else:
        names = [m.strip() for m in path_methods.split(",")] if isinstance(path_methods, str) else list(path_methods)
        on_path = chosen if names == ["all"] else [m for m in chosen if m in names]
        missing = [m for m in names if m != "all" and m not in chosen]
        if missing:
            raise InputError(f"--path-methods {', '.join(missing)} are not among the methods run "
                             f"({', '.join(chosen)}); add them to --methods")
        path_skipped = {m: "not in --path-methods" for m in chosen if m not in on_path}
    if ks and not on_path:
        raise InputError("no method left for the path; name one with --path-methods or give --path ''")
    head_bounds = parse_bounds(bounds) if bounds else list(HEADLINE_BOUNDS)
    band_bounds = parse_bounds(path_bounds) if path_bounds else list(PATH_BOUNDS)
    if "pattern" in head_bounds or "pattern" in band_bounds:
        raise InputError("the report shares bounds between methods, so the support-specific 'pattern' "
                         "bound cannot be used; certify one vector with 'certpca certify --bounds pattern'")
    want_genes = (ds.labels is not None and not ds.is_covariance) if genes is None else genes
    if want_genes and (ds.labels is None or ds.is_covariance):
        raise InputError("gene selection needs class labels; give --labels FILE|COLUMN")

    n_steps = len(nonneg_modes) * (len(chosen) + 1 + (len(on_path) + 1 if ks else 0)) + (3 if want_genes else 0) + 1
    step = _Steps(n_steps, progress)
    data = describe_data(ds, problem)
    step("spectrum")
    fits, notes, paths, bands, certs = [], [], [], [], {}
    band_cache: dict = {}
    try:
        for nonneg in nonneg_modes:
            mode_fits = []
            for m in chosen:
                if nonneg and not SOLVERS[m].nonneg:
                    skipped.setdefault(m, "cannot impose nonnegativity (plain sparse fit only)")
                    continue
                with _quiet() as caught:
                    try:
                        fit = fit_components(problem, k, n_components=components, method=m, nonneg=nonneg,
                                             seed=seed, data=ds.describe())
                    except InputError as err:
                        skipped.setdefault(m, f"{'nonnegative' if nonneg else 'sparse'}: {err}")
                        continue
                notes += [f"{m}{' (nonneg)' if nonneg else ''}: {w.message}" for w in caught]
                mode_fits.append(fit)
                step(f"fit {m}{' nonneg' if nonneg else ''}")
            if not mode_fits:
                continue
            best = max(mode_fits, key=lambda f: f.components[0].variance)
            names = _applicable(head_bounds, problem, nonneg)
            shared = certify_vector(problem, best.components[0].weights, k, nonneg, bounds=names)
            certs[nonneg] = {"bounds": names}
            step(f"certify k={k}{' nonneg' if nonneg else ''}")
            for fit in mode_fits:
                cert = _certificate_for(shared, problem, fit.components[0].weights, k, nonneg)
                fits.append({"method": fit.options["method"], "nonneg": nonneg, "fit": fit.to_dict(),
                             "certificate": cert.to_dict()})
            if ks:
                pbounds = _applicable(band_bounds, problem, nonneg)
                by_k: dict[int, list] = {kk: [] for kk in ks}
                for fit in mode_fits:
                    m = fit.options["method"]
                    if m not in on_path:
                        continue
                    with _quiet() as caught:
                        comps = fit_path(problem, ks, method=m, nonneg=nonneg, seed=seed)
                    notes += [f"path {m}{' (nonneg)' if nonneg else ''}: {w.message}" for w in caught]
                    paths.append({"method": m, "nonneg": nonneg, "points": [
                        {"k": c.k, "value": float(c.variance), "cardinality": c.cardinality,
                         "iterations": int(c.iterations), "seconds": float(c.seconds)} for c in comps]})
                    for c in comps:
                        by_k[c.k].append(c)
                    step(f"path {m}{' nonneg' if nonneg else ''}")
                points = []
                for kk in ks:
                    top = max(by_k[kk], key=lambda c: c.variance)
                    bs = [band_cache.get((name, kk)) or _band_bound(problem, name, kk, nonneg, band_cache)
                          for name in pbounds]
                    win = min(bs, key=lambda b: (b.value, b.name))
                    value = problem.variance(top.weights / np.linalg.norm(top.weights))
                    points.append({"k": kk, "best_value": float(value), "best_method": top.method,
                                   "upper_bound": float(win.value), "winner": win.name,
                                   "certified_fraction": float(value / win.value) if win.value > 0 else float("nan")})
                bands.append({"nonneg": nonneg, "bounds": pbounds, "points": points})
                step(f"band{' nonneg' if nonneg else ''}")
        gene = None
        if want_genes:
            gene = gene_selection_run(ds, sizes=gene_sizes, featured=gene_k, n_init=n_init, seed=seed, step=step)
    finally:
        step.close()

    refs = {SOLVERS[f["method"]].cite() for f in fits}
    used = {b["name"] for f in fits for b in f["certificate"]["bounds"]} | {n for b in bands for n in b["bounds"]}
    refs |= {BOUNDS[name].cite() for name in used}   # every bound that ran, cited beside its code
    if gene:
        refs |= set(GENE_REFS)
    if bands:
        refs.add(ASTERIS)
    settings = {"k": k, "nonneg": nonneg_modes, "methods": chosen, "components": components, "seed": seed,
                "path": ks, "path_methods": on_path, "bounds": certs and {("nonneg" if nn else "sparse"): v["bounds"] for nn, v in certs.items()},
                "path_bounds": band_bounds, "genes": bool(want_genes)}
    return jsonable({
        "format": FORMAT, "command": command, "versions": versions(), "settings": settings,
        "data": data, "methods_skipped": skipped, "path_skipped": path_skipped, "fits": fits, "paths": paths, "bands": bands,
        "genes": gene, "notes": sorted(set(notes)), "references": sorted(refs), "step_seconds": step.seconds,
    })


__all__ = ["compute_run", "gene_selection_run", "choose_methods", "FORMAT",
           "DEFAULT_METHODS", "HEADLINE_BOUNDS", "PATH_BOUNDS"]
