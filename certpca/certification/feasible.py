"""Feasible vectors a certificate's bounds propose: the lower bound they give, and a better vector to hand over.

A bound's search may hold a feasible vector (the exact search's incumbent, a spannogram's rank-d vector, a
pattern's support); :func:`feasible` recomputes each on the original C and keeps the best, as
:class:`Better` when it beats the certified vector.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from certpca.certification.numerics import Bound
from certpca.solvers.em import EM
from certpca.solvers.renormalize import renormalize

#: a bound's vector is handed over as better only above the certified value by this much (relative)
BETTER_RTOL = 1e-9

#: EM steps of the signed problem from a w ≥ 0 vector at most (:func:`signed_reach`)
SIGNED_STEPS = 20

#: what a note calls the bound whose search found a better vector (else "the <name> bound")
FINDERS = {"exact": "exact search", "pattern": "pattern certificate's support", "spannogram": "spannogram bound"}


@dataclass(frozen=True)
class Better:
    """A feasible vector a bound's search found, better than the certified one (``Certificate.better``).

    ``weights`` is a unit vector with at most k nonzeros (≥ 0 for a nonnegative certificate) on the
    certified problem's coordinates; ``value`` its wᵀCw on the original C; ``found_by`` the bound's
    registry name; ``gain`` = value / certified value − 1.
    """

    weights: np.ndarray
    value: float
    found_by: str
    gain: float

    @property
    def finder(self) -> str:
        return FINDERS.get(self.found_by, f"the {self.found_by} bound")

    def to_dict(self) -> dict:
        support = np.flatnonzero(self.weights)
        return {
            "value": float(self.value),
            "found_by": self.found_by,
            "gain": float(self.gain),
            "support": support.tolist(),
            "weights": self.weights[support].tolist(),
        }


def feasible(problem, bounds, k: int, nonneg: bool, value: float, tol: float) -> tuple[float, Better | None]:
    """The best feasible value among ``value`` and the bounds' proposed vectors (on the original C), and
    the best of those vectors when it beats ``value`` by more than the tolerance (and than rounding)."""
    lower, better = value, None
    for b in bounds:
        found, wv = feasible_vector(problem, b, k, nonneg)
        lower = max(lower, found)
        if wv is not None and found - value > max(tol, BETTER_RTOL) * abs(found):
            if better is None or found > better.value:
                better = Better(wv, found, b.name, found / value - 1 if value > 0 else np.inf)
    return lower, better


def feasible_vector(problem, b: Bound, k: int, nonneg: bool) -> tuple[float, np.ndarray | None]:
    """(wᵀCw on the original C, unit w) of a feasible vector the bound proposes ((−inf, None) when none):
    its ``weights`` (dense), its ``support_weights`` on its ``support``, or, signed, the top eigenvector
    of the original C on its ``support``."""
    params = b.params if isinstance(b.params, dict) else {}
    wv = params.get("weights")
    S = params.get("support")
    if wv is None and S is not None and 0 < len(S) <= k:
        S = np.asarray(S, dtype=np.intp)
        if params.get("support_weights") is not None:
            wv = np.zeros(problem.dim)
            wv[S] = params["support_weights"]
        elif not nonneg:
            wv = np.zeros(problem.dim)
            wv[S] = np.linalg.eigh(problem.submatrix(S))[1][:, -1]
    if wv is None:
        return -np.inf, None
    wv = np.asarray(wv, dtype=float)
    n = float(np.linalg.norm(wv))
    if wv.shape != (problem.dim,) or not np.isfinite(n) or n == 0 or np.count_nonzero(wv) > k:
        return -np.inf, None
    if nonneg and np.any(wv < 0):
        if np.any(wv > 0):
            return -np.inf, None
        wv = -wv  # an all-nonpositive vector is a nonnegative one with its sign flipped
    wv = wv / n
    v = problem.variance(wv)
    return (v, wv) if np.isfinite(v) else (-np.inf, None)


def signed_reach(problem, w: np.ndarray, k: int) -> float:
    """A value of the signed problem's OPT(k) reached from the w ≥ 0 vector ``w``: the signed EM solver's run
    from it (:class:`~certpca.solvers.em.EM`, at most ``SIGNED_STEPS`` steps), refitted on its support
    (:func:`~certpca.solvers.renormalize.renormalize`).

    No bound that ignores the sign constraint (``BoundSpec.sign_free``), and no bound of the signed problem,
    can be below it, since each is at least the signed OPT: a certificate of w ≥ 0 skips them once it is at
    least its best bound so far (pbmc k = 30: 39.48 from a w ≥ 0 vector of 37.71, above the threshold bound's
    39.35, where dabe_sdp spent 4.6 s of work for 39.71).  Like the certificate's other feasible values it is
    not charged to a budget (at most ``SIGNED_STEPS`` products with C and one k × k eigenproblem), so the
    bounds of w ≥ 0 get the allotments of the signed certificate's.  It decides only which bounds run, never a
    bound's value; it is lowered by a relative 1e-12 for the rounding of the values it is compared with."""
    run = EM().run(problem, k, False, w, max_iter=SIGNED_STEPS)
    value = renormalize(problem, run.weights, run.support, False)[1] if run.weights.any() else -np.inf
    return max(problem.variance(w), value) * (1 - 1e-12)
