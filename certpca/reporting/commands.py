"""The ``report``, ``genes`` and ``table`` subcommands (wired into certpca.cli by ``add_commands``)."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

from certpca.data import Dataset
from certpca.errors import InputError
from certpca.io import Outputs, load
from certpca.reporting.genes import gene_selection_run
from certpca.reporting.options import GENE_K, SDP_TIME, ReportOptions
from certpca.reporting.saved import ReportRun
from certpca.reporting.tables import fmt, mode_name, proven, table_files, tables_for
from certpca.reporting.write import write_report
from certpca.validation import check_cardinality


def add_commands(sub, data_options) -> None:
    """Add ``report``, ``genes`` and ``table`` to the subparsers ``sub``; ``data_options`` makes the input parent."""
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
    rep.add_argument(
        "--methods",
        metavar="M,...",
        help="solvers (default: em, threshold, gpower-l1, gpower-l0, "
        "spannogram when registered; 'all' for every sparse one)",
    )
    _labels(rep)
    rep.add_argument(
        "--path",
        default="1:300:8",
        metavar="FROM:TO[:N]",
        help="cardinality grid of the path: N (default 8, and k) geometric steps, or k1,k2,...; '' for none",
    )
    rep.add_argument(
        "--path-methods",
        metavar="M,...",
        help="methods on the path (default: all run except spannogram, nspca, quasi; 'all' for every one)",
    )
    rep.add_argument(
        "--bounds",
        metavar="NAME,...",
        help="bounds of the certificate at k (default: every "
        "vector-independent bound up to cost class 3 that fits the size)",
    )
    rep.add_argument(
        "--time-limit",
        type=float,
        default=SDP_TIME,
        metavar="SECONDS",
        help="time limit in seconds of the sample-space SDP bound dabe_sdp in the certificates at k "
        f"(default {SDP_TIME:g}; it keeps its best bound so far)",
    )
    rep.add_argument(
        "--path-bounds", metavar="NAME,...", help="bounds of the band along the path (default trace,lambda1,dabe)"
    )
    rep.add_argument(
        "--gene-sizes",
        default="10,20,30,40,50,60,70,80,100,120,150,200",
        metavar="N,...",
        help="subset sizes of the gene-selection evaluation (or FROM:TO:STEP; default 10,20,...,80,100,120,150,200)",
    )
    rep.add_argument(
        "--gene-k",
        type=int,
        default=None,
        metavar="N",
        help="size at which the component is tested against the full data (default 70, or every "
        "feature when there are fewer)",
    )
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
    rep.add_argument(
        "-o",
        "--output",
        type=Path,
        default=Path("report.html"),
        metavar="FILE",
        help="HTML file to write (default report.html)",
    )
    rep.add_argument("--tables", type=Path, metavar="DIR", help="also write every table as LaTeX, Markdown, CSV")
    rep.add_argument("--force", action="store_true", help="overwrite existing files")
    rep.add_argument("--json", action="store_true", help="print the saved run (one JSON object) on stdout")
    rep.set_defaults(handler=_cmd_report, _parser=rep)

    gen = sub.add_parser(
        "genes",
        parents=[data_options()],
        help="evaluate gene selection by clustering",
        description="Sigg & Buhmann (2008, §5.3): k-means Jaccard of the support of the first "
        "nonnegative sparse component, of the CE ranking and of the full data.",
    )
    _labels(gen)
    gen.add_argument(
        "--k",
        type=int,
        default=None,
        help="number of selected features to test (default 70, or every feature when there are fewer)",
    )
    gen.add_argument(
        "--sizes",
        default="10,20,30,40,50,60,70,80,100,120,150,200",
        metavar="N,...",
        help="sizes along the warm-started path, as in the report (or FROM:TO:STEP; --k is added)",
    )
    gen.add_argument("--method", default="em", help="solver of the nonnegative component (default em)")
    gen.add_argument("--n-init", type=int, default=100, help="k-means initialisations (default 100)")
    gen.add_argument("--seed", type=int, default=0, help="seed (default 0)")
    gen.add_argument("--json", action="store_true", help="print one JSON object")
    gen.set_defaults(handler=_cmd_genes)

    tab = sub.add_parser(
        "table",
        help="write publication tables from saved JSON",
        description="LaTeX (booktabs), Markdown and CSV tables from the --json output of "
        "certpca report, fit or certify, without recomputing.",
    )
    tab.add_argument("json_file", type=Path, metavar="JSON", help="saved JSON ('-' for stdin)")
    tab.add_argument("--tables", type=Path, required=True, metavar="DIR", help="folder to write the tables to")
    tab.add_argument("--timings", action="store_true", help="include wall-clock times")
    tab.add_argument("--force", action="store_true", help="overwrite existing files")
    tab.set_defaults(handler=_cmd_table)


def _labels(p) -> None:
    p.add_argument(
        "--labels",
        metavar="FILE|COLUMN",
        help="class labels: a CSV sample,label, a column of the data file or an .h5ad obs column "
        "(default: the bundled labels)",
    )


# ------------------------------------------------------------------ input
def load_data(args) -> Dataset:
    """The data as the common options say, with --labels from a file or a column of the data."""
    return load(
        args.data,
        transpose=args.transpose,
        covariance=args.covariance,
        na=args.na,
        center=args.center,
        scale=args.scale,
        log2=args.log2,
        labels=getattr(args, "labels", None),
        layer=args.layer,
        use_raw=args.use_raw,
        annotate=args.annotate,
    )


def _sizes(spec: str, dim: int) -> list[int]:
    try:
        if ":" in spec:
            parts = [int(p) for p in spec.split(":")]
            lo, hi, step = (parts + [10])[:3] if len(parts) == 2 else parts
            if lo < 1 or hi < lo or step < 1 or len(parts) > 3:
                raise ValueError
            sizes = list(range(lo, hi + 1, step))
        else:
            sizes = [int(p) for p in spec.split(",") if p.strip()]
            if not sizes or min(sizes) < 1:
                raise ValueError
    except ValueError:
        raise InputError(f"cannot read sizes {spec!r}; give FROM:TO:STEP (e.g. 10:200:10) or n1,n2,...") from None
    return sorted({min(s, dim) for s in sizes})


def _command(args, name: str) -> str:
    """The command line rebuilt from the parsed options (defaults left out): the same however invoked."""
    words = ["certpca", name]
    for action in args._parser._actions:
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
def _cmd_report(args) -> int:
    modes = {"nonneg": (True,), "plain": (False,), None: (False, True)}[args.modes]
    ds = load_data(args)
    options = ReportOptions(
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
        time_limit=args.time_limit,
        path_bounds=args.path_bounds,
        genes=args.genes,
        gene_sizes=_sizes(args.gene_sizes, ds.n_features),
        gene_k=args.gene_k,
        command=_command(args, "report"),
    )
    run = write_report(ds, options)
    if args.json:
        print(run.to_json())
    else:
        _summary(run, ds, args)
    return 0


def _summary(run: ReportRun, ds: Dataset, args) -> None:
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


def _cmd_genes(args) -> int:
    if args.n_init < 2:
        raise InputError(f"--n-init {args.n_init} is too small for a test; give at least 2 (default 100)")
    ds = load_data(args)
    if ds.labels is None:
        raise InputError(f"{ds.name} has no class labels; give --labels FILE|COLUMN")
    k = min(GENE_K, ds.n_features) if args.k is None else check_cardinality(args.k, ds.n_features, "k")
    sizes = _sizes(args.sizes, ds.n_features) if args.sizes else []
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
    for t in g.tests:
        print("  " + t["verdict"])
    print(g.conclusion)
    return 0


def _cmd_table(args) -> int:
    if str(args.json_file) == "-":
        text = sys.stdin.read()
    elif not args.json_file.is_file():
        raise InputError(f"{args.json_file} not found; give the saved --json output of report, fit or certify")
    else:
        text = args.json_file.read_text(encoding="utf-8")
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as err:
        raise InputError(
            f"{args.json_file} is not JSON ({err.msg} at line {err.lineno}); "
            "give the --json output of certpca report, fit or certify"
        ) from None
    if not isinstance(obj, dict):
        raise InputError(f"{args.json_file} holds no JSON object; give the --json output of report, fit or certify")
    tables = tables_for(obj, timings=args.timings)
    files = table_files(tables)
    out = Outputs(force=args.force, inputs=[args.json_file])
    paths = out.claim_folder(args.tables, files, flag="--tables")
    with out.writing():
        for path, content in zip(paths, files.values()):
            out.write(path, content)
    print(f"{len(tables)} table(s), {len(paths)} files written to {args.tables}")
    return 0
