"""``certpca fit``, ``certify`` and ``path``: parsing and mapping to :mod:`certpca.api` and the certificates."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import pandas as pd

from certpca import api
from certpca.certification import REGISTRY as BOUNDS
from certpca.certification import certify_vector, parse_bounds
from certpca.certification.certificate import DEFAULT_BUDGET
from certpca.certification.components import total_budget
from certpca.clock import progress_bar
from certpca.data.advice import preprocessing_advice
from certpca.data.annotation import label as feature_label
from certpca.data.chunked import ChunkedData
from certpca.data.loadings import read_loadings
from certpca.errors import InputError
from certpca.io import Outputs, open_data
from certpca.paths import fit_path, path_table
from certpca.solvers import DEFAULT_METHOD, solve
from certpca.validation import check_float, check_int, check_random_state, parse_grid

from .options import chunked_options, data_options, load_options, out_option

#: the help of ``--budget``, the same concept in fit and certify
RESTARTS_HELP = "random starts for EM: in nonnegative fits, and in signed auto fits up to 5000 features (default 10)"
BUDGET_HELP = (
    "seconds of estimated work (about as many CPU seconds; the same result on a busy machine) for all the "
    "command's certificates, every component and bound: cheapest first, a bound that would overrun is "
    "skipped or stopped with its best valid bound "
    f"(default {DEFAULT_BUDGET:g} with the default bounds, none with --bounds)"
)


def add_commands(sub) -> None:
    """Add ``fit``, ``certify`` and ``path`` to the subparsers ``sub``."""
    inputs = [data_options(), chunked_options()]
    fit = sub.add_parser(
        "fit",
        parents=inputs,
        help="fit sparse principal components",
        description="Fit sparse (or nonnegative sparse) principal components.",
    )
    fit.add_argument("--k", type=int, required=True, help="largest number of nonzero loadings per component")
    fit.add_argument("--nonneg", action="store_true", help="nonnegative loadings")
    fit.add_argument(
        "--components", dest="n_components", type=int, default=1, metavar="L", help="number of components (default 1)"
    )
    fit.add_argument(
        "--method", default=DEFAULT_METHOD, help=f"solver (see 'certpca solvers'; default {DEFAULT_METHOD})"
    )
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
    fit.add_argument("--restarts", type=int, default=10, help=RESTARTS_HELP)
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
        metavar="SECONDS",
        help=BUDGET_HELP,
    )
    out_option(fit, "write the loadings as CSV (features x components)")
    fit.add_argument("--scores", type=Path, metavar="FILE", help="write the scores as CSV (samples x components)")
    fit.add_argument("--force", action="store_true", help="overwrite existing output files (never an input)")
    fit.add_argument("--json", action="store_true", help="print one JSON object instead of the summary")
    fit.set_defaults(handler=_cmd_fit)

    cert = sub.add_parser(
        "certify",
        parents=inputs,
        help="certify how close a component is to optimal",
        description="Upper bounds on the best possible variance and the certified gap of a "
        "component: one from --loadings (any tool's), or certpca's own (the default fit's vector, "
        "replaced by any better one the bounds find).",
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
        metavar="J",
        help="which column of --loadings: a 1-based number or a column name (default 1)",
    )
    cert.add_argument(
        "--bounds",
        metavar="NAME,...",
        help="bounds to compute (default: all that apply; names: " + ", ".join(BOUNDS) + ")",
    )
    cert.add_argument(
        "--better",
        type=Path,
        metavar="FILE",
        help="with --loadings: write the better vector a bound found, if any, as a loadings CSV",
    )
    cert.add_argument("--force", action="store_true", help="overwrite an existing --better file (never an input)")
    cert.add_argument("--budget", type=float, metavar="SECONDS", help=BUDGET_HELP)
    cert.add_argument("--tol", type=float, default=1e-6, help="relative gap counted as optimal (default 1e-6)")
    cert.add_argument("--seed", type=int, default=0, help="seed of the solver's random starts (default 0)")
    cert.add_argument("--json", action="store_true", help="print one JSON object")
    cert.set_defaults(handler=_cmd_certify)

    pth = sub.add_parser(
        "path",
        parents=inputs,
        help="variance versus cardinality, optionally certified",
        description="The first component at every k of a grid, warm-started along the path.",
    )
    pth.add_argument(
        "--k",
        dest="ks",
        default="1:300:20",
        metavar="GRID",
        help="FROM:TO (10 values) or FROM:TO:COUNT, geometrically spaced, or k1,k2,... "
        "(default 1:300:20; capped at the number of features)",
    )
    pth.add_argument("--nonneg", action="store_true", help="nonnegative loadings")
    pth.add_argument(
        "--method", default=DEFAULT_METHOD, help=f"solver (see 'certpca solvers'; default {DEFAULT_METHOD})"
    )
    pth.add_argument(
        "--bounds",
        metavar="NAME,...",
        help="certify every point with these bounds (e.g. lambda1,dabe; default: no certificates)",
    )
    pth.add_argument("--seed", type=int, default=0, help="seed of every random choice (default 0)")
    pth.add_argument("--restarts", type=int, default=10, help=RESTARTS_HELP)
    pth.add_argument(
        "--choose",
        action="store_true",
        help="choose k on the grid by cross-validated reconstruction of held-out entries "
        "(Witten, Tibshirani & Hastie 2009) with the one-standard-error rule",
    )
    out_option(pth, "write the path table as CSV")
    pth.add_argument("--force", action="store_true", help="overwrite an existing --out file (never an input)")
    pth.add_argument("--json", action="store_true", help="print one JSON object")
    pth.set_defaults(handler=_cmd_path)


def _open(args: argparse.Namespace):
    """The data of fit, certify and path: in memory, or read in blocks (.zarr, --chunked)."""
    return open_data(args.data, chunked=args.chunked, scheduler=args.scheduler, **load_options(args))


def _advice(ds) -> list[str]:
    """The advice on the data's scale, computed before anything holds the covariance's factor (it reads the
    raw values once more)."""
    return [] if isinstance(ds, ChunkedData) else preprocessing_advice(ds)


def _data_lines(ds, advice: list[str]) -> None:
    """The start of every terminal summary: the data's shape and preprocessing, then any advice."""
    print(f"Data: {ds.summary_line()}")
    for note in advice:
        print(f"Note: {note}")


def _cmd_fit(args: argparse.Namespace) -> int:
    outputs = Outputs(force=args.force, inputs=[args.data, args.annotate])
    files = {"loadings": args.out, "scores": args.scores}
    for what, path in files.items():
        if path is not None:
            outputs.claim(path, what, flag="out" if what == "loadings" else "scores")
    check_float(args.min_angle, "min_angle", low=0, high=90)
    check_int(args.restarts, "restarts", low=0)
    if args.budget is not None:
        check_float(args.budget, "budget", low=0)
    check_random_state(args.seed)
    bounds = None if args.bounds is None else parse_bounds(args.bounds)
    if not args.certify and (bounds is not None or args.budget is not None):
        given = " and ".join(
            flag for flag, value in (("--bounds", bounds), ("--budget", args.budget)) if value is not None
        )
        raise InputError(f"--no-certify skips the certificates that {given} would shape; drop one or the other")
    ds = _open(args)
    advice = [] if args.json else _advice(ds)
    if args.scores is not None and ds.is_covariance:
        raise InputError("--scores needs samples, and a covariance matrix has none; drop --scores")
    fit = api.fit(
        ds,
        args.k,
        n_components=args.n_components,
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
    _data_lines(ds, advice)
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


def _own_component(problem, k, nonneg, seed):
    """certpca's own vector: the default method's (``certpca fit``'s) first component."""
    return solve(problem, k, method=DEFAULT_METHOD, nonneg=nonneg, rng=check_random_state(seed))


def _cmd_certify(args: argparse.Namespace) -> int:
    outputs = Outputs(force=args.force, inputs=[args.data, args.loadings])
    if args.better is not None:
        if args.loadings is None:
            raise InputError(
                "--better needs --loadings: certpca's own vector already takes any better one; "
                "write it with 'certpca fit --certify --out FILE'"
            )
        outputs.claim(args.better, "better vector", flag="better")
    if args.component is not None and args.loadings is None:
        raise InputError("--component picks a column of --loadings; give --loadings FILE or drop --component")
    bounds = None if args.bounds is None else parse_bounds(args.bounds)
    if args.budget is not None:
        check_float(args.budget, "budget", low=0)
    check_float(args.tol, "tol", low=0, high=1)
    check_random_state(args.seed)
    ds = _open(args)
    advice = [] if args.json else _advice(ds)
    problem = ds.problem()
    column = None
    if args.loadings is not None:
        w, column = read_loadings(
            args.loadings,
            problem.feature_ids,
            1 if args.component is None else args.component,
            k=args.k,
            nonneg=args.nonneg,
        )
        source = f"{args.loadings}:{column}"
    else:
        comp = _own_component(problem, args.k, args.nonneg, args.seed)
        w, source = comp.weights, f"certpca {comp.method}"
    with progress_bar(total_budget(bounds, args.budget)) as progress:
        cert = certify_vector(
            problem, w, args.k, args.nonneg, bounds=bounds, budget=args.budget, tol=args.tol, progress=progress
        )
    if args.loadings is None and cert.better is not None:  # its own vector: take the better one
        w, cert = cert.better.weights, cert.adopt()  # its note says so
    written = None
    if args.better is not None and cert.better is not None:
        better = pd.DataFrame({column: cert.better.weights}, index=pd.Index(problem.feature_ids, name="feature"))
        with outputs.writing():
            outputs.write(args.better, better.to_csv(float_format="%.17g"))
        written = str(args.better)
    if args.json:
        out = cert.to_dict()
        out.update({"data": ds.describe(), "vector": source, "support": [str(f) for f in problem.feature_ids[w != 0]]})
        if args.better is not None:
            out["better_file"] = written
        print(json.dumps(out, allow_nan=False))
    else:
        _data_lines(ds, advice)
        print(f"Vector: {source}, {int(np.count_nonzero(w))} nonzeros")
        print(cert)
        if args.better is not None:
            print(
                f"Better vector written to {written}"
                if written
                else f"No better vector was found; {args.better} was not written"
            )
    return 0


def _cmd_path(args: argparse.Namespace) -> int:
    outputs = Outputs(force=args.force, inputs=[args.data, args.annotate])
    if args.out is not None:
        outputs.claim(args.out, "path table", flag="out")
    bounds = None if args.bounds is None else parse_bounds(args.bounds)
    check_int(args.restarts, "restarts", low=0)
    check_random_state(args.seed)
    ds = _open(args)
    advice = [] if args.json else _advice(ds)
    problem = ds.problem()
    ks = parse_grid(args.ks, problem.dim)
    comps = fit_path(problem, ks, method=args.method, nonneg=args.nonneg, seed=args.seed, restarts=args.restarts)
    table = path_table(problem, comps, bounds=bounds)
    choice = None
    if args.choose:
        if isinstance(ds, ChunkedData) or ds.is_covariance:
            raise InputError("`choose` needs samples x features data held in memory (not a covariance or chunks)")
        choice = api.choose_k(ds, ks, nonneg=args.nonneg, method=args.method, seed=args.seed, restarts=args.restarts)
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
                    **(
                        {}
                        if choice is None
                        else {
                            "choice": {
                                "k": choice.k,
                                "k_min": choice.k_min,
                                "criterion": choice.criterion,
                                "curve": choice.curve.to_dict(orient="records"),
                            }
                        }
                    ),
                },
                allow_nan=False,
            )
        )
    else:
        kind = "Nonnegative sparse" if args.nonneg else "Sparse"
        _data_lines(ds, advice)
        print(f"{kind} PCA path by {args.method}; of_lambda1 = variance / λ1, pev = variance / total variance")
        print(table.to_string(index=False, float_format=lambda x: f"{x:.4g}"))
        if choice is not None:
            print(f"Chosen k = {choice.k} ({choice.criterion}; smallest error at k = {choice.k_min}):")
            print(choice.curve.to_string(index=False, float_format=lambda x: f"{x:.5g}"))
    return 0
