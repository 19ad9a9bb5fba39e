"""Schur screening as a bound: remove every feature no support better than a level L can contain, then search.

The screening (the lemma of docs/certification.md §10 and its passes) is :mod:`certpca.solvers.search`,
shared with the solver ``exact``; once no pass removes a feature from F, OPT ≤ max(L, OPT(C_FF)), and
the exact search over the supports inside F (:func:`certpca.solvers.exact.exact` with ``features``)
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
from certpca.certification.spec import ASTERIS, COST_EXPONENTIAL, COST_SEARCH, MOGHADDAM, BoundSpec
from certpca.certification.threshold import threshold_bound
from certpca.clock import Deadline
from certpca.problem import Problem
from certpca.solvers.exact import MAX_DIM, exact, incumbents, quick_pass_seconds, sparse_gershgorin
from certpca.solvers.renormalize import renormalize
from certpca.solvers.search import LEVEL_RTOL, screen

#: above this many features left, C_FF is bounded by its Gershgorin bound alone (its eigenproblem would cost
#: seconds the other bounds of a certificate can use better)
LMAX_MAX = 1000

#: the threshold family on M runs with this coarse grid of ρ (it is one test among several, per feature)
THRESHOLD_GRID = 12

#: the threshold family is tried on M only when the rank-2 split failed by less than this relative
#: margin (a loose bound is not saved by it, and it costs a ρ search per feature)
THRESHOLD_WITHIN = 0.05


#: seconds screening and its search take at most when no time limit is given (a certificate with explicit
#: bounds and no budget, as the report's): a pass on formed matrices then starts only when it fits, so on
#: wide data (khan, D = 2308) screening stops after its quick pass instead of running for many minutes
MAX_SECONDS = 60.0


def threshold_test(M: np.ndarray, t: int, nonneg: bool, goal: float) -> bool:
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
    time_limit: Deadline | float | None = None,
    support=None,
    thresholds: bool = True,
) -> Bound:
    """OPT ≤ max(L, bound on OPT(C_FF)) + err, F the features screening leaves at L (module docstring).

    L = the best of the exact search's incumbents (:func:`~certpca.solvers.exact.incumbents`) and the
    vector being certified refitted on its ``support``, × (1 + LEVEL_RTOL).  When at most MAX_DIM features
    are left and at least one was removed (else the bound ``exact`` is the same search), the exact search
    over supports inside F bounds OPT(C_FF) (and, finished, proves it:
    ``params["proven"]``, with the optimal ``weights`` and ``support``); otherwise, or at the time limit
    before the search, the k-sparse Gershgorin bound of C_FF and, for at most LMAX_MAX features, λmax(C_FF)
    + Weyl margin.
    """
    t0 = time.perf_counter()
    deadline = deadline_after(time_limit).within(MAX_SECONDS)
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
    # its first quick pass is in screening_seconds, which a certificate charges before it starts
    F, info = screen(C, k, nonneg, level, deadline=deadline, extra=threshold_test if thresholds else None, prepaid=True)
    params: dict = {"features": problem.dim, "survivors": int(len(F)), "passes": info["passes"], "level": level}
    left = deadline.left()
    if len(F) == 0:  # every support is at most L: the best incumbent is optimal to LEVEL_RTOL
        w = starts[int(np.argmax([float(v @ C @ v) / float(v @ v) if v.any() else -np.inf for v in starts]))]
        w = w / np.linalg.norm(w)
        ub_F = -np.inf
        params.update(proven=True, nodes=0, feasible_value=float(w @ C @ w))
        params.update(support=np.flatnonzero(w).tolist(), weights=w.tolist())
    elif len(F) < problem.dim and len(F) <= MAX_DIM and left > 0:
        res = exact(problem, k, nonneg, features=F, starts=starts, time_limit=deadline)
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
        ub_F = sparse_gershgorin(CF, k, nonneg)
        if len(F) <= LMAX_MAX:
            ub_F = min(ub_F, lmax_upper(CF)[0])
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
    """Estimated seconds before screening can first stop: C formed (r·D² from a factor of r rows) and one
    quick pass (:func:`~certpca.solvers.exact.quick_pass_seconds`), which :func:`screening_bound` therefore does
    not charge again; the passes on formed matrices, ``SCREEN_OPS`` operations per entry, start only when one
    fits in the time left (:func:`~certpca.solvers.search.screen`)."""
    r = problem.factor_rows if problem.uses_factor else 0
    return r * problem.dim**2 / FLOP_RATE + quick_pass_seconds(problem.dim)


# Before the semidefinite programs (cost class of a search): where it proves the optimum they are not
# needed (CBCL k = 10: 13 s), and where it removes nothing it stops after a pass and FUTILE_TESTS tests.
# On a factor problem it comes last (it forms C), after a first run before the semidefinite programs
# (``probe``): pbmc ``--scale`` k = 5 and 10 are proven by it with 0.07 s of work (6 and 0 of 765 features
# left), where dabe_sdp before it took 45 CPU s of the 60 s budget; on alon and khan (D = 2000, 2308) the quick
# pass removes nothing and the first run stops after it (0.2–0.25 s of work).
SCREENING = BoundSpec(
    "screening",
    screening_bound,
    COST_SEARCH,
    time_option="time_limit",
    support_option="support",
    support_hint=True,
    estimate=screening_seconds,
    charges=True,  # each pass, test and node
    probe=1.0,
    default_when=lambda problem: not problem.uses_factor or problem.dim <= DENSE_LIMIT,
    description="features no support above the incumbent can contain removed by a Schur-complement test, "
    "then branch and bound over the rest",
    reference="certpca's own screening lemma (the Schur complement of C_ii at the incumbent level, "
    "docs/certification.md), then branch and bound over supports with OPT = max_{|S|=k} λmax(C_SS) as in "
    + MOGHADDAM
    + " Bounds on the Schur matrix include the rank-2 split of "
    + ASTERIS
    + " (Thm. 1).",
    factor_cost=COST_EXPONENTIAL,  # forms the D × D covariance
)

SPECS = [SCREENING]
