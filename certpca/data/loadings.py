"""A loadings CSV (``certpca fit --out``'s, or any tool's) read as one vector aligned to the data."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from certpca.errors import InputError

from .annotation import COLUMNS as ANNOTATION_COLUMNS
from .readers import not_a_file


def read_loadings(
    path: str | Path, feature_ids, component: str | int = 1, *, k: int | None = None, nonneg: bool = False
) -> tuple[np.ndarray, str]:
    """One column of a loadings CSV (feature ids, then one column per component) as a vector over
    ``feature_ids`` (features the file leaves out are zeros), and the column's name.

    ``component`` is a 1-based column number or a column name.  Refused with an
    :class:`InputError` naming the fix: a missing or unreadable file, no loading column, a
    column out of range or unknown, a loading that is not a finite number, a feature id twice,
    ids that are not the data's, and a column that cannot be certified: all zeros, more than
    ``k`` nonzeros, a negative loading when ``nonneg``.
    """
    path, column = Path(path), str(component)
    if not path.is_file():
        raise InputError(f"loadings file {path} {not_a_file(path)}; give the CSV that 'certpca fit --out' writes")
    try:
        table = pd.read_csv(path, index_col=0)
    except (ValueError, pd.errors.ParserError, UnicodeDecodeError) as err:
        raise InputError(
            f"cannot read loadings file {path}: {str(err).splitlines()[0]}; "
            "give the CSV that 'certpca fit --out' writes"
        ) from None
    table = table.drop(columns=[c for c in ANNOTATION_COLUMNS if c in table.columns])  # fit --annotate adds them
    if table.shape[1] == 0 or table.shape[0] == 0:
        raise InputError(
            f"loadings file {path} has no loading columns; expected feature ids then one column per component"
        )
    if column.isdigit() and column not in table.columns:
        j = int(column)
        if not 1 <= j <= table.shape[1]:
            raise InputError(f"`component={j}` is out of range: {path} has {table.shape[1]} column(s)")
        name = str(table.columns[j - 1])
    elif column in table.columns:
        name = column
    else:
        shown = ", ".join(map(str, table.columns[:8]))
        raise InputError(f"`component='{column}'` is not a column of {path}; columns: {shown}")
    series = pd.to_numeric(table[name], errors="coerce")
    if not np.isfinite(series).all():
        bad = series.index[~np.isfinite(series)][0]
        what = "is not a number" if np.isnan(series[bad]) else "is infinite"
        raise InputError(f"loading of feature '{bad}' in column '{name}' of {path} {what}; fix the file")
    table.index = table.index.astype(str)
    if table.index.has_duplicates:
        dup = table.index[table.index.duplicated()][0]
        raise InputError(f"feature id '{dup}' appears twice in {path}; keep one row per feature")
    unknown = table.index.difference(pd.Index(feature_ids, dtype=object).astype(str))
    if len(unknown):
        raise InputError(
            f"{len(unknown)} feature id(s) of {path} are not in the data (e.g. '{unknown[0]}'); "
            "check that the loadings belong to this data set and its preprocessing"
        )
    w = series.reindex(pd.Index(feature_ids).astype(str), fill_value=0.0).to_numpy(float)
    nnz = int(np.count_nonzero(w))
    if nnz == 0:
        raise InputError(f"column '{name}' of {path} is the zero vector; give a column with a nonzero loading")
    if k is not None and nnz > k:
        raise InputError(f"column '{name}' of {path} has {nnz} nonzeros but k = {k}; raise `k` to {nnz} or truncate it")
    if nonneg and (w < 0).any():
        raise InputError(
            f"column '{name}' of {path} has {int((w < 0).sum())} negative loadings; "
            "drop `nonneg` or give nonnegative loadings"
        )
    return w, name
