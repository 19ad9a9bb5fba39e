"""Variational renormalisation: the best weights for a fixed support (Moghaddam et al. 2006).

For sparse PCA the best unit vector on a support S is the top eigenvector of C_SS
(formed directly when S is small, through the Gram matrix of the factor when S is
wider than the data are tall).  For nonnegative PCA that eigenvector is used when
it has one sign; otherwise projected power iterations w ← (C_SS w)₊/‖·‖ from the
current vector, which never lower wᵀCw: for convex f(w) = wᵀCw,
f(w⁺) ≥ f(w) + ∇f(w)ᵀ(w⁺ − w) ≥ f(w) because w⁺ maximises the linear term
∇f(w)ᵀ· over unit nonnegative vectors on S.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from scipy.linalg import lapack

from ..problem import Problem
from .base import fix_sign


def renormalize(
    problem: Problem,
    w: np.ndarray,
    support: np.ndarray,
    nonneg: bool,
    *,
    tol: float = 1e-12,
    max_iter: int = 10_000,
    cache: dict | None = None,
    beat: float | None = None,
) -> tuple[np.ndarray, float]:
    """Best unit vector on ``support`` (at least as good as ``w``), zero elsewhere, and its wᵀCw.

    ``cache`` (a dict the caller keeps for one problem) holds the eigenvector of
    every support refitted so far, so several runs that end on one support cost
    one eigenproblem.  ``beat``: a value the caller already has; when even the
    unconstrained λ₁(C_SS) ≤ beat, a nonnegative refit (≤ λ₁(C_SS)) cannot exceed
    it, and ``w`` is returned as it is instead of running the projected power
    iterations.
    """
    support = np.sort(np.asarray(support, dtype=np.intp))
    if support.size == 0:
        return w, problem.variance(w)
    key = support.tobytes()
    if cache is not None and key in cache:
        v, matvec = cache[key]
    else:
        v, matvec = _top_eigenvector(problem, support)
        if cache is not None:
            cache[key] = v, matvec
    if nonneg and np.any(v < 0):
        if beat is not None and float(v @ matvec(v)) <= beat:
            return w, problem.variance(w)
        v = _projected_power(matvec, np.maximum(w[support], 0.0), tol, max_iter)
    out = np.zeros_like(w)
    out[support] = v
    # Keep the input if rounding made the refit marginally worse.
    refit, given = problem.variance(out), problem.variance(w)
    return (out, refit) if refit >= given else (w, given)


def _top_eigenvector(problem: Problem, support: np.ndarray) -> tuple[np.ndarray, Callable[[np.ndarray], np.ndarray]]:
    """Top unit eigenvector of C_SS (sign fixed) and a product with C_SS.

    Through the Gram matrix F_S F_Sᵀ of the factor when S is wider than the factor is
    tall (C_SS = F_SᵀF_S has the same nonzero spectrum; v = F_Sᵀu/‖F_Sᵀu‖); only the
    top eigenpair is computed (LAPACK's subset driver).
    """
    if problem.uses_factor and support.size > problem.factor_rows:
        Fs = problem.factor_columns(support)
        v = Fs.T @ _top_eigvec(Fs @ Fs.T)
        norm = np.linalg.norm(v)
        v = v / norm if norm > 0 else np.ones(support.size) / np.sqrt(support.size)
        return fix_sign(v, nonneg=False), lambda x: Fs.T @ (Fs @ x)
    C = problem.submatrix(support)
    return fix_sign(_top_eigvec(C), nonneg=False), C.__matmul__


def _top_eigvec(A: np.ndarray) -> np.ndarray:
    """A unit eigenvector of the largest eigenvalue of a symmetric A (LAPACK's dsyevr asked for
    that one pair: a third of a full eigh at 72 × 72, and called directly, without scipy's checks)."""
    m = A.shape[0]
    _, z, _, _, info = lapack.dsyevr(A, compute_v=1, range="I", il=m, iu=m)
    if info != 0:  # no convergence (never seen): the full decomposition
        return np.linalg.eigh(A)[1][:, -1]
    return z[:, 0]


def _projected_power(matvec, v: np.ndarray, tol: float, max_iter: int) -> np.ndarray:
    """Monotone ascent of vᵀCv over unit nonnegative v (a local maximiser on the face)."""
    if not v.any():
        v = np.ones(len(v))
    v = v / np.linalg.norm(v)
    for _ in range(max_iter):
        g = np.maximum(matvec(v), 0.0)
        norm = np.linalg.norm(g)
        if norm == 0:
            break
        new = g / norm
        if np.linalg.norm(new - v) <= tol:
            return new
        v = new
    return v
