"""Floating-point margins that keep a computed bound at or above the exact one.

Shared by the exact search of the solvers (:mod:`certpca.solvers.exact`) and every bound of
:mod:`certpca.certification` (whose ``numerics`` re-exports them); the rules are derived in
docs/certification.md:

* eigenvalues: LAPACK's symmetric eigensolver is backward stable (λ̂ is an exact eigenvalue of
  M + E, ‖E‖₂ ≤ p(n)·eps·‖M‖₂); Weyl's inequality turns that into the margin
  ``WEYL_FACTOR·n·eps·‖M‖_F`` (:func:`lmax_upper`);
* a matrix formed by r-term products: Higham's γ_r bound (:func:`gamma`);
* last, the scalar arithmetic: ``x + REL_MARGIN·|x|`` (:func:`safe`).
"""

from __future__ import annotations

import numpy as np
import scipy.linalg

EPS = float(np.finfo(float).eps)

#: relative margin for the scalar arithmetic after the last eigenvalue (sums, kρ, ...):
#: far above the few ulps such a short computation can lose
REL_MARGIN = 1e-10

#: absolute margin added with REL_MARGIN, so a bound of exactly 0 is rounded up too
TINY = 1e-300

#: p(n) = WEYL_FACTOR·n stands for the growth of LAPACK's backward error of eigh
#: (‖E‖₂ ≤ p(n)·eps·‖M‖₂); 8n is generous for the Householder tridiagonalisation
WEYL_FACTOR = 8.0

#: a margin is itself computed in floating point: it is inflated by this relative slack
MARGIN_SLACK = 1e-6

#: extra rounding steps counted in γ_n (Higham's γ_n uses n; +2 covers a scaling and a sum)
GAMMA_EXTRA = 2

#: up to this size the full spectrum is cheaper than a subset eigensolver
FULL_EIGH_MAX = 64


def gamma(n: int) -> float:
    """Higham's γ_n = n·eps/(1 − n·eps) (Accuracy and Stability, §3.1), with n + GAMMA_EXTRA."""
    ne = (n + GAMMA_EXTRA) * EPS
    return ne / (1.0 - ne)


def safe(x: float) -> float:
    """Round a computed bound up by the relative margin (and a tiny absolute one)."""
    x = float(x)
    return x + REL_MARGIN * abs(x) + TINY


def weyl_margin(n: int, frobenius: float) -> float:
    """Backward error of LAPACK's eigh on an n × n matrix of Frobenius norm ``frobenius``."""
    return WEYL_FACTOR * n * EPS * frobenius


def lmax_upper(M: np.ndarray, form_err: float = 0.0) -> tuple[float, float]:
    """Upper bound on λmax of an exact matrix M* with ‖M* − M‖₂ ≤ ``form_err``.

    Returns ``(λ̂max + margin, margin)`` with margin = weyl_margin + form_err
    (Weyl: |λ(M*) − λ̂(M)| ≤ ‖M* − M‖₂ + ‖E‖₂ with E the backward error of the
    symmetric eigensolver).
    """
    M = np.asarray(M, dtype=float)
    n = M.shape[0]
    if n == 0:
        return 0.0, 0.0
    if n <= FULL_EIGH_MAX:
        lam = float(np.linalg.eigvalsh(M)[-1])
    else:
        lam = float(scipy.linalg.eigvalsh(M, subset_by_index=[n - 1, n - 1], check_finite=False)[0])
    margin = weyl_margin(n, float(np.linalg.norm(M))) + form_err * (1.0 + MARGIN_SLACK)
    return lam + margin, margin


def shifted_rank2(A: np.ndarray, lam: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """The shifted rank-2 split A = GᵀG + R (Asteris et al., ICML 2014, Thm. 1, with λ_3 taken out):
    G (2 × n) has rows √(λ_j − λ_3)·v_jᵀ for the top two eigenpairs, so GᵀG ⪰ 0; ``lam``, ``V`` hold
    A's top three eigenpairs, ascending.  Returns (G, R symmetrised, the bound on R's forming error for
    :func:`lmax_upper`): γ_4 per entry of GᵀG relative to |G|ᵀ|G|, whose norm is ≤ its trace ΣG², and
    one rounding of the subtraction, ≤ eps·(|A_ij| + (|G|ᵀ|G|)_ij)."""
    G = (V[:, -2:] * np.sqrt(np.maximum(lam[-2:] - lam[-3], 0.0))).T
    R = A - G.T @ G
    form = (gamma(4) + EPS) * float(np.sum(G * G)) + EPS * float(np.linalg.norm(A))
    return G, (R + R.T) / 2, form


def gershgorin_columns(B: np.ndarray, own: np.ndarray, diag: np.ndarray, k: int, nonneg: bool) -> np.ndarray:
    """k-sparse Gershgorin value of each column j of a block B = C[:, idx] of a symmetric C.

    ``diag[j] + (sum of the k − 1 largest |B_ij| over i ≠ own[j])``, with positive
    parts (diag₊ and (B_ij)₊) when ``nonneg``; ``own[j]`` is the row of column j's
    diagonal entry (docs/certification.md §2: Gershgorin on C_SS, Perron–Frobenius
    for w ≥ 0).  Values are the exact floats' sums, so callers add the γ_k margin.
    """
    G = np.maximum(B, 0.0) if nonneg else np.abs(B)
    G[own, np.arange(G.shape[1])] = 0.0
    n = G.shape[0]
    kk = min(k - 1, n - 1)
    if kk <= 0:
        top = np.zeros(G.shape[1])
    elif kk == n - 1:
        top = G.sum(axis=0)
    else:
        top = np.partition(G, n - kk, axis=0)[n - kk :].sum(axis=0)
    return (np.maximum(diag, 0.0) if nonneg else diag) + top
