"""The Dataset: a validated matrix with its ids, labels and preprocessing record, and the id checks."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import scipy.sparse as sp

from certpca import text
from certpca.errors import InputError
from certpca.problem import Problem
from certpca.sparse_factor import as_csc

SHOW_IDS = 5  # how many ids an error message names before "..."

#: the largest block of deferred dense data centred at once (samples for the scores, Dataset.project;
#: features for the divisors, prepare)
DEFERRED_BLOCK_BYTES = 2**25


@dataclass(frozen=True, eq=False)
class Dataset:
    """A validated data matrix with its ids, labels and preprocessing record.

    ``matrix`` is samples × features, or D × D when ``is_covariance``.  It is
    read-only: :func:`prepare` and the readers build new datasets instead.
    ``center`` and ``scale`` are the vectors :func:`prepare` subtracted and divided
    by (indexed by feature id, as R's ``prcomp`` keeps them), None when not applied;
    they are what new samples need to be projected the same way.

    A sparse ``matrix`` (scipy.sparse, held as CSC) stays sparse: it holds the
    values *before* centring and scaling, which ``center`` and ``scale`` then
    describe and which :meth:`problem`, :meth:`columns` and :meth:`project`
    apply implicitly (centring would make it dense).  A dense matrix does the same
    when ``deferred`` (``load(copy=False)``): no centred copy of wide data is made, and
    :meth:`problem` forms the covariance factor straight from the values as given.

    A read-only float64 array is taken without a copy; certpca never writes to it
    (a read-only view of a caller's array, as ``load(copy=False)`` takes, sees the
    caller's later changes).
    """

    name: str
    matrix: np.ndarray | sp.csc_matrix
    feature_ids: pd.Index
    sample_ids: pd.Index | None
    labels: pd.Series | None
    is_covariance: bool = False
    source: str = ""
    preprocessing: dict = field(default_factory=dict)
    image_shape: tuple[int, int] | None = None
    center: pd.Series | None = None
    scale: pd.Series | None = None
    annotation: pd.DataFrame | None = None  # feature id → symbol, description (data/annotation.py)
    deferred: bool = False  # a dense matrix holds the values before centring and scaling
    units: tuple[str, str] = ("samples", "features")  # what rows and columns are: ("cells", "genes") for AnnData

    def __post_init__(self) -> None:
        if isinstance(self.matrix, sp.csc_matrix) and not self.matrix.data.flags.writeable:
            matrix = self.matrix  # already a dataset's: replace() need not copy it
        elif sp.issparse(self.matrix):
            matrix = as_csc(self.matrix).copy()
            matrix.sum_duplicates()  # canonical (sorted, no duplicates): nothing later rewrites it in place
            for part in (matrix.data, matrix.indices, matrix.indptr):
                part.flags.writeable = False
        elif _read_only(self.matrix):
            matrix = self.matrix  # a dataset's, a copy made for one (prepare) or a read-only view: not copied
        else:
            matrix = np.array(self.matrix, dtype=float)
            matrix.flags.writeable = False
        object.__setattr__(self, "matrix", matrix)

    @property
    def is_sparse(self) -> bool:
        """True when the matrix is held sparse (centring and scaling pending, see the class docstring)."""
        return sp.issparse(self.matrix)

    @property
    def pending(self) -> bool:
        """True when the matrix holds the values before centring and scaling (sparse, or ``deferred``)."""
        return self.is_sparse or self.deferred

    @property
    def shape(self) -> tuple[int, int]:
        return self.matrix.shape

    @property
    def n_samples(self) -> int | None:
        """Number of samples (None for a covariance, whose n is not recorded)."""
        return None if self.is_covariance else self.matrix.shape[0]

    @property
    def n_features(self) -> int:
        return self.matrix.shape[1]

    def problem(self) -> Problem:
        """The covariance operator: ``XᵀX/(N-1)`` of the matrix as prepared, or the covariance itself."""
        if self.is_covariance:
            return Problem.from_covariance(self.matrix, self.feature_ids)
        mean, scale = self._pending() if self.pending else (None, None)
        if isinstance(self.matrix, np.ndarray):
            return Problem.from_data(self.matrix, self.feature_ids, mean=mean, scale=scale)
        return Problem.from_sparse(self.matrix, self.feature_ids, mean=mean, scale=scale)

    def _pending(self) -> tuple[np.ndarray | None, np.ndarray | None]:
        """(means, divisors) that pending data still have to be centred and scaled by, in the matrix's units
        (``center`` is kept in the data's own units; prepare divided the matrix by 2^unit_exponent)."""
        exponent = int(self.preprocessing.get("unit_exponent", 0))
        mean = None if self.center is None else np.ldexp(self.center.to_numpy(dtype=float), -exponent)
        scale = None if self.scale is None else self.scale.to_numpy(dtype=float)
        return mean, scale

    def columns(self, idx) -> np.ndarray:
        """The prepared (centred, scaled) values of the columns at integer indices ``idx``, dense:
        the only way sparse data are densified, a selected support at a time."""
        idx = np.asarray(idx, dtype=np.intp)
        if isinstance(self.matrix, np.ndarray):
            block = np.array(self.matrix[:, idx])
        else:
            block = self.matrix[:, idx].toarray()
        if not self.pending:
            return block
        mean, scale = self._pending()
        if mean is not None:
            block -= mean[idx]
        if scale is not None:
            block /= scale[idx]
        return block

    def project(self, W: np.ndarray) -> np.ndarray:
        """The prepared samples times W (features × m): the scores, R's prcomp ``x``; sparse data never densified.

        Loadings with few nonzero rows go through those columns (:meth:`columns`), dense ones
        through the sparse product X(W/σ) − 1·(μᵀ(W/σ)), or for deferred dense data through
        the samples prepared a block at a time.
        """
        W = np.asarray(W, dtype=float)
        if not self.pending:
            return self.matrix @ W
        rows = np.flatnonzero(np.any(W != 0, axis=1))
        if 4 * rows.size < W.shape[0]:
            return self.columns(rows) @ W[rows]
        mean, scale = self._pending()
        if isinstance(self.matrix, np.ndarray):  # deferred: prepared a block of samples at a time
            n = self.matrix.shape[0]
            out = np.empty((n, W.shape[1]))
            step = max(1, DEFERRED_BLOCK_BYTES // (8 * self.n_features))
            for i in range(0, n, step):
                block = self.matrix[i : i + step] if mean is None else self.matrix[i : i + step] - mean
                if scale is not None:
                    block = block / scale
                out[i : i + step] = block @ W
            return out
        V = W if scale is None else W / scale[:, None]
        out = self.matrix @ V
        return out if mean is None else out - mean @ V

    def describe(self) -> dict:
        """What a result records about its data (JSON-able)."""
        return {
            "name": self.name,
            "source": self.source,
            "n_samples": self.n_samples,
            "n_features": self.n_features,
            "is_covariance": self.is_covariance,
            "labelled": self.labels is not None,
            "preprocessing": dict(self.preprocessing),
            "units": list(self.units),
        }

    def summary_line(self) -> str:
        """What every terminal summary starts with, e.g. ``leukemia: 72 samples × 12582 features, centred``."""
        shape = (
            f"covariance of {self.n_features} features"
            if self.is_covariance
            else f"{self.n_samples} {self.units[0]} × {self.n_features} {self.units[1]}"
        )
        return f"{self.name}: {shape}, {text.describe_preprocessing(self.preprocessing)}"

    def __repr__(self) -> str:
        kind = "covariance" if self.is_covariance else "samples × features"
        rows, cols = self.shape
        labelled = ", labelled" if self.labels is not None else ""
        return f"<Dataset {self.name!r}: {rows} × {cols} {kind}{labelled}>"


def pixel_ids(image_shape: tuple[int, int]) -> list[str]:
    """Row-major pixel ids ``r01c01, r01c02, ...`` for an image of the given shape."""
    rows, cols = image_shape
    return [f"r{r + 1:02d}c{c + 1:02d}" for r in range(rows) for c in range(cols)]


def some_ids(items, k: int = SHOW_IDS) -> str:
    """The first few items joined, with '...' when there are more."""
    items = [str(i) for i in items]
    return ", ".join(items[:k]) + (", ..." if len(items) > k else "")


def check_unique_ids(ids: list[str], what: str, fix: str) -> None:
    index = pd.Index(ids)
    if not index.is_unique:
        dup = index[index.duplicated()].unique()
        raise InputError(f"{len(dup)} duplicate {what} ({some_ids(dup)}); {fix}")


def check_ids(feature_ids: list[str], sample_ids: list[str] | None) -> None:
    empty = [j + 1 for j, f in enumerate(feature_ids) if f == ""]
    if empty:
        raise InputError(f"{len(empty)} features have no name (feature {some_ids(empty)}); name every feature")
    check_unique_ids(feature_ids, "feature ids", "make the feature names unique")
    if sample_ids is not None:
        check_unique_ids(sample_ids, "sample ids", "make the sample ids unique")


def frozen(matrix: np.ndarray) -> np.ndarray:
    """``matrix`` (a float64 array just made by the caller, owning its memory) made read-only, so that
    :class:`Dataset` takes it without a copy: for wide data every copy is another matrix in memory."""
    matrix.flags.writeable = False
    return matrix


def _read_only(matrix) -> bool:
    """True for a read-only float64 array (:func:`frozen`, or a read-only view): certpca does not write to it."""
    return isinstance(matrix, np.ndarray) and matrix.dtype == np.float64 and not matrix.flags.writeable
