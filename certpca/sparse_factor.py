"""A sparse data matrix centred and scaled implicitly: the factor of :class:`~certpca.problem.Problem`.

``F = (X − 1μᵀ)·diag(c) − A Bᵀ`` with X sparse (N × D, never densified),
μ the column means subtracted, c = 1/(σ√(N−1)) (σ = 1 when not scaled) and
A Bᵀ the rank-t term that projection deflations add (A: N × t, B: D × t).
C = FᵀF is the covariance of the prepared data.  Products with dense vectors
use the sparse X (cost O(nnz)); everything that must match the dense path
digit for digit (a few columns, the diagonal, the N × N Gram matrix) is
built from dense column blocks of F, at most ``BLOCK_BYTES`` at a time.

Accuracy.  Dense column blocks compute ((x − μ)·c) exactly as the dense path
does, so they agree with it to a few ulps.  A product F v with a dense v
computes X(c∘v) − 1·(μᵀ(c∘v)), which cancels: its relative error is about
ε·max_j(|μ_j|/σ_j) (ε = 2⁻⁵²), 1e-12 for means a thousand standard
deviations from zero.  :func:`covariance` (the D × D matrix, for N ≥ D) is
computed in the stable form documented there.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

#: the largest dense piece (a column block of F) formed at once
BLOCK_BYTES = 64 * 2**20


def as_csc(X) -> sp.csc_matrix:
    """X as a float64 CSC matrix (columns are what centring, scaling and supports slice)."""
    return sp.csc_matrix(X, dtype=float)


def column_stats(X: sp.csc_matrix) -> tuple[np.ndarray, np.ndarray]:
    """(means, sample standard deviations with ddof=1) of the columns of a sparse X.

    Two-pass, as numpy's dense ``std``: the squares are of x − μ over the stored
    entries plus (N − nnz_j)·μ_j² for the implicit zeros, so nothing cancels.
    """
    n = X.shape[0]
    mean = np.asarray(X.sum(axis=0)).ravel() / n
    counts = np.diff(X.indptr)
    cols = np.repeat(np.arange(X.shape[1]), counts)
    dev = X.data - mean[cols]
    ss = np.bincount(cols, weights=dev * dev, minlength=X.shape[1]) + (n - counts) * mean**2
    return mean, np.sqrt(ss / (n - 1))


def covariance(X, mean: np.ndarray | None, scale: np.ndarray | None) -> np.ndarray:
    """The D × D covariance of ((X − 1μᵀ)/σ) from sparse products, for N ≥ D (D × D is small then).

    With Y the stored entries minus their column's μ, P their pattern and
    Q = 1 − P the pattern of the implicit zeros, X − 1μᵀ = Y − Q·M (M = diag μ), so

        (N−1)·C = YᵀY − (YᵀQ)M − M(YᵀQ)ᵀ + M(QᵀQ)M,

    with YᵀQ = (Yᵀ1)1ᵀ − YᵀP and QᵀQ = N − n_j − n_l + PᵀP (exact integer
    counts).  This is X centred by μ as the dense path centres it, and no
    squared mean cancels: the relative error is about ε·(1 + |μ|/σ) (ε = 2⁻⁵²),
    where the textbook XᵀX − Nμμᵀ loses ε·(μ/σ)², and more when μ is itself
    rounded.  Measured on columns of mean m and unit spread (tests/test_sparse.py):
    m = 10⁴ gives 7e-14 here and 4e-7 the textbook way (10⁶: 8e-12 against 2e-3).  Cost: three sparse
    products over the stored entries.
    """
    X = as_csc(X)
    n, d = X.shape
    mu = np.zeros(d) if mean is None else np.asarray(mean, dtype=float)
    counts = np.diff(X.indptr)
    cols = np.repeat(np.arange(d), counts)
    Y = sp.csc_matrix((X.data - mu[cols], X.indices, X.indptr), shape=X.shape)
    P = sp.csc_matrix((np.ones_like(X.data), X.indices, X.indptr), shape=X.shape)
    s = np.asarray(Y.sum(axis=0)).ravel()
    YtQ_M = (s[:, None] - (Y.T @ P).toarray()) * mu[None, :]
    QtQ = (P.T @ P).toarray() + (n - counts[:, None] - counts[None, :])
    C = (Y.T @ Y).toarray() - YtQ_M - YtQ_M.T + QtQ * np.outer(mu, mu)
    C /= n - 1
    if scale is not None:
        inv = 1.0 / np.asarray(scale, dtype=float)
        C *= inv[:, None] * inv[None, :]
    return (C + C.T) / 2


def dense_block(x) -> np.ndarray:
    """A block of columns (numpy, or scipy.sparse: densified, as only a few columns are at once) as float64."""
    return x.toarray().astype(float, copy=False) if sp.issparse(x) else np.asarray(x, dtype=float)


def prepared_block(x, mean, coef, A, Bt) -> np.ndarray:
    """Columns x of the data made dense columns of F: (x − μ)·c − A Bᵀ, in the dense path's order."""
    block = (dense_block(x) - mean) * coef
    if A.shape[1]:
        block -= A @ Bt
    return block


def factor_parts(n: int, d: int, mean, scale, coef, A, B) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(μ, c, A, B) of an implicit factor: zeros for no centring, c = 1/(σ√(N−1)) unless given, no deflation
    term (t = 0) unless given."""
    mean = np.zeros(d) if mean is None else np.asarray(mean, dtype=float)
    if coef is None:
        sigma = np.ones(d) if scale is None else np.asarray(scale, dtype=float)
        coef = 1.0 / (sigma * np.sqrt(n - 1))
    A = np.zeros((n, 0)) if A is None else A
    B = np.zeros((d, 0)) if B is None else B
    return mean, np.asarray(coef, dtype=float), A, B


class SparseFactor:
    """The implicit factor F (N × D) of the module docstring."""

    kind = "sparse"

    def __init__(self, X, mean=None, scale=None, *, coef=None, A=None, B=None):
        self.X = as_csc(X)
        self.mean, self.coef, self.A, self.B = factor_parts(*self.X.shape, mean, scale, coef, A, B)

    @property
    def shape(self) -> tuple[int, int]:
        return self.X.shape

    @property
    def dense_bytes(self) -> int:
        """Bytes of F as a dense float64 array."""
        return 8 * self.shape[0] * self.shape[1]

    def columns(self, idx) -> np.ndarray:
        """F[:, idx] as a dense N × len(idx) array (computed as the dense path computes it)."""
        idx = np.asarray(idx, dtype=np.intp)
        return prepared_block(self.X[:, idx], self.mean[idx], self.coef[idx], self.A, self.B[idx].T)

    def blocks(self):
        """(column indices, F[:, those]) over all of F, ``BLOCK_BYTES`` at a time."""
        n, d = self.shape
        step = max(1, min(d, BLOCK_BYTES // (8 * max(n, 1))))
        for j0 in range(0, d, step):
            idx = np.arange(j0, min(d, j0 + step))
            yield idx, self.columns(idx)

    def dense(self) -> np.ndarray:
        """F itself (N × D): only when the caller has checked it fits."""
        return self.columns(np.arange(self.shape[1]))

    def matvec(self, v: np.ndarray) -> np.ndarray:
        """F v for a vector or D × m block (sparse product; a sparse vector through its columns)."""
        if v.ndim == 1:
            nz = np.flatnonzero(v)
            if 4 * nz.size < v.size:
                return self.columns(nz) @ v[nz]
        cv = v * (self.coef if v.ndim == 1 else self.coef[:, None])
        out = self.X @ cv - np.multiply.outer(np.ones(self.shape[0]), self.mean @ cv)
        return out - self.A @ (self.B.T @ v) if self.A.shape[1] else out

    def rmatvec(self, u: np.ndarray) -> np.ndarray:
        """Fᵀ u for a vector or N × m block."""
        col_sum = u.sum(axis=0)
        out = self.X.T @ u - np.multiply.outer(self.mean, col_sum)
        out = out * (self.coef if u.ndim == 1 else self.coef[:, None])
        return out - self.B @ (self.A.T @ u) if self.A.shape[1] else out

    def cross(self, M: np.ndarray) -> np.ndarray:
        """Fᵀ M from dense column blocks, so each entry is a length-N dot product as with a dense factor."""
        out = np.empty((self.shape[1], *M.shape[1:]))
        for idx, block in self.blocks():
            out[idx] = block.T @ M
        return out

    def column_norms2(self) -> np.ndarray:
        """Squared column norms of F (the diagonal of C), from dense blocks."""
        out = np.empty(self.shape[1])
        for idx, block in self.blocks():
            out[idx] = np.einsum("ij,ij->j", block, block)
        return out

    def gram(self) -> np.ndarray:
        """F Fᵀ (N × N), accumulated over dense column blocks (the dense path's numbers, never N × D)."""
        n = self.shape[0]
        G = np.zeros((n, n))
        for _, block in self.blocks():
            G += block @ block.T
        return (G + G.T) / 2

    def max_abs(self) -> float:
        """max |F_ij|."""
        return max((float(np.max(np.abs(b))) for _, b in self.blocks() if b.size), default=0.0)

    def ldexp(self, e: int) -> SparseFactor:
        """F·2^e (exact: only the scalars c and the deflation term A are multiplied)."""
        return SparseFactor(self.X, self.mean, coef=np.ldexp(self.coef, e), A=np.ldexp(self.A, e), B=self.B)

    def deflate(self, w: np.ndarray) -> SparseFactor:
        """F(I − wwᵀ) = F − (Fw)wᵀ for a unit w: one more column of A and B."""
        a = self.matvec(w)
        return SparseFactor(
            self.X, self.mean, coef=self.coef, A=np.column_stack([self.A, a]), B=np.column_stack([self.B, w])
        )

    def subset(self, idx) -> SparseFactor:
        """The factor of the features at the given indices."""
        idx = np.asarray(idx, dtype=np.intp)
        return SparseFactor(self.X[:, idx], self.mean[idx], coef=self.coef[idx], A=self.A, B=self.B[idx])
