"""Textbook spectral bounds: trace, λ1, Gershgorin, Perron (docs/certification.md §2).

Each function has the signature ``(problem, k, nonneg=False, **options) -> Bound``
and returns a value ≥ OPT(k, nonneg) under floating point (margins from
:mod:`certpca.certification.numerics`).
"""

from __future__ import annotations

import numpy as np

from certpca.certification.numerics import (
    BOUND_SECONDS,
    DENSE_LIMIT,
    Bound,
    NotApplicable,
    check_k,
    dense_eigen_seconds,
    dense_matrix,
    gamma,
    gershgorin_block_seconds,
    gershgorin_columns,
    linear_seconds,
    lmax_upper,
    psd_shift,
    safe,
    sample_space_seconds,
    spectrum_margin,
    timed,
    topk_sum,
)
from certpca.certification.spec import (
    COST_EIGEN,
    COST_EXPONENTIAL,
    COST_LINEAR,
    COST_QUADRATIC,
    HORN_JOHNSON,
    BoundSpec,
)
from certpca.clock import deadline

#: the smallest positive float64 (subnormal), the unit of underflow error
SUBNORMAL_MIN = 2.0**-1074

#: memory for one block of rows of FᵀF in the factor Gershgorin bound
GERSHGORIN_BLOCK_BYTES = 32 * 2**20


def gershgorin_seconds(problem, k) -> float:
    """The Gershgorin bound's work before it can first stop: its screen and first row block of a factor (the
    whole of a dense C); each later block it charges itself."""
    D = problem.dim
    if not problem.uses_factor:
        return BOUND_SECONDS + gershgorin_block_seconds(D, D, 0)
    return BOUND_SECONDS + gershgorin_block_seconds(_block_rows(D, GERSHGORIN_BLOCK_BYTES), D, problem.factor_rows)


def _block_rows(dim: int, block_bytes: int) -> int:
    return max(1, min(dim, block_bytes // (8 * dim)))


@timed
def lambda1_bound(problem, k, nonneg=False) -> Bound:
    """OPT ≤ λmax(C): dropping the sparsity (and sign) constraint.

    Validity: λ̂max of C (or of the r × r Gram FFᵀ when C = FᵀF) plus
    margin 8·n·eps·‖M‖_F (+ γ_D·tr C for forming FFᵀ); then relative 1e-10.
    """
    check_k(problem, k)
    lam = float(problem.eigenvalues()[0])
    m = spectrum_margin(problem)
    return Bound(
        safe(lam + m),
        "lambda1",
        {"lambda_max": lam, "margin": m},
        0.0,
        "λmax from LAPACK eigh (on FFᵀ if factored) + Weyl margin 8·n·eps·‖M‖_F (+γ_D·tr C forming FFᵀ) + rel 1e-10",
    )


LAMBDA1 = BoundSpec(
    "lambda1",
    lambda1_bound,
    COST_EIGEN,
    estimate=sample_space_seconds,  # the r × r Gram (or a dense eigh): 10 s at 100 × 10⁶, not interruptible
    sign_free=True,
    description="largest eigenvalue λmax(C)",
    reference="Elementary: wᵀCw ≤ λmax(C) for every unit w (Rayleigh–Ritz theorem; " + HORN_JOHNSON + " §4.2).",
)


@timed
def trace_bound(problem, k, nonneg=False) -> Bound:
    """OPT ≤ sum of the k largest C_ii  (λmax(C_SS) ≤ tr C_SS for PSD C).

    For a dense C that may be slightly indefinite the exact statement used is
    λmax(C_SS) ≤ tr C_SS + (k − 1)·s with s ≥ −λmin(C) certified.
    Validity: a sum of k floats (relative error ≤ γ_k) + rel 1e-10.
    """
    k = check_k(problem, k)
    s = psd_shift(problem)
    v = topk_sum(problem.diag, k) + (k - 1) * s
    v = v + gamma(k) * abs(v)
    return Bound(
        safe(v),
        "trace",
        {"shift": s},
        0.0,
        "sum of k largest diagonal entries (exact floats) with γ_k summation margin + rel 1e-10",
    )


TRACE = BoundSpec(
    "trace",
    trace_bound,
    COST_LINEAR,
    work=linear_seconds,
    sign_free=True,
    description="sum of the k largest variances C_ii",
    reference="Elementary: for PSD C and |S| ≤ k, λmax(C_SS) ≤ tr C_SS ≤ sum of the k largest C_ii "
    "(the eigenvalues of a PSD matrix are nonnegative and add up to its trace; " + HORN_JOHNSON + " §1.2).",
)


def gershgorin_screen(diag: np.ndarray, k: int, rows: int) -> np.ndarray:
    """Per feature i, u_i ≥ the computed k-sparse Gershgorin row value of a factored C = FᵀF.

    |C_ij| = |a_iᵀa_j| ≤ ‖a_i‖‖a_j‖ (Cauchy–Schwarz), so row i's value is at most
    C_ii + √C_ii·(sum of the k − 1 largest √C_jj, j ≠ i).  Under floating point a
    formed entry obeys |Ĉ_ij| ≤ (1 + γ_r)·|a_i|ᵀ|a_j| ≤ (1 + γ_r)/(1 − γ_r)·√(Ĉ_ii Ĉ_jj)
    (Higham §3.1, Cauchy–Schwarz on |a_i|, |a_j|), and the k-term sums of the row
    value and of u_i each lose at most γ_{k+4}; the factor 1 + 4·γ_{r+k+4} covers
    all of it, so u_i is at or above row i's value however its block is formed.
    Underflow adds at most 2^−1075 per product: Ĉ_ii + r·2^−1074 stands for C_ii
    under the roots and k·r·2^−1074 is added.  O(D log D).
    """
    D = len(diag)
    kk = min(k - 1, D - 1)
    tiny = rows * SUBNORMAL_MIN
    sq = np.sqrt(np.maximum(diag, 0.0) + tiny)
    if kk <= 0:
        return np.maximum(diag, 0.0)
    order = np.argsort(-sq, kind="stable")
    top = float(np.sum(sq[order[:kk]]))
    nxt = float(sq[order[kk]]) if kk < D else 0.0
    others = np.full(D, top)
    others[order[:kk]] = top - sq[order[:kk]] + nxt  # i is among the kk largest: its place goes to the next
    return (np.maximum(diag, 0.0) + sq * others) * (1 + 4 * gamma(rows + k + 4)) + k * tiny


@timed
def gershgorin_bound(
    problem, k, nonneg=False, *, block_bytes: int = GERSHGORIN_BLOCK_BYTES, time_limit: float | None = None
) -> Bound:
    """OPT ≤ max_i [C_ii + sum of the k−1 largest |C_ij|, j ≠ i]  (nonneg: (C_ij)₊).

    Gershgorin on C_SS for the optimal support S (|S| ≤ k); for w ≥ 0,
    wᵀCw ≤ wᵀC₊w ≤ λmax((C₊)_SS) ≤ its largest row sum (Perron–Frobenius).
    This is ≤ "the k largest |C_ij| of row i, diagonal included".

    For a factor C = FᵀF the value is computed exactly without forming every row:
    rows are formed a block of columns at a time (``Problem.columns``, O(r·D·b))
    in decreasing order of the screen u_i ≥ row i's value (:func:`gershgorin_screen`),
    and the search stops when the next screen is ≤ the best row found.  Proof that
    the result is the full maximum: every row not formed has u_i ≤ that screen ≤
    the best formed row, and row i's value ≤ u_i.  Stopped early by ``time_limit``
    (seconds, checked between blocks), it returns max(best row, next screen), which
    is ≥ every row's value and so still a valid bound, and says so in ``params``; a
    :class:`~certpca.clock.Work` is charged each block after the first (:func:`gershgorin_block_seconds`)
    before it is formed, and one it cannot pay for is not.
    Validity: each formed entry has error ≤ γ_r·√(C_ii C_jj) ≤ γ_r·max C_jj, so
    the margin is k·γ_r·max_j C_jj plus γ_k·value for the sums, plus rel 1e-10.
    """
    stop_at = deadline(time_limit)
    k = check_k(problem, k)
    D = problem.dim
    diag = problem.diag
    if problem.uses_factor:
        r = problem.factor_rows
        screen = gershgorin_screen(diag, k, r)
        order = np.argsort(-screen, kind="stable")
        b = _block_rows(D, block_bytes)
        best, p = -np.inf, 0
        while p < D and screen[order[p]] > best:
            idx = order[p : p + b]
            if p:  # the first block is the certificate's to charge (gershgorin_seconds)
                cost = gershgorin_block_seconds(len(idx), D, r)
                if stop_at.left() < cost:
                    break
                stop_at.charge(cost)
            best = max(best, float(np.max(gershgorin_columns(problem.columns(idx), idx, diag[idx], k, nonneg))))
            p += len(idx)
        complete = bool(p == D or screen[order[p]] <= best)
        if not complete:
            best = max(best, float(screen[order[p]]))
        err = k * gamma(r) * float(np.max(diag))
        info = {"rows_formed": p, "complete": complete, "how": f"screened row blocks of {b}"}
    else:
        best = float(np.max(gershgorin_columns(problem.dense(), np.arange(D), diag, k, nonneg)))
        err = 0.0
        info = {"rows_formed": D, "complete": True, "how": "dense"}
    v = best + err + gamma(k) * abs(best)
    return Bound(
        safe(v),
        "gershgorin",
        {"positive_part": bool(nonneg), "margin": err, **info},
        0.0,
        "max row sum of k largest entries (exact floats; factor rows with error ≤ γ_r·max C_jj "
        "each, rows not formed bounded by Cauchy–Schwarz) + γ_k summation + rel 1e-10",
    )


GERSHGORIN = BoundSpec(
    "gershgorin",
    gershgorin_bound,
    COST_QUADRATIC,
    time_option="time_limit",
    estimate=gershgorin_seconds,
    charges=True,  # each row block after the first
    # a cheap bound: where its screen prunes nothing it would form all of C (leukemia --scale, 12,582 rows: 3.3 s of
    # a 15 s budget for 1.052 × the value, the threshold bound then 1.0127 instead of 1.0082); with 5% of what is
    # left it completes on every bundled set but that one, which it bounds by its screen (reports/bench/certify.md)
    factor_share=0.05,
    description="largest row sum of the k largest |C_ij| (nonneg: positive parts)",
    reference="Elementary: Gershgorin's circle theorem on C_SS for the optimal support S, "
    "λmax(C_SS) ≤ max_i Σ_{j∈S} |C_ij|; for w ≥ 0 the row-sum bound on the spectral radius "
    "of the nonnegative (C₊)_SS (" + HORN_JOHNSON + " §6.1 and §8.1).",
)


@timed
def perron_bound(problem, k, nonneg=True, *, limit: int = DENSE_LIMIT) -> Bound:
    """Nonnegative only: OPT⁺ ≤ λmax(C₊) with C₊ = max(C, 0) entrywise.

    For w ≥ 0: wᵀCw ≤ wᵀC₊w ≤ λmax(C₊).  Dense D only.
    Validity: C₊ is exact (or formed from F with error ≤ γ_r·tr C); λ̂max
    + Weyl margin 8·D·eps·‖C₊‖_F + rel 1e-10.
    """
    check_k(problem, k)
    if not nonneg:
        raise NotApplicable("the Perron bound λmax(C₊) holds only for nonnegative w")
    C, err = dense_matrix(problem, limit)
    v, m = lmax_upper(np.maximum(C, 0.0), err)
    return Bound(
        safe(v),
        "perron",
        {"margin": m},
        0.0,
        "λmax(max(C,0)) by LAPACK + Weyl margin 8·D·eps·‖C₊‖_F (+forming) + rel 1e-10",
    )


PERRON = BoundSpec(
    "perron",
    perron_bound,
    COST_QUADRATIC,
    nonneg_only=True,
    max_dim=DENSE_LIMIT,
    estimate=dense_eigen_seconds,  # one D × D eigenproblem, which no clock can interrupt
    description="λmax(max(C, 0)), for w ≥ 0",
    reference="Elementary: for w ≥ 0, wᵀCw ≤ wᵀC₊w ≤ λmax(C₊) with C₊ = max(C, 0) (Rayleigh–Ritz; "
    "Perron–Frobenius theory of nonnegative matrices, " + HORN_JOHNSON + " ch. 8).",
    factor_cost=COST_EXPONENTIAL,  # forms the D × D covariance
)

SPECS = [TRACE, LAMBDA1, GERSHGORIN, PERRON]
