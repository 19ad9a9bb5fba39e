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
    gamma,
    lmax_upper,
    safe,
)
from certpca.certification.spec import ASTERIS, COST_EXPONENTIAL, COST_SEARCH, MOGHADDAM, BoundSpec
from certpca.certification.threshold import threshold_bound
from certpca.clock import Deadline
from certpca.problem import Problem
from certpca.solvers.exact import MAX_DIM, exact, incumbents, schur_prunes, sparse_gershgorin
from certpca.solvers.renormalize import renormalize

#: the level is the best incumbent's value times 1 + this (a finished search certifies it to this)
LEVEL_RTOL = 1e-9

#: above this many features left, C_FF is bounded by its Gershgorin bound alone (its eigenproblem would cost
#: seconds the other bounds of a certificate can use better)
LMAX_MAX = 1000

#: the threshold family on M runs with this coarse grid of ρ (it is one test among several, per feature)
THRESHOLD_GRID = 12

#: the threshold family is tried on M only when the rank-2 split failed by less than this relative
#: margin (a loose bound is not saved by it, and it costs a ρ search per feature)
THRESHOLD_WITHIN = 0.05


#: a pass with every bound ends when its first this many features (by increasing C_ii) all stayed
FUTILE_TESTS = 25
#: seconds screening and its search take at most when no time limit is given (a certificate with explicit
#: bounds and no budget, as the report's): a pass on formed matrices then starts only when it fits, so on
#: wide data (khan, D = 2308) screening stops after its quick pass instead of running for many minutes
MAX_SECONDS = 60.0


def screen(
    C: np.ndarray,
    k: int,
    nonneg: bool,
    level: float,
    *,
    features=None,
    deadline: Deadline | None = None,
    thresholds: bool = True,
) -> tuple[np.ndarray, dict]:
    """The features left after screening C at ``level`` (module docstring), and what it did.

    Passes of three strengths, each repeated while it removes a feature, the next one tried when
    it removes none and the first again after it removes one: the O(D) test of :func:`quick_pass`,
    then the Gershgorin bound on the formed M alone, then every bound.  Features are tested by
    increasing C_ii.  The passes on formed matrices stop when one would cost more than what is
    left before ``deadline`` (a :class:`certpca.clock.Deadline`; ``SCREEN_OPS`` operations per entry)
    or the deadline passes: what is left then still contains every support better than ``level``.
    Each pass and test is charged to the deadline at that cost (a :class:`certpca.clock.Work` counts it).
    A pass with every bound ends early when its first ``FUTILE_TESTS`` features all stay (this
    costs tightness only, never validity).  Returns (sorted indices, {passes, stopped}).
    """
    F = list(range(C.shape[0])) if features is None else [int(i) for i in features]
    F.sort(key=lambda i: C[i, i])
    extra = _threshold_test if thresholds else None
    passes, strength, stopped = 0, 0, False
    while not stopped:
        passes += 1
        before = len(F)
        if strength == 0:
            if deadline is not None:
                deadline.charge(QUICK_OPS * len(F) ** 2 / FLOP_RATE)
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


def quick_pass(C: np.ndarray, F: list, k: int, level: float) -> list:
    """One pass of the O(|F|) test per feature, M never formed: by |M_aj| ≤ |C_aj| + |c_a||c_j|/g, the
    (k − 1)-sparse Gershgorin bound of M is ≤ max_{j≠i} [C_jj + c_j²/g + T_j + |c_j|·S/g], with
    T_j = top_{k−2}(|C_aj|, a ≠ j) and S = top_{k−2}(|c_a|) taken over all of F (more terms only raise
    it; valid for w ≥ 0 too), plus γ_{k+7}·(|C_jj| + the nonnegative rest) for the roundings of its
    sums, products and the division by the rounded g.  On pbmc ``--scale`` k = 10 it removes 737 of
    the 745 features the Gershgorin test on the formed M removes, in 0.06 s instead of 46 s."""
    idx = np.asarray(F, dtype=np.intp)
    A = np.abs(C[np.ix_(idx, idx)])
    np.fill_diagonal(A, 0.0)
    d = np.diag(C)[idx]
    t, n = k - 1, len(idx)
    r = min(t - 1, n - 1)
    T = np.partition(A, n - r, axis=0)[n - r :].sum(axis=0) if r > 0 else np.zeros(n)
    g_margin = gamma(k + 7)
    keep = []
    for p, i in enumerate(F):
        g = level - d[p]
        if not g > 0 or n == 1:
            keep.append(i)
            continue
        c = A[:, p]
        S = float(np.partition(c, n - r)[n - r :].sum()) if r > 0 else 0.0
        rest = c * c / g + T + c * (S / g)
        b = d + rest + g_margin * (np.abs(d) + rest)
        b[p] = -np.inf
        if not float(np.max(b)) <= level:
            keep.append(i)
    return keep


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
    F, info = screen(C, k, nonneg, level, deadline=deadline, thresholds=thresholds)
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
    quick pass (:func:`quick_pass`, about ``QUICK_OPS``·D²); the passes on formed matrices, ``SCREEN_OPS``
    operations per entry, start only when one fits in the time left (:func:`screen`)."""
    r = problem.factor_rows if problem.uses_factor else 0
    return (r + QUICK_OPS) * problem.dim**2 / FLOP_RATE


#: operations per entry of C in a quick pass (gather, partition, a few vector operations per feature)
QUICK_OPS = 200

#: operations per entry of M in a Gershgorin test on the formed M (1400 measured per entry at D = 361 to
#: 1500 on the 2-core bench machine at load average 7.8, about a quarter of that quiet)
SCREEN_OPS = 400

# Before the semidefinite programs (cost class of a search): where it proves the optimum they are not
# needed (CBCL k = 10: 13 s), and where it removes nothing it stops after a pass and FUTILE_TESTS tests.
SCREENING = BoundSpec(
    "screening",
    screening_bound,
    COST_SEARCH,
    time_option="time_limit",
    support_option="support",
    support_hint=True,
    estimate=screening_seconds,
    charges=True,  # each pass, test and node
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
