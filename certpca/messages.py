"""Warnings collected as messages instead of printed (solver notes in reports and reproductions)."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def quiet() -> Iterator[list[warnings.WarningMessage]]:
    """Record every warning raised in the block into the yielded list; nothing reaches stderr."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield caught


__all__ = ["quiet"]
