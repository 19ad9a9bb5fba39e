"""Schur screening: remove every feature no support better than a level L can contain, then search.

Lemma (docs/certification.md §12).  Let L be a level, F a set of features containing every support
whose value exceeds L, i ∈ F with C_ii < L, J = F∖{i}, c = C_Ji, g = L − C_ii and M = C_JJ + ccᵀ/g.
If a valid bound on the (k − 1)-sparse top eigenvalue of M (for w ≥ 0 the nonnegative one, w_J ≥ 0)
is ≤ L, no unit w with i ∈ supp(w) ⊆ F, ‖w‖₀ ≤ k (and w ≥ 0) has wᵀCw > L, since

    L‖w‖² − wᵀCw = g·w_i² − 2·w_i·cᵀw_J + w_Jᵀ(L·I − C_JJ)w_J ≥ w_Jᵀ(L·I − M)w_J ≥ 0

(the minimum over the real w_i, at w_i = cᵀw_J/g; over w_i ≥ 0 it is no lower).  Removing i keeps
F's property, so passes repeat until none removes a feature, and then OPT ≤ max(L, OPT(C_FF)); the
exact search over the supports inside F (:func:`certpca.solvers.exact.exact` with ``features``)
proves OPT(C_FF) and holds the optimal vector.

The test on one feature is the exact search's node Schur test with I = {i}
(:func:`~certpca.solvers.exact.schur_prunes`), margins included: M's forming error τ (twice it
is required between a bound on the formed M̂ and L), the (k − 1)-sparse Gershgorin bound with its
row-sum roundings, λmax with its Weyl margin, the shifted rank-2 split with its arc and residual
margins, and here also the threshold family (:func:`~certpca.certification.threshold.threshold_bound`,
margins of its own) on M̂.  Passes first use the Gershgorin bound alone (no eigenproblem), then all.
For a covariance formed from a factor, everything runs on the formed C̃ (‖C − C̃‖₂ ≤ err from
:func:`~certpca.certification.numerics.dense_matrix`), and err is added to the result.  The level is
the best incumbent's value × (1 + ``LEVEL_RTOL``), so a finished search certifies that incumbent
optimal to 1e-9 (certificates call a relative gap ≤ 1e-6 optimal).
"""

from __future__ import annotations

import time

import numpy as np

from certpca.certification.numerics import (
    DENSE_LIMIT,
    FLOP_RATE,
    Bound,
    NotApplicable,
    check_k,
    deadline_after,
    dense_matrix,
    lmax_upper,
    safe,
)
from certpca.certification.spec import ASTERIS, COST_SEARCH, MOGHADDAM, BoundSpec
from certpca.certification.threshold import threshold_bound
from certpca.problem import Problem
from certpca.solvers.exact import MAX_DIM, exact, incumbents, schur_prunes, sparse_gershgorin
from certpca.solvers.renormalize import renormalize

#: the level is the best incumbent's value times 1 + this (a finished search certifies it to this)
LEVEL_RTOL = 1e-9

#: the threshold family on M runs with this coarse grid of ρ (it is one test among several, per feature)
THRESHOLD_GRID = 12

#: the threshold family is tried on M only when the rank-2 split failed by less than this relative
#: margin (a loose bound is not saved by it, and it costs a ρ search per feature)
THRESHOLD_WITHIN = 0.05


#: a pass with every bound ends when its first this many features (by increasing C_ii) all stayed
FUTILE_TESTS = 25


def screen(
    C: np.ndarray,
    k: int,
    nonneg: bool,
    level: float,
    *,
    features=None,
    deadline: float | None = None,
    thresholds: bool = True,
) -> tuple[np.ndarray, dict]:
    """The features left after screening C at ``level`` (module docstring), and what it did.

    Features are tested by increasing C_ii; passes with the Gershgorin bound alone repeat until
    one removes nothing, then a pass with every bound, and back, until a pass of both removes
    nothing or ``deadline`` (a ``time.perf_counter()`` value) passes: what is left then still
    contains every support better than ``level``.  A pass with every bound ends early when its first
    ``FUTILE_TESTS`` features all stay (this costs tightness only, never validity).
    Returns (sorted indices, {passes, stopped}).
    """
    F = list(range(C.shape[0])) if features is None else [int(i) for i in features]
    F.sort(key=lambda i: C[i, i])
    extra = _threshold_test if thresholds else None
    passes, cheap, stopped = 0, True, False
    while not stopped:
        removed = False
        passes += 1
        for tested, i in enumerate(list(F)):
            if deadline is not None and time.perf_counter() > deadline:
                stopped = True
                break
            if not cheap and not removed and tested >= FUTILE_TESTS:
                break  # the easiest features (smallest C_ii) all stayed: the rest will too
            if not C[i, i] < level or len(F) == 1:
                continue
            order = [i] + [j for j in F if j != i]
            if schur_prunes(C[np.ix_(order, order)], 1, k - 1, level, nonneg, cheap_only=cheap, extra=extra):
                F.remove(i)
                removed = True
        if not cheap and not removed:
            break
        cheap = removed  # after a fruitless cheap pass every bound; after a fruitful full pass cheap again
    return np.array(sorted(F), dtype=np.intp), {"passes": passes, "stopped": stopped}


def _threshold_test(M: np.ndarray, t: int, nonneg: bool, goal: float) -> bool:
    """The threshold family's t-sparse bound on M ≤ goal (its margins are its own); skipped when
    M's λmax-free Gershgorin bound is more than ``THRESHOLD_WITHIN`` above goal."""
    if t < 1 or sparse_gershgorin(M, t, nonneg) > goal * (1 + THRESHOLD_WITHIN) + THRESHOLD_WITHIN * abs(goal):
        return False
    b = threshold_bound(Problem.from_covariance(M), t, nonneg, n_grid=THRESHOLD_GRID, n_refine=0, rank2=False)
    return b.value <= goal


def screening_bound(
    problem,
    k,
    nonneg=False,
    *,
    time_limit: float | None = None,
    support=None,
    thresholds: bool = True,
) -> Bound:
    """OPT ≤ max(L, bound on OPT(C_FF)) + err, F the features screening leaves at L (module docstring).

    L = the best of the exact search's incumbents (:func:`~certpca.solvers.exact.incumbents`) and the
    vector being certified refitted on its ``support``, × (1 + LEVEL_RTOL).  When at most MAX_DIM features
    are left and at least one was removed (else the bound ``exact`` is the same search), the exact search
    over supports inside F bounds OPT(C_FF) (and, finished, proves it:
    ``params["proven"]``, with the optimal ``weights`` and ``support``); otherwise, or at the time limit
    before the search, the smaller of λmax(C_FF) + Weyl margin and the k-sparse Gershgorin bound of C_FF.
    """
    t0 = time.perf_counter()
    deadline = deadline_after(time_limit)
    k = check_k(problem, k)
    C, err = dense_matrix(problem)
    starts = incumbents(problem, k, nonneg)
    if support is not None and len(support):
        w = np.zeros(problem.dim)
        w[np.asarray(support, dtype=np.intp)] = 1.0
        starts.append(renormalize(problem, w, np.flatnonzero(w), nonneg)[0])
    values = [float(w @ C @ w) / float(w @ w) for w in starts if w.any()]
    best = max(values, default=0.0)
    if not best > 0:
        raise NotApplicable("no incumbent with a positive value to screen at")
    level = best * (1 + LEVEL_RTOL)
    F, info = screen(C, k, nonneg, level, deadline=deadline, thresholds=thresholds)
    params: dict = {"features": problem.dim, "survivors": int(len(F)), "passes": info["passes"], "level": level}
    left = None if deadline is None else deadline - time.perf_counter()
    if len(F) < problem.dim and len(F) <= MAX_DIM and (left is None or left > 0):
        res = exact(problem, k, nonneg, features=F, starts=starts, time_limit=left)
        ub_F = res.upper_bound
        params.update(
            proven=res.proven,
            nodes=res.nodes,
            feasible_value=res.value,
            support=res.support,
            weights=res.weights.tolist(),
        )
    else:
        CF = C[np.ix_(F, F)]
        ub_F = min(lmax_upper(CF)[0], sparse_gershgorin(CF, k, nonneg))
        why = "no feature removed" if len(F) == problem.dim else "too many left" if len(F) > MAX_DIM else "time limit"
        params.update(proven=False, nodes=0, search=f"skipped: {why}")
    params["screening_stopped"] = info["stopped"]
    return Bound(
        safe(max(level, ub_F) + err),
        "screening",
        params,
        time.perf_counter() - t0,
        "Schur screening at the incumbent level L (forming error of M and the margins of each bound on it), "
        "then max(L, exact search over the survivors, or λmax / Gershgorin of C_FF) + the forming error of C "
        "+ rel 1e-10",
    )


def screening_seconds(problem, k) -> float:
    """Estimated seconds of one pass of Gershgorin tests, the least screening needs to remove anything:
    D matrices of D² entries gathered, formed and partitioned, ``SCREEN_OPS`` operations each at
    ``FLOP_RATE``.  Screening stops at any feature, but a budget that cannot afford one pass is better
    spent on the other bounds: khan (D = 2308) is left to them, CBCL (D = 361) and pbmc (D = 765) are not."""
    return SCREEN_OPS * problem.dim**3 / FLOP_RATE


#: operations per entry of M in a Gershgorin test, for the estimate (1400 measured per entry at D = 361
#: to 1500 on the 2-core bench machine at load average 7.8, about a quarter of that quiet)
SCREEN_OPS = 400

# Before the semidefinite programs (cost class of a search): where it proves the optimum they are not
# needed (CBCL k = 10: 13 s), and where it removes nothing it stops after a pass and FUTILE_TESTS tests.
SCREENING = BoundSpec(
    "screening",
    screening_bound,
    COST_SEARCH,
    time_option="time_limit",
    support_option="support",
    estimate=screening_seconds,
    default_when=lambda problem: not problem.uses_factor or problem.dim <= DENSE_LIMIT,
    description="features no support above the incumbent can contain removed by a Schur-complement test, "
    "then branch and bound over the rest",
    reference="certpca's own screening lemma (the Schur complement of C_ii at the incumbent level, "
    "docs/certification.md), then branch and bound over supports with OPT = max_{|S|=k} λmax(C_SS) as in "
    + MOGHADDAM
    + " Bounds on the Schur matrix include the rank-2 split of "
    + ASTERIS
    + " (Thm. 1).",
)

SPECS = [SCREENING]
