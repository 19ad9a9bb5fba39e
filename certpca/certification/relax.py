"""Convex relaxations (CVXPY) for moderate D — *the solver proposes, numpy certifies*.

DSPCA (d'Aspremont, El Ghaoui, Jordan & Lanckriet, SIAM Review 2007):
    max Tr(CX)  s.t.  Tr X = 1, 1ᵀ|X|1 ≤ k, X ⪰ 0,
    dual: for any symmetric U,  OPT ≤ λmax(C + U) + k·max|U_ij|.
Doubly nonnegative (DNN) version for w ≥ 0:
    max Tr(CX)  s.t.  Tr X = 1, 1ᵀX1 ≤ k, X ≥ 0, X ⪰ 0,
    dual: for any ρ ≥ 0, N ≥ 0,  OPT⁺ ≤ kρ + λmax(C − ρ11ᵀ + N).

The solver's objective is never reported.  Its dual variables (U of the
constraint X = Y linking X to the ℓ1 ball; ρ and N for the DNN) are repaired
to exact dual feasibility (symmetrised; ρ, N clipped at 0 — the dual formulas
have no other constraint) and the bound is recomputed in numpy with an
eigenvalue computation and the margins of :mod:`certpca.certification.numerics`
(docs/certification.md §5).  The solver's accuracy therefore only affects how
tight the bound is, never whether it is valid.

Solvers: Clarabel (interior point, accurate) for small D, SCS above: Clarabel
was measured too slow and memory-hungry at D ≥ 100.
"""

from __future__ import annotations

import time
import warnings

import numpy as np

from certpca.certification.duals import DNN_REFERENCE, dnn_value, dspca_dual_bound
from certpca.certification.numerics import (
    FLOP_RATE,
    Bound,
    NotApplicable,
    check_k,
    dense_matrix,
    minimize_1d,
    vector_params,
)
from certpca.certification.spec import COST_SDP, DSPCA, BoundSpec
from certpca.clock import Work

#: the SDPs have D² variables: beyond this D they are neither default nor allowed
MAX_DIM = 150

#: Clarabel (interior point) is the default solver up to this D, SCS above
CLARABEL_MAX_DIM = 40

#: solver settings: tight tolerances, since a closer dual point gives a tighter bound
SCS_OPTIONS = {"eps": 1e-7, "max_iters": 20000}
SCS_FALLBACK_OPTIONS = {"eps": 1e-6, "max_iters": 20000}
CLARABEL_OPTIONS = {"tol_gap_abs": 1e-10, "tol_gap_rel": 1e-10, "tol_feas": 1e-10}

#: the DNN polish searches ρ within this relative window around the solver's value
POLISH_WINDOW = 0.1


def _sdp_setup(problem, k, max_dim: int):
    """(k, the cvxpy module, C, forming error of C): the common start of every SDP bound."""
    k = check_k(problem, k)
    if problem.dim > max_dim:
        raise NotApplicable(f"SDP relaxations limited to D ≤ {max_dim}, got D = {problem.dim}")
    import cvxpy as cp  # deferred: cvxpy takes about 1 s to import, paid only when an SDP bound runs

    C, err = dense_matrix(problem)
    return k, cp, C, err


def _pick_solver(cp, D: int, solver: str | None) -> tuple[str, dict]:
    inst = cp.installed_solvers()
    if solver is None:
        solver = "CLARABEL" if (D <= CLARABEL_MAX_DIM and "CLARABEL" in inst) else "SCS"
    if solver not in inst:
        raise NotApplicable(f"cvxpy solver {solver} not installed (have {', '.join(inst)})")
    opts: dict = {}
    if solver == "SCS":
        opts = dict(SCS_OPTIONS)
    elif solver == "CLARABEL":
        opts = dict(CLARABEL_OPTIONS)
    return solver, opts


#: the solvers' own keywords for a time limit in seconds, and for an iteration cap
TIME_LIMIT_OPTION = {"SCS": "time_limit_secs", "CLARABEL": "time_limit"}
ITERATION_OPTION = {"SCS": "max_iters", "CLARABEL": "max_iter"}

#: estimated operations of one solver iteration per D³ (SCS: the PSD cone's eigendecomposition; Clarabel:
#: its KKT factorisation), measured on these SDPs at D = 20 to 150, one BLAS thread (reports/bench/work.md)
ITER_OPS = {"SCS": 40.0, "CLARABEL": 1.2e4}
#: an iteration's fixed seconds, and the fixed seconds of a solve (cvxpy's canonicalisation, the repair)
ITER_SECONDS = 5e-4
SOLVE_SECONDS = 0.05


def iteration_seconds(solver: str, D: int) -> float:
    """Estimated seconds of one iteration of ``solver`` on an SDP of D × D (what a work allotment is charged)."""
    return ITER_OPS.get(solver, ITER_OPS["CLARABEL"]) * D**3 / FLOP_RATE + ITER_SECONDS


def sdp_setup_seconds(problem, k) -> float:
    """Estimated seconds of an SDP bound before its solver's first iteration and after its last: cvxpy's
    canonicalisation, and the repaired duals' eigenproblems (the DNN polish: about 30 of them)."""
    return SOLVE_SECONDS + 30 * 10 * problem.dim**3 / FLOP_RATE


def _solve(cp, prob, solver: str, opts: dict, time_limit: float | Work | None = None) -> tuple[str, float]:
    """Solve ``prob`` with ``solver`` (SCS on a SolverError of another), stopped after ``time_limit``
    seconds by the solver's own limit: the one wall-clock limit of a bound, since a cvxpy solve cannot be
    paused to read the budget clock (:mod:`certpca.clock`); its dual point is repaired and valid anyway.
    An allotment of work (:class:`~certpca.clock.Work`) is no clock: the solve runs to an iteration cap,
    what is left of it over :func:`iteration_seconds`, so that its result does not depend on the machine's
    load, and each iteration done is charged to it (the setup: ``BoundSpec.estimate``, by the certificate)."""
    t0 = time.perf_counter()
    work = time_limit if isinstance(time_limit, Work) else None
    seconds = None if isinstance(time_limit, Work) else time_limit
    if work is not None:
        opts = {**opts, **_iteration_cap(work, solver, prob, opts)}
    limit = {} if seconds is None else {TIME_LIMIT_OPTION[solver]: max(float(seconds), 0.01)}
    opts = {**opts, **limit} if solver in TIME_LIMIT_OPTION else opts
    try:
        with warnings.catch_warnings():  # a solve stopped at its limit is inaccurate by design
            if seconds is not None or work is not None:
                warnings.filterwarnings("ignore", message="Solution may be inaccurate", category=UserWarning)
            prob.solve(solver=solver, **opts)
    except cp.error.SolverError:
        if solver != "SCS":
            limit = {} if seconds is None else {TIME_LIMIT_OPTION["SCS"]: max(float(seconds), 0.01)}
            cap = {} if work is None else _iteration_cap(work, "SCS", prob, SCS_FALLBACK_OPTIONS)
            prob.solve(solver="SCS", **{**SCS_FALLBACK_OPTIONS, **cap}, **limit)
            solver = "SCS"
        else:
            raise
    finally:
        if work is not None:
            iters = getattr(prob.solver_stats, "num_iters", None) if prob.solver_stats is not None else None
            done = iters if iters is not None else opts.get(ITERATION_OPTION.get(solver, ""), 0)
            work.charge(float(done or 0) * iteration_seconds(solver, _sdp_dim(prob)))
    return solver, time.perf_counter() - t0


def _sdp_dim(prob) -> int:
    """D of the D × D matrix variable of ``prob``."""
    return max(int(v.shape[0]) for v in prob.variables())


def _iteration_cap(work: Work, solver: str, prob, opts: dict) -> dict:
    """The solver's iteration cap within what is left of ``work``, at most its cap in ``opts`` (none when both
    are unlimited)."""
    left, key = work.left(), ITERATION_OPTION[solver]
    if not np.isfinite(left):
        return {}
    cap = max(int(left / iteration_seconds(solver, _sdp_dim(prob))), 1)
    return {key: min(cap, int(opts.get(key, cap)))}


def dspca_sdp_bound(
    problem,
    k,
    nonneg=False,
    *,
    solver: str | None = None,
    max_dim: int = MAX_DIM,
    time_limit: float | Work | None = None,
) -> Bound:
    """DSPCA SDP, certified through its dual U:  OPT ≤ λmax(C + U) + k·max|U|.

    The formulation introduces Y = X with 1ᵀ|Y|1 ≤ k; the dual of X = Y is U.
    Both ±U (sign conventions) are evaluated in numpy and the better kept; the
    cheap soft-threshold dual is evaluated too (both valid).  ``time_limit`` as for :func:`dnn_sdp_bound`.
    Validity: as :func:`certpca.certification.duals.dspca_dual_bound` for a given U.
    """
    t0 = time.perf_counter()
    k, cp, C, _ = _sdp_setup(problem, k, max_dim)
    D = problem.dim
    X = cp.Variable((D, D), PSD=True)
    Y = cp.Variable((D, D), symmetric=True)
    link = X == Y
    prob = cp.Problem(cp.Maximize(cp.trace(C @ X)), [cp.trace(X) == 1, cp.sum(cp.abs(Y)) <= k, link])
    solver, opts = _pick_solver(cp, D, solver)
    solver, secs = _solve(cp, prob, solver, opts, time_limit)
    U = link.dual_value
    best, how = np.inf, None
    if U is not None:
        U = np.asarray(U, dtype=float)
        U = (U + U.T) / 2
        for sgn in (1.0, -1.0):
            b = dspca_dual_bound(problem, k, nonneg, U=sgn * U)
            if b.value < best:
                best, how = b.value, f"solver dual ({'+' if sgn > 0 else '-'}U)"
    cheap = dspca_dual_bound(problem, k, nonneg)
    if cheap.value < best:
        best, how = cheap.value, "soft-threshold dual (solver dual was worse)"
    return Bound(
        best,
        "dspca_sdp",
        {
            "solver": solver,
            "status": prob.status,
            "solve_seconds": secs,
            "solver_objective_not_a_bound": _float_or_none(prob.value),
            "dual": how,
        },
        time.perf_counter() - t0,
        "repaired solver dual U evaluated in numpy: λ̂max(C+U) + Weyl margin + k·max|U| + rel 1e-10",
    )


def dnn_sdp_bound(
    problem,
    k,
    nonneg=True,
    *,
    solver: str | None = None,
    max_dim: int = MAX_DIM,
    polish: bool = True,
    time_limit: float | Work | None = None,
) -> Bound:
    """Doubly nonnegative SDP, certified through its dual (ρ, N).

    Repair: ρ ← max(ρ, 0), N ← max(sym(N), 0); then kρ + λmax(C − ρ11ᵀ + N) in numpy.
    ``polish``: a 1-D search over a scaling of ρ around the solver's value with N
    fixed (every point is valid).  ``time_limit``: seconds of the solver's own (wall-clock) limit
    (:func:`_solve`); the dual point it stops at is repaired as any other.
    Validity: as :func:`certpca.certification.duals.dnn_value`.
    """
    t0 = time.perf_counter()
    if not nonneg:
        raise NotApplicable("the DNN relaxation is for nonnegative w")
    k, cp, C, err = _sdp_setup(problem, k, max_dim)
    D = problem.dim
    X = cp.Variable((D, D), PSD=True)
    sum_con = cp.sum(X) <= k
    nn_con = X >= 0
    prob = cp.Problem(cp.Maximize(cp.trace(C @ X)), [cp.trace(X) == 1, sum_con, nn_con])
    solver, opts = _pick_solver(cp, D, solver)
    solver, secs = _solve(cp, prob, solver, opts, time_limit)
    rho = sum_con.dual_value
    N = nn_con.dual_value
    if rho is None or N is None:
        raise NotApplicable(f"{solver} returned no dual point (status {prob.status})")
    rho = max(float(np.asarray(rho).ravel()[0]), 0.0)
    N = np.maximum((np.asarray(N, float) + np.asarray(N, float).T) / 2, 0.0)
    best = dnn_value(C, k, rho, N, err)
    rho_best = rho
    if polish:
        v, r = minimize_1d(
            lambda rr: dnn_value(C, k, rr, N, err),
            max(0.0, rho * (1 - POLISH_WINDOW)),
            rho * (1 + POLISH_WINDOW) + 1e-12,
            5,
            12,
            extra=(rho,),
        )
        if v < best:
            best, rho_best = v, r
    # the primal proposes a feasible point too: positive part of X's top eigenvector, top k
    feas, found = None, {}
    if X.value is not None:
        vx = np.linalg.eigh(X.value)[1][:, -1]
        vx = vx if vx.sum() >= 0 else -vx
        idx = np.argsort(-vx)[:k]
        w = np.zeros(D)
        w[idx] = np.maximum(vx[idx], 0)
        if np.linalg.norm(w) > 0:
            w /= np.linalg.norm(w)
            feas, found = problem.variance(w), vector_params(w)
    return Bound(
        best,
        "dnn_sdp",
        {
            "solver": solver,
            "status": prob.status,
            "solve_seconds": secs,
            "solver_objective_not_a_bound": _float_or_none(prob.value),
            "rho": rho_best,
            "rho_solver": rho,
            "feasible_value": feas,
            **found,
        },
        time.perf_counter() - t0,
        "repaired solver dual (ρ≥0, N≥0) evaluated in numpy: kρ + λ̂max(C−ρ11ᵀ+N) + Weyl margin + rel 1e-10",
    )


def _float_or_none(x) -> float | None:
    try:
        return float(x)
    except (TypeError, ValueError):
        return None


DSPCA_SDP = BoundSpec(
    "dspca_sdp",
    dspca_sdp_bound,
    COST_SDP,
    max_dim=MAX_DIM,
    time_option="time_limit",
    estimate=sdp_setup_seconds,
    charges=True,  # each solver iteration
    description="DSPCA semidefinite relaxation (cvxpy), certified through its repaired dual U",
    reference=DSPCA,
)

DNN_SDP = BoundSpec(
    "dnn_sdp",
    dnn_sdp_bound,
    COST_SDP,
    nonneg_only=True,
    max_dim=MAX_DIM,
    time_option="time_limit",
    estimate=sdp_setup_seconds,
    charges=True,  # each solver iteration
    description="doubly nonnegative semidefinite relaxation (cvxpy), certified through its repaired dual",
    reference=DNN_REFERENCE,
)

SPECS = [DSPCA_SDP, DNN_SDP]
