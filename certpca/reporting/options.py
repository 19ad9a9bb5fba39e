"""Step 1 of a report: the user's options resolved into what will be computed.

Everything that can be wrong with the options is found here, before any fit
starts, so a bad flag costs nothing and writes nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

from certpca.certification import REGISTRY as BOUNDS
from certpca.certification import default_bounds, parse_bounds
from certpca.certification.schedule import first_runs
from certpca.data import Dataset, clustering_classes
from certpca.errors import InputError
from certpca.problem import Problem
from certpca.solvers import REGISTRY as SOLVERS
from certpca.validation import check_cardinality, check_float, check_int, parse_grid

#: methods run when none are named (those present in the registry)
#: ``auto`` (the default of ``certpca fit`` and ``certpca path``) among them, so the headline is never below what
#: ``certpca fit`` gives: it runs several solvers' starts and a swap search, and beats each single one at times
DEFAULT_METHODS = ("auto", "em", "threshold", "gpower-l1", "gpower-l0", "spannogram", "nspca", "exact")
#: registered methods left out of the default list, and why
NOT_DEFAULT = {
    "pca": "dense PCA, not sparse: its variance is λ1, shown in the data section",
}
#: methods left out of the path by default (all are still fitted and certified at k), and why
SLOW_ON_PATH = {
    "auto": "it runs several solvers and a swap search at every k (about 5-8 times em's path on leukemia and pbmc); "
    "add it with --path-method",
    "spannogram": "its exact rank-2 sweep costs about a second per k on wide data; add it with --path-method",
    "nspca": "each k needs its own search for the sparsity penalty β; add it with --path-method",
    "exact": "a branch and bound at every k; add it with --path-method",
}
#: the exact search is among the default methods up to this many features, with the allotment ``allot.head``
#: (estimated work): pitprops (D = 13) proves at once, LRS (D = 93) signed k = 5 to 40 in 35-267 nodes; on
#: CBCL (D = 361) screening lets it prove k = 10 in 3 CPU s, but not k = 30 or 50, which no bound proves yet
EXACT_IN_REPORT = 100
#: the path grid of ``certpca report`` when none is given: 8 geometric steps from 1 to 300 (and k)
DEFAULT_PATH = "1:300:8"
#: up to this many features the default path takes every k from 1 to D
EVERY_K_UP_TO = 50
#: subset sizes of the gene-selection evaluation, as in Sigg & Buhmann (2008), Fig. 4
GENE_SIZES = (10, 20, 30, 40, 50, 60, 70, 80, 100, 120, 150, 200)
#: the size at which the component is tested against the full data (Sigg & Buhmann's 70 genes)
GENE_K = 70
#: the solver of the nonnegative component of the gene-selection evaluation
GENE_METHOD = "em"
#: k-means initialisations per subset (Sigg & Buhmann use 100)
N_INIT = 100
#: halves of the samples the report's stability section refits on (complementary pairs)
STABILITY = 50
#: the report's budget when none is given (``--budget``): seconds of estimated work (certpca/clock.py ``Work``,
#: never a clock: the page does not depend on the machine's load) for every certificate and the band, split by
#: :func:`split_budget`.  60 gives each budgeted bound of the headline certificates 6 s, what dabe_sdp and the
#: threshold bound had before the report had one budget (pbmc k = 30: dabe_sdp about 220 Frank-Wolfe steps, 39.59;
#: leukemia k = 50 converges in 5 s; reports/bench/report.md)
BUDGET = 60.0
#: the bounds of a certificate that the budget allots work to: those that charge their steps to a ``Work``
#: (the sample-space SDPs' Frank-Wolfe steps, the threshold bound's rank-2 sweep, screening's passes, the exact
#: search's nodes); every other bound of a certificate is cheap, or runs to its end (docs/certification.md).
#: A bound that charges its steps and is not here runs within what the bound it continues left of its allotment
#: (``BoundSpec.continues``: threshold_search, threshold's), or without a limit (the matrix bound did: 369 s on pbmc)
BUDGETED_BOUNDS = ("dabe_sdp", "dabe_sdp_matrix", "threshold", "screening", "exact")
#: the headline certificates' share of the budget (the first component, each sign constraint); the rest goes to
#: the later components' certificates and the band, equally when both are computed
HEAD_SHARE = 0.5


@dataclass(frozen=True)
class Allotment:
    """The report's budget split by :func:`split_budget`, in seconds of estimated work: ``head`` for each run of a
    budgeted bound in a headline certificate, ``later`` in a later component's certificate, ``band`` for the
    band's costly bounds together."""

    total: float
    head: float
    later: float
    band: float


def split_budget(total: float, head_runs: int, later_runs: int, band: bool) -> Allotment:
    """The budget ``total`` split: ``HEAD_SHARE`` of it in equal allotments over the ``head_runs`` runs of budgeted
    bounds of the headline certificates; the rest to the ``later_runs`` runs of the later components'
    certificates and to the ``band`` (half each when both are computed).  A run that charges less than its
    allotment leaves the rest unspent, so the work charged never exceeds ``total`` (a bound checks its
    allotment between steps: at most one step over each)."""
    rest = total * (1 - HEAD_SHARE)
    later = rest / 2 if later_runs and band else rest if later_runs else 0.0
    return Allotment(
        total=total,
        head=total * HEAD_SHARE / max(head_runs, 1),
        later=later / later_runs if later_runs else 0.0,
        band=rest - later if band else 0.0,
    )


def budgeted_runs(names: Sequence[str], problem, nonneg: bool, reused: bool) -> int:
    """How many runs of budgeted bounds a certificate of the bounds ``names`` on ``problem`` computes: one each, a
    bound with a first run (``BoundSpec.probe``, where the certificate schedules one: :func:`first_runs`) two;
    for w ≥ 0 none of a sign-free bound the plain certificate ``reused`` hands over, and without it a second of
    each that has a signed twin (``certify_vector`` computes it)."""
    probed = first_runs(list(names), problem, nonneg)
    runs = 0
    for n in names:
        spec = BOUNDS[n]
        if n not in BUDGETED_BOUNDS or (nonneg and reused and spec.sign_free):
            continue
        twin = nonneg and not reused and not spec.sign_free and not spec.nonneg_only
        runs += 1 + (n in probed) + twin
    return runs


@dataclass(frozen=True)
class ReportOptions:
    """Every knob of a report, with its default: what :func:`certpca.report` takes as keywords.

    What is computed: ``k`` (the cardinality), ``methods`` (names or "a,b"; None: ``DEFAULT_METHODS``;
    "all"), ``nonneg_modes`` (the sign constraints fitted), ``components``, ``path`` (the grid of the
    variance–cardinality path, "" for none), ``path_methods``, ``seed``, ``bounds`` (of the certificate
    at k; None: what ``certpca certify`` runs for the problem's size), ``path_bounds`` (of the band;
    None: the certificate's, certpca/reporting/band.py), ``genes`` (the gene-selection evaluation; None:
    when the data carry class labels), ``gene_sizes``, ``gene_k``, ``n_init``, ``budget`` (seconds of estimated
    work for every certificate and the band, never a clock: the page does not depend on the load; split by
    :func:`split_budget`),
    ``stability`` (halves of the samples over which the selected features' stability is measured; 0: none),
    ``command`` (shown on the page), ``progress`` (a progress bar; None: on a terminal).

    Where it goes: ``output`` (the HTML file), ``tables`` (a folder for every table), ``force``
    (overwrite), ``labels`` and ``annotate`` (class labels and gene symbols for data given by name or
    path), ``timings`` (show wall-clock times), ``inputs`` (further files never to overwrite).
    """

    k: int
    methods: str | Sequence[str] | None = None
    nonneg_modes: Sequence[bool] = (False, True)
    components: int = 1
    path: str | None = DEFAULT_PATH
    path_methods: str | Sequence[str] | None = None
    seed: int = 0
    bounds: str | Sequence[str] | None = None
    path_bounds: str | Sequence[str] | None = None
    genes: bool | None = None
    gene_sizes: Sequence[int] = GENE_SIZES
    gene_k: int | None = None
    n_init: int = N_INIT
    budget: float = BUDGET
    stability: int = STABILITY
    command: str = ""
    progress: bool | None = None
    output: str | Path = "report.html"
    tables: str | Path | None = None
    force: bool = False
    labels: str | Path | None = None
    annotate: Any = None
    timings: bool = False
    inputs: Sequence[str | Path | None] = ()


@dataclass(frozen=True)
class Plan:
    """What a report computes, decided up front by :func:`resolve`; the computation only reads it."""

    k: int
    nonneg_modes: tuple[bool, ...]
    methods: tuple[str, ...]
    skipped: Mapping[str, str]  # method → why it is not fitted (in some sign constraint)
    components: int
    seed: int
    ks: tuple[int, ...]
    on_path: tuple[str, ...]
    path_skipped: Mapping[str, str]
    head_bounds: tuple[str, ...] | None  # None: the registry's default for the problem's size (headline_bounds)
    band_bounds: tuple[str, ...] | None  # None: the certificate's bounds (certpca/reporting/band.py)
    genes: bool
    gene_sizes: tuple[int, ...] = GENE_SIZES
    gene_k: int = GENE_K
    n_init: int = N_INIT
    allot: Allotment = Allotment(BUDGET, 0.0, 0.0, 0.0)  # the budget split (split_budget)
    stability: int = 0  # halves of the samples for the stability of the selected features (0: none)
    command: str = ""
    notes: tuple[str, ...] = ()  # what the data ruled out and why, for the page and terminal
    progress: bool | None = None

    def methods_for(self, nonneg: bool) -> list[str]:
        """The methods fitted under the sign constraint: those that can impose it (or need it)."""
        return [m for m in self.methods if (SOLVERS[m].nonneg if nonneg else SOLVERS[m].signed)]

    def options_for(self, method: str) -> dict:
        """The solver options the report sets: the method exact gets as much estimated work as one run of a
        budgeted bound in a headline certificate (``allot.head``; a fit, outside the certificates' budget), so
        the page does not depend on the load; it returns its best vector with its proven gap when it runs out."""
        return {"time_limit": self.allot.head} if method == "exact" else {}


def choose_methods(methods: str | Iterable[str] | None, nonneg_modes: Sequence[bool]) -> tuple[list[str], dict]:
    """The methods to run and, for each registered one left out, the reason."""
    if methods is None:
        chosen = [m for m in DEFAULT_METHODS if m in SOLVERS]
        skipped = {
            m: NOT_DEFAULT.get(m, "not in the default list; ask for it with --method " + m)
            for m in SOLVERS
            if m not in chosen
        }
    else:
        names = _names(methods)
        _all_alone(names, "methods", "every sparse method")
        if names == ["all"]:
            names = [m for m in SOLVERS if SOLVERS[m].sparse]
        _check_known(names, "methods")
        if not names:
            raise InputError("`methods` is empty; name at least one method (certpca solvers)")
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


def _names(spec: str | Iterable[str]) -> list[str]:
    names = [m.strip() for m in spec.split(",")] if isinstance(spec, str) else list(spec)
    return [m for m in names if m]


def _all_alone(names: list[str], param: str, meaning: str) -> None:
    """'all' is a whole list on its own: beside other names it is an InputError naming ``param``."""
    if "all" in names and names != ["all"]:
        raise InputError(f"`{param}` takes all alone ({meaning}) or a list of methods; drop all or the other names")


def _check_known(names: list[str], param: str) -> None:
    """Every name a registered solver, or an InputError naming ``param`` and the choices."""
    unknown = [m for m in names if m not in SOLVERS]
    if unknown:
        raise InputError(
            f"`{param}` names unknown method(s) {', '.join(unknown)}; "
            f"choose from {', '.join(SOLVERS)} (certpca solvers)"
        )


def _path_methods(chosen: list[str], path_methods: str | Iterable[str] | None) -> tuple[list[str], dict]:
    """The methods on the path and, for each left out, the reason."""
    if path_methods is None:
        return ([m for m in chosen if m not in SLOW_ON_PATH], {m: SLOW_ON_PATH[m] for m in chosen if m in SLOW_ON_PATH})
    names = [m.strip() for m in path_methods.split(",")] if isinstance(path_methods, str) else list(path_methods)
    _all_alone(names, "path_methods", "every method run")
    _check_known([m for m in names if m != "all"], "path_methods")
    on_path = chosen if names == ["all"] else [m for m in chosen if m in names]
    missing = [m for m in names if m != "all" and m not in chosen]
    if missing:
        raise InputError(
            f"`path_methods` {', '.join(missing)} are not among the methods run "
            f"({', '.join(chosen)}); add them to `methods`"
        )
    return on_path, {m: "not in --path-method" for m in chosen if m not in on_path}


def resolve(ds: Dataset, problem: Problem, options: ReportOptions) -> Plan:
    """Check every option against the data and its covariance ``problem`` and return the :class:`Plan`;
    raise InputError naming the fix."""
    o = options
    check_cardinality(o.k, problem.dim, "k")
    check_cardinality(o.components, problem.dim, "components")
    modes = tuple(bool(m) for m in o.nonneg_modes)
    chosen, skipped = choose_methods(o.methods, modes)
    if o.methods is None and "exact" in chosen and problem.dim > EXACT_IN_REPORT:
        chosen.remove("exact")
        skipped["exact"] = (
            f"its search rarely finishes in the report's allotment above {EXACT_IN_REPORT} features "
            f"(D = {problem.dim}); the certificate's screening and search still prove what they can; "
            "ask for it with --method exact"
        )
    for nonneg in modes:  # a method fitted under one sign constraint only says why not the other
        for m in chosen:
            if nonneg and not SOLVERS[m].nonneg:
                skipped.setdefault(m, "cannot impose nonnegativity (plain sparse fit only)")
            if not nonneg and not SOLVERS[m].signed:
                skipped.setdefault(m, "finds nonnegative components only (nonnegative fit only)")
    path = o.path
    if path == DEFAULT_PATH and problem.dim <= EVERY_K_UP_TO:
        path = ",".join(str(kk) for kk in range(1, problem.dim + 1))  # small problems: no k skipped
    ks = parse_grid(path, problem.dim, "path") if path else []
    if ks and o.k not in ks:
        ks = sorted({*ks, o.k})
    on_path, path_skipped = _path_methods(chosen, o.path_methods)
    if ks and not on_path:
        raise InputError("no method left for the path; name one with `path_methods` or give `path` ''")
    head_bounds = None if o.bounds is None else parse_bounds(o.bounds)
    band_bounds = None if o.path_bounds is None else parse_bounds(o.path_bounds, "path_bounds")
    if "pattern" in (head_bounds or []) or "pattern" in (band_bounds or []):
        raise InputError(
            "the report shares bounds between methods, so the support-specific 'pattern' "
            "bound cannot be used; certify one vector with 'certpca certify --bounds pattern'"
        )
    budget = check_float(o.budget, "budget", low=0.0)
    labelled = ds.labels is not None and not ds.is_covariance
    want_genes = labelled if o.genes is None else bool(o.genes)
    notes = []
    if want_genes and not labelled:
        raise InputError("gene selection needs class labels; give `labels=FILE|COLUMN`")
    why = clustering_classes(ds.labels) if want_genes else None
    if why and o.genes:
        raise InputError(f"gene selection cannot score clusterings: {why}")
    if why:
        want_genes = False
        notes.append(f"gene selection not run: {why}")
    # the default size is Sigg & Buhmann's 70 genes, or every feature of smaller data; a size asked for must fit
    gene_k = min(GENE_K, problem.dim) if o.gene_k is None else check_cardinality(o.gene_k, problem.dim, "gene_k")
    head_runs = later_runs = 0
    for nonneg in modes:
        names = certificate_bounds(problem, nonneg, head_bounds)
        head_runs += budgeted_runs(names, problem, nonneg, reused=False in modes)
        later_runs += budgeted_runs(names, problem, nonneg, reused=False) * (o.components - 1)
    return Plan(
        k=o.k,
        nonneg_modes=modes,
        methods=tuple(chosen),
        skipped=MappingProxyType(dict(sorted(skipped.items()))),
        components=o.components,
        seed=o.seed,
        ks=tuple(ks),
        on_path=tuple(on_path),
        path_skipped=MappingProxyType(path_skipped),
        head_bounds=None if head_bounds is None else tuple(head_bounds),
        band_bounds=None if band_bounds is None else tuple(band_bounds),
        genes=want_genes,
        gene_sizes=tuple(o.gene_sizes),
        gene_k=gene_k,
        n_init=o.n_init,
        allot=split_budget(budget, head_runs, later_runs, band=bool(ks)),
        stability=0 if ds.is_covariance or ds.n_samples is None else check_int(o.stability, "stability", low=0),
        command=o.command,
        notes=tuple(notes),
        progress=o.progress,
    )


def certificate_bounds(problem, nonneg: bool, named: Sequence[str] | None) -> list[str]:
    """The bounds of the report's certificates at k: those ``named`` that apply (:func:`applicable`), or when
    none are named :func:`headline_bounds`."""
    return headline_bounds(problem, nonneg) if named is None else applicable(named, problem, nonneg)


#: bounds of ``certpca certify``'s default that the report leaves out unless named: ``pattern`` depends on the
#: vector's support, which the report cannot share between methods; the matrix-multiplier bound gained nothing
#: within the report's allotments on its bundled jobs (leukemia ``--log2 20`` k = 50 and pbmc k = 30: dabe_sdp's
#: bound unchanged after 8.5 and 6.2 s) while its share of the budget was the threshold bound's (the README
#: job's nonnegative headline 93.39% → 90.97%, raw leukemia's band at k = 300 86.9% → 66.8%)
NOT_IN_REPORT = ("pattern", "dabe_sdp_matrix")


def headline_bounds(problem, nonneg: bool) -> list[str]:
    """The certificate's bounds when none are named: what ``certpca certify`` runs by default
    (:func:`certpca.certification.default_bounds`: by size, so exact and SDP bounds whenever the problem
    is small enough for them to be cheap) less ``NOT_IN_REPORT``."""
    return [n for n in default_bounds(problem, nonneg) if n not in NOT_IN_REPORT]


def applicable(names: Iterable[str], problem, nonneg: bool) -> list[str]:
    """The bounds of ``names`` that apply to the sign constraint and fit the problem's size."""
    return [
        n
        for n in names
        if n in BOUNDS
        and (nonneg or not BOUNDS[n].nonneg_only)
        and (BOUNDS[n].max_dim is None or problem.dim <= BOUNDS[n].max_dim)
    ]


__all__ = [
    "DEFAULT_METHODS",
    "DEFAULT_PATH",
    "EXACT_IN_REPORT",
    "GENE_K",
    "GENE_METHOD",
    "GENE_SIZES",
    "N_INIT",
    "Plan",
    "ReportOptions",
    "Allotment",
    "BUDGET",
    "BUDGETED_BOUNDS",
    "HEAD_SHARE",
    "applicable",
    "budgeted_runs",
    "certificate_bounds",
    "headline_bounds",
    "choose_methods",
    "resolve",
    "split_budget",
]
