"""The computation behind a report: the typed *saved run* (:class:`~certpca.reporting.saved.ReportRun`).

:func:`compute_run` resolves the options (:func:`certpca.reporting.options.resolve`: check them, decide
what runs, into a frozen plan) and :func:`compute` follows the plan, one function a step:

1. :func:`describe_data` — the data section and the spectrum;
2. :func:`fit_and_certify` — the fits of every method at k, sparse and nonnegative (exactly what ``certpca fit
   DATA --k K --method M [--nonneg] --json`` prints, same seed; the nonnegative ones in a child process beside
   the plain certificate), and one certificate per fit: the upper bounds on OPT(k, nonneg) do not depend on the
   vector (the support-specific ``pattern`` bound is left out), so they are computed once per sign constraint on
   the best vector and shared; each method's value, lower bound and certified fraction are its own
   (:func:`certpca.certification.recertify`), bit for bit what ``certpca certify --loadings fit.csv --bounds ...
   --json`` gives them;
3. :func:`path_and_band` — the variance–cardinality path of every method on a coarse grid (traced beside the
   certificates, :mod:`certpca.reporting.modes`) with the certified band (best value found .. best upper bound
   from the certificate's bound families, :mod:`certpca.reporting.band`);
4. :func:`certpca.reporting.genes.gene_selection_run` — the gene-selection evaluation of Sigg & Buhmann (2008,
   §5.3) when the data carry class labels;
5. :func:`certpca.reporting.references.references` — the references of every method and bound that ran.

Everything is deterministic for fixed inputs and seed except the ``seconds``
fields, which the report shows only with ``timings=True``.
"""

from __future__ import annotations

import platform
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import numpy as np

from certpca.certification import REGISTRY as BOUNDS
from certpca.certification import Certificate, certify_vector, recertify
from certpca.certification.components import certify_components
from certpca.components import SEQUENTIAL, adopt_better
from certpca.data import Dataset
from certpca.data.advice import preprocessing_advice
from certpca.problem import Problem
from certpca.reporting.band import certified_bands
from certpca.reporting.beside import Handoff, NonnegBeside, handoff_for, started, streaming
from certpca.reporting.genes import gene_selection_run
from certpca.reporting.modes import ModePaths, attached, best_fit, fit_mode, fitted_beside, suffix, trace_paths
from certpca.reporting.options import (
    BUDGETED_BOUNDS,
    DEFAULT_METHODS,
    Plan,
    ReportOptions,
    applicable,
    certificate_bounds,
    choose_methods,
    resolve,
)
from certpca.reporting.references import references
from certpca.reporting.saved import (
    FORMAT,
    Band,
    DataSummary,
    MethodFit,
    MethodPath,
    ReportRun,
    SavedCertificate,
    SavedFit,
    Scores,
    Settings,
)
from certpca.reporting.side import Side, can_fork, cores, recorded
from certpca.reporting.stability import stability_records
from certpca.results import Component, Fit
from certpca.version import __version__

#: eigenvalues kept for the spectrum figure
N_EIGEN = 20
#: up to this many samples the run keeps the selected features' values for the report's heatmap
HEATMAP_SAMPLES = 5000


# ------------------------------------------------------------------ helpers
def versions() -> dict[str, str]:
    """Versions of certpca and the libraries whose output the report contains."""
    import jinja2  # here, with the others: only a report needs them, and matplotlib is slow to import
    import matplotlib
    import pandas
    import scipy

    return {
        "certpca": __version__,
        "python": platform.python_version(),
        "numpy": np.__version__,
        "scipy": scipy.__version__,
        "pandas": pandas.__version__,
        "matplotlib": matplotlib.__version__,
        "jinja2": jinja2.__version__,
    }


class Steps:
    """Progress bar over the steps, and the wall-clock seconds of each (kept in the run, not shown)."""

    def __init__(self, total: int, enabled: bool | None):
        from tqdm import tqdm  # here: only reports show a progress bar

        disable = (not sys.stderr.isatty()) if enabled is None else not enabled
        self.bar = tqdm(
            total=total,
            disable=disable,
            desc="certpca report",
            unit="step",
            leave=False,
            bar_format="{desc}: {n_fmt}/{total_fmt} {postfix} [{elapsed}]",
        )
        self.last = time.perf_counter()
        self.seconds: dict[str, float] = {}

    def __call__(self, label: str) -> None:
        now = time.perf_counter()
        self.seconds[label] = round(now - self.last, 3)
        self.last = now
        self.bar.set_postfix_str(label, refresh=False)
        self.bar.update(1)

    def record(self, label: str, seconds: float) -> None:
        """A step done elsewhere (a child process, reporting/side.py) that took ``seconds``."""
        self.seconds[label] = seconds
        self.bar.set_postfix_str(label, refresh=False)
        self.bar.update(1)

    def close(self) -> None:
        self.bar.close()


def describe_data(ds: Dataset, problem: Problem, n_eigen: int = N_EIGEN) -> DataSummary:
    """The data section: what the Dataset records about itself, plus the spectrum and classes."""
    ev = problem.eigenvalues()
    total = problem.trace
    d = ds.describe()
    counts = ds.labels.value_counts(sort=False) if ds.labels is not None else None
    return DataSummary(
        name=d["name"],
        source=d["source"],
        n_samples=d["n_samples"],
        n_features=d["n_features"],
        is_covariance=d["is_covariance"],
        labelled=d["labelled"],
        preprocessing=d["preprocessing"],
        total_variance=float(total),
        lambda1=float(ev[0]),
        lambda1_share=float(ev[0] / total) if total > 0 else float("nan"),
        eigenvalues=[float(x) for x in ev[:n_eigen]],
        image_shape=list(ds.image_shape) if ds.image_shape else None,
        class_counts=None
        if counts is None
        else {str(k): int(v) for k, v in sorted(counts.items(), key=lambda kv: str(kv[0]))},
        n_classes=None if counts is None else int(counts.size),
        units=list(ds.units),
    )


# --------------------------------------------------------- fit and certify
@dataclass
class FitsAtK:
    """The output of :func:`fit_and_certify`: fits and certificates of both problems, and the run's notes."""

    fits: list[MethodFit] = field(default_factory=list)
    raw: dict[bool, list[Fit]] = field(default_factory=dict)  # the Fit objects per sign constraint
    bounds: dict[bool, list[str]] = field(default_factory=dict)  # certificate bounds per sign constraint
    used_bounds: set[str] = field(default_factory=set)  # bounds computed (not skipped)
    shared: dict[bool, Certificate] = field(default_factory=dict)  # the vector-independent bounds per constraint
    notes: list[str] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)  # methods whose fit failed, and why
    # per sign constraint with fits, its paths and their steps' seconds when asked (traced beside the certificates)
    paths: dict[bool, Callable[[], tuple[ModePaths, list[tuple[str, float]]]]] = field(default_factory=dict)

    def adopt_if_better(self, problem: Problem, comp: Component, plan: Plan) -> None:
        """Add the path's component at k as a fit of its own (``METHOD (path)``) when it beats every fit
        at k, so the headline certifies the best vector the run saw; certified with the shared bounds."""
        nonneg = comp.nonneg
        best = max((f.value for f in self.fits if f.nonneg == nonneg), default=float("-inf"))
        if comp.k != plan.k or nonneg not in self.shared or not comp.variance > best * (1 + 1e-12):
            return
        if plan.components > 1:  # a single path vector cannot stand in for several components
            self.notes.append(
                f"{comp.method}'s warm-started path found a better first component at k = {plan.k} "
                f"({comp.variance:.6g} > {best:.6g}) than the {plan.components}-component fits"
            )
            return
        fit = Fit(
            components=[comp],
            additional_variance=np.array([comp.variance]),
            total_variance=problem.trace,
            eigenvalues=problem.eigenvalues()[:1],
            data={},
            seconds=comp.seconds,
            problem=problem,
            options={
                "method": comp.method,
                "k": plan.k,
                "nonneg": nonneg,
                "n_components": 1,
                "deflation": "projection",
                "seed": plan.seed,
                "source": "warm-started path",
            },
        )
        cert = recertify(self.shared[nonneg], problem, comp.weights)
        self.fits.append(MethodFit(f"{comp.method} (path)", nonneg, SavedFit.of(fit), SavedCertificate.of(cert)))
        self.notes.append(
            f"{comp.method}'s warm-started path found a better {'nonnegative ' if nonneg else ''}"
            f"component at k = {plan.k} ({comp.variance:.6g} > {best:.6g}); the results list it "
            f"as '{comp.method} (path)' and the headline certifies it"
        )


def fit_and_certify(
    ds: Dataset,
    problem: Problem,
    plan: Plan,
    step,
    fitted: Callable[[bool, Fit], None] | None = None,
    beside: Mapping[bool, Side] | None = None,
    fork: bool = False,
    handoff: Handoff | None = None,
) -> FitsAtK:
    """Every method at k on both problems, and one certificate per fit from bounds shared per problem;
    ``fitted(nonneg, best)`` is called with each problem's best fit before it is certified.

    A sign constraint in ``beside`` was fitted, and its path traced, by that :class:`Side`
    (:func:`fitted_beside`); the others are fitted here, and their path is traced beside the certificates
    (forked when ``fork``).  The certificates run here, in the plan's order: the nonnegative one takes the
    plain one's bounds, computed at once in a child when ``fork`` (reporting/beside.py, ``handoff``)."""
    out = FitsAtK()
    nonneg_beside: NonnegBeside | None = None  # the certificate of w >= 0, computed beside the plain one
    head: dict[str, Any] = {"time_limits": _allotments(plan.allot.head), "fixed_work": True}  # same page if busy
    for nonneg in plan.nonneg_modes:
        if handoff is not None and nonneg:  # no child certifying w >= 0 is forked after this: never read here
            handoff.forked()
        if beside and nonneg in beside:
            mode, paths, done = beside[nonneg].result()
            attached(mode, problem)
            for label, seconds in done:
                step.record(label, seconds)
            out.paths[nonneg] = partial(_traced, paths)
        else:
            mode = fit_mode(ds, problem, plan, nonneg, step)
            if plan.ks and mode.fits:  # the path needs nothing from the certificates: traced beside them
                trace = partial(trace_paths, problem, plan, nonneg, mode.on_path(plan))
                out.paths[nonneg] = Side(partial(recorded, trace), fork).result
        out.notes += mode.notes
        for m, reason in mode.skipped.items():
            out.skipped.setdefault(m, reason)
        mode_fits = mode.fits
        if not mode_fits:
            if nonneg and nonneg_beside is not None:
                nonneg_beside.cancel()
            continue
        best = best_fit(mode_fits)
        if fitted is not None:
            fitted(nonneg, best)
        names = certificate_bounds(problem, nonneg, plan.head_bounds)
        # a sign-free bound of the plain problem is the same number for w >= 0, and every other is the signed twin
        # that the certificate of w >= 0 compares its own bound with: computed once, by the plain certificate
        reuse = {b.name: b for b in out.shared[False].bounds} if nonneg and False in out.shared else None
        if nonneg and nonneg_beside is not None:
            shared = nonneg_beside.certificate(out.shared[False], best.components[0].weights)
        else:
            if not nonneg and fork and True in plan.nonneg_modes:  # the one of w >= 0 at once, beside (beside.py)
                nonneg_names = certificate_bounds(problem, True, plan.head_bounds)
                nonneg_beside = started(problem, plan.k, names, {"bounds": nonneg_names, **head}, handoff)
            with streaming(nonneg_beside) as settled:
                shared = certify_vector(
                    problem,
                    best.components[0].weights,
                    plan.k,
                    nonneg,
                    reuse=reuse,
                    settled=settled,
                    bounds=names,
                    **head,
                )
        if shared.better is not None and best.options["deflation"] in SEQUENTIAL:  # as certpca.certify(fit) does
            adopt_better(best, 0, shared.better)
            shared = shared.adopt()
            out.notes.append(f"{best.options['method']}{suffix(nonneg, ' (nonneg)')}: {shared.notes[-1]}")
            if best.order_note():  # the later components were fitted again after the adopted one
                out.notes.append(f"{best.options['method']}{suffix(nonneg, ' (nonneg)')}: {best.order_note()}")
        later = (
            certify_components(best, bounds=names, start=1, time_limits=_allotments(plan.allot.later), fixed_work=True)
            if plan.components > 1
            else []
        )
        computed = [b.name for b in shared.bounds if (reuse or {}).get(b.name) is not b]  # not reused as it was
        out.notes += _time_notes(shared, computed, plan.allot, nonneg)
        later_saved = [None if c is None else SavedCertificate.of(c) for c in later]
        out.bounds[nonneg] = names
        out.shared[nonneg] = shared
        out.used_bounds |= {n for n in names if n not in shared.skipped}
        out.raw[nonneg] = mode_fits
        step(f"certify k={plan.k}{suffix(nonneg)}")
        for fit in mode_fits:
            cert = shared if fit is best else recertify(shared, problem, fit.components[0].weights)
            out.fits.append(
                MethodFit(
                    method=fit.options["method"],
                    nonneg=nonneg,
                    fit=SavedFit.of(fit),
                    certificate=SavedCertificate.of(cert),
                    later_certificates=later_saved if fit is best else [],
                )
            )
    return out


def _traced(paths: ModePaths) -> tuple[ModePaths, list[tuple[str, float]]]:
    """Paths traced with the fits beside the certificates, whose steps are recorded with the fits'."""
    return paths, []


def _allotments(seconds: float) -> dict[str, float]:
    """Each budgeted bound's allotment of the report's budget (``BUDGETED_BOUNDS``, split by
    :func:`certpca.reporting.options.split_budget`): seconds of estimated work, not a clock (``fixed_work``):
    the bound runs the steps its size predicts for that many seconds, and keeps its best bound so far."""
    return dict.fromkeys(BUDGETED_BOUNDS, seconds)


def _cut(b) -> bool:
    """Whether a budgeted bound stopped at its allotment: the SDP's and the sweep's flag, screening stopped
    before its passes ended, or the exact search (screening's, or its own) stopped unproven."""
    p = b.params
    return bool(
        p.get("time_limit_reached") or p.get("screening_stopped") or (b.name == "exact" and not p.get("proven"))
    )


def _time_notes(cert: Certificate, names: list[str], allot, nonneg: bool) -> list[str]:
    """A note when the certificate computed a budgeted bound itself (``names``), or one continuing it, and it
    stopped at its allotment of the budget before converging."""
    budgeted = [b for b in cert.bounds if b.name in BUDGETED_BOUNDS or BOUNDS[b.name].continues in BUDGETED_BOUNDS]
    timed = [b.name for b in budgeted if b.name in names and _cut(b)]
    if not timed:
        return []
    return [
        f"certificate at k{suffix(nonneg, ' (nonnegative)')}: {', '.join(timed)} used its allotment of "
        f"{allot.head:.3g} s of estimated work (--budget {allot.total:g}) before converging; a larger budget can "
        "tighten the bound"
    ]


def sample_scores(ds: Dataset, problem: Problem, fits: list[MethodFit]) -> list[Scores]:
    """The samples on the best fit's components of each sign constraint and on ordinary PCA's first two
    (prepared data times loadings, as R's prcomp ``x``); none for a covariance."""
    if ds.is_covariance or ds.sample_ids is None:
        return []
    _, V = problem.eigh(2)
    V = V * np.where(V[np.abs(V).argmax(axis=0), np.arange(V.shape[1])] < 0, -1.0, 1.0)  # largest entry > 0
    pca = ds.project(V).T.tolist()
    labels = None if ds.labels is None else [str(v) for v in ds.labels.reindex(ds.sample_ids)]
    out = []
    position = {f: i for i, f in enumerate(ds.feature_ids)}
    for nonneg in sorted({f.nonneg for f in fits}):
        best = max((f for f in fits if f.nonneg == nonneg), key=lambda f: f.value)
        W = np.zeros((ds.n_features, len(best.components)))
        for j, comp in enumerate(best.components):
            for fid, w in comp.loadings.items():
                W[position[fid], j] = w
        chosen = (
            sorted({fid for comp in best.components for fid in comp.loadings}, key=position.__getitem__)
            if len(ds.sample_ids) <= HEATMAP_SAMPLES
            else []
        )
        values = ds.columns([position[f] for f in chosen]).T if chosen else np.empty((0, 0))
        out.append(
            Scores(
                nonneg=nonneg,
                method=best.method,
                sample_ids=[str(s) for s in ds.sample_ids],
                labels=labels,
                components=ds.project(W).T.tolist(),
                pca=pca,
                selected={f: v.tolist() for f, v in zip(chosen, values)},
            )
        )
    return out


# ---------------------------------------------------------- path and band
def path_and_band(
    problem: Problem, plan: Plan, fitted: FitsAtK, step, jobs: int | None = None
) -> tuple[list[MethodPath], list[Band], list[str]]:
    """The path of every method on the grid (traced by :func:`fit_and_certify`'s schedule) and, per sign
    constraint, the certified band (:func:`certpca.reporting.band.certified_bands` on ``jobs`` processes: the
    headline's bounds, equal to it at k); with the notes."""
    paths, notes = [], []
    tops: dict[bool, dict[int, tuple[float, str]]] = {}
    names: dict[bool, list[str]] = {}
    for nonneg in fitted.raw:
        traced, done = fitted.paths[nonneg]()
        for label, seconds in done:
            step.record(label, seconds)
        paths += traced.paths
        notes += traced.notes
        by_k = traced.by_k
        if by_k.get(plan.k):
            fitted.adopt_if_better(problem, max(by_k[plan.k], key=lambda c: c.variance), plan)
        tops[nonneg] = {}
        for kk in plan.ks:
            top = max(by_k[kk], key=lambda c: c.variance)
            tops[nonneg][kk] = (problem.variance(top.weights / np.linalg.norm(top.weights)), top.method)
        # at k the band is the headline certificate of the best fit (a better path vector is a fit by now)
        at_k = [f for f in fitted.fits if f.nonneg == nonneg]
        if plan.k in tops[nonneg] and at_k:
            head = max(at_k, key=lambda f: f.value)
            tops[nonneg][plan.k] = (float(head.certificate.value or 0.0), head.method)
        chosen = fitted.bounds.get(nonneg, []) if plan.band_bounds is None else plan.band_bounds
        names[nonneg] = applicable(chosen, problem, nonneg)
    heads = {} if plan.band_bounds is not None else dict(fitted.shared)
    points, band_notes = certified_bands(problem, tops, names, heads, plan.k, seconds=plan.allot.band, jobs=jobs)
    notes += band_notes
    bands = [Band(nonneg=nonneg, bounds=names[nonneg], points=points[nonneg]) for nonneg in tops]
    step("band")
    return paths, bands, notes


# --------------------------------------------------------------- the run
def _gene_options(plan: Plan) -> dict:
    """The keywords of :func:`gene_selection_run` from the plan."""
    return {"sizes": plan.gene_sizes, "featured": plan.gene_k, "n_init": plan.n_init, "seed": plan.seed}


def compute_run(ds: Dataset, options: ReportOptions, jobs: int | None = None) -> ReportRun:
    """Fits, certificates, path, band and gene selection for ``ds`` with the report's ``options``
    (:class:`~certpca.reporting.options.ReportOptions`; its output fields are not used here) on ``jobs``
    processes (None: the cores available, :func:`certpca.reporting.side.cores`)."""
    problem = ds.problem()
    return compute(ds, problem, resolve(ds, problem, options), jobs)


def compute(ds: Dataset, problem: Problem, plan: Plan, jobs: int | None = None) -> ReportRun:
    """The saved run of a resolved :class:`~certpca.reporting.options.Plan` on ``ds`` and its covariance
    ``problem``; the plan is only read.  With ``jobs`` > 1 processes (None: the cores available) the work
    that needs nothing from the certificates runs in child processes beside them (reporting/side.py), and the
    band's bounds on a pool; the run is the same for any ``jobs``."""
    modes = len(plan.nonneg_modes)
    path_steps = len(plan.on_path) if plan.ks else 0
    stable_steps = modes if plan.stability else 0
    step = Steps(
        modes * (len(plan.methods) + 1 + path_steps) + bool(plan.ks) + (3 if plan.genes else 0) + stable_steps + 1,
        plan.progress,
    )
    jobs = cores(jobs)
    fork = can_fork(jobs)
    try:
        # the gene selection, the stability refits and the fits and paths of every sign constraint but the
        # first need nothing from the certificates: each runs in a child process beside them
        # (reporting/side.py), started once its inputs exist; the band waits for the paths, nothing but the end
        # of the run for the genes (whose gene-set test runs in a child of its own) and the stability refits;
        # the nonnegative certificate runs beside the plain one (fit_and_certify, reporting/beside.py)
        genes = partial(gene_selection_run, ds, **_gene_options(plan), start=lambda work: Side(work, fork).result)
        gene_side = Side(lambda: recorded(genes), fork) if plan.genes else None
        # the stability refits of every sign constraint share their halves' covariances: one child refits them
        # all, started with the last sign constraint's best fit (or after the fits, when that one has none)
        stable_bests: dict[bool, Fit] = {}
        stable_side: Side | None = None

        def refit_stability() -> None:
            nonlocal stable_side
            if stable_bests and stable_side is None:
                refits = partial(stability_records, ds, list(stable_bests.values()), plan.stability, plan.seed)
                stable_side = Side(refits, fork)

        def fitted_best(nonneg: bool, best: Fit) -> None:
            if plan.stability:
                stable_bests[nonneg] = best
                if nonneg == plan.nonneg_modes[-1]:
                    refit_stability()

        data = describe_data(ds, problem)
        step("spectrum")
        handoff = handoff_for(problem, plan, fork)  # hands the child certifying w >= 0 its vector (beside.py)
        give = None if handoff is None else handoff.give
        beside = {nn: Side(partial(fitted_beside, ds, problem, plan, nn, give), fork) for nn in plan.nonneg_modes[1:]}
        fitted = fit_and_certify(ds, problem, plan, step, fitted_best, beside, fork, handoff)
        refit_stability()
        paths, bands, path_notes = path_and_band(problem, plan, fitted, step, jobs) if plan.ks else ([], [], [])
        stable = stable_side.result() if stable_side is not None else []
        for record in stable:
            step(f"stability{suffix(record.nonneg)}")
        gene = None
        if gene_side is not None:
            gene, done = gene_side.result()
            for label, seconds in done:
                step.record(label, seconds)
    finally:
        step.close()
    band_bounds = {n for b in bands for n in b.bounds}
    methods_run = sorted({f.fit.options["method"] for f in fitted.fits})
    settings = Settings(
        k=plan.k,
        nonneg=list(plan.nonneg_modes),
        methods=list(plan.methods),
        components=plan.components,
        seed=plan.seed,
        path=list(plan.ks),
        path_methods=list(plan.on_path),
        bounds={("nonneg" if nn else "sparse"): v for nn, v in fitted.bounds.items()},
        path_bounds=sorted({n for b in bands for n in b.bounds}, key=list(BOUNDS).index),
        genes=plan.genes,
        budget=plan.allot.total,
    )
    return ReportRun(
        command=plan.command,
        versions=versions(),
        settings=settings,
        data=data,
        methods_skipped=dict(sorted({**fitted.skipped, **plan.skipped}.items())),
        path_skipped=dict(plan.path_skipped),
        fits=fitted.fits,
        paths=paths,
        bands=bands,
        genes=gene,
        notes=sorted(set(fitted.notes + path_notes)),
        references=references(
            methods_run,
            sorted(fitted.used_bounds | band_bounds),
            band=bool(bands),
            genes=gene is not None,
            stable=bool(stable),
            source=ds.source,
        ),
        step_seconds=step.seconds,
        format=FORMAT,
        scores=sample_scores(ds, problem, fitted.fits),
        advice=preprocessing_advice(ds) + list(plan.notes),
        annotation=selected_annotation(ds, fitted.fits),
        stability=stable,
    )


def selected_annotation(ds: Dataset, fits: list[MethodFit]) -> dict[str, list[str]]:
    """Symbol and description of every feature some fit selected and the annotation names."""
    if ds.annotation is None:
        return {}
    selected = {fid for f in fits for comp in f.components for fid in comp.loadings}
    rows = ds.annotation.loc[ds.annotation.index.intersection(sorted(selected))]
    return {str(fid): [r.symbol, r.description] for fid, r in rows.iterrows() if r.symbol or r.description}


__all__ = [
    "DEFAULT_METHODS",
    "FORMAT",
    "choose_methods",
    "compute",
    "compute_run",
    "describe_data",
    "fit_and_certify",
    "gene_selection_run",
    "path_and_band",
    "sample_scores",
    "selected_annotation",
    "versions",
]
