"""Step 1 of a report: the user's options resolved into what will be computed.

Everything that can be wrong with the options is found here, before any fit
starts, so a bad flag costs nothing and writes nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from certpca.certification import REGISTRY as BOUNDS
from certpca.certification import default_bounds, parse_bounds
from certpca.data import Dataset, clustering_classes
from certpca.errors import InputError
from certpca.solvers import REGISTRY as SOLVERS
from certpca.validation import check_cardinality, check_float, parse_grid

#: methods run when none are named (those present in the registry)
DEFAULT_METHODS = ("em", "threshold", "gpower-l1", "gpower-l0", "spannogram", "nspca")
#: registered methods left out of the default list, and why
NOT_DEFAULT = {
    "pca": "dense PCA, not sparse: its variance is λ1, shown in the data section",
    "quasi": "quasi-orthogonal EM solves a QP per iteration; ask for it with --methods quasi",
}
#: methods left out of the path by default (all are still fitted and certified at k), and why
SLOW_ON_PATH = {
    "spannogram": "its exact rank-2 sweep costs about a second per k on wide data; add it with --path-methods",
    "nspca": "each k needs its own search for the sparsity penalty β; add it with --path-methods",
    "quasi": "one QP per iteration; add it with --path-methods",
}
#: bounds for the band along the path (cheap: O(D) and one eigenvalue problem, plus dABE, which is
#: computed once per k on the plain problem and shared by the nonnegative band, where it is valid too)
PATH_BOUNDS = ("trace", "lambda1", "dabe")
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
#: time limit of the sample-space SDP ``dabe_sdp`` in the certificates at k (its own default is 40 s): it
#: stops there with its best bound so far, and the page says so; the exact search keeps its own cap.
#: pbmc at k = 30: about 220 iterations, 39.59 (the former 40 s gave 39.70); leukemia at k = 50
#: converges in 5 s (reports/bench/report.md)
SDP_TIME = 6.0
#: the bound ``SDP_TIME`` limits
SDP_BOUND = "dabe_sdp"


@dataclass
class Plan:
    """What a report computes: the resolved options of :func:`resolve`."""

    k: int
    nonneg_modes: list[bool]
    methods: list[str]
    skipped: dict[str, str]
    components: int
    seed: int
    ks: list[int]
    on_path: list[str]
    path_skipped: dict[str, str]
    head_bounds: list[str] | None  # None: the registry's default for the problem's size (headline_bounds)
    band_bounds: list[str]
    genes: bool
    gene_sizes: Sequence[int] = GENE_SIZES
    gene_k: int = GENE_K
    n_init: int = N_INIT
    time_limit: float | None = SDP_TIME  # None: a time-limited bound uses its own default
    command: str = ""
    notes: list[str] = field(default_factory=list)  # what the data ruled out and why, for the page and terminal


def choose_methods(methods: str | Iterable[str] | None, nonneg_modes: Sequence[bool]) -> tuple[list[str], dict]:
    """The methods to run and, for each registered one left out, the reason."""
    if methods is None:
        chosen = [m for m in DEFAULT_METHODS if m in SOLVERS]
        skipped = {
            m: NOT_DEFAULT.get(m, "not in the default list; ask for it with --methods " + m)
            for m in SOLVERS
            if m not in chosen
        }
    else:
        names = _names(methods)
        if names == ["all"]:
            names = [m for m in SOLVERS if SOLVERS[m].sparse]
        unknown = [m for m in names if m not in SOLVERS]
        if unknown:
            raise InputError(
                f"unknown method(s) {', '.join(unknown)}; choose from {', '.join(SOLVERS)} (certpca solvers)"
            )
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


def _path_methods(chosen: list[str], path_methods: str | Iterable[str] | None) -> tuple[list[str], dict]:
    """The methods on the path and, for each left out, the reason."""
    if path_methods is None:
        return ([m for m in chosen if m not in SLOW_ON_PATH], {m: SLOW_ON_PATH[m] for m in chosen if m in SLOW_ON_PATH})
    names = [m.strip() for m in path_methods.split(",")] if isinstance(path_methods, str) else list(path_methods)
    on_path = chosen if names == ["all"] else [m for m in chosen if m in names]
    missing = [m for m in names if m != "all" and m not in chosen]
    if missing:
        raise InputError(
            f"`path_methods` {', '.join(missing)} are not among the methods run "
            f"({', '.join(chosen)}); add them to `methods`"
        )
    return on_path, {m: "not in --path-methods" for m in chosen if m not in on_path}


def resolve(
    ds: Dataset,
    *,
    k: int,
    methods=None,
    nonneg_modes: Sequence[bool] = (False, True),
    components: int = 1,
    path: str | None = DEFAULT_PATH,
    path_methods=None,
    seed: int = 0,
    bounds=None,
    path_bounds=None,
    genes: bool | None = None,
    gene_sizes: Sequence[int] = GENE_SIZES,
    gene_k: int | None = None,
    n_init: int = N_INIT,
    time_limit: float | None = SDP_TIME,
    command: str = "",
) -> Plan:
    """Check every option against the data and return the :class:`Plan`; raise InputError naming the fix."""
    problem = ds.problem()
    check_cardinality(k, problem.dim, "k")
    check_cardinality(components, problem.dim, "components")
    modes = [bool(m) for m in nonneg_modes]
    chosen, skipped = choose_methods(methods, modes)
    if path == DEFAULT_PATH and problem.dim <= EVERY_K_UP_TO:
        path = ",".join(str(kk) for kk in range(1, problem.dim + 1))  # small problems: no k skipped
    ks = parse_grid(path, problem.dim, "path") if path else []
    if ks and k not in ks:
        ks = sorted({*ks, k})
    on_path, path_skipped = _path_methods(chosen, path_methods)
    if ks and not on_path:
        raise InputError("no method left for the path; name one with `path_methods` or give `path` ''")
    head_bounds = parse_bounds(bounds) if bounds else None
    band_bounds = parse_bounds(path_bounds) if path_bounds else list(PATH_BOUNDS)
    if "pattern" in (head_bounds or []) or "pattern" in band_bounds:
        raise InputError(
            "the report shares bounds between methods, so the support-specific 'pattern' "
            "bound cannot be used; certify one vector with 'certpca certify --bounds pattern'"
        )
    if time_limit is not None:
        time_limit = check_float(time_limit, "time_limit", low=0.0)
    labelled = ds.labels is not None and not ds.is_covariance
    want_genes = labelled if genes is None else bool(genes)
    notes = []
    if want_genes and not labelled:
        raise InputError("gene selection needs class labels; give `labels=FILE|COLUMN`")
    why = clustering_classes(ds.labels) if want_genes else None
    if why and genes:
        raise InputError(f"gene selection cannot score clusterings: {why}")
    if why:
        want_genes = False
        notes.append(f"gene selection not run: {why}")
    # the default size is Sigg & Buhmann's 70 genes, or every feature of smaller data; a size asked for must fit
    gene_k = min(GENE_K, problem.dim) if gene_k is None else check_cardinality(gene_k, problem.dim, "gene_k")
    return Plan(
        k=k,
        nonneg_modes=modes,
        methods=chosen,
        skipped=skipped,
        components=components,
        seed=seed,
        ks=ks,
        on_path=on_path,
        path_skipped=path_skipped,
        head_bounds=head_bounds,
        band_bounds=band_bounds,
        genes=want_genes,
        gene_sizes=gene_sizes,
        gene_k=gene_k,
        n_init=n_init,
        time_limit=time_limit,
        command=command,
        notes=notes,
    )


def headline_bounds(problem, nonneg: bool) -> list[str]:
    """The certificate's bounds when none are named: what ``certpca certify`` runs by default
    (:func:`certpca.certification.default_bounds`: by size, so exact and SDP bounds whenever the problem
    is small enough for them to be cheap) less the support-specific ``pattern`` bound, which the
    report cannot share between methods."""
    return [n for n in default_bounds(problem, nonneg) if n != "pattern"]


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
    "GENE_K",
    "GENE_METHOD",
    "GENE_SIZES",
    "N_INIT",
    "PATH_BOUNDS",
    "Plan",
    "SDP_BOUND",
    "SDP_TIME",
    "applicable",
    "headline_bounds",
    "choose_methods",
    "resolve",
]
