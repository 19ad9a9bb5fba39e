"""``python -m certpca`` and the ``certpca`` console script.

The command line's modules load numpy, scipy and cvxpy (most of a second): they
are imported inside :func:`main` so that Ctrl-C during start-up is one line and
exit code 130 like Ctrl-C at any later moment, not a traceback.
"""

import sys


def main() -> int:
    try:
        from .cli import main as run  # late on purpose: see the module docstring
    except KeyboardInterrupt:
        print("certpca: interrupted", file=sys.stderr)
        return 130
    return run()


if __name__ == "__main__":
    sys.exit(main())
