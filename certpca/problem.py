"""The covariance operator every solver and certifier works through.

``C = FᵀF`` is held either as a factor ``F`` (r × D, the scaled data matrix
when there are fewer samples than features) or as the dense D × D matrix
(when D ≤ N, or when the input *is* a covariance).  With a factor nothing of
size D × D is ever formed: products cost O(rD) and the spectrum comes from
the r × r Gram matrix ``FFᵀ`` (the "Gram trick" of Sigg & Buhmann 2008, §3.1).
"""

from __future__ import annotations

from functools import cached_property

import numpy as np
import pandas as pd
import scipy.linalg


class Problem:
    """Covariance operator C over named features.

    Build it with :meth:`from_data` (samples × features, already centred or
    scaled as wanted) or :meth:`from_covariance`.
    """

    def __init__(self, *, factor=None, covariance=None, feature_ids=None):
        if (factor is None) == (covariance is None):
            raise ValueError("give exactly one of factor= or covariance=")
        self._F = None if factor is None else np.ascontiguousarray(factor, dtype=float)
        self._C = None if covariance is None else np.ascontiguousarray(covariance, dtype=float)
        dim = (self._F if self._F is not None else self._C).shape[1]
        if feature_ids is None:
            feature_ids = [f"V{i + 1}" for i in range(dim)]
        self.feature_ids = feature_ids if isinstance(feature_ids, pd.Index) else pd.Index(feature_ids, dtype=object)
        if len(self.feature_ids) != dim:
            raise ValueError(f"{len(self.feature_ids)} feature ids for {dim} features")

    # ------------------------------------------------------------------ build
    @classmethod
    def from_data(cls, X, feature_ids=None) -> Problem:
        """Sample covariance ``XᵀX/(N-1)`` of a prepared (e.g. centred) N × D matrix."""
        X = np.asarray(X, dtype=float)
        n, d = X.shape
        if n < 2:
            raise ValueError("need at least 2 samples for a covariance")
        F = X / np.sqrt(n - 1)
        if d <= n:
            return cls(covariance=F.T @ F, feature_ids=feature_ids)
        return cls(factor=F, feature_ids=feature_ids)

    @classmethod
    def from_covariance(cls, C, feature_ids=None) -> Problem:
        """A given covariance or correlation matrix (symmetrised exactly)."""
        C = np.asarray(C, dtype=float)
        return cls(covariance=(C + C.T) / 2, feature_ids=feature_ids)

    # ------------------------------------------------------------- structure
    @property
    def dim(self) -> int:
        return len(self.feature_ids)

    @property
    def uses_factor(self) -> bool:
        """True when C is held as FᵀF (D > N): no D × D array exists."""
        return self._F is not None

    @cached_property
    def diag(self) -> np.ndarray:
        """Diagonal of C (the feature variances)."""
        if self._F is not None:
            return np.einsum("ij,ij->j", self._F, self._F)
        return np.diag(self._C).copy()

    @property
    def trace(self) -> float:
        """Total variance tr C."""
        return float(self.diag.sum())

    # ------------------------------------------------------------ operations
    def matvec(self, v: np.ndarray) -> np.ndarray:
        """C v for a vector or a D × m block."""
        if self._F is not None:
            return self._F.T @ self._scores(v)
        return self._C @ v

    def variance(self, w: np.ndarray) -> float:
        """wᵀCw."""
        w = np.asarray(w, dtype=float)
        if self._F is not None:
            y = self._scores(w)
            return float(y @ y)
        return float(w @ (self._C @ w))

    def _scores(self, v: np.ndarray) -> np.ndarray:
        """F v, touching only the nonzero columns when a vector is sparse."""
        if v.ndim == 1:
            nz = np.flatnonzero(v)
            if 4 * nz.size < v.size:
                return self._F[:, nz] @ v[nz]
        return self._F @ v

    def submatrix(self, support) -> np.ndarray:
        """C_SS for a support given as integer indices."""
        idx = np.asarray(support, dtype=np.intp)
        if self._F is not None:
            Fs = self._F[:, idx]
            return Fs.T @ Fs
        return self._C[np.ix_(idx, idx)]

    def factor(self) -> np.ndarray:
        """A factor F (r × D, r ≤ min(N, D)) with C = FᵀF.

        For a dense C this is diag(√λ)Uᵀ over its positive eigenvalues.
        """
        if self._F is not None:
            return self._F
        vals, vecs = self._dense_spectrum
        keep = vals > 0
        return (vecs[:, keep] * np.sqrt(vals[keep])).T

    @cached_property
    def _gram_spectrum(self) -> tuple[np.ndarray, np.ndarray]:
        """Eigenpairs (descending) of the r × r Gram FFᵀ with nonzero eigenvalue.

        They give C's: λ_j and v_j = Fᵀu_j/√λ_j, lifted only when asked for.
        """
        vals, U = np.linalg.eigh(self._F @ self._F.T)
        vals, U = vals[::-1], U[:, ::-1]
        keep = vals > vals[0] * 1e-13 if vals[0] > 0 else np.zeros(len(vals), bool)
        return vals[keep].copy(), U[:, keep].copy()

    @cached_property
    def _dense_spectrum(self) -> tuple[np.ndarray, np.ndarray]:
        """All eigenpairs of a dense C, eigenvalues descending."""
        vals, vecs = np.linalg.eigh(self._C)
        return vals[::-1].copy(), vecs[:, ::-1].copy()

    def eigenvalues(self) -> np.ndarray:
        """Eigenvalues of C in descending order (with a factor, those beyond its rank are omitted)."""
        return (self._gram_spectrum if self._F is not None else self._dense_spectrum)[0]

    def eigh(self, d: int = 1) -> tuple[np.ndarray, np.ndarray]:
        """Top-d eigenpairs (values descending, vectors as D × d columns).

        With a factor, eigenvalues beyond its rank are omitted, so fewer than d
        columns may come back.  A dense C not yet fully decomposed gets only its
        top d pairs computed (LAPACK's subset driver).
        """
        if self._F is not None:
            vals, U = self._gram_spectrum
            vals, U = vals[:d], U[:, :d]
            return vals.copy(), self._F.T @ (U / np.sqrt(vals))
        if "_dense_spectrum" in self.__dict__ or 4 * d >= self.dim:
            vals, vecs = self._dense_spectrum
            return vals[:d].copy(), vecs[:, :d].copy()
        vals, vecs = scipy.linalg.eigh(self._C, subset_by_index=[self.dim - d, self.dim - 1])
        return vals[::-1].copy(), vecs[:, ::-1].copy()

    @cached_property
    def _pc1(self) -> np.ndarray:
        vals, vecs = self.eigh(1)
        if vecs.shape[1] == 0:  # C = 0: every unit vector is a maximiser
            return np.r_[1.0, np.zeros(self.dim - 1)]
        v = vecs[:, 0]
        return v if v[np.argmax(np.abs(v))] >= 0 else -v

    def first_pc(self) -> np.ndarray:
        """The dominant eigenvector, sign fixed so its largest-magnitude entry is positive."""
        return self._pc1.copy()

    # ------------------------------------------------------- derived problems
    def deflate(self, w: np.ndarray) -> Problem:
        """Projection deflation (I - wwᵀ) C (I - wwᵀ) for a unit w (Sigg & Buhmann eq. 18)."""
        w = np.asarray(w, dtype=float)
        if self._F is not None:
            return Problem(factor=self._F - np.outer(self._F @ w, w), feature_ids=self.feature_ids)
        Cw = self._C @ w
        wCw = w @ Cw
        C = self._C - np.outer(Cw, w) - np.outer(w, Cw) + wCw * np.outer(w, w)
        return Problem(covariance=(C + C.T) / 2, feature_ids=self.feature_ids)

    def subset(self, features) -> Problem:
        """The problem restricted to the features at the given integer indices."""
        idx = np.asarray(features, dtype=np.intp)
        ids = self.feature_ids[idx]
        if self._F is not None:
            return Problem(factor=self._F[:, idx], feature_ids=ids)
        return Problem(covariance=self._C[np.ix_(idx, idx)], feature_ids=ids)

    def dense(self) -> np.ndarray:
        """The D × D matrix itself: only for small D (tests, convex relaxations)."""
        if self._F is not None:
            return self._F.T @ self._F
        return self._C.copy()

    def __repr__(self) -> str:
        how = f"factor {self._F.shape[0]}×{self.dim}" if self._F is not None else "dense"
        return f"<Problem D={self.dim} ({how}), trace={self.trace:.6g}>"

    def columns(self, idx) -> np.ndarray:
        """C[:, idx] as a dense D × len(idx) block: Fᵀ(F[:, idx]) costs O(r·D·len(idx)), never D × D."""
        idx = np.asarray(idx, dtype=np.intp)
        if self._F is not None:
            return self._F.T @ self._F[:, idx]
        return self._C[:, idx]
