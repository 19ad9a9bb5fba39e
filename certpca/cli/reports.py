"""``certpca report``, ``genes`` and ``table``: parsing and mapping to :mod:`certpca.reporting`."""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path

from certpca import api
from certpca.data import Dataset
from certpca.data.readers import not_a_file
from certpca.errors import InputError
from certpca.io import Outputs, load
from certpca.reporting.genes import gene_selection_run
from certpca.reporting.options import (
    BUDGET,
    BUDGETED_BOUNDS,
    DEFAULT_METHODS,
    GENE_K,
    GENE_SIZES,
    HEAD_SHARE,
    N_INIT,
    SLOW_ON_PATH,
    STABILITY,
)
from certpca.reporting.saved import ReportRun
from certpca.reporting.tables import fmt, mode_name, proven, table_files, tables_for
from certpca.validation import check_cardinality, parse_grid

from .options import data_options, former_spelling, labels_option, load_options, out_option, visible_options

#: the gene-selection sizes of report and genes when none are given, as --gene-sizes spells them
GENE_SIZES_SPEC = ",".join(map(str, GENE_SIZES))
GENE_SIZES_HELP = (
    "subset sizes of the gene-selection evaluation: n1,n2,... or FROM:TO[:COUNT] (COUNT geometric steps, "
    f"as --path; capped at the number of features; default {GENE_SIZES_SPEC})"
)
GENE_K_HELP = (
    f"size at which the component's support is tested against the full data (default {GENE_K}, "
    "or every feature when there are fewer)"
)


def add_commands(sub) -> None:
    """Add ``report``, ``genes`` and ``table`` to the subparsers ``sub``."""
    rep = sub.add_parser(
        "report",
        parents=[data_options()],
        help="write a self-contained HTML report",
        description="Fit every method, certify, trace the variance-cardinality path, evaluate "
        "gene selection when labels are known, and write one HTML page.",
    )
    rep.add_argument("--k", type=int, required=True, help="largest number of nonzero loadings per component")
    mode = rep.add_mutually_exclusive_group()
    mode.add_argument(
        "--nonneg",
        dest="modes",
        action="store_const",
        const="nonneg",
        help="only nonnegative sparse PCA (default: both plain and nonnegative)",
    )
    mode.add_argument("--plain", dest="modes", action="store_const", const="plain", help="only plain sparse PCA")
    rep.add_argument("--components", type=int, default=1, metavar="L", help="components per fit (default 1)")
    method = rep.add_argument(
        "--method",
        dest="methods",
        metavar="M,...",
        help=f"solvers (default: {', '.join(DEFAULT_METHODS)} when registered; 'all' for every sparse one)",
    )
    former_spelling(rep, "--methods", method)
    labels_option(rep)
    rep.add_argument(
        "--path",
        default="1:300:8",
        metavar="FROM:TO[:COUNT]",
        help="cardinality grid of the path (k is added): FROM:TO[:COUNT], COUNT (default 10) geometric steps, "
        "or k1,k2,...; '' for none (default 1:300:8, every k up to 50 features)",
    )
    path_method = rep.add_argument(
        "--path-method",
        dest="path_methods",
        metavar="M,...",
        help=f"solvers on the path (default: all run except {', '.join(SLOW_ON_PATH)}; 'all' for every one)",
    )
    former_spelling(rep, "--path-methods", path_method)
    rep.add_argument(
        "--bounds",
        metavar="NAME,...",
        help="bounds of the certificate at k (default: every "
        "vector-independent bound up to cost class 3 that fits the size)",
    )
    rep.add_argument(
        "--budget",
        type=float,
        default=BUDGET,
        metavar="SECONDS",
        help=f"seconds of estimated work for every certificate and the band (default {BUDGET:g}): "
        f"{100 * HEAD_SHARE:g}%% in equal allotments to the runs of {', '.join(BUDGETED_BOUNDS)} in the certificates "
        "at k (and to the method exact), the rest to the later components' certificates and the band; each bound "
        "keeps its best bound so far. The work is the steps the problem's size predicts for those seconds, never "
        "a clock, so the page is the same on a busy machine",
    )
    rep.add_argument(
        "--path-bounds",
        metavar="NAME,...",
        help="bounds of the band along the path (default: the certificate's, the costly ones within a budget)",
    )
    rep.add_argument(
        "--stability",
        type=int,
        default=STABILITY,
        metavar="N",
        help=f"halves of the samples for the section on the selected features' stability (default {STABILITY}; "
        "0: none)",
    )
    rep.add_argument("--gene-sizes", default=GENE_SIZES_SPEC, metavar="SIZES", help=GENE_SIZES_HELP)
    rep.add_argument("--gene-k", type=int, default=None, metavar="N", help=GENE_K_HELP)
    rep.add_argument(
        "--no-genes",
        dest="genes",
        action="store_false",
        default=None,
        help="skip the gene-selection evaluation even when labels are known",
    )
    rep.add_argument("--seed", type=int, default=0, help="seed of every random choice (default 0)")
    rep.add_argument(
        "--timings", action="store_true", help="show wall-clock times (then the report differs between runs)"
    )
    output = out_option(rep, "HTML file to write (default report.html)", dest="output", default=Path("report.html"))
    former_spelling(rep, "--output", output)
    rep.add_argument("--tables", type=Path, metavar="DIR", help="also write every table as LaTeX, Markdown, CSV")
    rep.add_argument("--force", action="store_true", help="overwrite existing files")
    rep.add_argument("--json", action="store_true", help="print the saved run (one JSON object) on stdout")
    rep.set_defaults(handler=_cmd_report)

    gen = sub.add_parser(
        "genes",
        parents=[data_options()],
        help="evaluate gene selection by clustering",
        description="Sigg & Buhmann (2008, §5.3): k-means Jaccard of the support of the first "
        "nonnegative sparse component, of the CE ranking and of the full data.",
    )
    labels_option(gen)
    gene_k = gen.add_argument("--gene-k", type=int, default=None, metavar="N", help=GENE_K_HELP)
    former_spelling(gen, "--k", gene_k)
    sizes = gen.add_argument(
        "--gene-sizes", default=GENE_SIZES_SPEC, metavar="SIZES", help=GENE_SIZES_HELP + "; --gene-k is added"
    )
    former_spelling(gen, "--sizes", sizes)
    gen.add_argument("--method", default="em", help="solver of the nonnegative component (default em)")
    gen.add_argument("--n-init", type=int, default=N_INIT, help=f"k-means initialisations (default {N_INIT})")
    gen.add_argument("--seed", type=int, default=0, help="seed (default 0)")
    gen.add_argument("--json", action="store_true", help="print one JSON object")
    gen.set_defaults(handler=_cmd_genes)

    tab = sub.add_parser(
        "table",
        help="write publication tables from saved JSON",
        description="LaTeX (booktabs), Markdown and CSV tables from the --json output of "
        "certpca report, fit, certify or path, without recomputing.",
    )
    tab.add_argument("json_file", type=Path, metavar="JSON", help="saved JSON ('-' for stdin)")
    tab.add_argument("--tables", type=Path, required=True, metavar="DIR", help="folder to write the tables to")
    tab.add_argument("--timings", action="store_true", help="include wall-clock times")
    tab.add_argument("--force", action="store_true", help="overwrite existing files")
    tab.set_defaults(handler=_cmd_table)


def _gene_sizes(spec: str, dim: int) -> list[int]:
    """The gene-selection sizes of ``--gene-sizes``: the one grid syntax of :func:`parse_grid`.

    ``FROM:TO[:STEP]`` meant an arithmetic step (default 10) in certpca 0.1.0; ``FROM:TO[:COUNT]`` means
    COUNT (default 10) geometric steps now, as ``--path`` and ``path --k``; a warning says so for one version.
    """
    if ":" in spec:
        print(
            f"certpca: warning: --gene-sizes {spec} means geometrically spaced sizes (FROM:TO[:COUNT], as "
            "--path); in certpca 0.1.0 it meant FROM:TO[:STEP]; give n1,n2,... for exact sizes",
            file=sys.stderr,
        )
    return parse_grid(spec, dim, "gene_sizes")


def _command(args: argparse.Namespace, name: str) -> str:
    """The command line rebuilt from the parsed options (defaults left out): the same however invoked."""
    words = ["certpca", name]
    for action in [a for a in args._parser._actions if not a.option_strings] + visible_options(args._parser):
        if action.dest in ("help", "_parser", "handler", "force", "json"):  # no effect on the page
            continue
        value = getattr(args, action.dest, None)
        flag = max(action.option_strings, key=len) if action.option_strings else None
        if flag is None:
            words.append(str(value))
        elif action.nargs == 0:
            if value == action.const and value != action.default:
                words.append(flag)
        elif value is not None and value != action.default:
            words += [flag, str(value)]
    return shlex.join(words)


# --------------------------------------------------------------- handlers
def _cmd_report(args: argparse.Namespace) -> int:
    modes = {"nonneg": (True,), "plain": (False,), None: (False, True)}[args.modes]
    ds = load(args.data, **load_options(args))
    run = api.report(
        ds,
        k=args.k,
        output=args.output,
        tables=args.tables,
        force=args.force,
        timings=args.timings,
        inputs=[args.data, args.labels, args.annotate],
        methods=args.methods,
        nonneg_modes=modes,
        components=args.components,
        path=args.path,
        path_methods=args.path_methods,
        seed=args.seed,
        bounds=args.bounds,
        budget=args.budget,
        path_bounds=args.path_bounds,
        genes=args.genes,
        gene_sizes=_gene_sizes(args.gene_sizes, ds.n_features),
        gene_k=args.gene_k,
        stability=args.stability,
        command=_command(args, "report"),
    )
    if args.json:
        print(run.to_json())
    else:
        _summary(run, ds, args)
    return 0


def _summary(run: ReportRun, ds: Dataset, args: argparse.Namespace) -> None:
    print(f"Data: {ds.summary_line()}")
    for nonneg in run.settings.nonneg:
        best = run.best_fit(nonneg)
        if best:
            c = best.certificate
            print(
                f"{mode_name(nonneg).capitalize()}, k = {run.settings.k}: best {fmt(c.value)} by "
                f"{best.method}; OPT <= {fmt(c.upper_bound)} ({c.winner}); certified "
                f"{fmt(c.certified_fraction, 'percent')}, {proven(c.optimal)}"
            )
    if run.genes:
        print("Gene selection: " + run.genes.conclusion)
    for advice in run.advice:
        print(f"Note: {advice}")
    print(f"Report written to {args.output}" + (f"; tables in {args.tables}" if args.tables else ""))


def _cmd_genes(args: argparse.Namespace) -> int:
    if args.n_init < 2:
        raise InputError.bad_argument("n_init", f"{args.n_init} is too small for a test; give at least 2 (default 100)")
    ds = load(args.data, **load_options(args))
    if ds.labels is None:
        raise InputError(f"{ds.name} has no class labels; give --labels FILE|COLUMN")
    k = min(GENE_K, ds.n_features) if args.gene_k is None else check_cardinality(args.gene_k, ds.n_features, "gene_k")
    sizes = _gene_sizes(args.gene_sizes, ds.n_features) if args.gene_sizes else []
    g = gene_selection_run(ds, sizes=sizes, featured=k, method=args.method, n_init=args.n_init, seed=args.seed)
    if args.json:
        print(g.to_json())
        return 0
    print(
        f"Gene selection on {ds.name} ({ds.n_samples} samples, {g.n_clusters} classes), "
        f"k-means x {g.n_init}, pair-counting Jaccard:"
    )
    for r in g.rows:
        print(f"  {r.selector:<34} {r.size:>6}  {fmt(r.mean, 'fraction')} ± {fmt(r.sd, 'fraction')}")
    print(g.conclusion)
    return 0


def _cmd_table(args: argparse.Namespace) -> int:
    stdin = str(args.json_file) == "-"
    source = "the standard input" if stdin else args.json_file
    if not stdin and not args.json_file.is_file():
        what = not_a_file(args.json_file)
        raise InputError(f"{source} {what}; give the saved --json output of report, fit or certify")
    try:
        obj = json.loads(sys.stdin.read() if stdin else args.json_file.read_bytes())
    except UnicodeDecodeError:
        raise InputError(
            f"{source} is not JSON (not UTF-8 text); give the --json output of certpca report, fit or certify"
        ) from None
    except json.JSONDecodeError as err:
        raise InputError(
            f"{source} is not JSON ({err.msg} at line {err.lineno}); "
            "give the --json output of certpca report, fit or certify"
        ) from None
    if not isinstance(obj, dict):
        raise InputError(f"{source} holds no JSON object; give the --json output of report, fit or certify")
    tables = tables_for(obj, timings=args.timings)
    files = table_files(tables)
    out = Outputs(force=args.force, inputs=[args.json_file])
    paths = out.claim_folder(args.tables, files, flag="tables")
    with out.writing():
        for path, content in zip(paths, files.values()):
            out.write(path, content)
    print(f"{len(tables)} table(s), {len(paths)} files written to {args.tables}")
    return 0
