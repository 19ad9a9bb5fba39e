"""The ``certpca`` command line: ``main(argv)`` returns the exit code.

Parsing and mapping to the library only, one module per group of subcommands:
:mod:`.fitting` (fit, certify, path), :mod:`.reports` (report, genes, table) and
:mod:`.resampling` (stability) and :mod:`.info` (data list, solvers, reproduce); :mod:`.options` holds what they share.
Every option's ``dest`` is the Python parameter it feeds, so a library message about
a parameter names its flag here.  Bad input is one line on stderr
(``certpca: error: ...``) and exit code 2, with nothing written; warnings are one
line each (``certpca: warning: ...``); Ctrl-C exits with 130.
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings

from threadpoolctl import threadpool_limits

from certpca.errors import InputError
from certpca.validation import check_int
from certpca.version import __version__

from . import fitting, info, reports, resampling
from .options import Parser, flag_of


def build_parser() -> argparse.ArgumentParser:
    """The ``certpca`` parser with every subcommand; each subparser is ``args._parser`` after parsing."""
    parser = Parser(prog="certpca", description="Sparse and nonnegative sparse PCA with certificates.")
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
    sub = parser.add_subparsers(dest="command", required=True, parser_class=Parser)
    fitting.add_commands(sub)
    reports.add_commands(sub)
    resampling.add_commands(sub)
    info.add_commands(sub)
    for command in _subparsers(parser):
        command.set_defaults(_parser=command)
    return parser


def _subparsers(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    """Every parser below ``parser`` that runs a command (``data list``, not ``data``)."""
    found = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in dict.fromkeys(action.choices.values()):
                found += _subparsers(child) or [child]
    return found


def _one_line_warning(message, category, filename, lineno, file=None, line=None):
    print(f"certpca: warning: {message}", file=sys.stderr)


def _first_line(err: BaseException) -> str:
    """The first line of an exception's message ('' when it has none)."""
    return str(err).splitlines()[0] if str(err) else ""


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit code (0 ok, 1 internal error, 2 bad input or not enough memory,
    130 interrupted)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser()
    parsers = [parser]
    with warnings.catch_warnings():
        warnings.showwarning = _one_line_warning
        try:
            args = parser.parse_args(argv)
            parsers.insert(0, args._parser)
            check_int(args.threads, "threads", low=1)
            with threadpool_limits(limits=args.threads):
                return args.handler(args)
        except InputError as err:
            print(f"certpca: error: {err.renamed(lambda param: flag_of(param, parsers))}", file=sys.stderr)
            return 2
        except MemoryError as err:  # an option or the data asked for more than the machine has: not a bug
            shrink = "give smaller options (--restarts, --components, --k, resamples) or fewer features"
            print(f"certpca: error: not enough memory ({_first_line(err) or 'no details'}); {shrink}", file=sys.stderr)
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
            print(
                f"certpca: internal error: {type(err).__name__}: {_first_line(err)}; please report this with the "
                "command (--debug shows the traceback)",
                file=sys.stderr,
            )
            return 1


if __name__ == "__main__":
    sys.exit(main())
