"""What every solver plugin provides, and what one run of it returns."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from ..problem import Problem


@dataclass
class Run:
    """One run of an inner algorithm from one start."""

    weights: np.ndarray
    support: np.ndarray          # the indices the method chose (may exceed the nonzeros on ties)
    iterations: int = 0
    converged: bool = True
    extras: dict = field(default_factory=dict)


class Solver:
    """A solver plugin: a name, capabilities, options with defaults, a citation.

    The driver (:func:`certpca.solvers.solve`) calls :meth:`starts` once and
    :meth:`run` from every start, then renormalises, keeps the best and times it.
    """

    name: ClassVar[str]
    sparse: ClassVar[bool] = True        # honours a cardinality k < D
    nonneg: ClassVar[bool] = True        # honours w >= 0
    signed: ClassVar[bool] = True        # also solves the problem without w >= 0
    joint: ClassVar[bool] = False        # fits several components at once (--deflation joint)
    warm_start: ClassVar[bool] = False   # an iterative method that can start from a previous solution
    defaults: ClassVar[dict] = {}
    reference: ClassVar[str] = ""

    def starts(self, problem: Problem, nonneg: bool, rng: np.random.Generator,
               restarts: int) -> list[np.ndarray | None]:
        """Initial vectors; [None] for a method that needs none."""
        return [None]

    def run(self, problem: Problem, k: int, nonneg: bool, start, **options) -> Run:
        raise NotImplementedError

    def cite(self) -> str:
        return self.reference


def top_k(values: np.ndarray, k: int) -> tuple[np.ndarray, float]:
    """Indices of the k largest values and the (k+1)-th largest value (0 when k ≥ n).

    Ties at the boundary go to the lower index, so the choice is deterministic.
    The indices come in no particular order.
    """
    n = len(values)
    if k >= n:
        return np.arange(n), 0.0
    part = np.argpartition(values, n - k - 1)
    chosen, below = part[n - k:], float(values[part[n - k - 1]])
    if values[chosen].min() > below:   # no tie straddles the boundary: the common case
        return chosen, below
    cand = np.flatnonzero(values >= below)
    order = np.lexsort((cand, -values[cand]))
    return cand[order[:k]], below
