"""Dual bounds: every feasible point of a dual problem gives an upper bound on OPT.

dABE / Li–Xie diagonal shrink, the DSPCA dual, the doubly nonnegative (DNN)
dual and the dABE pattern certificate (docs/certification.md §3).  Each has a
free parameter (ρ, U, N, the dual Y_i) and is valid for *every* value of it,
so the 1-D searches here only buy tightness, never validity.  Margins from
:mod:`certpca.certification.numerics`.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import numpy as np
import scipy.sparse.linalg

from certpca.certification.numerics import (
    BOUND_SECONDS,
    DENSE_LIMIT,
    EPS,
    FLOP_RATE,
    LANCZOS_MIN,
    MARGIN_SLACK,
    TINY,
    Bound,
    NotApplicable,
    check_k,
    deadline_after,
    dense_eigen_seconds,
    dense_matrix,
    gamma,
    lmax_estimate,
    lmax_upper,
    minimize_1d,
    psd_shift,
    safe,
    sample_space_seconds,
    timed,
    topk_sum,
    whole_run,
)
from certpca.certification.spec import COST_EXPONENTIAL, COST_SEARCH, DABE, DSPCA, LI_XIE, BoundSpec
from certpca.clock import Deadline
from certpca.errors import InputError

#: the DSPCA and DNN duals form D × D matrices per ρ: default-selection limit on D
DUAL_MAX_DIM = 2000

#: roundings per entry of D^½(C + sI)D^½ formed densely (sqrt, two products, the shift)
SHRINK_ROUNDINGS = 4

#: above this D the pattern's support is chosen by thresholding the first PC, not greedily
GREEDY_MAX_DIM = 400

#: the pattern's special dual Y_i is used only when |s_i² − ρ| ≥ this · (‖a_i‖² + ρ):
#: its rounding error grows like 1/gap, and the shift τ_i below must stay small
PATTERN_MIN_GAP = 1e-4

#: an outside feature with ‖Pa_i‖ below this · ‖a_i‖ has no usable direction: fallback Y_i
PATTERN_MIN_PROJECTION = 1e-8

#: bytes of the r × b feature blocks the sample-space sums Σ c_i w_i w_iᵀ are formed in (so their
#: temporaries stay this size instead of several copies of the r × D factor)
SUM_BLOCK_BYTES = 2**25


def _blocks(r: int, D: int):
    """Slices of at most SUM_BLOCK_BYTES // (8r) features covering 0..D."""
    step = max(1, SUM_BLOCK_BYTES // (8 * max(r, 1)))
    return (slice(j, min(j + step, D)) for j in range(0, D, step))


#: τ_i = factor·(r + PATTERN_TAU_ROWS)·eps·(‖a_i‖² + ρ)·(...) bounds the rounding of one Y_i
#: (a few dot products of length r, a rank-one outer product and the division by the gap)
PATTERN_TAU_SPECIAL = 16
PATTERN_TAU_FALLBACK = 4
PATTERN_TAU_ROWS = 8

#: a support is reported proved optimal when the bound is within this of its value
PATTERN_PROVED_RTOL = 1e-6


#: Lanczos products of an estimated λmax charged per evaluation (ARPACK to tol 1e-8 from the all-ones vector)
ESTIMATE_PRODUCTS = 50


def shrunk_gram_seconds(problem, n_keep: int, estimate: bool = False) -> float:
    """Estimated seconds of :func:`_shrunk_gram` keeping ``n_keep`` features: forming the m × m matrix
    (m = min(n_keep, r) on a factor of r rows, n_keep on a dense C) and its eigenvalues, m³, or
    ``ESTIMATE_PRODUCTS`` products with it for an estimate; against CPU seconds on pbmc's deflated
    components (0.1–66 ms an evaluation) and leukemia, within a factor of 1.5."""
    if problem.uses_factor:
        r = problem.factor_rows
        m = min(n_keep, r)
        form, product = r * n_keep * m, 2 * r * n_keep
    else:
        m = n_keep
        form, product = m * m, m * m
    solve = ESTIMATE_PRODUCTS * product if estimate else m**3
    return (form + solve) / FLOP_RATE + BOUND_SECONDS / 10


def _shrunk_gram(problem, rho: float, s: float, C=None, err_C: float = 0.0, *, estimate: bool = False) -> float:
    """λmax upper bound of D^½(C+sI)D^½ with D = diag((1 − ρ/(C_ii+s))₊); with ``estimate`` only
    :func:`lmax_estimate` of it (to steer the ρ search).

    For factor problems in sample space (F D Fᵀ, r × r) or, when fewer features are kept
    than F has rows, on the kept features (D^½ FᵀF D^½), whichever is smaller.
    """

    def lmax(M, form):
        return lmax_estimate(M) if estimate else lmax_upper(M, form)[0]

    dg = problem.diag + s
    with np.errstate(divide="ignore", invalid="ignore"):
        dvec = np.where(dg > 0, np.maximum(1.0 - rho / dg, 0.0), 0.0)
    if problem.uses_factor and C is None:
        F = problem.factor()
        keep = dvec > 0
        n_keep = int(keep.sum())
        if n_keep == 0:
            return 0.0
        if estimate and n_keep >= F.shape[0] >= LANCZOS_MIN:  # Lanczos on v ↦ F D Fᵀ v, not r²·D to form it
            op = scipy.sparse.linalg.LinearOperator((F.shape[0],) * 2, matvec=lambda v: F @ (dvec * (F.T @ v.ravel())))
            return lmax_estimate(op)
        weight = float(np.sum(dvec[keep] * problem.diag[keep]))  # Σ d_i‖a_i‖² ≥ ‖|D^½||Fᵀ||F||D^½|‖_F
        if n_keep < F.shape[0]:
            # the smaller Gram D^½FᵀFD^½ (features kept) has the same nonzero eigenvalues as FDFᵀ;
            # entry error: r roundings of the inner product, the square root and the two scalings
            Fs = F[:, keep] * np.sqrt(dvec[keep])
            return lmax(Fs.T @ Fs, gamma(F.shape[0] + 4) * weight)
        M = np.zeros((F.shape[0], F.shape[0]))
        for b in _blocks(*F.shape):
            kb = keep[b]
            if kb.any():
                Fk = F[:, b][:, kb]
                M += (Fk * dvec[b][kb]) @ Fk.T
        # a sum of n terms has error ≤ γ_{n−1}·Σ|terms| in any order, so summing by blocks keeps the bound
        return lmax(M, gamma(n_keep + 2) * weight)
    keep = dvec > 0
    if not np.any(keep):
        return 0.0
    sq = np.sqrt(dvec[keep])
    # M = diag(sq)(C_KK + sI)diag(sq) with each entry rounded as (sq_i·(C_ij + s·δ_ij))·sq_j, in one array
    M = C[np.ix_(keep, keep)] if not keep.all() else C.copy()
    M *= sq[:, None]
    M *= sq[None, :]
    np.fill_diagonal(M, sq * (np.diag(C)[keep] + s) * sq)
    # entry error: SHRINK_ROUNDINGS roundings (sqrt, two products, shift) plus C's own forming error
    form = SHRINK_ROUNDINGS * EPS * float(np.linalg.norm(M)) + err_C + 2 * EPS * s
    return lmax(M, form)


@timed
def dabe_bound(
    problem,
    k,
    nonneg=False,
    *,
    n_grid: int = 16,
    n_golden: int = 14,
    limit: int = DENSE_LIMIT,
    time_limit: float | None = None,
) -> Bound:
    """d'Aspremont–Bach–El Ghaoui fallback, tightened by the Li–Xie form.

    With a_i the columns of F (C = FᵀF) and unit u in sample space,
    OPT = max_u top_k (a_iᵀu)²  and  (a_iᵀu)² ≤ (1−μ_i)(a_iᵀu)² + μ_i C_ii, so for
    every μ ∈ [0,1]^D (Li & Xie 2020, eq. 13)

        OPT ≤ λmax(F diag(1−μ) Fᵀ) + top_k(μ_i C_ii).

    μ_i = min(1, ρ/C_ii) gives λmax(D^½CD^½) + top_k(min(C_ii, ρ)) with
    D = diag((1 − ρ/C_ii)₊): never above dABE's  kρ + λmax(D^½CD^½)
    (JMLR 2008, Y_i = (B_i)₊), equal when ≥ k features have C_ii ≥ ρ.
    Features with C_ii ≤ ρ drop out.  ρ is searched on [0, max C_ii]
    (grid + golden section); every ρ gives a valid bound.
    Computed on the smaller of F D Fᵀ (r × r, summed by column blocks) and D^½FᵀFD^½ (kept features)
    when C is factored, else on the dense C (shifted by s ≥ −λmin to be PSD).  The search stops after
    ``time_limit`` seconds (checked between evaluations), keeping the best ρ so far; a
    :class:`~certpca.clock.Work` is charged each evaluation after the first at its size
    (:func:`shrunk_gram_seconds`: on pbmc's fifth deflated component they cost 8 × the first's).
    Validity: λ̂max + Weyl margin 8·n·eps·‖M‖_F + forming error
    (γ·Σ d_i C_ii for F D Fᵀ, γ_{r+4}·Σ d_i C_ii for D^½FᵀFD^½; 4·eps·‖M‖_F dense) + rel 1e-10.
    """
    k = check_k(problem, k)
    s = psd_shift(problem)
    C, err_C = (None, 0.0) if problem.uses_factor else dense_matrix(problem, limit)
    dg = problem.diag + s

    # λmax at ρ (bounded, and estimated) does not depend on k: memoised, and then not charged again
    memo, guesses = problem.memo.setdefault("dabe", {}), problem.memo.setdefault("dabe_estimates", {})
    stop = deadline_after(time_limit)
    first = True  # the first evaluation is the certificate's to charge (DABE_SPEC.estimate)

    def charged(rho: float, estimate: bool) -> None:
        nonlocal first
        if not first:
            stop.charge(shrunk_gram_seconds(problem, int(np.count_nonzero(dg > rho)), estimate))
        first = False

    def f(rho):
        if rho not in memo:
            charged(rho, False)
            memo[rho] = _shrunk_gram(problem, rho, s, C, err_C)
        lam = memo[rho]
        v = lam + topk_sum(np.minimum(dg, rho), k) - s
        return safe(v + gamma(k + 2) * (abs(lam) + k * rho + s))

    def guess(rho):
        if rho not in guesses:
            charged(rho, True)
            guesses[rho] = _shrunk_gram(problem, rho, s, C, err_C, estimate=True)
        return guesses[rho] + topk_sum(np.minimum(dg, rho), k) - s

    hi = float(np.max(dg))
    large = (problem.factor_rows if problem.uses_factor else problem.dim) >= LANCZOS_MIN
    best, rho = minimize_1d(f, 0.0, hi, n_grid, n_golden, deadline=stop, estimate=guess if large else None)
    n_active = int(np.sum(dg > rho))
    return Bound(
        best,
        "dabe",
        {"rho": rho, "active_features": n_active, "shift": s, "space": "factor" if problem.uses_factor else "dense"},
        0.0,
        "Li–Xie/dABE diagonal-shrink bound at the best searched ρ; λ̂max + Weyl margin "
        "8·n·eps·‖M‖_F + forming error + rel 1e-10",
    )


DABE_SPEC = BoundSpec(
    "dabe",
    dabe_bound,
    COST_SEARCH,
    time_option="time_limit",
    estimate=sample_space_seconds,  # its first evaluation; it charges the others (shrunk_gram_seconds)
    charges=True,
    sign_free=True,
    description="d'Aspremont–Bach–El Ghaoui / Li–Xie diagonal shrink: λmax(D^½CD^½) + top_k(min(C_ii, ρ))",
    reference=DABE + " (§§4–6, the dual bound kρ + λmax(Σ(B_i)₊)); tightened by the per-feature "
    "shrinkage of " + LI_XIE + " (eq. 13).",
)


#: iterations of the projected power method that finds a relaxation's feasible point (:func:`l1_sphere_floor`)
FLOOR_ITERATIONS = 100
#: and it ends once an iteration gains less than this, relatively (pbmc k = 30, signed: 42.4689 in 0.08 CPU s,
#: where 1e-12 took 100 iterations and 4.4 s for 42.4690)
FLOOR_STALL = 1e-6


def l1_sphere_floor(problem, k: int, nonneg: bool = False, *, time_limit: Deadline | float | None = None) -> float:
    """A value below which no point of the DSPCA dual (:func:`dspca_dual_bound`) or, with ``nonneg``, the DNN
    dual (:func:`dnn_dual_bound`) can go: ⟨C, X⟩ at X = vvᵀ/‖v‖², feasible in the relaxation whose dual the
    bound is, since ‖v‖₁² ≤ k‖v‖² (and v ≥ 0): tr X = 1, X ⪰ 0, Σ|X_ij| ≤ k (and X ≥ 0, 1ᵀX1 ≤ k).  Weak
    duality: ⟨C, X⟩ = ⟨C + U, X⟩ − ⟨U, X⟩ ≤ λmax(C + U) + k·max|U_ij| for every U; for w ≥ 0,
    ⟨C, X⟩ = ⟨C − ρ11ᵀ + N, X⟩ + ρ·1ᵀX1 − ⟨N, X⟩ ≤ λmax(C − ρ11ᵀ + N) + kρ for ρ ≥ 0, N ≥ 0.
    v comes from a projected power method on {‖v‖₂ = 1, ‖v‖₁ ≤ √k} (and v ≥ 0), from the top eigenvector
    (its positive part); a certificate skips the bound when this is at least its best bound so far (on pbmc
    k = 30, w ≥ 0: 40.27 against the DNN dual's 41.08, 17 CPU s, and the best bound 39.35).  Each iteration
    is charged to ``time_limit`` (a :class:`~certpca.clock.Work`) and the search stops when it is spent.
    −inf when no point is found."""
    stop = deadline_after(time_limit)
    root = np.sqrt(k) * (1 - 1e-9)  # room for the rounding of the sums checked below
    step = 2 * (problem.factor_rows * problem.dim if problem.uses_factor else problem.dim**2) / FLOP_RATE
    v = _l1_sphere_point(problem.first_pc(), root, nonneg)
    best = -np.inf
    for _ in range(FLOOR_ITERATIONS):
        if v is None or stop.passed():
            break
        norm2 = float(v @ v)
        if float(np.sum(np.abs(v))) ** 2 <= k * norm2 * (1 - 1e-12):  # feasible with room for the sums' rounding
            value = problem.variance(v) / norm2
            if value <= best * (1 + FLOOR_STALL):
                break
            best = value
        stop.charge(step)
        v = _l1_sphere_point(problem.matvec(v), root, nonneg)
    # the computed ⟨C, X⟩ is within a few ulps per term of the exact one at this v
    return best - 64 * EPS * problem.dim * abs(best) if np.isfinite(best) else best


def _l1_sphere_point(y: np.ndarray, root: float, nonneg: bool) -> np.ndarray | None:
    """The maximiser of ⟨y, v⟩ over ‖v‖₂ = 1, ‖v‖₁ ≤ root (and v ≥ 0): sign(y)(|y| − τ)₊ normalised (for
    v ≥ 0, of y₊, and y oriented so that it has a positive entry), τ ≥ 0 the smallest threshold that meets
    the ℓ1 constraint (bisection); None when y has no usable entry."""
    if nonneg:
        y = np.maximum(y if y.max(initial=0.0) > 0 else -y, 0.0)
    size, sign = np.abs(y), np.sign(y)
    top = float(size.max(initial=0.0))
    if top <= 0:
        return None

    def unit(t: float) -> np.ndarray:
        z = sign * np.maximum(size - t, 0.0)
        return z / np.linalg.norm(z)

    v = unit(0.0)
    if np.abs(v).sum() <= root:
        return v
    lo, hi = 0.0, top * (1 - 1e-12)
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if np.abs(unit(mid)).sum() <= root else (mid, hi)
    return unit(hi)


@timed
def dspca_dual_bound(
    problem,
    k,
    nonneg=False,
    *,
    U=None,
    n_grid: int = 16,
    n_golden: int = 12,
    limit: int = DUAL_MAX_DIM,
    time_limit: Deadline | float | None = None,
) -> Bound:
    """DSPCA dual: for any symmetric U, OPT ≤ λmax(C + U) + k·max|U_ij|.

    (Tr(CX) = Tr((C+U)X) − Tr(UX) ≤ λmax(C+U) + max|U|·Σ|X_ij| and Σ|X_ij| =
    ‖w‖₁² ≤ k for X = wwᵀ.)  Cheap choice U = −clip(C, ±ρ), i.e. C + U is C
    soft-thresholded at ρ, with ρ searched on [0, max|C_ij|].  A given ``U``
    (e.g. the repaired dual of the SDP) is evaluated as is.  The search ends after ``time_limit``
    seconds (budget clock) with its best ρ so far (every ρ is valid).
    Validity: U is defined from the formed Ĉ, so λmax(C+U) ≤ λmax(Ĉ+U) + ‖C−Ĉ‖₂;
    soft-thresholding rounds each entry once (≤ eps·‖M‖_F); λ̂max + Weyl margin
    8·D·eps·‖M‖_F; rel 1e-10.
    """
    k = check_k(problem, k)
    C, err = dense_matrix(problem, limit)

    def value(Um):
        M = C + Um
        lam, _ = lmax_upper(M, err + EPS * float(np.linalg.norm(M)))
        return safe(lam + k * float(np.max(np.abs(Um))) * (1 + 2 * EPS))

    if U is not None:
        U = np.asarray(U, dtype=float)
        if U.shape != C.shape:
            raise InputError.bad_argument("U", f"must be a {C.shape[0]} × {C.shape[0]} matrix, got shape {U.shape}")
        U = (U + U.T) / 2
        return Bound(
            value(U),
            "dspca",
            {"U": "given"},
            0.0,
            "λmax(C+U)+k·max|U| for a symmetric U; λ̂max + Weyl margin + rel 1e-10",
        )

    def f(rho):
        return value(-np.clip(C, -rho, rho))

    def guess(rho):
        Um = -np.clip(C, -rho, rho)
        return lmax_estimate(C + Um) + k * rho

    hi = float(np.max(np.abs(C)))
    best, rho = minimize_1d(
        f,
        0.0,
        hi,
        n_grid,
        n_golden,
        deadline=deadline_after(time_limit),
        estimate=guess if len(C) >= LANCZOS_MIN else None,
    )
    return Bound(
        best,
        "dspca",
        {"rho": rho},
        0.0,
        "λmax(soft-threshold(C,ρ)) + kρ at the best searched ρ; λ̂max + Weyl margin "
        "8·D·eps·‖M‖_F (+forming) + rel 1e-10",
    )


DSPCA_SPEC = BoundSpec(
    "dspca",
    dspca_dual_bound,
    COST_SEARCH,
    sign_free=True,
    max_dim=DUAL_MAX_DIM,
    time_option="time_limit",
    estimate=dense_eigen_seconds,
    work=whole_run(dense_eigen_seconds, 30, 0.02),  # a 1-D search of D × D eigenproblems
    description="DSPCA dual λmax(C + U) + k·max|U_ij| at U = −clip(C, ±ρ) (soft threshold)",
    floor=partial(l1_sphere_floor, nonneg=False),  # the signed problem's, as the bound is for w ≥ 0 too
    reference=DSPCA + " (the dual of the semidefinite relaxation).",
    factor_cost=COST_EXPONENTIAL,  # forms the D × D covariance
)


def dnn_value(C: np.ndarray, k: int, rho: float, N: np.ndarray, err: float = 0.0) -> float:
    """Safe value of the DNN dual  kρ + λmax(C − ρ11ᵀ + N)  for ρ ≥ 0, N ≥ 0 (repaired here)."""
    rho = max(float(rho), 0.0)
    N = np.maximum((N + N.T) / 2, 0.0)
    M = C - rho + N
    lam, _ = lmax_upper(M, err + 2 * EPS * float(np.linalg.norm(M)) + EPS * rho * C.shape[0])
    return safe(lam + k * rho)


@timed
def dnn_dual_bound(
    problem,
    k,
    nonneg=True,
    *,
    n_grid: int = 16,
    n_golden: int = 12,
    limit: int = DUAL_MAX_DIM,
    time_limit: Deadline | float | None = None,
) -> Bound:
    """Nonnegative only: for ρ ≥ 0 and N ≥ 0,  OPT⁺ ≤ kρ + λmax(C − ρ11ᵀ + N).

    (For w ≥ 0 unit with ‖w‖₀ ≤ k: ρ(1ᵀw)² ≤ ρk and wᵀNw ≥ 0.)  Dual of the
    doubly nonnegative relaxation.  Cheap choices, each ρ searched on
    [0, max C_ij]: N = 0;  N = (−C)₊ (C₊ − ρ11ᵀ);  N = (ρ − C)₊ ((C − ρ)₊).  After ``time_limit``
    seconds (budget clock) the searches end with the best point so far and no further choice of N
    starts (every point of every choice is valid).
    Validity: λ̂max + Weyl margin 8·D·eps·‖M‖_F, forming error 2·eps·‖M‖_F
    (+ γ_r·tr C from F) + rel 1e-10.
    """
    k = check_k(problem, k)
    if not nonneg:
        raise NotApplicable("the DNN dual bound holds only for nonnegative w")
    C, err = dense_matrix(problem, limit)
    Z = np.zeros_like(C)
    negC = np.maximum(-C, 0.0)
    results: dict[str, tuple[float, float]] = {}
    choices: dict[str, Callable[[float], np.ndarray]] = {
        "zero": lambda r: Z,
        "neg_part": lambda r: negC,
        "shifted_neg_part": lambda r: np.maximum(r - C, 0.0),
    }
    stop = deadline_after(time_limit)
    for name, n_of in choices.items():
        if results and stop.passed():
            break

        def objective(r: float, n_of: Callable[[float], np.ndarray] = n_of) -> float:
            return dnn_value(C, k, r, n_of(r), err)

        results[name] = minimize_1d(objective, 0.0, max(float(np.max(C)), 0.0), n_grid, n_golden, deadline=stop)
    name = min(results, key=lambda n: results[n][0])
    best, rho = results[name]
    return Bound(
        best,
        "dnn",
        {"rho": rho, "N": name},
        0.0,
        "kρ + λmax(C − ρ11ᵀ + N), ρ ≥ 0, N ≥ 0; λ̂max + Weyl margin 8·D·eps·‖M‖_F (+forming) + rel 1e-10",
    )


DNN_REFERENCE = (
    "Weak duality for the doubly nonnegative (X ⪰ 0, X ≥ 0) version of the DSPCA relaxation "
    "of " + DSPCA + " For w ≥ 0 with ‖w‖₀ ≤ k: ρ(1ᵀw)² ≤ ρk and wᵀNw ≥ 0, so "
    "OPT⁺ ≤ kρ + λmax(C − ρ11ᵀ + N) for every ρ ≥ 0, N ≥ 0 (elementary)."
)

DNN_SPEC = BoundSpec(
    "dnn",
    dnn_dual_bound,
    COST_SEARCH,
    nonneg_only=True,
    max_dim=DUAL_MAX_DIM,
    time_option="time_limit",
    estimate=dense_eigen_seconds,
    work=whole_run(dense_eigen_seconds, 200, 0.02),  # a search over ρ and three N: alon --log2 20 k = 10, 190 s
    floor=partial(l1_sphere_floor, nonneg=True),
    description="doubly nonnegative dual kρ + λmax(C − ρ11ᵀ + N), cheap choices of N",
    reference=DNN_REFERENCE,
    factor_cost=COST_EXPONENTIAL,  # forms the D × D covariance
)


# ------------------------------------------------------- pattern certificate
def factor_with_error(problem) -> tuple[np.ndarray, float]:
    """A factor F and ε ≥ ‖C − FᵀF‖₂ (0 up to forming for a genuinely factored problem)."""
    F = problem.factor()
    if problem.uses_factor:
        return F, 0.0
    C = problem.dense()
    R = C - F.T @ F
    # ‖R_exact‖ ≤ ‖R̂‖_F + forming error of FᵀF (γ_r·tr) + subtraction rounding
    err = (
        float(np.linalg.norm(R)) * (1 + MARGIN_SLACK)
        + gamma(F.shape[0]) * float(np.sum(F * F))
        + EPS * float(np.linalg.norm(C))
    )
    return F, err


def greedy_support(problem, k: int, nonneg: bool = False) -> np.ndarray:
    """Forward greedy support of size k (λmax of C_SS; nonneg: on C₊-ordered features).

    Only a helper to choose a pattern to certify: any support gives a valid bound.
    """
    k = check_k(problem, k)
    D = problem.dim
    if D > GREEDY_MAX_DIM:  # thresholding of the first PC: cheap and, measured, about as strong
        v = problem.first_pc()
        score = np.maximum(v, 0) if nonneg else np.abs(v)
        return np.sort(np.argsort(-score)[:k])
    C = problem.dense()
    S = [int(np.argmax(problem.diag))]
    while len(S) < k:
        best, bj = -np.inf, -1
        for j in range(D):
            if j in S:
                continue
            T = S + [j]
            lam = np.linalg.eigvalsh(C[np.ix_(T, T)])[-1]
            if lam > best:
                best, bj = lam, j
        S.append(bj)
    return np.sort(np.asarray(S))


@timed
def pattern_bound(
    problem,
    k,
    nonneg=False,
    *,
    support=None,
    n_grid: int = 12,
    n_golden: int = 16,
    time_limit: float | None = None,
) -> Bound:
    """dABE pattern certificate (JMLR 2008, §6): a dual point built around a support I.

    Let x = top left singular vector of F_I, s_i = a_iᵀx, B_i = a_ia_iᵀ − ρI, P = I − xxᵀ:
      i ∈ I, s_i² > ρ:   Y_i = B_i x xᵀ B_i / (s_i² − ρ)      (Aczél: ⪰ B_i for any x with xᵀB_ix>0)
      i ∉ I, ρ > s_i²:   Y_i = max{0, ρ(‖a_i‖²−ρ)/(ρ−s_i²)}·Pa_ia_iᵀP/‖Pa_i‖²   (2×2 Schur check)
      otherwise:         Y_i = (B_i)₊
    and OPT ≤ kρ + λmax(Σ Y_i) for every ρ ≥ 0 (any k; best when |I| = k).  When
    the bound meets λmax(C_II) the support I is *proved* globally optimal.
    ρ is searched on [0, max C_ii] and inside [max_{i∉I} s_i², min_{i∈I} s_i²];
    the search stops once I is proved optimal (no ρ can go below λmax(C_II) ≤ OPT
    by more than the proof's tolerance) or after ``time_limit`` seconds, checked
    between evaluations: each costs O(r²·D) (the r × r sum ΣY_i; profiled, ~98%
    of the bound's time), so ~50 of them took 8-19 s at 500 × 20000.
    Sparse bound, valid for nonneg too (OPT⁺ ≤ OPT).
    Validity: the special formulas are used only with a relative gap
    |s_i² − ρ| ≥ 1e-4·(‖a_i‖² + ρ); each Y_i is then shifted by
    τ_i = 16(r+8)·eps·(‖a_i‖²+ρ)·(1 + (‖a_i‖²+ρ)/gap_i) ≥ its rounding error, making
    Y_i + τ_iI exactly feasible, so Στ_i is added; λ̂max + Weyl margin on the
    r × r matrix; for a dense C, F = eigen-factor and ‖C − FᵀF‖ is added; rel 1e-10.
    This function is long because the three cases of Y_i, their rounding shifts and
    the two ρ searches share one vectorised evaluation per ρ (the projections are
    computed once, outside the search).
    """
    k = check_k(problem, k)
    if support is None:
        support = greedy_support(problem, k, nonneg)
    I = np.unique(np.asarray(support, dtype=np.intp))
    F, ferr = factor_with_error(problem)
    r, D = F.shape
    FI = F[:, I]
    U, sv, _ = np.linalg.svd(FI, full_matrices=False)
    x = U[:, 0]
    x = x / np.linalg.norm(x)
    s = F.T @ x
    s2 = s * s
    asq = problem.diag if problem.uses_factor else np.einsum("ij,ij->j", F, F)
    inI = np.zeros(D, bool)
    inI[I] = True
    value_I = float(sv[0] ** 2)
    # ‖P a_i‖ for the columns P a_i = a_i − x s_i, formed a block at a time (never all of P F)
    pnorm = np.empty(D)
    for b in _blocks(r, D):
        pnorm[b] = np.linalg.norm(F[:, b] - np.outer(x, s[b]), axis=0)
    anorm = np.sqrt(asq)

    def total(rho, estimate=False):
        scale = asq + rho
        gap = np.abs(s2 - rho)
        ok_gap = gap >= PATTERN_MIN_GAP * scale
        use_in = inI & (s2 > rho) & ok_gap
        use_out = (~inI) & (rho > s2) & ok_gap & (pnorm > PATTERN_MIN_PROJECTION * np.maximum(anorm, TINY))
        fb = ~(use_in | use_out)
        coef = np.zeros(D)
        # I-case: b_i = B_i x = s_i a_i − ρ x, coefficient 1/(s_i² − ρ)
        coef[use_in] = 1.0 / (s2[use_in] - rho)
        coef[use_out] = np.maximum(rho * (asq[use_out] - rho) / (rho - s2[use_out]), 0.0)
        coef[fb] = np.maximum(asq[fb] - rho, 0.0)
        nz = coef > 0
        M = np.zeros((r, r))
        weight = 0.0  # Σ c_i‖w_i‖² over the terms, for the forming error
        for b in _blocks(r, D):
            Fb, sb = F[:, b], s[b]
            W = np.empty_like(Fb)
            i_in, i_out, i_fb = use_in[b], use_out[b], fb[b]
            if np.any(i_in):
                W[:, i_in] = Fb[:, i_in] * sb[i_in] - rho * x[:, None]
            if np.any(i_out):
                W[:, i_out] = (Fb[:, i_out] - np.outer(x, sb[i_out])) / pnorm[b][i_out]
            if np.any(i_fb):
                an = anorm[b][i_fb]
                with np.errstate(divide="ignore", invalid="ignore"):
                    W[:, i_fb] = np.where(an > 0, Fb[:, i_fb] / np.where(an > 0, an, 1), 0.0)
            nzb = nz[b]
            if np.any(nzb):
                Wn = W[:, nzb]
                cb = coef[b][nzb]
                weight += float(np.sum(cb * np.einsum("ij,ij->j", Wn, Wn)))
                M += (Wn * cb) @ Wn.T
        tau = np.where(
            fb,
            PATTERN_TAU_FALLBACK * (r + PATTERN_TAU_ROWS) * EPS * scale,
            PATTERN_TAU_SPECIAL * (r + PATTERN_TAU_ROWS) * EPS * scale * (1 + scale / np.maximum(gap, TINY)),
        )
        form = gamma(int(nz.sum()) + 2) * weight
        lam = lmax_estimate(M) if estimate else lmax_upper(M, form)[0]
        v = k * rho + lam + float(np.sum(tau)) + ferr
        return safe(v + gamma(4) * abs(v)), int(use_in.sum()), int(use_out.sum())

    lo_in = float(np.max(s2[~inI])) if np.any(~inI) else 0.0
    hi_in = float(np.min(s2[inI]))
    extra = tuple(np.linspace(lo_in, hi_in, 9)[1:-1]) if lo_in < hi_in else ()
    counts: dict[float, tuple[int, int]] = {}

    def value(p: float) -> float:
        v, n_in, n_out = total(p)
        counts[p] = (n_in, n_out)
        return v

    def guess(p: float) -> float:
        return total(p, estimate=True)[0]

    deadline, target = deadline_after(time_limit), value_I * (1 + PATTERN_PROVED_RTOL)
    estimate = guess if r >= LANCZOS_MIN else None
    best, rho = minimize_1d(
        value, 0.0, float(np.max(asq)), n_grid, 4, extra, deadline=deadline, target=target, estimate=estimate
    )
    if lo_in < hi_in and best > target:
        b2, r2 = minimize_1d(value, lo_in, hi_in, 5, n_golden, deadline=deadline, target=target, estimate=estimate)
        if b2 < best:
            best, rho = b2, r2
    n_in, n_out = counts[rho]
    proved = len(I) == k and best <= value_I * (1 + PATTERN_PROVED_RTOL)
    return Bound(
        best,
        "pattern",
        {
            "rho": rho,
            "support": I.tolist(),
            "support_value": value_I,
            "feasible_value": value_I if not nonneg else None,
            "interval": [lo_in, hi_in],
            "n_special_in": n_in,
            "n_special_out": n_out,
            "proves_support_optimal": bool(proved),
        },
        0.0,
        "kρ + λmax(ΣY_i) for feasible Y_i (rounding shifts τ_i added) + ‖C−FᵀF‖ + Weyl margin + rel 1e-10",
    )


PATTERN = BoundSpec(
    "pattern",
    pattern_bound,
    COST_SEARCH,
    time_option="time_limit",
    estimate=sample_space_seconds,
    work=whole_run(sample_space_seconds, 50, 0.2),  # searches over ρ on and off the pattern
    support_option="support",
    description="dABE certificate kρ + λmax(ΣY_i) with a dual point built around the vector's support",
    reference=DABE + " (§6, optimality conditions for a given sparsity pattern).",
)

SPECS = [DABE_SPEC, PATTERN, DSPCA_SPEC, DNN_SPEC]
