"""In-memory data a Python user holds (numpy array, DataFrame, scipy.sparse, AnnData) → a raw Dataset.

Each becomes the same samples × features Dataset a file reader returns, with the
same id checks, so :func:`certpca.io.load` prepares all of them one way.  A sparse
matrix (scipy.sparse, or AnnData's sparse X, layer or raw.X) stays sparse: the
Dataset holds it as CSC and nothing downstream forms the N × D array.
"""

from __future__ import annotations

import warnings
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp

from certpca.errors import InputError
from certpca.sparse_factor import as_csc

from .dataset import Dataset, check_ids

KINDS = "a path, a bundled name, a numpy array, a pandas DataFrame, a scipy.sparse matrix or an AnnData object"


def is_in_memory(obj: Any) -> bool:
    """True for the in-memory objects :func:`from_object` converts."""
    return isinstance(obj, (np.ndarray, pd.DataFrame)) or sp.issparse(obj) or is_anndata(obj)


def is_anndata(obj: Any) -> bool:
    """AnnData recognised by its type name, so anndata is imported only when such an object is given."""
    return any(cls.__name__ == "AnnData" for cls in type(obj).__mro__)


def from_object(obj: Any, *, layer: str | None = None, use_raw: bool = False, labels: str | None = None) -> Dataset:
    """A raw (unprepared) Dataset from an in-memory object; ``layer``/``use_raw``/``labels`` for AnnData.

    A float64 array is held as a read-only view, not copied (:func:`~certpca.data.prepare` makes
    the one copy it needs, or none with ``copy=False``)."""
    if not is_anndata(obj) and (layer is not None or use_raw):
        raise InputError("layer and use_raw apply to AnnData objects only; drop them")
    if is_anndata(obj):
        return _from_anndata(obj, layer=layer, use_raw=use_raw, labels=labels)
    if isinstance(obj, pd.DataFrame):
        bad = [
            str(c)
            for c, t in obj.dtypes.items()
            if not (pd.api.types.is_numeric_dtype(t) and not pd.api.types.is_bool_dtype(t))
        ]
        if bad:
            raise InputError(
                f"DataFrame columns {', '.join(bad[:5])} are not numeric; drop them or pass labels separately"
            )
        return _dataset(
            _matrix(obj.to_numpy(dtype=float)),
            [str(i) for i in obj.index],
            [str(c) for c in obj.columns],
            "DataFrame",
        )
    matrix = _matrix(obj)
    n, d = matrix.shape
    return _dataset(
        matrix,
        [f"s{i + 1}" for i in range(n)],
        [f"f{j + 1}" for j in range(d)],
        "sparse matrix" if sp.issparse(obj) else "array",
    )


def read_h5ad(path: Path, *, layer: str | None = None, use_raw: bool = False, labels: str | None = None) -> Dataset:
    """An ``.h5ad`` file as a raw Dataset (``X``, a layer or ``raw.X``; labels from an obs column)."""
    import anndata  # imported here: it loads h5py, and only .h5ad files need it

    try:
        with warnings.catch_warnings():  # anndata warns about uns layouts of older files; the data are unaffected
            warnings.simplefilter("ignore", FutureWarning)
            adata = anndata.read_h5ad(path)
    except (OSError, ValueError, KeyError) as err:
        raise InputError(f"cannot read {path} as an .h5ad file: {str(err).splitlines()[0]}; check the file") from None
    ds = from_object(adata, layer=layer, use_raw=use_raw, labels=labels)
    return replace(ds, name=path.name.removesuffix(".h5ad"), source=str(path))


def _matrix(obj: Any) -> np.ndarray | sp.csc_matrix:
    """A 2-D float array of an array, or a float CSC matrix of a sparse one; other shapes and types refused."""
    matrix = obj if sp.issparse(obj) else np.asarray(obj)
    if matrix.ndim != 2:
        raise InputError(f"data must be 2-D samples × features; got an array of shape {matrix.shape}")
    if not (np.issubdtype(matrix.dtype, np.number) and not np.issubdtype(matrix.dtype, np.bool_)):
        raise InputError(f"data must be numeric; got dtype {matrix.dtype}")
    if sp.issparse(matrix):
        return as_csc(matrix)
    view = np.asarray(matrix, dtype=float).view()  # no copy of float64 data: prepare() makes the one needed
    view.flags.writeable = False
    return view


def _from_anndata(adata: Any, *, layer: str | None, use_raw: bool, labels: str | None) -> Dataset:
    """X, a layer or raw.X of an AnnData object, ids from obs_names/var_names, labels from an obs column."""
    if layer is not None and use_raw:
        raise InputError("`layer` and `use_raw` are exclusive; give one of them")
    if use_raw:
        if adata.raw is None:
            raise InputError("this AnnData has no raw; drop `use_raw`")
        matrix, var_names = adata.raw.X, adata.raw.var_names
    elif layer is not None:
        if layer not in adata.layers:
            found = ", ".join(adata.layers) or "none"
            raise InputError(
                f"layer {layer!r} is not in this AnnData (layers: {found}); give one of them or drop `layer`"
            )
        matrix, var_names = adata.layers[layer], adata.var_names
    else:
        matrix, var_names = adata.X, adata.var_names
    ds = replace(
        _dataset(_matrix(matrix), [str(i) for i in adata.obs_names], [str(v) for v in var_names], "AnnData"),
        units=("cells", "genes"),
    )
    if labels is None:
        return ds
    if labels not in adata.obs.columns:
        columns = ", ".join(map(str, adata.obs.columns[:8])) or "none"
        raise InputError(f"labels {labels!r} is not an obs column (columns: {columns}); give one of them")
    found = pd.Series(adata.obs[labels].astype(str).to_numpy(), index=ds.sample_ids, name="label")
    return replace(ds, labels=found)


def anndata_mask(adata: Any, mask_var: Any, *, use_raw: bool) -> tuple[str | None, np.ndarray | None]:
    """The genes a fit of an AnnData uses, as scanpy's ``sc.pp.pca`` chooses them: ``mask_var`` is a
    ``var`` column of booleans, a boolean array over ``var_names``, None (all genes) or ``"default"``
    (``var["highly_variable"]`` when present, else all genes).  Returns the mask's name for the record
    (the column, ``"array"`` or None) and the boolean mask (None: all genes)."""
    if isinstance(mask_var, str) and mask_var == "default":
        mask_var = "highly_variable" if not use_raw and "highly_variable" in adata.var.columns else None
    if mask_var is None:
        return None, None
    if use_raw:
        raise InputError("mask_var selects var_names, not raw's genes; pass mask_var=None with use_raw=True")
    if isinstance(mask_var, str):
        if mask_var not in adata.var.columns:
            raise InputError(f"mask_var {mask_var!r} is not a var column; name a boolean column or pass mask_var=None")
        name, values = mask_var, adata.var[mask_var].to_numpy()
    else:
        name, values = "array", np.asarray(mask_var)
    if values.dtype != bool or values.shape != (adata.n_vars,):
        raise InputError(f"mask_var must give one True/False per gene ({adata.n_vars}); it gives {values.shape}")
    if not values.any():
        raise InputError(f"mask_var {name!r} selects no gene; pass mask_var=None to use all genes")
    return name, values


def _dataset(matrix: np.ndarray | sp.csc_matrix, sample_ids: list[str], feature_ids: list[str], kind: str) -> Dataset:
    check_ids(feature_ids, sample_ids)
    if not np.isfinite(matrix.data if sp.issparse(matrix) else matrix).all():
        raise InputError(f"the {kind} has missing or infinite values; remove or impute them first")
    if matrix.shape[0] < 2:
        raise InputError(f"{matrix.shape[0]} sample(s): a covariance needs at least 2; rows are samples")
    return Dataset(
        name=kind,
        matrix=matrix,
        feature_ids=pd.Index(feature_ids),
        sample_ids=pd.Index(sample_ids),
        labels=None,
        source="",
        preprocessing={"transposed": False},
    )
