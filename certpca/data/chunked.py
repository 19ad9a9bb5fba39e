"""Data beyond one machine's memory (a dask array, a zarr store, a lazily read .h5ad), read in blocks.

For N ≫ D (cells × genes) everything certpca needs is the D × D covariance, and one
pass over the row blocks forms it: each block gives its count, mean and centred
cross-product, and blocks merge pairwise by Chan, Golub & LeVeque's (1979) update

    n = n_A + n_B,  δ = mean_B − mean_A,  M = M_A + M_B + δδᵀ n_A n_B / n,

so no block is centred against a mean it does not know and the sums never cancel
catastrophically (a dense block is centred on its own mean; a scipy.sparse block
subtracts n_b·mean_b mean_bᵀ from its cross-product, which is exact up to the
block's own spread).  The blocks are computed on dask's threaded scheduler, or on
a ``dask.distributed`` cluster when a client is given.  The scores are one more
pass: each block times the loadings, the centring applied to the product.

For D > N (samples × CpGs, 10³ × 10⁶) the D × D covariance is out of reach and
not needed: one pass over column blocks of whole columns gives each column's
mean and divisor (two-pass within the block, as :func:`certpca.data.prepare`
computes them), and the problem is the implicit
:class:`~certpca.dask_factor.DaskFactor`, whose products and N × N Gram
matrix are each one more pass over the blocks.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp

from certpca import text
from certpca.dask_factor import DaskFactor, column_blocks, column_width
from certpca.errors import InputError
from certpca.problem import Problem
from certpca.sparse_factor import dense_block

from .dataset import some_ids

#: the largest D whose D × D covariance is formed (8 · D² bytes: 3.2 GB at 20000)
MAX_FEATURES = 20000


def is_dask_array(obj: Any) -> bool:
    """A dask array, recognised by its type so dask is imported only when one is given."""
    return type(obj).__module__.startswith("dask.array") and hasattr(obj, "chunks")


def _block_moments(block) -> tuple[int, np.ndarray, np.ndarray]:
    """(n, column means, centred cross-product) of one row block, dense or scipy.sparse."""
    n = block.shape[0]
    if sp.issparse(block):
        block = block.tocsr().astype(float)
        mean = np.asarray(block.sum(axis=0)).ravel() / n
        cross = (block.T @ block).toarray() - n * np.outer(mean, mean)
    else:
        block = np.asarray(block, dtype=float)
        mean = block.mean(axis=0)
        centred = block - mean
        cross = centred.T @ centred
    return n, mean, cross


def _merge(a: tuple[int, np.ndarray, np.ndarray], b: tuple[int, np.ndarray, np.ndarray]):
    """Chan, Golub & LeVeque's pairwise update of (n, mean, centred cross-product)."""
    (na, ma, Ma), (nb, mb, Mb) = a, b
    n = na + nb
    delta = mb - ma
    return n, ma + delta * (nb / n), Ma + Mb + np.outer(delta, delta) * (na * nb / n)


def moments(array, client=None) -> tuple[int, np.ndarray, np.ndarray]:
    """(N, column means, centred cross-product XcᵀXc) of a dask array in one pass over its row
    blocks, merged as a binary tree (so a cluster merges in parallel)."""
    import dask

    array = array.rechunk({1: -1})  # whole rows in every block
    parts = [dask.delayed(_block_moments)(b) for b in array.to_delayed().ravel()]
    while len(parts) > 1:
        parts = [
            dask.delayed(_merge)(*parts[i : i + 2]) if i + 1 < len(parts) else parts[i] for i in range(0, len(parts), 2)
        ]
    if client is not None:
        return client.compute(parts[0]).result()
    return parts[0].compute(scheduler="threads")


def _block_stats(block) -> np.ndarray:
    """Rows (mean, centred sd, root mean square) of one block of whole columns, as prepare computes them."""
    block = dense_block(block)
    n = block.shape[0]
    mean = block.mean(axis=0)
    sd = np.sqrt(np.sum((block - mean) ** 2, axis=0) / (n - 1))
    return np.vstack([mean, sd, np.sqrt(np.sum(block**2, axis=0) / (n - 1))])


def column_stats(array, client=None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(means, centred sds, root mean squares) of a dask array's columns, in one pass over column blocks."""
    array = column_blocks(array)
    stats = array.map_blocks(_block_stats, chunks=((3,), array.chunks[1]), dtype=float)
    values = client.compute(stats).result() if client is not None else stats.compute(scheduler="threads")
    return values[0], values[1], values[2]


@dataclass(frozen=True, eq=False)
class ChunkedData:
    """A samples × features dask array, prepared (centred, optionally scaled) without loading it.

    It offers what a fit, a certificate or a path needs of a Dataset: ``problem()``
    (from the covariance of one chunked pass, or for D > N the implicit ``factor``),
    ``project(W)`` (the scores, one more pass), the ids, ``center``/``scale`` and the
    preprocessing record.
    """

    name: str
    array: Any
    feature_ids: pd.Index
    sample_ids: pd.Index
    covariance: np.ndarray | None
    center: pd.Series | None
    scale: pd.Series | None
    preprocessing: dict = field(default_factory=dict)
    client: Any = None
    labels: None = None
    annotation: None = None
    is_covariance: bool = False
    factor: DaskFactor | None = None

    @classmethod
    def prepare(
        cls,
        array,
        *,
        center: bool = True,
        scale: bool = False,
        feature_ids=None,
        sample_ids=None,
        client=None,
        name: str = "dask array",
    ) -> ChunkedData:
        """Centre (and with ``scale`` divide by sqrt(Σx²/(N−1)), as prepare and R do) a dask array.

        Constant features are dropped with a warning, or refused with ``scale``, as
        :func:`certpca.data.prepare` does.  D ≤ N: the D × D covariance in one pass over
        row blocks; D > N: the column statistics in one pass and the implicit factor.
        """
        if array.ndim != 2:
            raise InputError(f"data must be 2-D samples × features; got a dask array of shape {array.shape}")
        n, d = array.shape
        if n < 2:
            raise InputError(f"{n} sample(s): a covariance needs at least 2; rows are samples")
        if min(n, d) > MAX_FEATURES:
            raise InputError(
                f"{n} samples × {d} features: chunked data need the D × D covariance or the N × N Gram matrix, "
                f"formed for at most {MAX_FEATURES}; select features or samples first"
            )
        feature_ids = pd.Index([f"f{j + 1}" for j in range(d)] if feature_ids is None else list(map(str, feature_ids)))
        sample_ids = pd.Index([f"s{i + 1}" for i in range(n)] if sample_ids is None else list(map(str, sample_ids)))
        if d > n:
            mean, sd, rms = column_stats(array, client)
            variance = sd
        else:
            count, mean, cross = moments(array, client)
            variance = np.diag(cross)
        if not (np.isfinite(mean).all() and np.isfinite(variance).all()):
            raise InputError("the dask array has missing or infinite values; remove or impute them first")
        keep = variance > 0
        if not keep.all():
            dropped = feature_ids[~keep]
            if scale:
                raise InputError(
                    f"{len(dropped)} constant features ({some_ids(dropped)}) cannot be scaled to unit variance; "
                    "remove them or do not scale"
                )
            warnings.warn(
                f"dropped {len(dropped)} constant features (zero variance): {some_ids(dropped)}", stacklevel=2
            )
        ids = feature_ids[keep]
        kept = array[:, np.flatnonzero(keep)] if not keep.all() else array
        C = factor = sds = None
        if d > n:
            mean, sds = mean[keep], ((sd if center else rms)[keep] if scale else None)
            factor = DaskFactor(kept, mean if center else None, sds, client=client)
        else:
            C = (cross if center else cross + count * np.outer(mean, mean)) / (count - 1)
            C, mean = C[np.ix_(keep, keep)], mean[keep]
            if scale:
                sds = np.sqrt(np.diag(C))
                C = C / np.outer(sds, sds)
                np.fill_diagonal(C, 1.0)
            C = (C + C.T) / 2
        steps = {
            "center": center,
            "scale": scale,
            "log2_floor": None,
            "dropped_constant": [str(f) for f in feature_ids[~keep]],
            "chunked": True,
        }
        return cls(
            name=name,
            array=kept,
            feature_ids=ids,
            sample_ids=sample_ids,
            covariance=C,
            center=pd.Series(mean, index=ids, name="center") if center else None,
            scale=None if sds is None else pd.Series(sds, index=ids, name="scale"),
            preprocessing=steps,
            client=client,
            factor=factor,
        )

    @property
    def n_samples(self) -> int:
        return int(self.array.shape[0])

    @property
    def n_features(self) -> int:
        return len(self.feature_ids)

    def problem(self) -> Problem:
        """The covariance operator of the prepared data: its D × D matrix, or for D > N the implicit factor."""
        if self.factor is not None:
            return Problem(implicit=self.factor, feature_ids=self.feature_ids)
        return Problem.from_covariance(self.covariance, self.feature_ids)

    def project(self, W: np.ndarray) -> np.ndarray:
        """The prepared data times W (N × m): one pass, each block times W, centring applied after
        (for D > N the products of the blocks summed by dask's matmul, a sparse block densified)."""
        W = np.asarray(W, dtype=float)
        Ws = W if self.scale is None else W / self.scale.to_numpy()[:, None]
        shift = np.zeros(W.shape[1]) if self.center is None else self.center.to_numpy() @ Ws
        if self.factor is not None:
            scores = self.array.map_blocks(dense_block, dtype=float, meta=np.empty((0, 0))) @ Ws
        else:
            scores = self.array.rechunk({1: -1}).map_blocks(
                lambda b: np.asarray(b @ Ws), chunks=(self.array.chunks[0], (W.shape[1],)), dtype=float
            )
        values = (
            self.client.compute(scores).result() if self.client is not None else scores.compute(scheduler="threads")
        )
        return np.asarray(values) - shift

    def describe(self) -> dict:
        return {
            "name": self.name,
            "source": "",
            "n_samples": self.n_samples,
            "n_features": self.n_features,
            "is_covariance": False,
            "labelled": False,
            "preprocessing": dict(self.preprocessing),
        }

    def summary_line(self) -> str:
        return (
            f"{self.name}: {self.n_samples} samples × {self.n_features} features (chunked), "
            f"{text.describe_preprocessing(self.preprocessing)}"
        )


def open_zarr(path, **options) -> ChunkedData:
    """A 2-D zarr array (samples × features) as :class:`ChunkedData`; ids from its attributes
    ``feature_ids`` and ``sample_ids`` when it has them.  ``options`` as for :meth:`ChunkedData.prepare`."""
    import dask.array as da
    import zarr

    try:
        store = zarr.open_array(str(path), mode="r")
    except Exception as err:  # zarr raises several types for a path that is not an array store
        raise InputError(f"cannot read {path} as a zarr array: {str(err).splitlines()[0]}") from None
    attrs = dict(store.attrs)
    return ChunkedData.prepare(
        da.from_zarr(store),
        feature_ids=attrs.get("feature_ids"),
        sample_ids=attrs.get("sample_ids"),
        name=str(path).rstrip("/").rsplit("/", 1)[-1].removesuffix(".zarr"),
        **options,
    )


def open_h5ad(path, *, layer: str | None = None, use_raw: bool = False, rows: int = 10000, **options) -> ChunkedData:
    """An ``.h5ad`` file's X (or ``layer``, or raw.X) read lazily in blocks of ``rows`` cells by anndata
    (``read_elem_lazy``), for files beyond memory; ids from obs_names and var_names.  A CSR matrix (as
    scanpy writes it) is read a row block at a time; with more features than samples a dense or CSC
    matrix is read in blocks of whole columns instead.  ``options`` as for :meth:`ChunkedData.prepare`."""
    import h5py
    from anndata.experimental import read_elem_lazy
    from anndata.io import read_elem

    if layer is not None and use_raw:
        raise InputError("`layer` and `use_raw` are exclusive; give one of them")
    try:
        store = h5py.File(str(path), "r")
    except OSError as err:
        raise InputError(f"cannot read {path} as an .h5ad file: {str(err).splitlines()[0]}") from None
    if use_raw and "raw" not in store:
        raise InputError(f"{path} has no raw; drop `use_raw`")
    if layer is not None and layer not in store.get("layers", {}):
        found = ", ".join(store["layers"]) if "layers" in store else "none"
        raise InputError(f"layer {layer!r} is not in {path} (layers: {found}); give one of them or drop `layer`")
    matrix, var = ("raw/X", "raw/var") if use_raw else (f"layers/{layer}" if layer else "X", "var")
    obs_names, var_names = read_elem(store["obs"]).index, read_elem(store[var]).index
    n, d = len(obs_names), len(var_names)
    by_rows = d <= n or store[matrix].attrs.get("encoding-type") == "csr_matrix"  # CSR: rows only
    array = read_elem_lazy(store[matrix], chunks=(min(rows, n), d) if by_rows else (n, min(d, column_width(n))))
    name = str(path).rstrip("/").rsplit("/", 1)[-1].removesuffix(".h5ad")
    return ChunkedData.prepare(array, feature_ids=var_names, sample_ids=obs_names, name=name, **options)


def open_parquet(path, *, transpose: bool = False, **options) -> ChunkedData:
    """A parquet file, or a directory of parquet files, read through ``dask.dataframe`` a row group at a
    time: samples × features, or with ``transpose`` features × samples (10⁶ CpGs as rows, the samples
    as columns: each row group is then a block of whole columns).  Row ids from the stored index or a
    first non-numeric column, as :func:`certpca.data.read` takes them; ``options`` as for
    :meth:`ChunkedData.prepare`."""
    import dask.dataframe as dd

    try:
        frame = dd.read_parquet(str(path))
    except Exception as err:  # pyarrow and dask raise several types for a path that is not parquet
        raise InputError(f"cannot read {path} as parquet: {str(err).splitlines()[0]}") from None
    columns = list(frame.columns)
    first_is_id = bool(columns) and not pd.api.types.is_numeric_dtype(frame.dtypes.iloc[0])
    numbers = columns[1:] if first_is_id else columns
    text_columns = [str(c) for c in numbers if not pd.api.types.is_numeric_dtype(frame.dtypes[c])]
    if text_columns:
        raise InputError(
            f"{len(text_columns)} non-numeric columns in {path} ({some_ids(text_columns)}) besides the first "
            "(the ids); convert or drop them"
        )
    if first_is_id:
        row_ids = frame[columns[0]].compute()
    elif frame.index.name is not None:
        row_ids = frame.index.compute()
    else:
        row_ids = None
    array = frame[numbers].to_dask_array(lengths=True).astype(float)
    ids = {"sample_ids": row_ids, "feature_ids": numbers}
    if transpose:
        array, ids = array.T, {"sample_ids": numbers, "feature_ids": row_ids}
    name = str(path).rstrip("/").rsplit("/", 1)[-1].removesuffix(".parquet")
    return ChunkedData.prepare(array, name=name, **ids, **options)


def connect(address: str):
    """A ``dask.distributed`` client of the scheduler at ``address`` (host:port)."""
    from distributed import Client

    try:
        return Client(address, timeout="10s")
    except (OSError, TimeoutError) as err:
        raise InputError(
            f"cannot reach a dask scheduler at {address} ({err.__class__.__name__}); "
            "start one with 'dask scheduler' or drop `scheduler`"
        ) from None
