"""Compiled inner loop of NSPCA (Zass & Shashua 2006, Algorithm 1, eqs. 4–5).

Kept apart from :mod:`certpca.solvers.nspca` so that numba (about 0.2 s to
import) loads on the first NSPCA fit, not on ``import certpca``.  The compiled
functions are cached on disk (``cache=True``): only the first run after an
install pays the JIT compile.

The sweep updates, entry by entry in the given order, U (D × L) together with
the caches it keeps exact up to rounding: G = UᵀU (L × L) and P, the rows of
(AU)ᵀ (L × D) when A is dense, or of (FU)ᵀ (L × r) when A = FᵀF is held as a
factor.  M is A (dense) or Fᵀ (D × r, factor): the change δ of U[s, r] adds
δ·M[s] to P[r], a rank-one update that costs O(D) or O(r) and never forms AU
again.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

_TWO_PI_3 = 2.0 * math.pi / 3.0


@njit(cache=True)
def quartic(u: float, alpha: float, c2: float, c1: float) -> float:
    """f(u) = −(α/4)u⁴ + (c₂/2)u² + c₁u, Zass & Shashua eq. (4) without its constant."""
    u2 = u * u
    return -0.25 * alpha * u2 * u2 + 0.5 * c2 * u2 + c1 * u


@njit(cache=True)
def _polish(t: float, p: float, q: float) -> float:
    """One Newton step on t³ + pt + q = 0."""
    d = 3.0 * t * t + p
    if d != 0.0:
        t -= (t * t * t + p * t + q) / d
    return t


@njit(cache=True)
def best_nonneg(alpha: float, c2: float, c1: float, current: float) -> float:
    """Global maximiser of eq. (4) over u ≥ 0: the best of 0, ``current`` and the roots of eq. (5).

    The roots of f'(u) = −αu³ + c₂u + c₁ are those of the depressed cubic
    t³ + pt + q (p = −c₂/α, q = −c₁/α): three real ones by the trigonometric
    formula when (q/2)² + (p/3)³ < 0, else one by Cardano in the
    cancellation-free form t = w − p/(3w); each gets one Newton step.
    ``current`` wins ties, so no update lowers eq. (3) (monotone ascent).
    """
    best_u = current
    best_f = quartic(current, alpha, c2, c1)
    if best_f < 0.0:  # f(0) = 0
        best_u, best_f = 0.0, 0.0
    p = -c2 / alpha
    q = -c1 / alpha
    disc = 0.25 * q * q + p * p * p / 27.0
    if disc < 0.0:  # three real roots (p < 0)
        m = 2.0 * math.sqrt(-p / 3.0)
        arg = 3.0 * q / (p * m)
        arg = max(-1.0, min(arg, 1.0))
        theta = math.acos(arg) / 3.0
        n_roots = 3
    else:
        sq = math.sqrt(disc)
        a = -0.5 * q - (sq if q >= 0.0 else -sq)
        w = math.copysign(abs(a) ** (1.0 / 3.0), a)
        one = w - p / (3.0 * w) if w != 0.0 else 0.0
        m = theta = 0.0
        n_roots = 1
    for j in range(n_roots):
        t = m * math.cos(theta - _TWO_PI_3 * j) if n_roots == 3 else one
        t = _polish(t, p, q)
        if t > 0.0:
            ft = quartic(t, alpha, c2, c1)
            if ft > best_f:
                best_u, best_f = t, ft
    return best_u


@njit(cache=True)
def sweep(
    U: np.ndarray,
    G: np.ndarray,
    P: np.ndarray,
    diag: np.ndarray,
    M: np.ndarray,
    factor: bool,
    alpha: float,
    beta: float,
    entries: np.ndarray,
) -> tuple[int, float]:
    """One pass of Algorithm 1 over ``entries`` (m × 2 rows (s, r)), in that order.

    c₁ and c₂ of eq. (4) come from the caches: with g = Σ_{i≠s} A_si U[i,r],
    m_r = Σ_{i≠s} U[i,r]² and, per q ≠ r, p_q = Σ_{i≠s} U[i,r]U[i,q],
    c₁ = g − α Σ_{q≠r} U[s,q] p_q − β and c₂ = A_ss + α − α m_r − α Σ_{q≠r} U[s,q]².
    Returns the number of entries changed and the rise of eq. (3), the sum of
    f(new) − f(old) over the updates.
    """
    L = U.shape[1]
    width = P.shape[1]
    changed = 0
    gain = 0.0
    for e in range(entries.shape[0]):
        s = entries[e, 0]
        r = entries[e, 1]
        u = U[s, r]
        a = diag[s]
        if factor:
            g = 0.0
            for j in range(width):
                g += M[s, j] * P[r, j]
            g -= a * u
        else:
            g = P[r, s] - a * u
        grr = G[r, r]
        sq = 0.0
        cross = 0.0
        for q in range(L):
            if q != r:
                usq = U[s, q]
                sq += usq * usq
                cross += usq * G[q, r]
        cross -= u * sq  # p_q excludes i = s: subtract U[s,r]·U[s,q]
        c1 = g - alpha * cross - beta
        c2 = a + alpha - alpha * (grr - u * u) - alpha * sq
        new = best_nonneg(alpha, c2, c1, u)
        if new != u:
            delta = new - u
            gain += quartic(new, alpha, c2, c1) - quartic(u, alpha, c2, c1)
            for q in range(L):
                if q != r:
                    G[r, q] += delta * U[s, q]
                    G[q, r] += delta * U[s, q]
            G[r, r] = grr + new * new - u * u
            U[s, r] = new
            for j in range(width):
                P[r, j] += delta * M[s, j]
            changed += 1
    return changed, gain
