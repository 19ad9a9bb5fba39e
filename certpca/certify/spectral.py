"""Textbook spectral bounds: trace, λ1, Gershgorin, Perron (docs/certification.md §2).

Each function has the signature ``(problem, k, nonneg=False, **options) -> Bound``
and returns a value ≥ OPT(k, nonneg) under floating point (margins from
:mod:`certpca.certify.numerics`).
"""

from __future__ import annotations

import numpy as np

from certpca.certify.numerics import (
    DENSE_LIMIT,
    Bound,
    NotApplicable,
    check_k,
    dense_matrix,
    gamma,
    lmax_upper,
    psd_shift,
    safe,
    spectrum_margin,
    timed,
    topk_sum,
)
from certpca.certify.spec import (
    COST_EIGEN,
    COST_LINEAR,
    COST_QUADRATIC,
    HORN_JOHNSON,
    BoundSpec,
)

#: factor problems above this D would need O(D²·r) row blocks: not a default bound
GERSHGORIN_MAX_DIM = 60000

#: memory for one block of rows of FᵀF in the factor Gershgorin bound
GERSHGORIN_BLOCK_BYTES = 32 * 2**20


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
    sign_free=True,
    description="sum of the k largest variances C_ii",
    reference="Elementary: for PSD C and |S| ≤ k, λmax(C_SS) ≤ tr C_SS ≤ sum of the k largest C_ii "
    "(the eigenvalues of a PSD matrix are nonnegative and add up to its trace; " + HORN_JOHNSON + " §1.2).",
)


def _row_top_sums(G: np.ndarray, kk: int) -> np.ndarray:
    """Per row of G (diagonal already zeroed), the sum of its kk largest entries."""
    D = G.shape[1]
    if kk == 0:
        return np.zeros(G.shape[0])
    if kk >= D - 1:
        return G.sum(axis=1)
    return np.partition(G, D - kk, axis=1)[:, D - kk :].sum(axis=1)


@timed
def gershgorin_bound(
    problem, k, nonneg=False, *, max_dim: int = GERSHGORIN_MAX_DIM, block_bytes: int = GERSHGORIN_BLOCK_BYTES
) -> Bound:
    """OPT ≤ max_i [C_ii + sum of the k−1 largest |C_ij|, j ≠ i]  (nonneg: (C_ij)₊).

    Gershgorin on C_SS for the optimal support S (|S| ≤ k); for w ≥ 0,
    wᵀCw ≤ wᵀC₊w ≤ λmax((C₊)_SS) ≤ its largest row sum (Perron–Frobenius).
    This is ≤ "the k largest |C_ij| of row i, diagonal included".
    For a factor C = FᵀF the rows are formed a block at a time (never D × D).
    Validity: each formed entry has error ≤ γ_r·√(C_ii C_jj) ≤ γ_r·max C_jj, so
    the margin is k·γ_r·max_j C_jj plus γ_k·value for the sums, plus rel 1e-10.
    """
    k = check_k(problem, k)
    D = problem.dim
    diag = problem.diag
    kk = k - 1
    if problem.uses_factor:
        if D > max_dim:
            raise NotApplicable(f"O(D²·r) row blocks and D = {D} > max_dim = {max_dim}")
        F = problem.factor()
        r = F.shape[0]
        b = max(1, min(D, block_bytes // (8 * D)))
        best = -np.inf
        for i0 in range(0, D, b):
            i1 = min(D, i0 + b)
            G = F[:, i0:i1].T @ F
            G[np.arange(i1 - i0), np.arange(i0, i1)] = 0.0
            G = np.maximum(G, 0.0) if nonneg else np.abs(G)
            d = diag[i0:i1]
            best = max(best, float(np.max((np.maximum(d, 0) if nonneg else d) + _row_top_sums(G, kk))))
        err = k * gamma(r) * float(np.max(diag))
        how = f"row blocks of {b}"
    else:
        C = problem.dense()
        G = np.maximum(C, 0.0) if nonneg else np.abs(C)
        np.fill_diagonal(G, 0.0)
        d = np.maximum(diag, 0) if nonneg else diag
        best = float(np.max(d + _row_top_sums(G, kk)))
        err = 0.0
        how = "dense"
    v = best + err + gamma(k) * abs(best)
    return Bound(
        safe(v),
        "gershgorin",
        {"positive_part": bool(nonneg), "how": how, "margin": err},
        0.0,
        "max row sum of k largest entries (exact floats; factor rows with error ≤ γ_r·max C_jj "
        "each) + γ_k summation + rel 1e-10",
    )


GERSHGORIN = BoundSpec(
    "gershgorin",
    gershgorin_bound,
    COST_QUADRATIC,
    max_dim=GERSHGORIN_MAX_DIM,
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
    description="λmax(max(C, 0)), for w ≥ 0",
    reference="Elementary: for w ≥ 0, wᵀCw ≤ wᵀC₊w ≤ λmax(C₊) with C₊ = max(C, 0) (Rayleigh–Ritz; "
    "Perron–Frobenius theory of nonnegative matrices, " + HORN_JOHNSON + " ch. 8).",
)

SPECS = [TRACE, LAMBDA1, GERSHGORIN, PERRON]
