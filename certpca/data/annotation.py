"""Gene annotation: feature id → symbol and description, shown beside the ids a user cannot read.

Probe-set and clone ids (``35926_s_at``, ``IMAGE:784224``) mean nothing on a page; a table
from the array's vendor or Bioconductor (e.g. ``hgu95av2.db``) turns them into gene symbols.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pandas as pd

from certpca.errors import InputError

from .dataset import Dataset, some_ids
from .readers import not_a_file, read_small_table

COLUMNS = ["symbol", "description"]


def read_annotation(source) -> pd.DataFrame:
    """An annotation table indexed by feature id with columns ``symbol`` and ``description``.

    ``source`` is a CSV/TSV file (a header row; the first column, or one named ``feature``,
    ``id`` or ``probe``, holds the ids; then ``symbol`` and ``description`` by name, else the
    next two columns), a DataFrame indexed by feature id (same column rule) or a Series
    id → symbol.  Empty cells stay empty strings.
    """
    if isinstance(source, pd.Series):
        frame = source.to_frame("symbol")
    elif isinstance(source, pd.DataFrame):
        frame = source
    else:
        frame = _read_file(Path(source))
    if len(frame) == 0:
        raise InputError("the annotation has no rows; give one row per feature id: id,symbol[,description]")
    frame = frame.astype(str).where(frame.notna(), "")
    named = [c for c in COLUMNS if c in frame.columns]
    if not named:
        if frame.shape[1] == 0:
            raise InputError("the annotation has no column after the feature ids; give id,symbol[,description]")
        frame = frame.iloc[:, :2].set_axis(COLUMNS[: min(2, frame.shape[1])], axis=1)
    frame = frame.reindex(columns=COLUMNS, fill_value="")
    frame.index = pd.Index([str(i).strip() for i in frame.index], name="feature")
    if not frame.index.is_unique:
        dup = frame.index[frame.index.duplicated()].unique()
        raise InputError(f"the annotation lists feature ids more than once ({some_ids(dup)}); keep one row per id")
    return frame.apply(lambda col: col.str.strip())


def _read_file(path: Path) -> pd.DataFrame:
    if not path.is_file():
        raise InputError(f"annotation file {path} {not_a_file(path)}; give a CSV of feature id, symbol, description")
    frame = read_small_table(path, "annotation file", "a CSV of feature id, symbol, description")
    id_column = next((c for c in frame.columns if str(c).lower() in ("feature", "id", "probe")), frame.columns[0])
    return frame.set_index(id_column)


def with_annotation(ds: Dataset, annotation: pd.DataFrame) -> Dataset:
    """Attach the rows of ``annotation`` for the dataset's features (others get empty cells);
    refused when no feature id matches, which means the wrong file or the wrong id column."""
    known = ds.feature_ids.isin(annotation.index)
    if not known.any():
        raise InputError(
            f"none of the {len(annotation)} ids of the annotation are features of {ds.name} "
            f"(e.g. {some_ids(annotation.index)} vs {some_ids(ds.feature_ids)}); check its id column"
        )
    return replace(ds, annotation=annotation.reindex(ds.feature_ids, fill_value=""))


def label(feature_id: str, annotation: pd.DataFrame | None) -> str:
    """``id (SYMBOL)`` when the annotation gives a symbol, else the id."""
    if annotation is None or feature_id not in annotation.index:
        return feature_id
    symbol = annotation.at[feature_id, "symbol"]
    return f"{feature_id} ({symbol})" if symbol and symbol != feature_id else feature_id
