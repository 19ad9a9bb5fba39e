"""Swap search: a local polish of a sparse vector by exchanging one feature of its support at a time.

A vector w on support S (refitted: the top eigenvector of C_SS, or its nonnegative refit) is a
*coordinate-wise maximum* when no swap of one feature i ∈ S for one j ∉ S gives a better support
(Beck & Vaisbourd 2016, Sec. 4: CW-maxima are a stronger optimality condition than the fixed points
of power-type methods such as EM and GPower).  For each pair (i, j) the swapped support holds the
vectors x·u/‖u‖ + y·e_j with u = w − w_i e_i (u ⟂ e_j), so the best of them is the top eigenvalue of

    [[uᵀCu/‖u‖²,  uᵀCe_j/‖u‖], [uᵀCe_j/‖u‖,  C_jj]],
    uᵀCu = wᵀCw − 2w_i g_i + w_i² C_ii,   uᵀCe_j = g_j − w_i C_ij,   ‖u‖² = 1 − w_i²,   g = Cw,

a lower bound on λ1(C_S'S') that needs only g and the rows C_S· (for w ≥ 0 the mix needs
uᵀCe_j > 0, else the better of its two ends).  The best pair is found without all k·D rows: with
|C_ij| ≤ √(C_ii C_jj), every pair of a column j is at most
max(max_i a_i, C_jj) + (|g_j| + max_i|w_i| √(max_i C_ii · C_jj)) / √(1 − max_i w_i²), so columns are
read in that bound's order, in blocks, until the best pair found beats the next column's bound.
The best swap is refitted (:func:`~.renormalize.renormalize`, from the 2 × 2 maximiser) and kept
when it raises wᵀCw; the search stops at the first swap that does not.

On the bundled data it raised the best of EM, GPower-ℓ0 and the spannogram above every single
registry solver on 8 of the 10 rows where one had beaten them (reports/bench/defaults.md).
"""

from __future__ import annotations

import numpy as np

from ..problem import Problem
from .renormalize import renormalize

REFERENCE = (
    "Beck, A. & Vaisbourd, Y. (2016). The sparse principal component analysis problem: optimality "
    "conditions and algorithms. Journal of Optimization Theory and Applications, 170, 119-143."
)

#: a swap counts only when it raises wᵀCw by more than this fraction (rounding, and no cycling)
GAIN_RTOL = 1e-9


def cross_block(problem: Problem, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """C[rows, cols] (dense) without forming C: F_rowsᵀF_cols for a factor, a slice of C otherwise."""
    if problem.uses_factor:
        return problem.factor_columns(rows).T @ problem.factor_columns(cols)
    return problem.columns(cols)[rows]


def _pair_values(
    a: np.ndarray, n2: np.ndarray, w_s: np.ndarray, g: np.ndarray, block: np.ndarray, diag: np.ndarray, nonneg: bool
) -> tuple[np.ndarray, np.ndarray]:
    """The 2 × 2 maxima (|S| × |J|) of the module notes for rows S and columns J, and the normalised
    coupling b = uᵀCe_j/‖u‖ (the sign of the mix)."""
    b = (g[None, :] - w_s[:, None] * block) / np.sqrt(n2)[:, None]
    c = diag[None, :]
    top = 0.5 * (a[:, None] + c) + np.sqrt(0.25 * (a[:, None] - c) ** 2 + b * b)
    if nonneg:
        top = np.where(b > 0, top, np.maximum(a[:, None], c))
    return top, b


def best_swap(problem: Problem, w: np.ndarray, nonneg: bool) -> tuple[float, int, int, np.ndarray] | None:
    """The best single swap for w by the 2 × 2 lower bound: (value, feature out, feature in, the
    maximiser on the swapped support), or None when w has fewer than two features."""
    support = np.flatnonzero(w)
    w_s = w[support]
    n2 = 1.0 - w_s * w_s
    keep = n2 > 1e-12  # a feature holding all the weight leaves nothing to mix with
    if support.size < 2 or not keep.any():
        return None
    support, w_s, n2 = support[keep], w_s[keep], n2[keep]
    g = problem.matvec(w)
    value = float(w @ g)
    diag = problem.diag
    a = (value - 2 * w_s * g[support] + w_s * w_s * diag[support]) / n2
    outside = np.ones(problem.dim, bool)
    outside[np.flatnonzero(w)] = False
    cols = np.flatnonzero(outside)
    if cols.size == 0:
        return None
    mag = np.maximum(g[cols], 0.0) if nonneg else np.abs(g[cols])
    w_max = float(np.abs(w_s).max())
    ub = np.maximum(a.max(), diag[cols]) + (mag + w_max * np.sqrt(diag[support].max() * diag[cols])) / np.sqrt(
        1.0 - w_max * w_max
    )
    order = cols[np.argsort(-ub, kind="stable")]
    ub_sorted = np.sort(ub)[::-1]
    step = max(2 * support.size, 64)
    best: tuple[float, int, int, float] | None = None  # (value, row, column, coupling)
    for lo in range(0, order.size, step):
        if best is not None and best[0] >= ub_sorted[lo]:
            break
        J = order[lo : lo + step]
        top, b = _pair_values(a, n2, w_s, g[J], cross_block(problem, support, J), diag[J], nonneg)
        row, col = np.unravel_index(int(np.argmax(top)), top.shape)
        if best is None or top[row, col] > best[0]:
            best = (float(top[row, col]), int(row), int(J[col]), float(b[row, col]))
    assert best is not None
    found, i, j, b_ij = best
    # the maximiser of the 2 × 2 form: (x, y) ∝ (b, λ − a), or one end when the two do not mix
    x, y = (b_ij, found - a[i]) if b_ij != 0 else ((1.0, 0.0) if a[i] >= diag[j] else (0.0, 1.0))
    if nonneg and b_ij <= 0:
        x, y = (1.0, 0.0) if a[i] >= diag[j] else (0.0, 1.0)
    v = w.copy()
    v[support[i]] = 0.0
    v *= x / np.sqrt(n2[i])
    v[j] = y
    norm = np.linalg.norm(v)
    return found, int(support[i]), j, v / norm


def swap_search(
    problem: Problem, w: np.ndarray, k: int, nonneg: bool, *, max_swaps: int | None = None, cache: dict | None = None
) -> tuple[np.ndarray, float, int]:
    """Swaps of one feature at a time from a refitted w while they raise wᵀCw (module notes).

    Returns (vector, its wᵀCw, swaps made); at most ``max_swaps`` (default k) swaps, each
    refitted on its support with :func:`~.renormalize.renormalize` (``cache`` is its cache).
    """
    value = problem.variance(w)
    swaps = 0
    for _ in range(k if max_swaps is None else max_swaps):
        found = best_swap(problem, w, nonneg)
        if found is None or found[0] <= value * (1 + GAIN_RTOL):
            break
        _, _, _, start = found
        refit, new_value = renormalize(problem, start, np.flatnonzero(start), nonneg, cache=cache)
        if new_value <= value * (1 + GAIN_RTOL):
            break
        w, value, swaps = refit, new_value, swaps + 1
    return w, value, swaps


__all__ = ["REFERENCE", "best_swap", "cross_block", "swap_search"]
