"""The ``certpca`` command line: ``main(argv)`` returns the exit code.

Argument parsing only: every command loads through :mod:`certpca.io` and
computes through the library.  Bad input is one line on stderr
(``certpca: error: ...``) and exit code 2, with nothing written; warnings are
one line each (``certpca: warning: ...``); Ctrl-C exits with 130.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from . import api
from .certification import REGISTRY as BOUNDS
from .certification import certify_vector, parse_bounds
from .data.advice import preprocessing_advice
from .data.annotation import COLUMNS as ANNOTATION_COLUMNS
from .data.annotation import label as feature_label
from .data.chunked import ChunkedData, connect, open_h5ad, open_parquet, open_zarr
from .datasets import table as datasets_table
from .errors import InputError
from .io import Outputs
from .paths import fit_path, path_table
from .reporting.commands import add_commands as add_report_commands
from .reporting.commands import load_data
from .reproduce import add_commands as add_reproduce_commands
from .solvers import REGISTRY as SOLVERS
from .solvers import solve
from .validation import check_float, check_int, check_random_state, parse_grid
from .version import __version__

#: seconds per component after which ``certpca fit`` starts no new bound: the cheap bounds always
#: run, the strong ones (threshold split, sample-space SDP) only when they fit
FIT_BUDGET = 10.0

#: The flag of each library parameter, so a library message can speak the CLI's words.
FLAGS = {
    "k": "--k",
    "ks": "--k",
    "n_components": "--components",
    "components": "--components",
    "gene_k": "--gene-k",
    "method": "--method",
    "deflation": "--deflation",
    "min_angle": "--min-angle",
    "seed": "--seed",
    "restarts": "--restarts",
    "bounds": "--bounds",
    "budget": "--budget",
    "tol": "--tol",
    "threads": "--threads",
    "labels": "--labels",
    "na": "--na",
    "log2": "--log2",
    "nonneg": "--nonneg",
    "transpose": "--transpose",
    "covariance": "--covariance",
}


class _Parser(argparse.ArgumentParser):
    """argparse with a one-line error and exit code 2 (no usage dump)."""

    def error(self, message):
        raise InputError(f"{message} (see '{self.prog} --help')")


def _data_options() -> _Parser:
    p = _Parser(add_help=False)
    g = p.add_argument_group("input")
    g.add_argument(
        "data", help="a bundled data set name (certpca data list) or a CSV/TSV(.gz), parquet, npz or h5ad file"
    )
    g.add_argument("--transpose", action="store_true", help="the file has features as rows, samples as columns")
    g.add_argument("--covariance", action="store_true", help="the file is a covariance or correlation matrix")
    g.add_argument("--scale", action="store_true", help="scale features to unit variance (correlation PCA)")
    g.add_argument("--no-center", dest="center", action="store_false", help="do not centre the features")
    g.add_argument("--log2", type=float, metavar="FLOOR", help="take log2(max(x, FLOOR)) first (expression data)")
    g.add_argument("--na", choices=["drop-rows", "drop-cols", "mean"], help="how to handle missing values")
    g.add_argument("--layer", metavar="NAME", help="an .h5ad file's layer to analyse (default X)")
    g.add_argument("--use-raw", action="store_true", help="analyse an .h5ad file's raw.X")
    g.add_argument(
        "--annotate",
        type=Path,
        metavar="FILE",
        help="CSV/TSV of feature id, symbol[, description]: gene symbols shown beside the ids",
    )
    return p


def _chunked_options() -> _Parser:
    """fit, certify and path read data beyond memory in blocks (:func:`_load`)."""
    p = _Parser(add_help=False)
    g = p.add_argument_group("data read in chunks (.zarr stores; .h5ad and parquet with --chunked)")
    g.add_argument(
        "--chunked",
        action="store_true",
        help="read an .h5ad file lazily, 10000 cells at a time (whole columns when D > N), "
        "or a parquet file or directory a row group at a time",
    )
    g.add_argument("--scheduler", metavar="ADDRESS", help="a dask.distributed scheduler (host:port) to read them on")
    return p


def _build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="certpca", description="Sparse and nonnegative sparse PCA with certificates.")
    parser.add_argument("--version", action="version", version=f"certpca {__version__}")
    parser.add_argument("--debug", action="store_true", help="show the traceback of an internal error")
    parser.add_argument(
        "--threads",
        type=int,
        default=1,
        metavar="N",
        help="BLAS threads (default 1: the solvers' many small products slow down, "
        "20x under load, when threads contend)",
    )
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    fit = sub.add_parser(
        "fit",
        parents=[_data_options(), _chunked_options()],
        help="fit sparse principal components",
        description="Fit sparse (or nonnegative sparse) principal components.",
    )
    fit.add_argument("--k", type=int, required=True, help="largest number of nonzero loadings per component")
    fit.add_argument("--nonneg", action="store_true", help="nonnegative loadings")
    fit.add_argument("--components", type=int, default=1, metavar="L", help="number of components (default 1)")
    fit.add_argument("--method", default="em", help="solver (see 'certpca solvers'; default em)")
    fit.add_argument(
        "--deflation",
        default="projection",
        choices=["projection", "disjoint", "quasi", "joint"],
        help="how later components avoid earlier ones: projection (default), disjoint supports, "
        "quasi-orthogonal (nonnegative EM, see --min-angle) or joint (gpower-l1/l0, nspca)",
    )
    fit.add_argument(
        "--min-angle",
        type=float,
        default=85.0,
        metavar="DEG",
        help="smallest angle between quasi-orthogonal components (default 85)",
    )
    fit.add_argument("--seed", type=int, default=0, help="seed of every random choice (default 0)")
    fit.add_argument("--restarts", type=int, default=10, help="random starts for nonnegative EM (default 10)")
    fit.add_argument(
        "--no-renormalize",
        dest="renormalize",
        action="store_false",
        help="keep the solver's weights instead of refitting them on the support",
    )
    fit.add_argument(
        "--no-certify",
        dest="certify",
        action="store_false",
        help="skip the certificates (by default every component is certified on the problem it solved)",
    )
    fit.add_argument(
        "--bounds",
        metavar="NAME,...",
        help="bounds of the certificates (default: those 'certpca certify' chooses for the size)",
    )
    fit.add_argument(
        "--budget",
        type=float,
        default=FIT_BUDGET,
        metavar="SECONDS",
        help=f"per component, start no new bound after this time (default {FIT_BUDGET:g})",
    )
    fit.add_argument("--out", type=Path, metavar="FILE", help="write the loadings as CSV (features x components)")
    fit.add_argument("--scores", type=Path, metavar="FILE", help="write the scores as CSV (samples x components)")
    fit.add_argument("--force", action="store_true", help="overwrite existing output files (never an input)")
    fit.add_argument("--json", action="store_true", help="print one JSON object instead of the summary")
    fit.set_defaults(handler=_cmd_fit)

    cert = sub.add_parser(
        "certify",
        parents=[_data_options(), _chunked_options()],
        help="certify how close a component is to optimal",
        description="Upper bounds on the best possible variance and the certified gap of a "
        "component: one from --loadings (any tool's), or certpca's best.",
    )
    cert.add_argument("--k", type=int, required=True, help="cardinality: at most k nonzero loadings")
    cert.add_argument("--nonneg", action="store_true", help="nonnegative loadings")
    cert.add_argument(
        "--loadings",
        type=Path,
        metavar="FILE",
        help="CSV of loadings: feature ids, then one column per component (certpca fit --out)",
    )
    cert.add_argument(
        "--component",
        default="1",
        metavar="J",
        help="which column of --loadings: a 1-based number or a column name (default 1)",
    )
    cert.add_argument(
        "--bounds",
        metavar="NAME,...",
        help="bounds to compute (default: all that apply; names: " + ", ".join(BOUNDS) + ")",
    )
    cert.add_argument("--budget", type=float, metavar="SECONDS", help="start no new bound after this time")
    cert.add_argument("--tol", type=float, default=1e-6, help="relative gap counted as optimal (default 1e-6)")
    cert.add_argument("--seed", type=int, default=0, help="seed of the solver's random starts (default 0)")
    cert.add_argument("--json", action="store_true", help="print one JSON object")
    cert.set_defaults(handler=_cmd_certify)

    pth = sub.add_parser(
        "path",
        parents=[_data_options(), _chunked_options()],
        help="variance versus cardinality, optionally certified",
        description="The first component at every k of a grid, warm-started along the path.",
    )
    pth.add_argument(
        "--k",
        default="1:300:20",
        metavar="GRID",
        help="FROM:TO (10 values) or FROM:TO:COUNT, geometrically spaced, or k1,k2,... "
        "(default 1:300:20; capped at the number of features)",
    )
    pth.add_argument("--nonneg", action="store_true", help="nonnegative loadings")
    pth.add_argument("--method", default="em", help="solver (see 'certpca solvers'; default em)")
    pth.add_argument(
        "--bounds",
        metavar="NAME,...",
        help="certify every point with these bounds (e.g. lambda1,dabe; default: no certificates)",
    )
    pth.add_argument("--seed", type=int, default=0, help="seed of every random choice (default 0)")
    pth.add_argument("--restarts", type=int, default=10, help="random starts for nonnegative EM (default 10)")
    pth.add_argument("--out", type=Path, metavar="FILE", help="write the path table as CSV")
    pth.add_argument("--force", action="store_true", help="overwrite an existing --out file (never an input)")
    pth.add_argument("--json", action="store_true", help="print one JSON object")
    pth.set_defaults(handler=_cmd_path)

    data = sub.add_parser("data", help="the bundled data sets")
    data_sub = data.add_subparsers(dest="action", required=True, parser_class=_Parser)
    lst = data_sub.add_parser("list", help="list the bundled data sets")
    lst.add_argument("--json", action="store_true", help="print JSON")
    lst.set_defaults(handler=_cmd_data_list)

    solvers = sub.add_parser("solvers", help="list the solvers and what each supports")
    solvers.add_argument("--json", action="store_true", help="print JSON")
    solvers.set_defaults(handler=_cmd_solvers)

    add_report_commands(sub, _data_options)
    add_reproduce_commands(sub)
    return parser


def _data_lines(ds) -> None:
    """The start of every terminal summary: the data's shape and preprocessing, then any advice."""
    print(f"Data: {ds.summary_line()}")
    for note in [] if isinstance(ds, ChunkedData) else preprocessing_advice(ds):
        print(f"Note: {note}")


#: the data options data read in chunks (centring and --scale only; an .h5ad's matrix choice too) do not take
NOT_CHUNKED = ("transpose", "covariance", "log2", "na", "layer", "use_raw", "annotate")


def _load(args):
    """The data of fit, certify and path: a .zarr store, or an .h5ad or parquet file (or a directory of
    parquet files) with --chunked, read in
    blocks (of rows, or of whole columns when D > N; on the --scheduler cluster when given); anything
    else through the report's load_data."""
    path = str(args.data).rstrip("/")
    h5ad, zarr = path.endswith(".h5ad"), path.endswith(".zarr")
    parquet = not zarr and (path.endswith(".parquet") or Path(path).is_dir())
    if args.chunked and not (h5ad or parquet):
        raise InputError(
            "--chunked applies to .h5ad files and parquet files or directories "
            "(a .zarr store is always read in chunks); drop it"
        )
    if not (zarr or args.chunked):
        if args.scheduler is not None:
            raise InputError(
                "--scheduler applies to data read in chunks (.zarr, or .h5ad or parquet with --chunked); drop it"
            )
        return load_data(args)
    allowed = ("layer", "use_raw") if h5ad else ("transpose",) if parquet else ()
    given = [
        f"--{n.replace('_', '-')}" for n in NOT_CHUNKED if n not in allowed and getattr(args, n) not in (None, False)
    ]
    if given:
        raise InputError(
            f"{', '.join(given)} do(es) not apply to data read in chunks (centring and --scale only); drop it"
        )
    client = None if args.scheduler is None else connect(args.scheduler)
    if h5ad:
        return open_h5ad(
            args.data, layer=args.layer, use_raw=args.use_raw, center=args.center, scale=args.scale, client=client
        )
    if parquet:
        return open_parquet(args.data, transpose=args.transpose, center=args.center, scale=args.scale, client=client)
    return open_zarr(args.data, center=args.center, scale=args.scale, client=client)


def _cmd_fit(args) -> int:
    outputs = Outputs(force=args.force, inputs=[args.data, args.annotate])
    files = {"loadings": args.out, "scores": args.scores}
    for what, path in files.items():
        if path is not None:
            outputs.claim(path, what, flag="--out" if what == "loadings" else "--scores")
    check_float(args.min_angle, "min_angle", low=0, high=90)
    check_int(args.restarts, "restarts", low=0)
    check_float(args.budget, "budget", low=0)
    check_random_state(args.seed)
    bounds = parse_bounds(args.bounds) if args.bounds else None
    ds = _load(args)
    if args.scores is not None and ds.is_covariance:
        raise InputError("--scores needs samples, and a covariance matrix has none; drop --scores")
    fit = api.fit(
        ds,
        args.k,
        n_components=args.components,
        method=args.method,
        nonneg=args.nonneg,
        deflation=args.deflation,
        seed=args.seed,
        restarts=args.restarts,
        renormalize=args.renormalize,
        min_angle=args.min_angle,
    )
    if args.certify:
        api.certify(fit, bounds=bounds, budget=args.budget)
    with outputs.writing():
        if args.out is not None:
            loadings = fit.rotation if fit.annotation is None else fit.rotation.join(fit.annotation)
            outputs.write(args.out, loadings.rename_axis("feature").to_csv(float_format="%.17g"))
        if args.scores is not None and fit.x is not None:
            outputs.write(args.scores, fit.x.rename_axis("sample").to_csv(float_format="%.17g"))
    written = {what: str(path) for what, path in files.items() if path is not None}
    if args.json:
        print(json.dumps({**fit.to_dict(), "files": written}, allow_nan=False))
        return 0
    _data_lines(ds)
    summary = fit.summary()  # the importance table and certificates; print(fit) is R's prcomp print
    summary.notes = [note for note in summary.notes if not note.startswith("Data: ")]  # printed just above
    print(summary)
    print()
    for i, comp in enumerate(fit.components):
        top = comp.loadings[comp.weights != 0].abs().sort_values(ascending=False).index[:8]
        shown = ", ".join(f"{feature_label(f, fit.annotation)} {comp.loadings[f]:+.3f}" for f in top)
        more = f", ... ({comp.cardinality - len(top)} more)" if comp.cardinality > len(top) else ""
        print(f"PC{i + 1} largest loadings: {shown}{more}")
    for what, path in written.items():
        print(f"{what.capitalize()} written to {path}")
    return 0


def _read_loadings(path: Path, column: str, feature_ids) -> tuple[np.ndarray, str]:
    """One column of a loadings CSV aligned to the data's features (absent ids are zeros)."""
    if not path.is_file():
        raise InputError(f"loadings file {path} not found; give the CSV that 'certpca fit --out' writes")
    try:
        table = pd.read_csv(path, index_col=0)
    except (ValueError, pd.errors.ParserError, UnicodeDecodeError) as err:
        raise InputError(f"cannot read loadings file {path}: {str(err).splitlines()[0]}") from None
    table = table.drop(columns=[c for c in ANNOTATION_COLUMNS if c in table.columns])  # fit --annotate adds them
    if table.shape[1] == 0 or table.shape[0] == 0:
        raise InputError(
            f"loadings file {path} has no loading columns; expected feature ids then one column per component"
        )
    if column.isdigit() and column not in table.columns:
        j = int(column)
        if not 1 <= j <= table.shape[1]:
            raise InputError(f"--component {j} is out of range: {path} has {table.shape[1]} column(s)")
        name = str(table.columns[j - 1])
    elif column in table.columns:
        name = column
    else:
        shown = ", ".join(map(str, table.columns[:8]))
        raise InputError(f"--component '{column}' is not a column of {path}; columns: {shown}")
    series = pd.to_numeric(table[name], errors="coerce")
    if series.isna().any():
        bad = series.index[series.isna()][0]
        raise InputError(f"loading of feature '{bad}' in column '{name}' of {path} is not a number; fix the file")
    table.index = table.index.astype(str)
    if table.index.has_duplicates:
        dup = table.index[table.index.duplicated()][0]
        raise InputError(f"feature id '{dup}' appears twice in {path}; keep one row per feature")
    unknown = table.index.difference(pd.Index(feature_ids, dtype=object).astype(str))
    if len(unknown):
        raise InputError(
            f"{len(unknown)} feature id(s) of {path} are not in the data (e.g. '{unknown[0]}'); "
            "check that the loadings belong to this data set and its preprocessing"
        )
    w = series.reindex(pd.Index(feature_ids).astype(str), fill_value=0.0).to_numpy(float)
    return w, name


def _best_component(problem, k, nonneg, seed):
    """certpca's best vector: the better of EM and thresholding."""
    rng = check_random_state(seed)
    found = [solve(problem, k, method=m, nonneg=nonneg, rng=rng) for m in ("em", "threshold")]
    return max(found, key=lambda c: c.variance)


def _cmd_certify(args) -> int:
    bounds = parse_bounds(args.bounds) if args.bounds else None
    if args.budget is not None:
        check_float(args.budget, "budget", low=0)
    check_float(args.tol, "tol", low=0, high=1)
    check_random_state(args.seed)
    ds = _load(args)
    problem = ds.problem()
    if args.loadings is not None:
        w, source = _read_loadings(args.loadings, args.component, problem.feature_ids)
        source = f"{args.loadings}:{source}"
    else:
        comp = _best_component(problem, args.k, args.nonneg, args.seed)
        w, source = comp.weights, f"certpca {comp.method}"
    cert = certify_vector(problem, w, args.k, args.nonneg, bounds=bounds, budget=args.budget, tol=args.tol)
    if args.json:
        out = cert.to_dict()
        out.update({"data": ds.describe(), "vector": source, "support": [str(f) for f in problem.feature_ids[w != 0]]})
        print(json.dumps(out, allow_nan=False))
    else:
        _data_lines(ds)
        print(f"Vector: {source}, {int(np.count_nonzero(w))} nonzeros")
        print(cert)
    return 0


def _cmd_path(args) -> int:
    outputs = Outputs(force=args.force, inputs=[args.data, args.annotate])
    if args.out is not None:
        outputs.claim(args.out, "path table", flag="--out")
    bounds = parse_bounds(args.bounds) if args.bounds else None
    check_int(args.restarts, "restarts", low=0)
    check_random_state(args.seed)
    ds = _load(args)
    problem = ds.problem()
    ks = parse_grid(args.k, problem.dim)
    comps = fit_path(problem, ks, method=args.method, nonneg=args.nonneg, seed=args.seed, restarts=args.restarts)
    table = path_table(problem, comps, bounds=bounds)
    if args.out is not None:
        with outputs.writing():
            outputs.write(args.out, table.to_csv(index=False, float_format="%.17g"))
    if args.json:
        print(
            json.dumps(
                {
                    "data": ds.describe(),
                    "method": args.method,
                    "nonneg": args.nonneg,
                    "bounds": bounds,
                    "lambda1": float(problem.eigenvalues()[0]),
                    "points": table.to_dict(orient="records"),
                },
                allow_nan=False,
            )
        )
    else:
        kind = "Nonnegative sparse" if args.nonneg else "Sparse"
        _data_lines(ds)
        print(f"{kind} PCA path by {args.method}; of_lambda1 = variance / λ1, pev = variance / total variance")
        print(table.to_string(index=False, float_format=lambda x: f"{x:.4g}"))
    return 0


def _cmd_data_list(args) -> int:
    t = datasets_table()
    if args.json:
        print(t.to_json(orient="records"))
    else:
        print(t.to_string(index=False))
    return 0


def _cmd_solvers(args) -> int:
    rows: list[dict[str, Any]] = [
        {
            "name": s.name,
            "sparse": s.sparse,
            "nonneg": s.nonneg,
            "signed": s.signed,
            "joint": s.joint,
            "options": s.defaults,
            "reference": s.cite(),
        }
        for s in SOLVERS.values()
    ]
    if args.json:
        print(json.dumps(rows))
    else:
        for r in rows:
            caps = ", ".join(c for c in ("sparse", "nonneg", "signed", "joint") if r[c])
            opts = ", ".join(f"{k}={v}" for k, v in r["options"].items()) or "none"
            print(f"{r['name']:<10} supports: {caps}; options: {opts}\n{'':<10} {r['reference']}")
    return 0


def _one_line_warning(message, category, filename, lineno, file=None, line=None):
    print(f"certpca: warning: {message}", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit code (0 ok, 1 internal error, 2 bad input, 130 interrupted)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = _build_parser()
    with warnings.catch_warnings():
        warnings.showwarning = _one_line_warning
        try:
            args = parser.parse_args(argv)
            check_int(args.threads, "threads", low=1)
            with threadpool_limits(limits=args.threads):
                return args.handler(args)
        except InputError as err:
            message = err.renamed(FLAGS[err.param]) if err.param in FLAGS else str(err)
            print(f"certpca: error: {message}", file=sys.stderr)
            return 2
        except BrokenPipeError:  # e.g. piped into head: not an error of ours
            sys.stdout = open(os.devnull, "w")
            return 0
        except KeyboardInterrupt:
            print("certpca: interrupted", file=sys.stderr)
            return 130
        except Exception as err:  # last resort: a bug of ours, in one line unless --debug
            if "--debug" in argv:
                raise
            first = str(err).splitlines()[0] if str(err) else ""
            print(
                f"certpca: internal error: {type(err).__name__}: {first}; please report this with the "
                "command (--debug shows the traceback)",
                file=sys.stderr,
            )
            return 1


if __name__ == "__main__":
    sys.exit(main())
