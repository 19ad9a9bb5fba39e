"""A dask array with D ≫ N centred and scaled implicitly: the factor of :class:`~certpca.problem.Problem`.

``F = (X − 1μᵀ)·diag(c) − A Bᵀ`` as in certpca/sparse_factor.py, with X a dask
array (N × D, e.g. 1000 samples × 10⁶ CpGs, beyond memory; numpy or
scipy.sparse chunks) held in column blocks of all N rows.  Every product is one pass over the blocks, on dask's
threaded scheduler or on a ``dask.distributed`` client; a product with a sparse
vector (EM's iterates) reads only the blocks of its nonzero columns.  Each block
is centred and scaled by :func:`~certpca.sparse_factor.prepared_block`, as
``SparseFactor.columns`` computes it, so products agree with the dense path to
a few ulps; only :meth:`DaskFactor.dense` forms N × D.  dask is imported
lazily (an optional extra).
"""

from __future__ import annotations

from functools import cached_property
from typing import Any

import numpy as np

from certpca.sparse_factor import BLOCK_BYTES, factor_parts, prepared_block


def column_width(n: int) -> int:
    """Columns of N rows in a block of ``BLOCK_BYTES``."""
    return max(1, BLOCK_BYTES // (8 * max(n, 1)))


def column_blocks(X):
    """X rechunked to blocks of whole columns (all N rows), at most ``BLOCK_BYTES`` each; unchanged when it is."""
    width = min(max(X.chunks[1]), column_width(X.shape[0]))
    if X.numblocks[0] == 1 and max(X.chunks[1]) <= width:
        return X
    return X.rechunk({0: -1, 1: width})


class DaskFactor:
    """The implicit factor F (N × D) of the module docstring, with SparseFactor's interface."""

    kind = "dask"

    def __init__(self, X, mean=None, scale=None, *, coef=None, A=None, B=None, client: Any = None):
        self.X = column_blocks(X)
        self.mean, self.coef, self.A, self.B = factor_parts(*self.shape, mean, scale, coef, A, B)
        self.client = client

    @property
    def shape(self) -> tuple[int, int]:
        return int(self.X.shape[0]), int(self.X.shape[1])

    @property
    def dense_bytes(self) -> int:
        """Bytes of F as a dense float64 array."""
        return 8 * self.shape[0] * self.shape[1]

    def _compute(self, lazy):
        """One dask array computed on the client, or on the threaded scheduler without one."""
        return self.client.compute(lazy).result() if self.client is not None else lazy.compute(scheduler="threads")

    @cached_property
    def _lazy(self):
        """F as a lazy dask array in X's column blocks, each made by ``prepared_block`` (built once: the
        factor is never changed, its ldexp, deflate and subset are new factors)."""
        import dask.array as da

        cols = (self.X.chunks[1],)
        return da.map_blocks(
            prepared_block,
            self.X,
            da.from_array(self.mean, chunks=cols),
            da.from_array(self.coef, chunks=cols),
            self.A,
            da.from_array(self.B.T, chunks=((self.B.shape[1],), *cols)),
            dtype=float,
        )

    def columns(self, idx) -> np.ndarray:
        """F[:, idx] as a dense N × len(idx) array, reading only the blocks that hold those columns."""
        idx = np.asarray(idx, dtype=np.intp)
        return prepared_block(self._compute(self.X[:, idx]), self.mean[idx], self.coef[idx], self.A, self.B[idx].T)

    def dense(self) -> np.ndarray:
        """F itself (N × D): only when the caller has checked it fits."""
        return self._compute(self._lazy)

    def matvec(self, v: np.ndarray) -> np.ndarray:
        """F v for a vector or D × m block (a sparse vector through its columns alone)."""
        if v.ndim == 1:
            nz = np.flatnonzero(v)
            if 4 * nz.size < v.size:
                return self.columns(nz) @ v[nz]
        return self._compute(self._lazy @ v)

    def rmatvec(self, u: np.ndarray) -> np.ndarray:
        """Fᵀ u for a vector or N × m block (each block's rows are length-N dot products)."""
        return self._compute(self._lazy.T @ u)

    def cross(self, M: np.ndarray) -> np.ndarray:
        """Fᵀ M from dense column blocks: :meth:`rmatvec`, which is one already."""
        return self.rmatvec(M)

    def column_norms2(self) -> np.ndarray:
        """Squared column norms of F (the diagonal of C)."""
        F = self._lazy
        return self._compute((F * F).sum(axis=0))

    def gram(self) -> np.ndarray:
        """F Fᵀ (N × N), summed over the column blocks as a tree (never N × D at once)."""
        F = self._lazy
        G = self._compute(F @ F.T)
        return (G + G.T) / 2

    def max_abs(self) -> float:
        """max |F_ij|."""
        return float(self._compute(abs(self._lazy).max())) if self.shape[1] else 0.0

    def _with(self, X=None, mean=None, coef=None, A=None, B=None) -> DaskFactor:
        """This factor with the given parts replaced."""
        return DaskFactor(
            self.X if X is None else X,
            self.mean if mean is None else mean,
            coef=self.coef if coef is None else coef,
            A=self.A if A is None else A,
            B=self.B if B is None else B,
            client=self.client,
        )

    def ldexp(self, e: int) -> DaskFactor:
        """F·2^e (exact: only the scalars c and the deflation term A are multiplied)."""
        return self._with(coef=np.ldexp(self.coef, e), A=np.ldexp(self.A, e))

    def deflate(self, w: np.ndarray) -> DaskFactor:
        """F(I − wwᵀ) = F − (Fw)wᵀ for a unit w: one more column of A and B."""
        return self._with(A=np.column_stack([self.A, self.matvec(w)]), B=np.column_stack([self.B, w]))

    def subset(self, idx) -> DaskFactor:
        """The factor of the features at the given indices."""
        idx = np.asarray(idx, dtype=np.intp)
        return self._with(X=self.X[:, idx], mean=self.mean[idx], coef=self.coef[idx], B=self.B[idx])
