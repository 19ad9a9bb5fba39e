"""What every solver plugin provides, what one run of it returns, and the rules all share."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np
import pandas as pd

from ..errors import InputError
from ..problem import Problem
from ..status import Convergence, Reach

#: a gradient entry counts as nonzero above this fraction of sqrt(wᵀCw · max C_ii), the scale
#: of the gradient Cw; far above rounding, far below any gain worth a feature
GAIN_RTOL = 1e-9


@dataclass
class Run:
    """One run of an inner algorithm from one start (or one column of a joint fit).

    ``reach`` None lets the driver decide from the weights (:func:`reach_of`);
    ``convergence`` None follows ``converged``.  Both take a one-line reason.
    """

    weights: np.ndarray
    support: np.ndarray  # the indices the method chose (may exceed the nonzeros on ties)
    iterations: int = 0
    converged: bool = True
    extras: dict = field(default_factory=dict)
    reach: Reach | None = None
    reach_reason: str = ""
    convergence: Convergence | None = None
    convergence_reason: str = ""

    def __post_init__(self) -> None:
        if self.convergence is None:
            self.convergence = Convergence.CONVERGED if self.converged else Convergence.ITERATION_LIMIT
        else:
            self.converged = self.convergence is not Convergence.ITERATION_LIMIT


class Solver:
    """A solver plugin: a name, capabilities, options with defaults, a citation.

    The driver (:func:`certpca.solvers.solve`) calls :meth:`starts` once and
    :meth:`run` from every start, then renormalises, keeps the best and times it.
    """

    name: ClassVar[str]
    sparse: ClassVar[bool] = True  # honours a cardinality k < D
    nonneg: ClassVar[bool] = True  # honours w >= 0
    signed: ClassVar[bool] = True  # also solves the problem without w >= 0
    joint: ClassVar[bool] = False  # fits several components at once: implements fit_joint
    warm_start: ClassVar[bool] = False  # an iterative method that can start from a previous solution
    polish: ClassVar[bool] = False  # the driver ends with a swap search from the best vector (solvers/swap.py)
    defaults: ClassVar[dict] = {}
    path_options: ClassVar[dict] = {}  # stopping options for runs warm-started along a path (fit_path)
    reference: ClassVar[str] = ""

    def starts(
        self, problem: Problem, nonneg: bool, rng: np.random.Generator, restarts: int
    ) -> list[np.ndarray | None]:
        """Initial vectors; [None] for a method that needs none."""
        return [None]

    def run(self, problem: Problem, k: int, nonneg: bool, start, **options) -> Run:
        raise NotImplementedError

    def fit_joint(
        self, problem: Problem, k: int, n_components: int, nonneg: bool, rng: np.random.Generator, **options
    ) -> list[Run]:
        """``n_components`` components fitted at once, k nonzeros each; one Run per component.

        Only for solvers with ``joint`` set; the Runs come in the method's own column
        order and carry its reach and convergence status.
        """
        raise InputError.bad_argument(
            "method",
            f"'{self.name}' fits one component at a time; a joint fit needs a method that fits several at once",
        )

    def cite(self) -> str:
        return self.reference


def fix_sign(w: np.ndarray, nonneg: bool) -> np.ndarray:
    """The one deterministic sign: nonnegative vectors as they are, others with a positive
    largest-|entry| (the first such entry on ties, as ``np.argmax``)."""
    if nonneg or not w.any():
        return w
    return w if w[np.argmax(np.abs(w))] > 0 else -w


def as_loadings(problem: Problem, w: np.ndarray) -> pd.Series:
    """Weights as a Series indexed by the problem's feature ids."""
    return pd.Series(w, index=problem.feature_ids, name="loading")


def can_grow(problem: Problem, w: np.ndarray, nonneg: bool) -> bool:
    """Whether some unused feature has a gradient entry that makes adding it pay.

    With g = Cw, putting weight ε on an unused feature j changes wᵀCw by 2εg_j + O(ε²):
    a gain when g_j ≠ 0 (sparse: either sign of ε) or g_j > 0 (nonnegative).  When no
    such feature exists the smaller support is what the data favour locally.
    """
    g = problem.matvec(w)[w == 0]
    scale = np.sqrt(problem.variance(w) * problem.diag.max()) * GAIN_RTOL
    return bool(np.any(g > scale) if nonneg else np.any(np.abs(g) > scale))


def reach_of(problem: Problem, w: np.ndarray, k: int, nonneg: bool) -> tuple[Reach, str]:
    """Reach status of weights w asked to have k nonzeros, with its reason.

    Exactly k is reached; fewer is ``data_allow_fewer`` when no unused feature would raise
    wᵀCw (:func:`can_grow`), else ``stopped_short``.
    """
    card = int(np.count_nonzero(w))
    if card >= k:
        return Reach.REACHED, ""
    if not can_grow(problem, w, nonneg):
        return Reach.DATA_ALLOW_FEWER, f"{card} of {k} nonzeros: no unused feature would raise the variance"
    return Reach.STOPPED_SHORT, f"{card} of {k} nonzeros: an unused feature would raise the variance"


def top_k(values: np.ndarray, k: int, hint: np.ndarray | None = None) -> tuple[np.ndarray, float]:
    """Indices of the k largest values and the (k+1)-th largest value (0 when k ≥ n).

    Ties at the boundary go to the lower index, so the choice is deterministic.
    The indices come in no particular order.  ``hint``, any k or more distinct
    indices (e.g. the previous iteration's support), only speeds the selection up:
    at least k values reach t = min(values[hint]), so the k largest and, when more
    than k values reach t, the (k+1)-th are among those ≥ t; the result is the same.
    A hint of half the values or more would save nothing and is ignored.
    """
    n = len(values)
    if k >= n:
        return np.arange(n), 0.0
    if hint is not None and k <= len(hint) < n // 2:
        t = values[hint].min()
        cand = np.flatnonzero(values >= t)
        if cand.size > k:
            chosen, below = top_k(values[cand], k)  # cand is ascending: ties still go to the lower index
            return cand[chosen], below
        return cand, float(values[values < t].max())  # exactly k reach t: the rest lie strictly below
    part = np.argpartition(values, n - k - 1)
    chosen, below = part[n - k :], float(values[part[n - k - 1]])
    if values[chosen].min() > below:  # no tie straddles the boundary: the common case
        return chosen, below
    cand = np.flatnonzero(values >= below)
    order = np.lexsort((cand, -values[cand]))
    return cand[order[:k]], below
