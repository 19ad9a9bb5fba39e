"""``certpca stability``: how often each feature is selected when the fit is repeated on halves of the
samples (:func:`certpca.stability`), as a terminal summary, a CSV or one JSON object."""

from __future__ import annotations

import argparse
import json

from certpca import api
from certpca.errors import InputError
from certpca.io import Outputs, load
from certpca.stability_selection import THRESHOLD

from .options import data_options, load_options, out_option


def add_commands(sub) -> None:
    """Add ``stability`` to the subparsers ``sub``."""
    p = sub.add_parser(
        "stability",
        parents=[data_options()],
        help="how stable the selected features are over halves of the samples",
        description="Stability selection (Meinshausen & Buhlmann 2010) with complementary pairs of halves "
        "(Shah & Samworth 2013): each feature's selection frequency per component, and a bound on the "
        "expected number of features without signal among the frequently selected ones.",
    )
    p.add_argument("--k", type=int, required=True, help="largest number of nonzero loadings per component")
    p.add_argument("--nonneg", action="store_true", help="nonnegative loadings")
    p.add_argument("--components", dest="n_components", type=int, default=1, help="components (default 1)")
    p.add_argument("--method", default=None, help="solver (see 'certpca solvers'; default: fit's default)")
    p.add_argument(
        "--resamples", dest="n_subsamples", type=int, default=100, help="halves of the samples (default 100)"
    )
    p.add_argument("--fraction", type=float, default=0.5, help="share of the samples in each subsample (default 0.5)")
    p.add_argument(
        "--threshold", type=float, default=THRESHOLD, help=f"frequency counted as stable (default {THRESHOLD})"
    )
    p.add_argument("--seed", type=int, default=0, help="seed of the subsamples and the fits (default 0)")
    p.add_argument("--jobs", dest="n_jobs", type=int, help="processes (default: every core)")
    out_option(p, "write every feature's selection frequency per component as CSV")
    p.add_argument("--force", action="store_true", help="overwrite an existing --out file (never an input)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(handler=_cmd_stability)


def _cmd_stability(args: argparse.Namespace) -> int:
    outputs = Outputs(force=args.force, inputs=[args.data, args.annotate])
    if args.out is not None:
        outputs.claim(args.out, "frequency table", flag="out")
    ds = load(args.data, copy=False, **load_options(args))
    if ds.is_covariance:
        raise InputError("stability needs samples x features data: a covariance has no samples to resample")
    method = {} if args.method is None else {"method": args.method}
    result = api.stability(
        ds,
        args.k,
        n_subsamples=args.n_subsamples,
        fraction=args.fraction,
        threshold=args.threshold,
        seed=args.seed,
        n_jobs=args.n_jobs,
        n_components=args.n_components,
        nonneg=args.nonneg,
        **method,
    )
    if args.out is not None:
        with outputs.writing():
            outputs.write(args.out, result.frequencies.to_csv(index_label="feature", float_format="%.17g"))
    if args.json:
        print(json.dumps({"data": ds.describe(), **result.to_dict()}, allow_nan=False))
        return 0
    print(f"Data: {ds.summary_line()}")
    kind = "nonnegative sparse" if args.nonneg else "sparse"
    sampling = "complementary pairs of halves" if result.complementary else f"subsamples of {result.fraction:g}"
    print(f"Stability of the {kind} fit ({result.reference.options['method']}) over {result.n_subsamples} {sampling}")
    for i, k in enumerate(result.k, 1):
        table = result.ranked(i)
        stable = int(((table["frequency"] >= result.threshold) & table["selected"]).sum())
        bound = (
            "" if result.expected_false is None else f"; expected without signal ≤ {result.expected_false[i - 1]:.2f}"
        )
        print(f"PC{i}: {stable} of {k} selected features in ≥ {result.threshold:.0%} of the subsamples{bound}")
        print(table.head(k + 10).to_string(float_format=lambda x: f"{x:.3f}"))
    return 0
