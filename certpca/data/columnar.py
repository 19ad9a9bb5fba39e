"""Parquet and npz files parsed into a :class:`~certpca.data.cells.Table` (validated by :mod:`.readers`)."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd

from certpca.errors import InputError

from .cells import Table, to_float
from .dataset import pixel_ids, some_ids


def parse_parquet(path: Path) -> Table:
    """A parquet table validated as a CSV is.

    Sample ids come from a stored index, else from a first column that is not of
    float type (text or integers, as a CSV's first column), else they are numbered
    (a table of floats saved without its index).  Float and integer columns are
    taken as they are; any other column (text, booleans, dates) is read cell by
    cell as the CSV reader reads text, so numbers stored as text are accepted,
    missing-value tokens and nulls become NaN and anything else gets the CSV
    reader's message naming the sample and the column.
    """
    try:
        import pyarrow.parquet as pq

        numbers = _parquet_numbers(pq.ParquetFile(path))
        if numbers is not None:
            return numbers
        frame = pd.read_parquet(path)
    except ImportError:
        raise InputError("reading parquet needs pyarrow; pip install pyarrow (or certpca[parquet])") from None
    except (OSError, ValueError) as exc:  # pyarrow's ArrowInvalid is a ValueError
        raise InputError(f"cannot read {path.name} as parquet ({exc}); check the file") from None
    if not isinstance(frame.index, pd.RangeIndex):
        row_ids = [str(i).strip() for i in frame.index]
    elif frame.shape[1] and not pd.api.types.is_float_dtype(frame.dtypes.iloc[0]):
        row_ids = [str(i).strip() for i in frame.iloc[:, 0]]
        frame = frame.iloc[:, 1:]
    else:
        row_ids = [str(i + 1) for i in range(len(frame))]
    col_ids = [str(c).strip() for c in frame.columns]
    if frame.size == 0:
        raise InputError(f"{path.name} holds no data; give at least one row and one feature column")
    numeric = [
        (pd.api.types.is_float_dtype(t) or pd.api.types.is_integer_dtype(t)) and not pd.api.types.is_bool_dtype(t)
        for t in frame.dtypes
    ]
    if all(numeric):
        return Table(frame.to_numpy(dtype=float, na_value=np.nan), row_ids, col_ids)
    values = np.empty(frame.shape)
    other = [j for j, ok in enumerate(numeric) if not ok]
    cells = [[_cell_text(v) for v in row] for row in frame.iloc[:, other].itertuples(index=False)]
    values[:, other] = to_float(cells, row_ids, [col_ids[j] for j in other])
    done = [j for j, ok in enumerate(numeric) if ok]
    if done:
        values[:, done] = frame.iloc[:, done].to_numpy(dtype=float, na_value=np.nan)
    return Table(values, row_ids, col_ids)


#: parquet columns read at a time into the one float array (a wide file's columns are read in batches)
PARQUET_BATCH = 1000


def _parquet_numbers(file) -> Table | None:
    """A parquet file of numbers (float and integer columns; ids as :func:`parse_parquet` takes them)
    read straight into one float array, ``PARQUET_BATCH`` columns at a time; None for anything else.

    ``pandas.read_parquet`` (and ``pyarrow.parquet.read_table``) of a 500 × 20000 table peaked at
    20-25× the matrix: arrow and pandas buffers for every column at once.  The ids and values are
    those the pandas route gives.
    """
    import pyarrow as pa

    schema = file.schema_arrow
    meta = json.loads((schema.metadata or {}).get(b"pandas", b"{}") or b"{}")
    names = schema.names
    stored = [c for c in meta.get("index_columns", []) if isinstance(c, str)]
    if len(stored) > 1 or (stored and stored[0] not in names):
        return None  # a MultiIndex, or one pandas stores elsewhere: the pandas route
    id_col = stored[0] if stored else None
    if id_col is None and names and not pa.types.is_floating(schema.field(names[0]).type):
        id_col = names[0]
    data = [n for n in names if n != id_col]
    types = [schema.field(n).type for n in data]
    n_rows = file.metadata.num_rows
    if not data or not n_rows or not all(pa.types.is_floating(t) or pa.types.is_integer(t) for t in types):
        return None
    if id_col is None:
        row_ids = [str(i + 1) for i in range(n_rows)]
    else:
        id_type = schema.field(id_col).type
        if not (pa.types.is_string(id_type) or pa.types.is_large_string(id_type) or pa.types.is_integer(id_type)):
            return None
        ids = file.read(columns=[id_col], use_pandas_metadata=False).column(0)
        row_ids = [str(i).strip() for i in ids.to_pylist()]
    values = np.empty((n_rows, len(data)))
    for j in range(0, len(data), PARQUET_BATCH):
        batch = file.read(columns=data[j : j + PARQUET_BATCH], use_threads=False, use_pandas_metadata=False)
        for i in range(batch.num_columns):
            values[:, j + i] = batch.column(i).to_numpy()  # nulls come back as NaN
    return Table(values, row_ids, [name.strip() for name in data])


def _cell_text(value) -> str:
    """A parquet cell as the text a CSV would hold: nulls as NA, everything else as ``str`` writes it."""
    return "NA" if value is None or value is pd.NA or (isinstance(value, float) and np.isnan(value)) else str(value)


def parse_npz(path: Path, key: str | None) -> Table:
    try:
        arrays = np.load(path, allow_pickle=False)
    except (OSError, ValueError, zipfile.BadZipFile) as exc:
        raise InputError(f"cannot read {path.name} as npz ({exc}); save it with numpy.savez") from None
    try:
        content = {name: arrays[name] for name in arrays.files}
    except ValueError:
        raise InputError(
            f"{path.name} holds object arrays, which are not loaded (no pickle); save ids as string arrays"
        ) from None
    matrix = content[_npz_key(content, key, path)]
    image_shape: tuple[int, int] | None = None
    if "image_shape" in content:
        shape = [int(s) for s in np.ravel(content["image_shape"])]
        if len(shape) != 2:
            raise InputError(f"{path.name}: image_shape {shape} has {len(shape)} entries; give (height, width)")
        image_shape = (shape[0], shape[1])
    if image_shape is not None and int(np.prod(image_shape)) != matrix.shape[1]:
        raise InputError(
            f"{path.name}: image_shape {image_shape} does not match {matrix.shape[1]} features; fix image_shape"
        )
    if "feature_ids" in content:
        col_ids = [str(i) for i in content["feature_ids"]]
    elif image_shape is not None:
        col_ids = pixel_ids(image_shape)
    else:
        col_ids = [f"V{j + 1}" for j in range(matrix.shape[1])]
    if "sample_ids" in content:
        row_ids = [str(i) for i in content["sample_ids"]]
    else:
        row_ids = [str(i + 1) for i in range(matrix.shape[0])]
    for what, ids, n in (("feature_ids", col_ids, matrix.shape[1]), ("sample_ids", row_ids, matrix.shape[0])):
        if len(ids) != n:
            raise InputError(f"{path.name}: {len(ids)} {what} for {n} entries; give one id per entry")
    if not np.issubdtype(matrix.dtype, np.number) and matrix.dtype != bool:
        raise InputError(f"{path.name}: the data array has dtype {matrix.dtype}; store numbers")
    return Table(matrix.astype(float), row_ids, col_ids, image_shape)


def _npz_key(content: dict[str, np.ndarray], key: str | None, path: Path) -> str:
    """The data array's name: ``key``, ``X``, ``data`` or the only 2-D array."""
    two_d = [name for name, arr in content.items() if arr.ndim == 2]
    if key is not None:
        if key not in two_d:
            raise InputError(f"{path.name} has no 2-D array {key!r}; its 2-D arrays: {some_ids(two_d)}")
        return key
    for name in ("X", "data"):
        if name in two_d:
            return name
    if len(two_d) == 1:
        return two_d[0]
    if not two_d:
        raise InputError(f"{path.name} holds no 2-D array; store the data matrix as X")
    raise InputError(f"{path.name} holds several 2-D arrays ({some_ids(two_d)}); name the data array X")
