"""Readers: CSV/TSV (optionally gzipped), parquet and npz files (parsed in :mod:`.columnar`), validated into a Dataset.

Problems are :class:`~certpca.errors.InputError` with a one-line message naming
the problem and the fix, so the rest of the package can assume a finite float
matrix with unique string ids.
"""

from __future__ import annotations

import csv
import gzip
import itertools
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TextIO

import numpy as np
import pandas as pd

from certpca.errors import InputError

from .cells import MISSING_TOKENS, Table, to_float
from .columnar import parse_npz, parse_parquet
from .dataset import Dataset, check_ids, frozen, some_ids

NA_OPTIONS = ("drop-rows", "drop-cols", "mean")
_DELIMITERS = {".csv": ",", ".tsv": "\t", ".tab": "\t"}
_SNIFF_CANDIDATES = ("\t", ",", ";", "|")
#: every spelling of a missing-value token (the C reader compares cells exactly)
_MISSING_SPELLINGS = sorted(
    {"".join(c) for tok in MISSING_TOKENS for c in itertools.product(*({ch.lower(), ch.upper()} for ch in tok))}
)
#: lines read to sniff the delimiter and check the header before the whole file is parsed
HEAD_LINES = 6
SYMMETRY_RTOL = 1e-8
PSD_RTOL = 1e-8


# --------------------------------------------------------------------- read
def read(
    path: str | Path,
    *,
    transpose: bool = False,
    covariance: bool = False,
    na: str | None = None,
    key: str | None = None,
) -> Dataset:
    """Read and validate a data file.

    Parameters
    ----------
    path
        CSV/TSV/TXT (optionally ``.gz``) with a header row and a first id
        column, ``.parquet``, or ``.npz`` (array ``X``, ``data``, ``key`` or the
        only 2-D one; optional ``feature_ids``, ``sample_ids``, ``image_shape``).
    transpose
        The file has one row per feature (common for expression tables).
    covariance
        The file is a covariance or correlation matrix; its first column may
        hold the feature ids or be absent.
    na
        What to do with missing or infinite values: ``"drop-rows"`` (drop
        those samples), ``"drop-cols"`` (drop those features) or ``"mean"``
        (fill in the feature mean).  Without it they are an error.
    key
        Name of the array to use in an ``.npz`` file holding several.
    """
    path = Path(path)
    if na is not None and na not in NA_OPTIONS:
        raise InputError(f"unknown `na` option {na!r}; use one of {', '.join(NA_OPTIONS)}")
    if covariance and (transpose or na is not None):
        raise InputError("`transpose` and `na` do not apply to a covariance matrix; drop them")
    if not path.is_file():
        raise InputError(f"file not found: {path}; check the path")
    if path.suffix.lower() == ".json":
        raise InputError(
            f"{path.name} is JSON, not a data table; give a CSV/TSV, parquet, npz or h5ad file "
            "(a saved --json run makes tables with 'certpca table')"
        )
    table = _parse(path, covariance=covariance, key=key)
    if covariance:
        return _covariance_dataset(table, path)
    return _sample_dataset(table, path, transpose=transpose, na=na)


def _stem(path: Path) -> str:
    """File name without its data suffixes (``x.csv.gz`` -> ``x``)."""
    name = path.name
    for suffix in (".gz", ".csv", ".tsv", ".tab", ".txt", ".parquet", ".npz"):
        name = name.removesuffix(suffix)
    return name


def data_format(path: str | Path) -> str:
    """The format of a data file or folder, from its name: the one suffix dispatch of every loader.

    ``"h5ad"``, ``"zarr"`` (a store, i.e. a folder), ``"parquet"`` (a file, or a folder of
    parquet files), ``"npz"``, else ``"text"`` (CSV/TSV/TXT, optionally gzipped).
    """
    name = str(path).rstrip("/").lower()
    for suffix in ("h5ad", "zarr", "parquet", "npz"):
        if name.endswith("." + suffix):
            return suffix
    return "parquet" if Path(path).is_dir() else "text"


def _parse(path: Path, *, covariance: bool, key: str | None) -> Table:
    fmt = data_format(path)
    if fmt == "parquet":
        return parse_parquet(path)
    if fmt == "npz":
        return parse_npz(path, key)
    return _parse_text(path, covariance=covariance)


@contextmanager
def _text(path: Path) -> Iterator[TextIO]:
    """The file as text (gunzipped, UTF-8 with an optional byte-order mark); read errors as one-line InputErrors."""
    opener = gzip.open if path.suffix.lower() == ".gz" else open
    try:
        with opener(path, "rt", encoding="utf-8-sig", newline="") as fh:
            yield fh
    except (gzip.BadGzipFile, EOFError) as exc:
        what = "ends early (truncated)" if isinstance(exc, EOFError) else "is not a gzip file"
        raise InputError(f"{path.name} {what}; download it again or give the uncompressed file") from None
    except UnicodeDecodeError as exc:
        raise InputError(
            f"cannot read {path.name} as text ({exc.__class__.__name__}); save it as UTF-8 CSV/TSV, parquet or npz"
        ) from None


def _read_lines(path: Path, limit: int | None = None) -> list[str]:
    """The file's non-blank lines (the first ``limit`` of them), gunzipped and decoded."""
    with _text(path) as fh:
        if limit is None:
            return [line for line in fh.read().splitlines() if line.strip()]
        return list(itertools.islice((line for line in fh if line.strip()), limit))


def _delimiter(path: Path, lines: list[str]) -> str | None:
    """Delimiter from the extension, else the candidate splitting the first lines consistently.

    None means runs of whitespace.
    """
    suffixes = [s.lower() for s in path.suffixes]
    if suffixes and suffixes[-1] == ".gz":
        suffixes.pop()
    if suffixes and suffixes[-1] in _DELIMITERS:
        return _DELIMITERS[suffixes[-1]]
    head = lines[:6]
    best, best_count = None, 0
    for cand in _SNIFF_CANDIDATES:
        counts = {line.count(cand) for line in head[1:]} or {0}
        header_count = head[0].count(cand)
        if len(counts) == 1 and header_count in (min(counts), min(counts) - 1) and min(counts) > best_count:
            best, best_count = cand, min(counts)
    return best


def _tokenize(lines: list[str], delimiter: str | None) -> list[list[str]]:
    if delimiter is None:
        return [line.split() for line in lines]
    return list(csv.reader(lines, delimiter=delimiter))


def _parse_text(path: Path, *, covariance: bool) -> Table:
    """A CSV/TSV through a C reader when its first lines look regular, else (and to name a fault) in Python.

    Three readers, fastest first; each later one runs only when the earlier cannot
    vouch for its result, and all give the same table when they return:
    :func:`_parse_numbers` (numpy's C ``loadtxt``: numbers only, about 1.1× the
    matrix's memory), :func:`_parse_missing` (pandas' C engine, which also reads
    missing-value tokens) and :func:`_parse_python` (every cell a Python string,
    13× the matrix), which alone raises the messages about a faulty file.
    """
    head = _read_lines(path, HEAD_LINES)
    if len(head) >= 2:
        delimiter = _delimiter(path, head)
        header, first = _tokenize(head[:2], delimiter)
        header = [h.strip() for h in header]
        width = len(first)
        if width >= 2 and width - len(header) in (0, 1):
            col_ids = header if width == len(header) + 1 else header[1:]
            for parse in (_parse_numbers, _parse_missing):
                table = parse(path, delimiter, col_ids, width)
                if table is not None:
                    if covariance and width == len(header) and len(table.row_ids) == width:
                        # a square body under D names: the first column holds values, not ids
                        first_col = to_float([[i] for i in table.row_ids], None, header[:1])
                        return Table(np.hstack([first_col, table.values]), list(header), header)
                    return table
    return _parse_python(path, covariance=covariance)


#: a first field in double quotes (quotes inside doubled), then the delimiter or the line's end
_QUOTED_ID = re.compile(r'"((?:[^"]|"")*)"')


def _split_id(line: str, delimiter: str | None) -> tuple[str, str] | None:
    """(first field, the rest of the line) as :func:`_tokenize` splits it; None when unsure."""
    if delimiter is None:
        parts = line.split(None, 1)
        return (parts[0], parts[1]) if len(parts) == 2 else None
    if line.startswith('"'):
        m = _QUOTED_ID.match(line)
        if m is None or not line.startswith(delimiter, m.end()):
            return None
        return m.group(1).replace('""', '"'), line[m.end() + len(delimiter) :]
    field, sep, rest = line.partition(delimiter)
    return (field, rest) if sep and '"' not in field else None


def _parse_numbers(path: Path, delimiter: str | None, col_ids: list[str], width: int) -> Table | None:
    """A file of numbers only, through numpy's C ``loadtxt``; None when anything else is in it.

    Equal to :func:`_parse_python` whenever it returns: ``loadtxt`` converts cells
    with correct rounding (as ``float``) and raises when the number of fields
    changes, the ids are split off line by line as :func:`_tokenize` splits them
    (a case it cannot be sure of returns None), blank lines are skipped as there.
    """
    row_ids: list[str] = []

    def rest_of_lines(fh):
        for line in fh:
            if line.strip():
                split = _split_id(line, delimiter)
                if split is None:
                    raise ValueError("first field not split here")
                row_ids.append(split[0].strip())
                yield split[1]

    try:
        with _text(path) as fh:
            next(line for line in fh if line.strip())  # the header, already parsed
            values = np.loadtxt(
                rest_of_lines(fh),
                delimiter=delimiter,
                comments=None,
                quotechar=None if delimiter is None else '"',
                ndmin=2,
            )
    except (InputError, ValueError, OSError, EOFError, UnicodeDecodeError):
        return None
    if values.shape != (len(row_ids), width - 1) or not row_ids:
        return None
    return Table(values, row_ids, col_ids)


def _parse_missing(path: Path, delimiter: str | None, col_ids: list[str], width: int) -> Table | None:
    """The file through pandas' C engine, which reads missing-value tokens as NaN; None when unsure.

    Equal to :func:`_parse_python` whenever it returns: cells are converted with
    the correctly rounded ``round_trip`` converter (as ``float``), the missing-value
    tokens are given in every spelling the Python reader accepts, and quoting
    follows :func:`_tokenize` (none for whitespace-separated files).  A row with
    too many fields or a decoding or gzip error make pandas raise; a column with a
    cell that is not a number comes back as text (or booleans) and is refused; a
    row with too few fields comes back padded with NaN, so when any NaN is present
    every data line is re-counted (:func:`_widths_agree`).  Per-column dtypes are
    not passed (they cost pandas a Python step per column): the id column is
    re-read as text only when pandas did not keep it as text.
    """
    options = {
        "sep": r"\s+" if delimiter is None else delimiter,
        "header": None,
        "names": range(width),
        "index_col": False,
        "keep_default_na": False,
        "quoting": csv.QUOTE_NONE if delimiter is None else csv.QUOTE_MINIMAL,
        "engine": "c",
    }
    try:
        frame = _read_body(path, na_values=_MISSING_SPELLINGS, float_precision="round_trip", **options)
        ids = frame.pop(0)
        if not all(pd.api.types.is_float_dtype(t) or pd.api.types.is_integer_dtype(t) for t in frame.dtypes):
            return None
        if not (pd.api.types.is_object_dtype(ids.dtype) and all(isinstance(i, str) for i in ids)):
            ids = _read_body(path, usecols=[0], dtype=str, **options)[0]
    except (InputError, ValueError, OSError, EOFError, UnicodeDecodeError, pd.errors.ParserError):
        return None
    row_ids = [i.strip() for i in ids]
    values = frame.to_numpy(dtype=float)
    del frame
    if not row_ids or len(row_ids) != len(values):
        return None
    if np.isnan(values).any() and not _widths_agree(path, delimiter, width, len(row_ids)):
        return None
    return Table(values, row_ids, col_ids)


def _read_body(path: Path, **options) -> pd.DataFrame:
    """``pandas.read_csv`` of the lines after the header (the first non-blank line)."""
    with _text(path) as fh:
        next(line for line in fh if line.strip())
        return pd.read_csv(fh, **options)


def not_a_file(path: Path) -> str:
    """What a path that is not a readable file is, for a message: 'is a folder' or 'not found'."""
    return "is a folder" if path.is_dir() else "not found"


def read_small_table(path: Path, what: str, layout: str) -> pd.DataFrame:
    """A small delimited text file of strings (a labels or annotation file), its delimiter chosen as the
    data's (:func:`_delimiter`); an empty or unreadable file is one :class:`InputError` naming ``what``
    and ``layout``."""
    lines = _read_lines(path, 6)
    if not lines:
        raise InputError(f"{what} {path.name} is empty; give {layout}")
    delimiter = _delimiter(path, lines)
    try:
        with _text(path) as fh:
            return pd.read_csv(fh, dtype=str, keep_default_na=False, sep=r"\s+" if delimiter is None else delimiter)
    except (pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        raise InputError(f"cannot read {what} {path.name} ({exc.__class__.__name__}); give {layout}") from None


def _widths_agree(path: Path, delimiter: str | None, width: int, n_rows: int) -> bool:
    """True when the file has ``n_rows`` non-blank data lines of ``width`` fields each (one line at a time)."""
    count = -1  # the header is the first non-blank line
    with _text(path) as fh:
        for line in fh:
            if not line.strip():
                continue
            count += 1
            if count and len(_tokenize([line], delimiter)[0]) != width:
                return False
    return count == n_rows


def read_labelled(
    path: str | Path, column: str, *, transpose: bool = False, covariance: bool = False, na: str | None = None
) -> tuple[Dataset, pd.Series]:
    """A samples × features text file with its class labels in ``column``: the other columns are the data,
    validated as :func:`read` validates them (the labels named by sample id).  A features × samples
    table (``transpose``) or a covariance has no label column."""
    path = Path(path)
    if transpose or covariance or data_format(path) != "text":
        raise InputError(
            f"labels {column!r} is not a file; a label column works only for CSV/TSV "
            "files with samples as rows: give a labels file sample,label instead"
        )
    table = _parse_python(path, covariance=False, label_column=column)
    assert table.labels is not None  # _parse_python returns them when asked for a column
    labels = pd.Series(table.labels, index=table.row_ids, name="label").str.strip()
    return _sample_dataset(table, path, transpose=False, na=na), labels


def _parse_python(path: Path, *, covariance: bool, label_column: str | None = None) -> Table:
    """Tokenize every line in Python: the reference reader, whose messages name the row and column at fault.

    With ``label_column`` that column is taken out of the table as text (``Table.labels``)."""
    lines = _read_lines(path)
    if not lines:
        raise InputError(f"{path.name} is empty; give a header row and one row per sample")
    rows = _tokenize(lines, _delimiter(path, lines))
    header, body = [h.strip() for h in rows[0]], rows[1:]
    if not body:
        raise InputError(f"{path.name} has a header but no data rows; add one row per sample")
    if len(header) < 2 and len(body[0]) < 2:
        raise InputError(
            f"{path.name} has a single column; check the delimiter (.csv means comma, .tsv tab) or add feature columns"
        )
    _check_ragged(body, path)
    width = len(body[0])
    if covariance and width == len(header) and len(body) == width:
        # A square body under D names: there is no id column.
        return Table(to_float(body, None, header), list(header), header)
    if width == len(header) + 1:
        col_ids = header  # R's write.csv: no name for the id column
    elif width == len(header):
        col_ids = header[1:]
    elif len(header) == 1 and ";" in header[0]:
        raise InputError(
            f"{path.name} looks semicolon-separated (with decimal commas?); save it comma- or tab-separated "
            "with decimal points"
        )
    else:
        raise InputError(
            f"{path.name}: the header has {len(header)} fields but the rows have {width}; "
            "give one header name per column"
        )
    row_ids = [r[0].strip() for r in body]
    cells = [r[1:] for r in body]
    labels = None
    if label_column is not None:
        if label_column not in col_ids:
            raise InputError(
                f"labels {label_column!r}: no such file and no such column in {path.name} "
                f"(columns start {', '.join(col_ids[:5])})"
            )
        j = col_ids.index(label_column)
        labels = [r[j] for r in cells]
        cells, col_ids = [r[:j] + r[j + 1 :] for r in cells], col_ids[:j] + col_ids[j + 1 :]
    return Table(to_float(cells, row_ids, col_ids), row_ids, col_ids, labels=labels)


def _check_ragged(body: list[list[str]], path: Path) -> None:
    widths = [len(r) for r in body]
    if min(widths) != max(widths):
        first = next(i for i, w in enumerate(widths) if w != widths[0])
        raise InputError(
            f"{path.name}: data row {first + 1} has {widths[first]} fields but row 1 has "
            f"{widths[0]}; give every row the same number of columns"
        )


def _sample_dataset(table: Table, path: Path, *, transpose: bool, na: str | None) -> Dataset:
    values, sample_ids, feature_ids = table.values, table.row_ids, table.col_ids
    if transpose:
        values, sample_ids, feature_ids = values.T, feature_ids, sample_ids
    check_ids(feature_ids, sample_ids)
    values, sample_ids, feature_ids, na_record = _handle_missing(values, sample_ids, feature_ids, na)
    if len(sample_ids) < 2:
        hint = "; did you mean `transpose=True`?" if not transpose and len(feature_ids) >= 2 else ""
        raise InputError(f"{len(sample_ids)} sample(s): a covariance needs at least 2{hint}")
    if values.base is None and values.dtype == np.float64:
        values = frozen(values)  # the reader's own array: the Dataset takes it instead of a second copy
    return Dataset(
        name=_stem(path),
        matrix=values,
        feature_ids=pd.Index(feature_ids),
        sample_ids=pd.Index(sample_ids),
        labels=None,
        source=str(path),
        preprocessing={"transposed": transpose, "na": na_record},
        image_shape=table.image_shape,
    )


def _handle_missing(
    values: np.ndarray, sample_ids: list[str], feature_ids: list[str], na: str | None
) -> tuple[np.ndarray, list[str], list[str], dict | None]:
    """Apply the ``na`` option to NaN/inf cells, or report them; returns the data and a record."""
    bad = ~np.isfinite(values)
    if not bad.any():
        return values, sample_ids, feature_ids, None if na is None else {"method": na, "cells": 0}
    rows, cols = np.flatnonzero(bad.any(axis=1)), np.flatnonzero(bad.any(axis=0))
    n_bad = int(bad.sum())
    if na is None:
        raise InputError(
            f"{n_bad} missing or infinite values in {len(rows)} samples ({some_ids(np.take(sample_ids, rows))}) "
            f"and {len(cols)} features ({some_ids(np.take(feature_ids, cols))}); "
            "`na=drop-rows|drop-cols|mean` handles them"
        )
    record = {"method": na, "cells": n_bad}
    if na == "drop-rows":
        keep = np.setdiff1d(np.arange(len(sample_ids)), rows)
        record["dropped"] = [sample_ids[i] for i in rows]
        return values[keep], [sample_ids[i] for i in keep], feature_ids, record
    if na == "drop-cols":
        keep = np.setdiff1d(np.arange(len(feature_ids)), cols)
        if keep.size == 0:
            raise InputError(
                "every feature has a missing value, so `na='drop-cols'` leaves nothing; try `na='drop-rows'` or 'mean'"
            )
        record["dropped"] = [feature_ids[j] for j in cols]
        return values[:, keep], sample_ids, [feature_ids[j] for j in keep], record
    values = np.where(bad, np.nan, values)
    empty = np.flatnonzero(bad.all(axis=0))
    if empty.size:
        raise InputError(
            f"{empty.size} features have no finite value ({some_ids(np.take(feature_ids, empty))}) "
            "so `na='mean'` cannot fill them; use `na='drop-cols'`"
        )
    means = np.nanmean(values, axis=0)
    return np.where(bad, means, values), sample_ids, feature_ids, record


def _covariance_dataset(table: Table, path: Path) -> Dataset:
    C, row_ids, col_ids = table.values, table.row_ids, table.col_ids
    if C.shape[0] != C.shape[1]:
        raise InputError(
            f"covariance in {path.name} is not square ({C.shape[0]} rows × {C.shape[1]} columns); "
            "give a D × D matrix or drop `covariance`"
        )
    check_ids(col_ids, row_ids)
    if row_ids != col_ids:
        if set(row_ids) != set(col_ids):
            extra = [r for r in row_ids if r not in set(col_ids)]
            raise InputError(
                f"covariance row ids do not match its column names ({some_ids(extra)}); "
                "use the same names, or write no id column"
            )
        C = C[[row_ids.index(c) for c in col_ids]]
    _check_covariance(C, col_ids)
    return Dataset(
        name=_stem(path),
        matrix=(C + C.T) / 2,
        feature_ids=pd.Index(col_ids),
        sample_ids=None,
        labels=None,
        is_covariance=True,
        source=str(path),
        preprocessing={"transposed": False, "na": None},
    )


def _check_covariance(C: np.ndarray, ids: list[str]) -> None:
    """Finite, symmetric to a relative 1e-8, and positive semidefinite to -1e-8·λmax."""
    n_bad = int((~np.isfinite(C)).sum())
    if n_bad:
        raise InputError(f"covariance has {n_bad} missing or infinite entries; a covariance must be complete")
    scale = np.abs(C).max()
    asym = np.abs(C - C.T)
    i, j = np.unravel_index(np.argmax(asym), asym.shape)
    if asym[i, j] > SYMMETRY_RTOL * scale:
        raise InputError(
            f"covariance is not symmetric: entries ({ids[i]}, {ids[j]}) and ({ids[j]}, {ids[i]}) "
            f"differ by {asym[i, j]:.3g}; fix the file or symmetrise it as (C + Cᵀ)/2"
        )
    eig = np.linalg.eigvalsh((C + C.T) / 2)
    if eig[0] < -PSD_RTOL * max(eig[-1], 0.0):
        raise InputError(
            f"covariance is not positive semidefinite: smallest eigenvalue {eig[0]:.4g} "
            f"(largest {eig[-1]:.4g}); give a valid covariance or correlation matrix"
        )
