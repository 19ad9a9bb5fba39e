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


def check_int(value, param: str, *, low: int | None = None, high: int | None = None, why: str = "") -> int:
    """An integer in [low, high] (either end may be open); bools are not integers."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        if isinstance(value, numbers.Real) and float(value).is_integer():
            value = int(float(value))
        else:
            raise InputError.bad_argument(param, f"must be a whole number, got {value!r}")
    value = int(value)
    if (low is not None and value < low) or (high is not None and value > high):
        raise InputError.bad_argument(param, f"is out of range: got {value}; choose a value {_range(low, high)}{why}")
    return value


def check_cardinality(k, dim: int, param: str = "k") -> int:
    """A cardinality 1 ≤ k ≤ dim (dim: the number of features of the problem)."""
    return check_int(k, param, low=1, high=dim, why=f" (the data have {dim} features)")


def check_float(
    value, param: str, *, low: float | None = None, high: float | None = None, low_open: bool = False
) -> float:
    """A finite float in [low, high], or in (low, high] when ``low_open``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise InputError.bad_argument(param, f"must be a number, got {value!r}")
    value = float(value)
    if not math.isfinite(value):
        raise InputError.bad_argument(param, f"must be a finite number, got {value}")
    too_low = low is not None and (value <= low if low_open else value < low)
    if too_low or (high is not None and value > high):
        lo = f"> {low:g}" if low_open else None
        wanted = (lo + (f" and <= {high:g}" if high is not None else "")) if lo else _range(low, high)
        raise InputError.bad_argument(param, f"is out of range: got {value:g}; choose a value {wanted}")
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
        return f"from {_number(low)} to {_number(high)}"
    if low is not None:
        return f">= {_number(low)}"
    return f"<= {_number(high)}"


def _number(x) -> str:
    return f"{x:g}" if isinstance(x, float) else str(x)


def parse_grid(spec, dim: int, param: str = "ks", *, count: int = 10) -> list[int]:
    """A cardinality grid: a list of ints, ``"k1,k2,..."``, or ``"FROM:TO[:COUNT]"``.

    ``FROM:TO:COUNT`` means COUNT geometrically spaced integers from FROM to TO
    (``count`` of them when COUNT is left out), the spacing a variance–cardinality
    path needs: dense at small k, where the variance changes fastest.  Values
    above ``dim`` are capped at ``dim`` (a grid is a request for "up to"), which
    the returned list shows; everything else out of range is an error.
    """
    if not isinstance(spec, str):
        values = [check_int(v, param, low=1) for v in spec]
    elif ":" in spec:
        values = _geometric(spec, param, count)
    else:
        try:
            values = [int(p) for p in spec.split(",") if p.strip()]
        except ValueError:
            raise InputError.bad_argument(
                param, f"cannot be read from {spec!r}; give k1,k2,... or FROM:TO[:COUNT] with whole numbers"
            ) from None
        values = [check_int(v, param, low=1) for v in values]
    if not values:
        raise InputError.bad_argument(param, f"is empty ({spec!r}); give k1,k2,... or FROM:TO[:COUNT]")
    return sorted({min(v, dim) for v in values})


def _geometric(spec: str, param: str, count: int) -> list[int]:
    parts = spec.split(":")
    try:
        numbers_ = [int(p) for p in parts]
    except ValueError:
        numbers_ = []
    if len(parts) not in (2, 3) or len(numbers_) != len(parts):
        raise InputError.bad_argument(
            param, f"cannot be read from {spec!r}; give FROM:TO or FROM:TO:COUNT with whole numbers, or k1,k2,..."
        )
    lo, hi = numbers_[0], numbers_[1]
    n = numbers_[2] if len(numbers_) == 3 else count
    if lo < 1 or n < 1:
        raise InputError.bad_argument(param, f"{spec!r} needs FROM >= 1 and COUNT >= 1")
    if hi < lo:
        raise InputError.bad_argument(param, f"{spec!r} runs backwards; give FROM:TO with FROM <= TO, e.g. {hi}:{lo}")
    if n == 1:
        return [hi]
    return np.unique(np.rint(np.geomspace(lo, hi, n)).astype(int)).tolist()
