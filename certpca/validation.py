"""Every argument check, once, in the manner of scikit-learn's ``utils.validation``.

Each check returns the value in its canonical type or raises
:class:`~certpca.errors.InputError` built by ``InputError.bad_argument``: the
message names the Python parameter and says what to give instead, and the
command line swaps the parameter's name for its flag.  Nothing is clipped
silently: a value out of range is an error, never quietly replaced.
"""
from __future__ import annotations

import math
import numbers
from collections.abc import Iterable

import numpy as np

from .errors import InputError


def check_int(value, param: str, *, low: int | None = None, high: int | None = None,
              why: str = "") -> int:
    """An integer in [low, high] (either end may be open); bools are not integers."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        if isinstance(value, numbers.Real) and float(value).is_integer():
            value = int(value)
        else:
            raise InputError.bad_argument(param, f"must be a whole number, got {value!r}")
    value = int(value)
    if (low is not None and value < low) or (high is not None and value > high):
        raise InputError.bad_argument(param, f"must be {_range(low, high)}{why}, got {value}")
    return value


def check_cardinality(k, dim: int, param: str = "k") -> int:
    """A cardinality 1 ≤ k ≤ dim (dim: the number of features of the problem)."""
    return check_int(k, param, low=1, high=dim, why=f" (the data have {dim} features)")


def check_float(value, param: str, *, low: float | None = None, high: float | None = None,
                low_open: bool = False) -> float:
    """A finite float in [low, high], or in (low, high] when ``low_open``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise InputError.bad_argument(param, f"must be a number, got {value!r}")
    value = float(value)
    if not math.isfinite(value):
        raise InputError.bad_argument(param, f"must be a finite number, got {value}")
    too_low = low is not None and (value <= low if low_open else value < low)
    if too_low or (high is not None and value > high):
        lo = f"more than {low:g}" if low_open else None
        raise InputError.bad_argument(param, f"must be {lo or _range(low, high)}"
                                      f"{f' and at most {high:g}' if lo and high is not None else ''}, "
                                      f"got {value:g}")
    return value


def check_choice(value, choices: Iterable[str], param: str) -> str:
    """One of ``choices`` (case-sensitive)."""
    options = list(choices)
    if value not in options:
        raise InputError.bad_argument(param, f"must be one of {', '.join(map(str, options))}, got {value!r}")
    return value


def check_random_state(seed, param: str = "seed") -> np.random.Generator:
    """A numpy Generator from a nonnegative integer seed, a Generator, or None (seed 0).

    None means the fixed seed 0, not fresh entropy: every result is reproducible.
    """
    if isinstance(seed, np.random.Generator):
        return seed
    if seed is None:
        return np.random.default_rng(0)
    return np.random.default_rng(check_int(seed, param, low=0))


def _range(low, high) -> str:
    if low is not None and high is not None:
        return f"between {_number(low)} and {_number(high)}"
    if low is not None:
        return f"at least {_number(low)}"
    return f"at most {_number(high)}"


def _number(x) -> str:
    return f"{x:g}" if isinstance(x, float) else str(x)
