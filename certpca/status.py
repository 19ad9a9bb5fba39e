"""The status vocabulary every component carries, in the manner of cvxpy's problem status.

Two questions are asked of every fitted component, each answered by one value
of a small string enum plus a one-line reason:

- did it reach the cardinality k? (:class:`Reach`)
- did the iterative method stop at its tolerance? (:class:`Convergence`)

Solvers report both through :class:`certpca.solvers.base.Run`; the driver and
the components layer turn them into a :class:`Status` on the
:class:`~certpca.results.Component`, which serialises it as plain strings.
Method-specific diagnostics (γ, β, bisection steps) stay in ``extras``.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class Reach(str, Enum):
    """Whether a sparse component has the k nonzeros asked for."""

    #: exactly k nonzeros
    REACHED = "reached"
    #: fewer than k, and no unused feature would raise wᵀCw (a first-order test): the data favour fewer
    DATA_ALLOW_FEWER = "data_allow_fewer"
    #: fewer than k because the method or scheme cannot produce k here (NSPCA's β ↦ nnz map
    #: jumps over k; disjoint deflation has fewer than k features left; a fixed γ)
    UNREACHABLE = "unreachable"
    #: fewer than k although adding a feature would raise wᵀCw: the local method stopped short
    STOPPED_SHORT = "stopped_short"
    #: the method imposes no cardinality (dense PCA)
    NOT_SPARSE = "not_sparse"


class Convergence(str, Enum):
    """How the iterative method behind a component stopped."""

    #: its stopping test held
    CONVERGED = "converged"
    #: it stopped at its iteration limit before its tolerance
    ITERATION_LIMIT = "iteration_limit"
    #: a closed form or an enumeration: nothing to converge
    NOT_ITERATIVE = "not_iterative"


@dataclass(frozen=True)
class Status:
    """The two answers with their reasons (empty when the answer needs none)."""

    reach: Reach = Reach.REACHED
    reach_reason: str = ""
    convergence: Convergence = Convergence.CONVERGED
    convergence_reason: str = ""

    @property
    def ok(self) -> bool:
        """True when nothing needs the user's attention."""
        return self.reach in (Reach.REACHED, Reach.NOT_SPARSE) and self.convergence is not Convergence.ITERATION_LIMIT

    def to_dict(self) -> dict:
        return {
            "reach": self.reach.value,
            "reach_reason": self.reach_reason,
            "convergence": self.convergence.value,
            "convergence_reason": self.convergence_reason,
        }

    def __str__(self) -> str:
        parts = [
            f"{self.reach.value}{f' ({self.reach_reason})' if self.reach_reason else ''}",
            f"{self.convergence.value}{f' ({self.convergence_reason})' if self.convergence_reason else ''}",
        ]
        return "; ".join(parts)


__all__ = ["Convergence", "Reach", "Status"]
