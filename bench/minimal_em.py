"""A minimal numpy EM for one sparse principal component, the baseline bench_em.py measures
certpca against in the same run (the kind of warm-started EM without certpca's driver that issue 16's
9 ms refers to).

Sigg & Buhmann (ICML 2008), Alg. 2 with the cardinality M-step: w ← Xᵀ(Xw), entries
soft-thresholded at the (k+1)-th largest magnitude (the positive part first when
nonnegative), normalised, until the support repeats (``tol=None``, the cheap rule
of the baseline in issue 16) or until w moves less than ``tol``; then the refit on
the support (the top eigenvector of C_SS, through the Gram matrix when |S| > N),
kept only when it beats the EM vector (nonnegative: only when it has one sign).
"""

from __future__ import annotations

import numpy as np


def pc1(X: np.ndarray) -> np.ndarray:
    """First principal direction of the column-centred X through its N × N Gram matrix."""
    u = np.linalg.eigh(X @ X.T)[1][:, -1]
    w = X.T @ u
    return w / np.linalg.norm(w)


def em(
    X: np.ndarray, k: int, w: np.ndarray, nonneg: bool, *, tol: float | None = None, max_iter: int = 1000
) -> np.ndarray:
    """EM from w (unit), then the refit on its support: a unit vector with ≤ k nonzeros."""
    D = X.shape[1]
    support = None
    for _ in range(max_iter):
        s = X.T @ (X @ w)
        if nonneg:
            s = np.maximum(s, 0.0)
        a = np.abs(s)
        thr = np.partition(a, D - k - 1)[D - k - 1] if k < D else 0.0
        new = np.sign(s) * np.maximum(a - thr, 0.0)
        norm = np.linalg.norm(new)
        if norm == 0:
            break
        new /= norm
        moved = np.linalg.norm(new - w)
        w = new
        if tol is None:
            last, support = support, a > thr
            if last is not None and np.array_equal(last, support):
                break
        elif moved < tol:
            break
    return refit(X, w, nonneg)


def refit(X: np.ndarray, w: np.ndarray, nonneg: bool) -> np.ndarray:
    """The best unit vector on w's support (its top eigenvector) when it beats w."""
    S = np.flatnonzero(w)
    Xs = X[:, S]
    if len(S) > X.shape[0]:
        v = Xs.T @ np.linalg.eigh(Xs @ Xs.T)[1][:, -1]
    else:
        v = np.linalg.eigh(Xs.T @ Xs)[1][:, -1]
    v /= np.linalg.norm(v)
    if v @ w[S] < 0:
        v = -v
    if nonneg and np.any(v < 0):
        return w
    if np.linalg.norm(Xs @ v) < np.linalg.norm(Xs @ w[S]):
        return w
    out = np.zeros_like(w)
    out[S] = v
    return out


def fit(X: np.ndarray, k: int, nonneg: bool, tol: float | None = None) -> np.ndarray:
    """One component from the data matrix: EM from PC1 (nonnegative: from the positive parts of
    ±PC1, the better of the two, as the notes' lessons advise)."""
    p = pc1(X)
    if not nonneg:
        return em(X, k, p, False, tol=tol)
    best, val = None, -1.0
    for start in (np.maximum(p, 0.0), np.maximum(-p, 0.0)):
        if start.any():
            w = em(X, k, start / np.linalg.norm(start), True, tol=tol)
            y = X @ w
            if y @ y > val:
                best, val = w, float(y @ y)
    return best


def path(X: np.ndarray, ks, nonneg: bool) -> list[np.ndarray]:
    """The path over increasing ks, each EM warm-started from the previous k's vector."""
    out, w = [], None
    for k in ks:
        if w is None:
            w = fit(X, k, nonneg)
        else:
            w = em(X, k, w, nonneg)
        out.append(w)
    return out
