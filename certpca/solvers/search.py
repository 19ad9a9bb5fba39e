"""The solver ``exact``: Schur screening removes every feature that no support better than a level L can
contain, then the branch and bound (certpca/solvers/exact.py) proves the optimum over the rest.

Lemma (docs/certification.md §10).  Let L be a level, F a set of features containing every support
whose value exceeds L, i ∈ F with C_ii < L, J = F∖{i}, c = C_Ji, g = L − C_ii and M = C_JJ + ccᵀ/g.
If a valid bound on the (k − 1)-sparse top eigenvalue of M (for w ≥ 0 the nonnegative one, w_J ≥ 0)
is ≤ L, no unit w with i ∈ supp(w) ⊆ F, ‖w‖₀ ≤ k (and w ≥ 0) has wᵀCw > L, since

    L‖w‖² − wᵀCw = g·w_i² − 2·w_i·cᵀw_J + w_Jᵀ(L·I − C_JJ)w_J ≥ w_Jᵀ(L·I − M)w_J ≥ 0

(the minimum over the real w_i, at w_i = cᵀw_J/g; over w_i ≥ 0 it is no lower).  Removing i keeps
F's property, so passes repeat until none removes a feature; then OPT ≤ max(L, OPT(C_FF)), and the
exact search over the supports inside F (:func:`certpca.solvers.exact.exact` with ``features``)
proves OPT(C_FF).  The solver :class:`Exact` screens at its best incumbent's level before its search,
and so does the bound ``screening`` (certpca/certification/screening.py, which adds the threshold
family as a further test), so the solver reaches what the certificate proves.

The test on one feature is the exact search's node Schur test with I = {i}
(:func:`~certpca.solvers.exact.schur_prunes`), margins included; :func:`~certpca.solvers.exact.quick_pass` is
an O(D) form of its Gershgorin test that never forms M.  Inside the search's nodes the same lemma runs on the
node's Schur matrix (:func:`~certpca.solvers.exact.node_screen`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

import numpy as np
from threadpoolctl import threadpool_limits

from ..clock import FLOP_RATE, Deadline, Work
from ..errors import InputError
from ..status import Convergence
from ..validation import check_float, check_int
from .base import Run, Solver
from .exact import MAX_DIM, exact, incumbents, quick_pass, quick_pass_seconds, schur_prunes

#: a pass with every bound ends when its first this many features (by increasing C_ii) all stayed
FUTILE_TESTS = 25

#: operations per entry of M in a Gershgorin test on the formed M (1400 measured per entry at D = 361 to
#: 1500 on the 2-core bench machine at load average 7.8, about a quarter of that quiet)
SCREEN_OPS = 400

#: screening forms the dense D × D covariance (72 MB at this size)
MAX_SCREEN_DIM = 3000

#: the level is the best incumbent's value times 1 + this (a finished search certifies it to this)
LEVEL_RTOL = 1e-9


def screen(
    C: np.ndarray,
    k: int,
    nonneg: bool,
    level: float,
    *,
    features=None,
    deadline: Deadline | None = None,
    extra: Callable[[np.ndarray, int, bool, float], bool] | None = None,
    prepaid: bool = False,
) -> tuple[np.ndarray, dict]:
    """The features left after screening C at ``level`` (module docstring), and what it did.

    Passes of three strengths, each repeated while it removes a feature, the next one tried when
    it removes none and the first again after it removes one: the O(D) test of
    :func:`~certpca.solvers.exact.quick_pass`, then the Gershgorin bound on the formed M alone, then every bound.
    Features are tested by increasing C_ii.  The passes on formed matrices stop when one would cost more than what is
    left before ``deadline`` (a :class:`certpca.clock.Deadline`; ``SCREEN_OPS`` operations per entry)
    or the deadline passes: what is left then still contains every support better than ``level``.
    Each pass and test is charged to the deadline at that cost (a :class:`certpca.clock.Work` counts it), a quick
    pass at :func:`~certpca.solvers.exact.quick_pass_seconds`; with ``prepaid`` the first quick pass is not (the
    caller charged it before: a certificate charges screening's estimate up front, which includes it).
    ``extra``, a further test on the formed M (:func:`~certpca.solvers.exact.schur_prunes`), is tried last
    in the passes with every bound (the certificate passes the threshold family).
    A pass with every bound ends early when its first ``FUTILE_TESTS`` features all stay (this
    costs tightness only, never validity).  Returns (sorted indices, {passes, stopped}).
    """
    F = list(range(C.shape[0])) if features is None else [int(i) for i in features]
    F.sort(key=lambda i: C[i, i])
    passes, strength, stopped = 0, 0, False
    while not stopped:
        passes += 1
        before = len(F)
        if strength == 0:
            if deadline is not None and not (prepaid and passes == 1):
                deadline.charge(quick_pass_seconds(len(F)))
            F = quick_pass(C, F, k, level)
        elif deadline is not None and deadline.left() < SCREEN_OPS * len(F) ** 3 / FLOP_RATE:
            stopped = True  # not even one pass on formed matrices fits in the time left
        else:
            cheap = strength == 1
            for tested, i in enumerate(list(F)):
                if deadline is not None and deadline.passed():
                    stopped = True
                    break
                if not cheap and len(F) == before and tested >= FUTILE_TESTS:
                    break  # the easiest features (smallest C_ii) all stayed: the rest will too
                if not C[i, i] < level or len(F) == 1:
                    continue
                order = [i] + [j for j in F if j != i]
                if deadline is not None:
                    deadline.charge(SCREEN_OPS * len(F) ** 2 / FLOP_RATE)
                if schur_prunes(C[np.ix_(order, order)], 1, k - 1, level, nonneg, cheap_only=cheap, extra=extra):
                    F.remove(i)
        if len(F) < before:
            strength = 0
        elif strength == 2:
            break
        else:
            strength += 1
    return np.array(sorted(F), dtype=np.intp), {"passes": passes, "stopped": stopped}


class Exact(Solver):
    """Screening at the best incumbent's level, then the branch and bound over the features left: the proven
    optimal vector, or at its time limit its best vector with the proven gap (``extras``: ``proven``,
    ``upper_bound``, ``gap``, ``nodes``, ``survivors``).

    OPT ≤ max(L, OPT(C_FF)) for the level L and the features F screening leaves (module docstring), so the
    search over the supports inside F proves OPT; when no feature is left the incumbent is optimal to
    ``LEVEL_RTOL``.  ``time_limit`` is seconds of estimated work shared by screening and the search (a
    :class:`~certpca.clock.Work` charged per pass, test and node), not a clock: it stops at the same step on
    a quiet or a busy machine, so the same call gives the same answer.  Its many small eigenproblems run on
    one BLAS thread (more threads only contend for them)."""

    name = "exact"
    defaults: ClassVar[dict] = {"time_limit": 60.0, "node_limit": 5_000_000}
    reference = (
        "Branch and bound over supports, OPT = max over |S| = k of the top eigenvalue of C_SS: Moghaddam, B., "
        "Weiss, Y. & Avidan, S. (2006). Spectral bounds for sparse PCA: exact and greedy algorithms. Advances "
        f"in Neural Information Processing Systems 18. After certpca's Schur screening, for D up to "
        f"{MAX_SCREEN_DIM} when at most {MAX_DIM} features are left."
    )

    def run(self, problem, k, nonneg, start, time_limit=60.0, node_limit=5_000_000):
        time_limit = check_float(time_limit, "time_limit", low=0.0)
        node_limit = check_int(node_limit, "node_limit", low=1)
        if problem.dim > MAX_SCREEN_DIM:
            raise InputError.bad_argument(
                "method",
                f"'exact' screens the dense covariance, limited to D ≤ {MAX_SCREEN_DIM} features, got "
                f"D = {problem.dim}; use method='auto' (its certificate says how close it is)",
            )
        work = Work(time_limit)
        with threadpool_limits(limits=1):
            C = problem.dense()
            starts = incumbents(problem, k, nonneg)
            level = max(float(w @ C @ w) / float(w @ w) for w in starts if w.any()) * (1 + LEVEL_RTOL)
            F, _ = screen(C, k, nonneg, level, deadline=work)
            if len(F) > MAX_DIM:
                raise InputError.bad_argument(
                    "method",
                    f"'exact' searches at most {MAX_DIM} features; screening left {len(F)} of {problem.dim} at "
                    f"k = {k}; use method='auto' (its certificate says how close it is)",
                )
            if len(F):
                res = exact(problem, k, nonneg, features=F, starts=starts, time_limit=work, node_limit=node_limit)
                w, value, proven, nodes, upper = res.weights, res.value, res.proven, res.nodes, res.upper_bound
            else:  # no support is above the level: the best incumbent is optimal to LEVEL_RTOL
                w = max(starts, key=lambda v: float(v @ C @ v) / float(v @ v) if v.any() else -np.inf)
                w = w / np.linalg.norm(w)
                value, proven, nodes, upper = float(w @ C @ w), True, 0, level
        upper = max(level, upper)
        gap = max(upper - value, 0.0)
        extras = {"proven": proven, "upper_bound": upper, "gap": gap, "nodes": nodes, "survivors": int(len(F))}
        if proven:
            return Run(w, np.flatnonzero(w), nodes, extras=extras)
        why = (
            f"the search stopped at its limit ({time_limit:g} s of estimated work or {node_limit} nodes) after "
            f"{nodes} nodes over the {len(F)} features screening left: OPT ≤ {upper:.6g}, proven gap "
            f"{gap:.3g}; raise time_limit"
        )
        return Run(
            w,
            np.flatnonzero(w),
            nodes,
            extras=extras,
            convergence=Convergence.ITERATION_LIMIT,
            convergence_reason=why,
        )
