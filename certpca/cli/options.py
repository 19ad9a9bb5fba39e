"""What every subcommand shares: the parser class, the input options, former spellings, flag names.

Each option's ``dest`` is the name of the Python parameter it feeds, so a library message
about a parameter is said back in the command line's words by reading the parser's own
actions (:func:`flag_of`), with no map kept by hand.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from certpca.data import NA_OPTIONS
from certpca.errors import InputError


class Parser(argparse.ArgumentParser):
    """argparse with a one-line error and exit code 2 (no usage dump)."""

    def error(self, message):
        raise InputError(f"{message} (see '{self.prog} --help')")


class _FormerSpelling(argparse.Action):
    """An option's former spelling: hidden from the help, it stores into the option's ``dest`` and
    says on stderr that it goes in the next version."""

    def __init__(self, option_strings, dest, current: str = "", **kwargs):
        super().__init__(option_strings, dest, **kwargs)
        self.current = current

    def __call__(self, parser, namespace, values, option_string=None):
        print(
            f"certpca: warning: {option_string} is deprecated and will be removed in the next version; "
            f"use {self.current}",
            file=sys.stderr,
        )
        setattr(namespace, self.dest, values)


def former_spelling(parser: argparse.ArgumentParser, old: str, action: argparse.Action) -> None:
    """Accept ``old`` for ``action`` (one version only), hidden from ``--help``, with a warning."""
    parser.add_argument(
        old,
        dest=action.dest,
        type=action.type or str,  # argparse's None: the text as given
        metavar=action.metavar,
        action=_FormerSpelling,
        current=long_flag(action),
        default=argparse.SUPPRESS,
        help=argparse.SUPPRESS,
    )


def long_flag(action: argparse.Action) -> str:
    """An option's long spelling (``--out`` of ``-o/--out``)."""
    return max(action.option_strings, key=len)


def visible_options(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    """The options ``--help`` shows (former spellings are hidden)."""
    return [a for a in parser._actions if a.option_strings and a.help is not argparse.SUPPRESS]


def flag_of(param: str, parsers: list[argparse.ArgumentParser]) -> str | None:
    """The flag feeding Python parameter ``param`` (its ``dest``) in the first of ``parsers`` that has one."""
    for parser in parsers:
        for action in visible_options(parser):
            if action.dest == param:
                return long_flag(action)
    return None


def data_options() -> Parser:
    """The input options of every command that reads data (the keywords of :func:`certpca.io.load`)."""
    p = Parser(add_help=False)
    g = p.add_argument_group("input")
    g.add_argument(
        "data", help="a bundled data set name (certpca data list) or a CSV/TSV(.gz), parquet, npz or h5ad file"
    )
    g.add_argument("--transpose", action="store_true", help="the file has features as rows, samples as columns")
    g.add_argument("--covariance", action="store_true", help="the file is a covariance or correlation matrix")
    g.add_argument("--scale", action="store_true", help="scale features to unit variance (correlation PCA)")
    g.add_argument("--no-center", dest="center", action="store_false", help="do not centre the features")
    g.add_argument("--log2", type=float, metavar="FLOOR", help="take log2(max(x, FLOOR)) first (expression data)")
    g.add_argument("--na", choices=NA_OPTIONS, help="how to handle missing values")
    g.add_argument("--layer", metavar="NAME", help="an .h5ad file's layer to analyse (default X)")
    g.add_argument("--use-raw", action="store_true", help="analyse an .h5ad file's raw.X")
    g.add_argument(
        "--annotate",
        type=Path,
        metavar="FILE",
        help="CSV/TSV of feature id, symbol[, description]: gene symbols shown beside the ids",
    )
    return p


#: the dests of :func:`data_options` that :func:`certpca.io.load` takes as keywords
LOAD_OPTIONS = ("transpose", "covariance", "na", "center", "scale", "log2", "layer", "use_raw", "annotate", "labels")


def load_options(args: argparse.Namespace) -> dict:
    """The keywords of :func:`certpca.io.load` that the command line was given."""
    return {name: getattr(args, name) for name in LOAD_OPTIONS if hasattr(args, name)}


def chunked_options() -> Parser:
    """fit, certify and path read data beyond memory in blocks (:func:`certpca.io.open_data`)."""
    p = Parser(add_help=False)
    g = p.add_argument_group("data read in chunks (.zarr stores; .h5ad and parquet with --chunked)")
    g.add_argument(
        "--chunked",
        action="store_true",
        help="read an .h5ad file lazily, 10000 cells at a time (whole columns when D > N), "
        "or a parquet file or directory a row group at a time",
    )
    g.add_argument("--scheduler", metavar="ADDRESS", help="a dask.distributed scheduler (host:port) to read them on")
    return p


def labels_option(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--labels",
        metavar="FILE|COLUMN",
        help="class labels: a CSV sample,label, a column of the data file or an .h5ad obs column "
        "(default: the bundled labels)",
    )


def out_option(p: argparse.ArgumentParser, what: str, **kwargs) -> argparse.Action:
    """``-o/--out``: where a command writes (one name in every subcommand)."""
    return p.add_argument("-o", "--out", type=Path, metavar=kwargs.pop("metavar", "FILE"), help=what, **kwargs)
