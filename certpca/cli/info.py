"""``certpca data list``, ``solvers`` and ``reproduce``: what is bundled and registered, and the papers rerun."""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import textwrap
from pathlib import Path
from typing import Any

from certpca.datasets import table as datasets_table
from certpca.reproduce import EXPERIMENTS, check_out, parse_names, reproduce
from certpca.solvers import REGISTRY as SOLVERS

from .options import Parser, out_option


def add_commands(sub) -> None:
    """Add ``data list``, ``solvers`` and ``reproduce`` to the subparsers ``sub``."""
    data = sub.add_parser("data", help="the bundled data sets")
    data_sub = data.add_subparsers(dest="action", required=True, parser_class=Parser)
    lst = data_sub.add_parser("list", help="list the bundled data sets")
    lst.add_argument("--json", action="store_true", help="print JSON")
    lst.set_defaults(handler=_cmd_data_list)

    solvers = sub.add_parser("solvers", help="list the solvers and what each supports")
    solvers.add_argument("--json", action="store_true", help="print JSON")
    solvers.set_defaults(handler=_cmd_solvers)

    rep = sub.add_parser(
        "reproduce",
        help="rerun the published figures beside the published numbers",
        description="Rerun published experiments on the bundled data: figure (SVG, PNG), tables "
        "(Markdown, LaTeX, CSV) and index.html with the papers' numbers beside ours. "
        "Experiments: " + ", ".join(EXPERIMENTS),
    )
    rep.add_argument("experiments", nargs="*", metavar="EXPERIMENT", help="which to run (default: all)")
    out_option(rep, "folder (default reports/reproduce)", metavar="DIR", default=Path("reports/reproduce"))
    rep.add_argument("--quick", action="store_true", help="reduced grids (CI, about a minute)")
    rep.add_argument("--seed", type=int, default=0, help="seed of every random choice (default 0)")
    rep.add_argument("--force", action="store_true", help="write into a non-empty --out")
    rep.set_defaults(handler=_cmd_reproduce)


#: terminal listings wrap at this many columns
WIDTH = 100
#: the column where a listing's continuation lines start (after the name)
INDENT = 11


def _entry(first: str, *more: str) -> str:
    """One listing entry: ``first`` and each of ``more`` wrapped at WIDTH, continuation lines indented."""
    pad = " " * INDENT
    lines = textwrap.wrap(first, WIDTH, subsequent_indent=pad, break_on_hyphens=False)
    for part in more:
        lines += textwrap.wrap(part, WIDTH, initial_indent=pad, subsequent_indent=pad, break_on_hyphens=False)
    return "\n".join(lines)


def _cmd_data_list(args: argparse.Namespace) -> int:
    t = datasets_table()
    if args.json:
        print(t.to_json(orient="records"))
    else:
        for r in t.itertuples(index=False):
            print(_entry(f"{r.name:<{INDENT - 1}} {r.kind}, {r.shape}; classes: {r.labels or 'none'}", r.source))
    return 0


def _cmd_solvers(args: argparse.Namespace) -> int:
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
            print(_entry(f"{r['name']:<{INDENT - 1}} supports: {caps}; options: {opts}", r["reference"]))
    return 0


def _cmd_reproduce(args: argparse.Namespace) -> int:
    names = parse_names(args.experiments)
    check_out(args.out, args.force)
    cmd = " ".join(
        ["certpca reproduce", *names, "--out", shlex.quote(str(args.out)), "--seed", str(args.seed)]
        + (["--quick"] if args.quick else [])
        + (["--force"] if args.force else [])
    )
    results = reproduce(
        names,
        args.out,
        quick=args.quick,
        seed=args.seed,
        force=args.force,
        command=cmd,
        progress=lambda m: print(m, file=sys.stderr),
    )
    for r in results:
        for p in r.published:
            print(f"{r.name}: {p['quantity']}: published {p['published']}; ours {p['ours']} [{p['verdict']}]")
    print(f"Index written to {Path(args.out) / 'index.html'}")
    return 0
