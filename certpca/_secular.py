"""Eigenvalues of rank-one modifications of a diagonal matrix from the secular equation (compiled).

For Λ = diag(λ) (λ ascending) and weights w_k = z_k² ≥ 0, the eigenvalues μ of

* the downdate Λ − zzᵀ are the roots of f(μ) = 1 − Σ_k w_k / (λ_k − μ)
  (the secular equation of Golub 1973 and Bunch, Nielsen & Sorensen 1978), one in
  each interval (λ_{k−1}, λ_k) and one in (λ_1 − Σw, λ_1);
* the compression of Λ to z⊥ (deleting row and column j of A = UΛUᵀ, with
  z the j-th row of U) are the roots of Σ_k w_k / (λ_k − μ) = 0 (the (j, j)
  entry of (A − μI)⁻¹ vanishes), one in each interval (λ_{k−1}, λ_k): the
  limit ρ → ∞ of the downdate by ρzzᵀ, so one code with ``rinv`` = 1/ρ.

Both are solved as in LAPACK's dlaed2/dlaed4: deflation first (a weight too
small to move any eigenvalue by more than ``tol``, or two poles closer than
``tol`` after the rotation that zeroes one weight, as Bunch et al. deflate),
then in each interval the root of f from the end it is nearer to (Li's
shifted origin), by a rational model with one pole at each end of the
interval osculating f (in the manner of Bunch et al.'s rational iteration),
with bisection whenever a step leaves the bracket.  The roots are accurate
to a small multiple of n·eps·max|λ|, as eigvalsh's are (tests/test_secular.py).

Kept apart so that numba (about 0.2 s to import) loads only when it is used;
the compiled functions are cached on disk (``cache=True``).  The sums over the
poles (:func:`_evaluate`, nearly all of the time) use numpy's error model: with
Python's, every division checks for a zero divisor, and that branch kept LLVM
from vectorising the loop (pbmc's CE ranking: 4.5 s of CPU before, 2.5–3.4 s
after; the scores move by at most 2e-13 relative on the bundled sets, and no
feature changes its rank).

References: Golub, G. H. (1973). Some modified matrix eigenvalue problems.
SIAM Review 15(2), 318–334.  Bunch, J. R., Nielsen, C. P. & Sorensen, D. C.
(1978). Rank-one modification of the symmetric eigenproblem. Numer. Math. 31,
31–48.  Li, R.-C. (1993). Solving secular equations stably and efficiently.
LAPACK Working Note 89.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

_EPS = float(np.finfo(float).eps)
#: iterations per root before the bracket's midpoint is taken (quadratic convergence needs < 10)
MAX_ITER = 80


@njit(cache=True, fastmath={"reassoc", "contract"}, error_model="numpy")
def _evaluate(poles, weights, m, j, origin, tau):
    """ψ (poles below interval j), φ (poles from j on) and their derivatives at μ = origin + τ."""
    psi = 0.0
    dpsi = 0.0
    for k in range(j):
        r = 1.0 / ((poles[k] - origin) - tau)
        t = weights[k] * r
        psi += t
        dpsi += t * r
    phi = 0.0
    dphi = 0.0
    for k in range(j, m):
        r = 1.0 / ((poles[k] - origin) - tau)
        t = weights[k] * r
        phi += t
        dphi += t * r
    return psi, dpsi, phi, dphi


@njit(cache=True)
def _model_step(rinv, psi, dpsi, phi, dphi, da, db, tau, has_below):
    """The zero in (da, db) of the two-pole model osculating ψ at pole da and φ at pole db."""
    s2 = dphi * (db - tau) ** 2
    c = rinv - (phi - dphi * (db - tau))
    if not has_below:  # no pole below: c − s2/(db − x) = 0
        if c <= 0.0:
            return math.nan
        return db - s2 / c
    s1 = dpsi * (da - tau) ** 2
    c -= psi - dpsi * (da - tau)
    # c(da − x)(db − x) − s1(db − x) − s2(da − x) = 0, i.e. a x² + b x + e = 0
    a = c
    b = -(c * (da + db)) + s1 + s2
    e = c * da * db - s1 * db - s2 * da
    if a == 0.0:
        return -e / b if b != 0.0 else math.nan
    disc = b * b - 4.0 * a * e
    disc = math.sqrt(disc) if disc > 0.0 else 0.0
    q = -0.5 * (b + math.copysign(disc, b))
    x1 = q / a
    x2 = e / q if q != 0.0 else math.nan
    lo, hi = min(da, db), max(da, db)
    if lo < x1 < hi:
        return x1
    return x2


@njit(cache=True)
def _root(poles, weights, m, j, rinv, total):
    """Root of 1/ρ − Σ w_k/(pole_k − μ) in interval j: (pole_{j−1}, pole_j), or when j = 0 in
    (pole_0 − ``total``, pole_0), ``total`` = ρΣw, where f ≥ 0."""
    b = poles[j]
    if j == 0:
        origin, da, db = b, -total, 0.0
        lo, hi = -total, 0.0
        tau = 0.5 * (lo + hi)
    else:
        a = poles[j - 1]
        half = 0.5 * (b - a)
        psi, dpsi, phi, dphi = _evaluate(poles, weights, m, j, a, half)
        if rinv - psi - phi > 0.0:  # the root is in the upper half: measure from b
            origin, da, db = b, a - b, 0.0
            lo, hi = -half, 0.0
        else:
            origin, da, db = a, 0.0, b - a
            lo, hi = 0.0, half
        # first guess: the model at the midpoint, already evaluated (dlaed4 does the same)
        tau = _model_step(rinv, psi, dpsi, phi, dphi, da, db, hi if origin == a else lo, True)
        if not lo < tau < hi:
            tau = 0.5 * (lo + hi)
    for _ in range(MAX_ITER):
        psi, dpsi, phi, dphi = _evaluate(poles, weights, m, j, origin, tau)
        f = rinv - psi - phi
        if f == 0.0:
            break
        if f > 0.0:  # f decreases: the root is above tau
            lo = tau
        else:
            hi = tau
        bound = _EPS * (8.0 * (phi - psi) + abs(rinv) + abs(tau) * (dpsi + dphi))
        if abs(f) <= bound:
            break
        new = _model_step(rinv, psi, dpsi, phi, dphi, da, db, tau, j > 0)
        if not lo < new < hi:
            new = 0.5 * (lo + hi)
        if new == tau or hi - lo <= 2.0 * _EPS * max(abs(origin + lo), abs(origin + hi)):
            tau = new
            break
        tau = new
    return origin + tau


@njit(cache=True)
def modified_eigenvalues(lam, weights, rinv, out):
    """Eigenvalues of Λ − zzᵀ (``rinv`` = 1) or of Λ compressed to z⊥ (``rinv`` = 0), one row of
    ``weights`` (w = z², one modification per row) each; written to the rows of ``out``, unsorted.

    ``lam`` ascending.  Rows of ``out`` have ``lam.size`` entries; the compression has one eigenvalue
    fewer and its last entry is 0 (no term in an entropy or a trace).
    """
    n = lam.size
    scale = max(abs(lam[0]), abs(lam[n - 1]))
    poles = np.empty(n)
    wts = np.empty(n)
    for row in range(weights.shape[0]):
        w = weights[row]
        res = out[row]
        total = 0.0
        for k in range(n):
            total += w[k]
        tol = 8.0 * _EPS * max(scale, total if rinv > 0.0 else 0.0)
        # a weight moves the matrix by at most |z_k|·‖z‖ (downdate) or 2|z_k|·max|λ| (compression)
        reach = math.sqrt(total) if rinv > 0.0 else 2.0 * scale
        end = n if rinv > 0.0 else n - 1  # the compression has n − 1 eigenvalues: res[n − 1] = 0
        m = 0  # poles kept
        nd = 0  # eigenvalues deflated, written backwards from res[end − 1]
        for k in range(n):
            if math.sqrt(w[k]) * reach <= tol:
                nd += 1
                res[end - nd] = lam[k]
                continue
            if m > 0:
                # rotate the last kept pole p and k so that k's weight is zero (dlaed2)
                p = m - 1
                norm2 = wts[p] + w[k]
                c2 = wts[p] / norm2
                s2 = w[k] / norm2
                gap = lam[k] - poles[p]
                if abs(gap) * math.sqrt(c2 * s2) <= tol:
                    nd += 1
                    res[end - nd] = s2 * poles[p] + c2 * lam[k]
                    poles[p] = c2 * poles[p] + s2 * lam[k]
                    wts[p] = norm2
                    continue
            poles[m] = lam[k]
            wts[m] = w[k]
            m += 1
        first = 0 if rinv > 0.0 else 1
        active = 0.0
        for k in range(m):
            active += wts[k]
        for j in range(first, m):
            res[j - first] = _root(poles, wts, m, j, rinv, active / rinv if rinv > 0.0 else 0.0)
        if end < n:
            res[end] = 0.0
