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


def top_k(values: np.ndarray, k: int) -> np.ndarray:
    """Indices of the k largest values; ties go to the lower index (deterministic).

    Returns them in descending order of value.
    """
    k = min(k, len(values))
    if k < len(values):
        part = np.argpartition(-values, k)[: k + 1]
        # the (k+1)-set may cut through a tie: take every index tied with the k-th
        kth = np.sort(values[part])[::-1][k - 1]
        cand = np.flatnonzero(values >= kth)
    else:
        cand = np.arange(len(values))
    order = np.lexsort((cand, -values[cand]))
    return cand[order[:k]]
