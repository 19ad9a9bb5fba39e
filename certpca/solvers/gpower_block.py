"""Block GPower (Journée, Nesterov, Richtárik & Sepulchre, JMLR 2010, Sec. 3): m components at once on
the Stiefel manifold, and the helpers both GPower variants share (the thresholded scores, γ's range).

Notation and penalties as in :mod:`certpca.solvers.gpower`: ``A`` is the factor of the covariance
operator (r × D), ``X`` an r × m point of St(r, m), ``c = AᵀX``; the ℓ1 and ℓ0 penalties of eqs. (16)
and (18) threshold c column by column with weights μ.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..errors import InputError
from ..problem import Problem
from ..validation import check_cardinality, check_choice, check_int
from .base import top_k

PENALTIES = ("l1", "l0")


def scores(c: np.ndarray, nonneg: bool) -> np.ndarray:
    """s_i = |a_iᵀx| (sparse) or [a_iᵀx]₊ (nonnegative): what the threshold acts on."""
    return np.maximum(c, 0.0) if nonneg else np.abs(c)


def gamma_max(A: np.ndarray, penalty: str) -> float:
    """The γ beyond which every loading is zero: max‖a_i‖ (ℓ1) or max‖a_i‖² (ℓ0) (slides §4)."""
    sq = float(np.max(np.einsum("ij,ij->j", A, A))) if A.size else 0.0
    return float(np.sqrt(sq)) if penalty == "l1" else sq


def polar(G: np.ndarray) -> np.ndarray:
    """The orthogonal polar factor UVᵀ of G = UΣVᵀ (the maximiser of tr(XᵀG) on St(p, m))."""
    U, _, Vt = np.linalg.svd(G, full_matrices=False)
    return U @ Vt


def _block_closed_form(
    c: np.ndarray, gamma: np.ndarray, mu: np.ndarray, penalty: str, nonneg: bool = False
) -> np.ndarray:
    """Z(X) from c = AᵀX (D × m): ℓ1 z_ij = sign(c_ij)[μ_j|c_ij| − γ_j]₊, ℓ0 z_ij = c_ij where
    (μ_j c_ij)² > γ_j (JMLR 2010 eqs. (16) and (18)); positive parts of c when ``nonneg``."""
    s = scores(c, nonneg) * mu
    if penalty == "l1":
        return np.sign(c) * np.maximum(s - gamma, 0.0)
    return np.where(s * s > gamma, c, 0.0)


def _block_iterate(A, X, gamma, mu, penalty, nonneg, tol, max_iter):
    """X ← Polar(G), column j of G = μ_j A z_j (∝ ∂f/∂x_j; ℓ0: μ_j² A z_j) (Algorithms 4, 5)."""
    scale = mu if penalty == "l1" else mu * mu
    for it in range(1, max_iter + 1):
        c = A.T @ X
        Z = _block_closed_form(c, gamma, mu, penalty, nonneg)
        G = (A @ Z) * scale
        norm = np.linalg.norm(G, "nuc") if G.any() else 0.0
        if norm == 0:
            return X, c, it, True
        # Δ(X) = max_{Y∈St} ⟨G, Y − X⟩ = ‖G‖_* − ⟨G, X⟩
        if norm - np.sum(G * X) <= tol * norm:
            return X, c, it, True
        X = polar(G)
    return X, A.T @ X, max_iter, False


def gpower_block(
    problem: Problem,
    k: int | Sequence[int] | None,
    m: int,
    penalty: str = "l1",
    gamma: float | Sequence[float] | None = None,
    mu: Sequence[float] | None = None,
    *,
    nonneg: bool = False,
    tol: float = 1e-10,
    max_iter: int = 1000,
    bisection: int = 40,
    return_info: bool = False,
):
    """m sparse loading vectors at once: GPower ℓ1,m or ℓ0,m (JMLR 2010, Sec. 3, Alg. 4–5).

    Long because the deterministic start, the per-column γ search and the exact-k_j
    thresholding act on one shared X and one bisection record.

    Parameters
    ----------
    k : per-component cardinality (an int or one per column); None with ``gamma`` given.
    m : number of components (≤ rank of C).
    penalty : "l1" or "l0".
    gamma : γ_j in the paper's scale (scalar or length m), γ_j < μ_j max‖a_i‖ (ℓ1) or
        (μ_j max‖a_i‖)² (ℓ0); None searches each γ_j for k_j.  With both given, columns
        denser than k_j are cut to their k_j largest entries.
    mu : the weights μ_j (default all 1).  Distinct μ_j (e.g. 1, 1/2, …) break the
        rotational symmetry and order the components like principal directions
        (JMLR 2010, Sec. 3.1); with all μ_j = 1 the columns are an unordered set.
    nonneg : nonnegative loadings (positive parts of AᵀX; exact, see the module notes).
        A column with fewer than k_j positive scores comes back with fewer nonzeros.

    γ search: all γ_j are bisected simultaneously, each on its own bracket from its own
    column's cardinality after a block run (warm-started from the previous X); the
    columns interact through the polar step, so a bracket is a heuristic, not a proof.
    Exact k_j per column: the final X is the run at γ_j = (largest γ_j that gave ≥ k_j
    in its column, i.e. the bracket's low end); each column is then thresholded at the
    midpoint of its k_j-th and (k_j+1)-th scores μ_j|a_iᵀx_j| — the closed form for a γ'_j
    that gives exactly k_j at that X (the same rule as the single-unit truncation).

    Start: X0 = the orthonormalised [a_{i*}/‖a_{i*}‖, u_1, …] (largest-norm column then
    the left singular vectors of A), deterministic where the paper's code draws the
    other columns at random.

    Returns
    -------
    W : D × m array of unit-norm loadings (zero columns if γ_j kills them); with
    ``return_info`` also a dict (gamma, X, iterations, converged, bisection).
    """
    check_choice(penalty, PENALTIES, "penalty")
    A = problem.factor()
    r, D = A.shape
    m = check_int(m, "m", low=1, high=r, why=" (the rank of C)")
    weights = np.ones(m) if mu is None else np.asarray(mu, dtype=float).reshape(m)
    if np.any(weights <= 0):
        raise InputError.bad_argument("mu", f"must be positive, got {weights.tolist()}")
    ks = None if k is None else np.array([check_cardinality(kj, D, "k") for kj in np.broadcast_to(np.asarray(k), (m,))])
    gmax = gamma_max(A, penalty) * (weights if penalty == "l1" else weights * weights)

    # deterministic start: a_{i*} then the dominant left singular directions
    norms = np.einsum("ij,ij->j", A, A)
    U = np.linalg.svd(A @ A.T)[0] if r <= D else np.linalg.svd(A, full_matrices=False)[0]
    Q, _ = np.linalg.qr(np.column_stack([A[:, int(np.argmax(norms))], U[:, :m]]))
    X = Q[:, :m]
    if nonneg:  # per column, the sign whose positive part of Aᵀx_j is larger
        c0 = A.T @ X
        X = X * np.where(
            np.linalg.norm(np.maximum(c0, 0), axis=0) >= np.linalg.norm(np.maximum(-c0, 0), axis=0), 1.0, -1.0
        )

    total_it, converged = 0, True
    steps = []

    def run_at(g, X0):
        nonlocal total_it, converged
        Xg, c, it, ok = _block_iterate(A, X0, g, weights, penalty, nonneg, tol, max_iter)
        total_it += it
        converged &= ok
        return Xg, c, np.count_nonzero(_block_closed_form(c, g, weights, penalty, nonneg), axis=0)

    if gamma is not None:
        g = np.broadcast_to(np.asarray(gamma, dtype=float), (m,)).copy()
        X, c, cards = run_at(g, X)
        steps.append((g.tolist(), cards.tolist()))
    else:
        if ks is None:
            raise InputError.bad_argument("k", "is needed when gamma is None: give k or gamma")
        lo, hi = np.zeros(m), np.array(gmax, dtype=float)
        g = 0.5 * (lo + hi)
        for _ in range(bisection):
            Xn, c, cards = run_at(g, X)
            steps.append((g.tolist(), cards.tolist()))
            if np.all(cards == ks):
                X = Xn
                break
            lo = np.where(cards >= ks, g, lo)
            hi = np.where(cards < ks, g, hi)
            if np.all(cards > 0):
                X = Xn
            # columns already at k keep their γ
            g = np.where(cards == ks, g, 0.5 * (lo + hi))
        else:
            g = np.where(cards == ks, g, lo)
            X, c, cards = run_at(g, X)
            steps.append((g.tolist(), cards.tolist()))
    Z = _block_closed_form(c, g, weights, penalty, nonneg)
    if ks is not None:
        s = scores(c, nonneg) * weights
        for j in range(m):
            if np.count_nonzero(Z[:, j]) != ks[j]:
                keep, lower = top_k(s[:, j], ks[j])
                upper = s[keep, j].min()
                gj = 0.5 * (upper + lower)
                gj = gj if penalty == "l1" else gj * gj
                col = np.zeros(D)
                col[keep] = _block_closed_form(c[keep, j : j + 1], np.array([gj]), weights[j : j + 1], penalty, nonneg)[
                    :, 0
                ]
                if upper <= lower or np.count_nonzero(col) < ks[j]:  # ties: keep the top k as they are
                    col[keep] = np.maximum(c[keep, j], 0.0) if nonneg else c[keep, j]
                Z[:, j] = col
    nrm = np.linalg.norm(Z, axis=0)
    W = np.divide(Z, nrm, out=np.zeros_like(Z), where=nrm > 0)
    if return_info:
        return W, {"gamma": g.tolist(), "X": X, "iterations": total_it, "converged": converged, "bisection": steps}
    return W


__all__ = ["PENALTIES", "gamma_max", "gpower_block", "polar", "scores"]
