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

from ..problem import Problem
from .base import fix_sign


def renormalize(
    problem: Problem, w: np.ndarray, support: np.ndarray, nonneg: bool, *, tol: float = 1e-12, max_iter: int = 10_000
) -> np.ndarray:
    """Best unit vector on ``support`` (at least as good as ``w``), zero elsewhere."""
    support = np.sort(np.asarray(support, dtype=np.intp))
    if support.size == 0:
        return w
    if problem.uses_factor and support.size > problem.factor_rows:
        sub = problem.subset(support)
        v = sub.first_pc()
        matvec: Callable[[np.ndarray], np.ndarray] = sub.matvec
    else:
        C = problem.submatrix(support)
        v = np.linalg.eigh(C)[1][:, -1]
        v = fix_sign(v, nonneg=False)
        matvec = C.__matmul__
    if nonneg and np.any(v < 0):
        v = _projected_power(matvec, np.maximum(w[support], 0.0), tol, max_iter)
    out = np.zeros_like(w)
    out[support] = v
    # Keep the input if rounding made the refit marginally worse.
    return out if problem.variance(out) >= problem.variance(w) else w


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
