"""A parsed data file before validation, and the one conversion of text cells to numbers."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from certpca.errors import InputError

#: cell texts read as missing values (compared in lower case)
MISSING_TOKENS = frozenset({"", "na", "nan", "n/a", "#n/a", "null", "none", "?"})


@dataclass
class Table:
    """A parsed file before validation: values with the file's own row and column ids."""

    values: np.ndarray
    row_ids: list[str]
    col_ids: list[str]
    image_shape: tuple[int, int] | None = None
    labels: list[str] | None = None  # a label column taken out of a text file (read_labelled)


def to_float(cells: list[list[str]], row_ids: list[str] | None, col_ids: list[str]) -> np.ndarray:
    """Convert text cells; missing-value tokens become NaN, anything else non-numeric is an error."""
    try:
        return np.array(cells, dtype=float)
    except ValueError:
        pass  # missing-value tokens or bad cells: convert token by token below
    tokens = np.array(cells, dtype=str)
    unique, inverse = np.unique(tokens, return_inverse=True)
    converted = np.empty(len(unique))
    is_bad = np.zeros(len(unique), dtype=bool)
    for i, tok in enumerate(unique):
        try:
            converted[i] = float(tok)
        except ValueError:
            converted[i] = np.nan
            is_bad[i] = tok.strip().lower() not in MISSING_TOKENS
    bad_cells = is_bad[inverse].reshape(tokens.shape)
    if bad_cells.any():
        r, c = np.argwhere(bad_cells)[0]
        where = f"row {row_ids[r]!r}" if row_ids is not None else f"data row {r + 1}"
        raise InputError(
            f"non-numeric value {str(tokens[r, c])!r} in {where}, column {str(col_ids[c])!r} "
            f"({int(bad_cells.sum())} non-numeric cells in all); fix them or write missing values as NA"
        )
    return converted[inverse].reshape(tokens.shape)
