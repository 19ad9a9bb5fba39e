"""The covariance operator every solver and certifier works through.

``C = FᵀF`` is held either as a factor ``F`` (r × D, the scaled data matrix
when there are fewer samples than features) or as the dense D × D matrix
(when D ≤ N, or when the input *is* a covariance).  With a factor nothing of
size D × D is ever formed: products cost O(rD) and the spectrum comes from
the r × r Gram matrix ``FFᵀ`` (the "Gram trick" of Sigg & Buhmann 2008, §3.1).
Sparse data (:meth:`Problem.from_sparse`) stay sparse: with D ≤ N the D × D
covariance comes from one set of sparse products; with D > N the factor is
the implicit :class:`~certpca.sparse_factor.SparseFactor` (centring and
scaling applied inside its products), unless its dense form is small
(``SMALL_FACTOR_BYTES``), where dense products are faster.  A dask array with D > N (data/chunked.py)
gives the implicit :class:`~certpca.dask_factor.DaskFactor`, the same
interface over column blocks read on demand.  Implicit factors are densified
only on request and only under ``FACTOR_BYTES``.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from functools import cached_property

import numpy as np
import pandas as pd
import scipy.linalg

from certpca.errors import TooLarge
from certpca.sparse_factor import SparseFactor, covariance

#: the largest dense factor :meth:`Problem.factor` forms from an implicit (sparse or dask) factor (bounds that need
#: more are skipped with this limit as the reason)
FACTOR_BYTES = 2**30

#: sparse D > N data whose dense factor is at most this are densified at once (:meth:`Problem.from_sparse`):
#: dense products beat sparse column slices on data as dense as pbmc's (700 × 765, 33 % stored, 4 MiB: its fit
#: in half the CPU) and are no slower at 2-5 % stored (reports/bench/small-sparse.md); the bounds would
#: densify the factor anyway (:meth:`Problem.factor`).  The limit is one of memory.
SMALL_FACTOR_BYTES = 2**26


#: dense factors from this size are rescaled in place for a certificate (:meth:`Problem.scaled_by`)
SHARED_SCALE_BYTES = 2**28


def _stays_normal(F: np.ndarray, e: int) -> bool:
    """True when every nonzero |F_ij|·2^e is a normal float (checked a row block at a time)."""
    if e >= 0:
        return True
    tiny = np.ldexp(np.finfo(float).tiny, -e)  # |x| ≥ this keeps x·2^e ≥ the smallest normal
    step = max(1, 2**22 // max(F.shape[1], 1))
    for i in range(0, F.shape[0], step):
        block = np.abs(F[i : i + step])
        if np.any((block > 0) & (block < tiny)):
            return False
    return True


class Problem:
    """Covariance operator C over named features.

    Build it with :meth:`from_data` (samples × features, already centred or
    scaled as wanted), :meth:`from_sparse` or :meth:`from_covariance`; the
    constructor takes one of a dense ``factor``, a ``covariance`` or an ``implicit``
    factor (a :class:`~certpca.sparse_factor.SparseFactor` or
    :class:`~certpca.dask_factor.DaskFactor`: centring and scaling inside its products).
    """

    def __init__(self, *, factor=None, covariance=None, implicit=None, feature_ids=None):
        if sum(x is not None for x in (factor, covariance, implicit)) != 1:
            raise ValueError("give exactly one of factor=, covariance= or implicit=")
        self._F = None if factor is None else _contiguous(factor)
        self._C = None if covariance is None else np.ascontiguousarray(covariance, dtype=float)
        self._S = implicit
        dim = (implicit if implicit is not None else self._F if self._F is not None else self._C).shape[1]
        if feature_ids is None:
            feature_ids = [f"V{i + 1}" for i in range(dim)]
        self.feature_ids = feature_ids if isinstance(feature_ids, pd.Index) else pd.Index(feature_ids, dtype=object)
        if len(self.feature_ids) != dim:
            raise ValueError(f"{len(self.feature_ids)} feature ids for {dim} features")

    # ------------------------------------------------------------------ build
    @classmethod
    def from_data(cls, X, feature_ids=None, *, mean=None, scale=None) -> Problem:
        """Sample covariance ``XᵀX/(N-1)`` of a prepared (e.g. centred) N × D matrix, or with ``mean``
        and ``scale`` (D-vectors) that of ``(X − 1·meanᵀ)/scale``, formed in the one array of the
        factor (X is neither copied nor written: the centring of data held as given)."""
        X = np.asarray(X, dtype=float)
        n, d = X.shape
        if n < 2:
            raise ValueError("need at least 2 samples for a covariance")
        if mean is None and scale is None:
            F = X / np.sqrt(n - 1)
        else:  # the operations prepare() applies to its copy, in its order: the same values
            F = np.array(X) if mean is None else np.subtract(X, mean)
            if scale is not None:
                F /= scale
            F /= np.sqrt(n - 1)
        if d <= n:
            return cls(covariance=F.T @ F, feature_ids=feature_ids)
        return cls(factor=F, feature_ids=feature_ids)

    @classmethod
    def from_sparse(cls, X, feature_ids=None, *, mean=None, scale=None) -> Problem:
        """Covariance of ``(X − 1·meanᵀ)/scale`` for a scipy.sparse X, centred and scaled implicitly.

        D ≤ N: the D × D covariance from sparse products (``sparse_factor.covariance``;
        D × D is small beside the data then, e.g. 10⁵ cells × 2000 genes).  D > N:
        the implicit factor, no N × D array; or, within ``SMALL_FACTOR_BYTES`` (and
        ``FACTOR_BYTES``), its dense form, the same columns (``SparseFactor.columns``).
        """
        n, d = X.shape
        if n < 2:
            raise ValueError("need at least 2 samples for a covariance")
        if d <= n:
            return cls(covariance=covariance(X, mean, scale), feature_ids=feature_ids)
        implicit = SparseFactor(X, mean, scale)
        if implicit.dense_bytes <= min(SMALL_FACTOR_BYTES, FACTOR_BYTES):
            return cls(factor=implicit.dense(), feature_ids=feature_ids)
        return cls(implicit=implicit, feature_ids=feature_ids)

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
        return self._F is not None or self._S is not None

    @property
    def factor_fits(self) -> bool:
        """Whether :meth:`factor` can be formed: always for dense data; for an implicit factor (sparse or
        dask data, D > N) only within ``FACTOR_BYTES``, beyond which it raises :class:`TooLarge`."""
        return self._S is None or self._S.dense_bytes <= FACTOR_BYTES

    @property
    def factor_rows(self) -> int:
        """Rows r of the factor (0 for a dense C): the length of its inner products."""
        return self._S.shape[0] if self._S is not None else self._F.shape[0] if self._F is not None else 0

    @cached_property
    def diag(self) -> np.ndarray:
        """Diagonal of C (the feature variances)."""
        if self._S is not None:
            return self._S.column_norms2()
        if self._F is not None:
            return np.einsum("ij,ij->j", self._F, self._F)
        return np.diag(self._C).copy()

    @property
    def trace(self) -> float:
        """Total variance tr C."""
        return float(self.diag.sum())

    # ------------------------------------------------------------ operations
    def matvec(self, v: np.ndarray, support: np.ndarray | None = None) -> np.ndarray:
        """C v for a vector or a D × m block.  ``support``, ascending indices outside which the vector v
        is zero (an iterate's known support), spares the factor's product the scan for them."""
        if self._S is not None:
            return self._S.rmatvec(self._S.matvec(v))
        if self._F is not None:
            return self._F.T @ self._scores(v, support)
        return self._C @ v

    def variance(self, w: np.ndarray) -> float:
        """wᵀCw."""
        w = np.asarray(w, dtype=float)
        if self._S is not None:
            y = self._S.matvec(w)
            return float(y @ y)
        if self._F is not None:
            y = self._scores(w)
            return float(y @ y)
        return float(w @ (self._C @ w))

    def _scores(self, v: np.ndarray, support: np.ndarray | None = None) -> np.ndarray:
        """F v (:func:`factor_product`)."""
        return factor_product(self._F, v, support)

    def submatrix(self, support) -> np.ndarray:
        """C_SS for a support given as integer indices."""
        idx = np.asarray(support, dtype=np.intp)
        if self.uses_factor:
            Fs = self.factor_columns(idx)
            return Fs.T @ Fs
        return self._C[np.ix_(idx, idx)]

    def factor_columns(self, support) -> np.ndarray:
        """The factor's columns F_S (r × |S|, dense; sparse data are centred and scaled in them)."""
        idx = np.asarray(support, dtype=np.intp)
        return self._F[:, idx] if self._F is not None else self._S.columns(idx)

    def factor(self) -> np.ndarray:
        """A factor F (r × D, r ≤ min(N, D)) with C = FᵀF.

        For a dense C this is diag(√λ)Uᵀ over its positive eigenvalues.  An implicit
        factor (sparse or dask data) is densified (once, then kept), which raises
        :class:`TooLarge` beyond ``FACTOR_BYTES`` (a certificate then skips the
        bound that asked).
        """
        if self._S is not None:
            return self._implicit_densified
        if self._F is not None:
            return self._F
        vals, vecs = self._dense_spectrum
        keep = vals > 0
        return (vecs[:, keep] * np.sqrt(vals[keep])).T

    @cached_property
    def memo(self) -> dict:
        """Values derived from C alone that bounds and solvers reuse across k (keys name their user), e.g.
        dabe's λmax of the shrunk Gram at each ρ of its grid, the same grid for every k of a path."""
        return {}

    @cached_property
    def _implicit_densified(self) -> np.ndarray:
        """The implicit factor as one dense array, formed once (bounds ask for it hundreds of times)."""
        if self._S.dense_bytes > FACTOR_BYTES:
            raise TooLarge(
                f"needs the dense {self._S.shape[0]} × {self.dim} factor of the {self._S.kind} data "
                f"({self._S.dense_bytes / 2**20:.0f} MiB > the limit of {FACTOR_BYTES / 2**20:.0f} MiB)"
            )
        return self._S.dense()

    @cached_property
    def _gram(self) -> np.ndarray:
        """The r × r Gram matrix FFᵀ (formed once)."""
        return self._S.gram() if self._S is not None else self._F @ self._F.T

    @cached_property
    def _gram_spectrum(self) -> tuple[np.ndarray, np.ndarray]:
        """Eigenpairs (descending) of the r × r Gram FFᵀ with nonzero eigenvalue.

        They give C's: λ_j and v_j = Fᵀu_j/√λ_j, lifted only when asked for.
        """
        vals, U = np.linalg.eigh(self._gram)
        return _nonzero_pairs(vals[::-1], U[:, ::-1])

    @cached_property
    def _dense_spectrum(self) -> tuple[np.ndarray, np.ndarray]:
        """All eigenpairs of a dense C, eigenvalues descending."""
        vals, vecs = np.linalg.eigh(self._C)
        return vals[::-1].copy(), vecs[:, ::-1].copy()

    def eigenvalues(self) -> np.ndarray:
        """Eigenvalues of C in descending order (with a factor, those beyond its rank are omitted)."""
        return (self._gram_spectrum if self.uses_factor else self._dense_spectrum)[0]

    def eigh(self, d: int = 1) -> tuple[np.ndarray, np.ndarray]:
        """Top-d eigenpairs (values descending, vectors as D × d columns).

        With a factor, eigenvalues beyond its rank are omitted, so fewer than d
        columns may come back.  A Gram matrix or dense C not yet fully decomposed gets
        only its top d pairs computed (LAPACK's subset driver).
        """
        if self.uses_factor:
            r = self.factor_rows
            if "_gram_spectrum" in self.__dict__ or 4 * d >= r:
                vals, U = self._gram_spectrum
                vals, U = vals[:d], U[:, :d]
            else:  # only the top d pairs of the Gram (a single fit needs PC1 alone)
                vals, U = scipy.linalg.eigh(self._gram, subset_by_index=[r - d, r - 1])
                vals, U = _nonzero_pairs(vals[::-1], U[:, ::-1])
            lift = self._S.rmatvec if self._S is not None else self._F.T.__matmul__
            return vals.copy(), lift(U / np.sqrt(vals))
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
        if self._S is not None:
            return Problem(implicit=self._S.deflate(w), feature_ids=self.feature_ids)
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
        if self._S is not None:
            return Problem(implicit=self._S.subset(idx), feature_ids=ids)
        if self._F is not None:
            return Problem(factor=self._F[:, idx], feature_ids=ids)
        return Problem(covariance=self._C[np.ix_(idx, idx)], feature_ids=ids)

    def dense(self) -> np.ndarray:
        """The D × D matrix itself: only for small D (tests, convex relaxations)."""
        if self._S is not None:
            F = self.factor()
            return F.T @ F
        if self._F is not None:
            return self._F.T @ self._F
        return self._C.copy()

    def largest_entry(self) -> float:
        """max |F_ij| of the factor, or max |C_ij| of a dense C (what certificates rescale by)."""
        if self._S is not None:
            return self._S.max_abs()
        M = self._F if self._F is not None else self._C
        return max(float(np.max(M)), -float(np.min(M))) if M.size else 0.0  # no |M| copy

    @contextmanager
    def scaled_by(self, e: int) -> Iterator[Problem]:
        """:meth:`ldexp` as a context: a dense factor of at least ``SHARED_SCALE_BYTES`` is scaled in
        place and restored on exit instead of copied, when no entry would become subnormal (so both
        multiplications are exact and the factor comes back bit for bit).  Meanwhile this problem's
        factor holds the scaled values: nothing may use it until the context exits."""
        if e == 0:
            yield self
            return
        F = self._F
        if F is None or F.nbytes < SHARED_SCALE_BYTES or not F.flags.writeable or not _stays_normal(F, e):
            yield self._with_memo(self.ldexp(e), e)
            return
        np.ldexp(F, e, out=F)
        try:
            yield self._with_memo(Problem(factor=F, feature_ids=self.feature_ids), e)
        finally:
            np.ldexp(F, -e, out=F)

    def _with_memo(self, scaled: Problem, e: int) -> Problem:
        """``scaled`` (this problem times 2^e) sharing this problem's memo for the exponent e, so what one
        certificate derived from it (dabe's λmax per ρ) serves the next one, e.g. along a path."""
        scaled.__dict__["memo"] = self.memo.setdefault(("scaled by 2^", e), {})
        return scaled

    def ldexp(self, e: int) -> Problem:
        """The problem with its factor times 2^e (C times 4^e), or a dense C times 2^e: exact in floating point."""
        if self._S is not None:
            return Problem(implicit=self._S.ldexp(e), feature_ids=self.feature_ids)
        if self._F is not None:
            return Problem(factor=np.ldexp(self._F, e), feature_ids=self.feature_ids)
        return Problem(covariance=np.ldexp(self._C, e), feature_ids=self.feature_ids)

    def __repr__(self) -> str:
        how = f"factor {self.factor_rows}×{self.dim}" if self.uses_factor else "dense"
        if self._S is not None:
            how = f"{self._S.kind} {how}"
        return f"<Problem D={self.dim} ({how}), trace={self.trace:.6g}>"

    def columns(self, idx) -> np.ndarray:
        """C[:, idx] as a dense D × len(idx) block: Fᵀ(F[:, idx]) costs O(r·D·len(idx)), never D × D."""
        idx = np.asarray(idx, dtype=np.intp)
        if self._S is not None:
            return self._S.cross(self._S.columns(idx))
        if self._F is not None:
            return self._F.T @ self._F[:, idx]
        return self._C[:, idx]


def factor_product(F: np.ndarray, v: np.ndarray, support: np.ndarray | None = None) -> np.ndarray:
    """F v, touching only the nonzero columns (or those of a known ``support``) when a vector is sparse;
    a dense v goes through F whole (gathering most of F's columns would copy it)."""
    if v.ndim == 1:
        # a boolean mask is scanned ~10x faster than floats
        nz = np.flatnonzero(v != 0) if support is None else support
        if 4 * nz.size < v.size:
            return F[:, nz] @ v[nz]
    return F @ v


def _nonzero_pairs(vals: np.ndarray, U: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Descending eigenpairs of a Gram matrix whose eigenvalue exceeds 1e-13 × the largest (copied)."""
    keep = vals > vals[0] * 1e-13 if len(vals) and vals[0] > 0 else np.zeros(len(vals), bool)
    return vals[keep].copy(), U[:, keep].copy()


def _contiguous(A) -> np.ndarray:
    """A as float, in whichever memory order it already has when that is contiguous (a column-major
    data matrix is not copied: its products and column gathers are as fast)."""
    A = np.asarray(A, dtype=float)
    return A if A.flags.c_contiguous or A.flags.f_contiguous else np.ascontiguousarray(A)
