"""R's summary tables and number formats: :class:`Summary` (a titled table rendered as text, HTML or
LaTeX, as statsmodels' summaries are) and ``format()``'s significant digits as ``print.prcomp`` and
``print.summary.prcomp`` use them."""

from __future__ import annotations

import numpy as np
import pandas as pd

from certpca import text

#: R's significant digits: print.prcomp (the default getOption("digits")) and print.summary.prcomp (digits - 3)
PRINT_DIGITS, SUMMARY_DIGITS = 7, 4
#: the rows of summary.prcomp's importance matrix, formatted together column by column as R does
R_ROWS = ("Standard deviation", "Proportion of Variance", "Cumulative Proportion")
#: decimals summary.prcomp rounds the proportions to
ROUND_PROPORTIONS = 5


class Summary:
    """A table with a title and notes, rendered as text, HTML or LaTeX.

    Its quantities (standard deviation, certified fraction, ...) are rows, as in
    summary.prcomp's importance matrix, or columns with ``by_column`` (one row per bound
    in a certificate's summary); each is formatted by its name.
    """

    def __init__(
        self,
        title: str,
        table: pd.DataFrame,
        notes: list[str],
        *,
        by_column: bool = False,
        heading: str = "Importance of components:",
    ):
        self.title, self.table, self.notes, self.by_column, self.heading = title, table, notes, by_column, heading

    def _formatted(self) -> pd.DataFrame:
        """Cells as text: summary.prcomp's rows column by column to 4 significant digits (as R prints
        its importance matrix), cardinalities as integers, fractions as percentages."""
        if self.by_column:
            return Summary(self.title, self.table.T, self.notes)._formatted().T
        t = self.table.astype(object)
        r_rows = [r for r in R_ROWS if r in t.index]
        # summary.prcomp stores the proportions rounded to 5 decimals (round(vars, 5)) before printing them
        proportions = np.array([r != R_ROWS[0] for r in r_rows], dtype=bool)
        for col in t.columns:
            values = np.array(self.table.loc[r_rows, col], dtype=float)
            values[proportions] = np.round(values[proportions], ROUND_PROPORTIONS)
            t.loc[r_rows, col] = r_format(values, SUMMARY_DIGITS)
        for row in t.index.difference(r_rows, sort=False):
            t.loc[row] = [_cell(row, v) for v in self.table.loc[row]]
        return t

    def as_text(self) -> str:
        t = self._formatted()
        label_w = max(len(str(i)) for i in t.index)
        widths = [max(len(c), *(len(v) for v in t[c])) for c in t.columns]
        lines = [
            self.title,
            "",
            self.heading,
            " " * label_w + "".join(f" {c:>{w}}" for c, w in zip(t.columns, widths)),
        ]
        for row in t.index:
            lines.append(f"{row:<{label_w}}" + "".join(f" {v:>{w}}" for v, w in zip(t.loc[row], widths)))
        return "\n".join(lines + [""] + self.notes)

    def as_html(self) -> str:
        table = self._formatted().to_html(classes="importance", border=0, escape=True)
        notes = "".join(f"<li>{text.html(n)}</li>" for n in self.notes)
        return f"<div class='summary'><h3>{text.html(self.title)}</h3>{table}<ul>{notes}</ul></div>"

    def as_latex(self) -> str:
        styler = self._formatted().style.format(escape="latex").format_index(escape="latex", axis=0)
        styler = styler.format_index(escape="latex", axis=1)
        return styler.to_latex(hrules=True, caption=text.latex(self.title))

    _repr_html_ = as_html

    def __str__(self) -> str:
        return self.as_text()


def _cell(row: str, v) -> str:
    if isinstance(v, str):
        return v
    if row == "Cardinality":
        return f"{int(v):d}"
    if row == "Certified fraction":
        return f"{100 * float(v):.2f}%"
    if row == "Seconds":
        return f"{float(v):.2g}"
    return r_format(np.array([float(v)]), 6)[0]


def r_format(values: np.ndarray, digits: int) -> list[str]:
    """Numbers formatted together as R's ``format`` does with ``digits`` significant digits.

    R finds, for each number, the fewest significant digits (at most ``digits``) that
    show it to ``digits`` digits, and prints all with the largest number of decimals
    that needs; it switches to scientific notation when fixed notation would be wider.
    """
    v = np.asarray(values, dtype=float)
    finite = v[np.isfinite(v) & (v != 0)]
    decimals, sig = 0, 1
    for x in finite:
        full = float(f"{x:.{digits - 1}e}")
        s = digits
        while s > 1 and float(f"{x:.{s - 2}e}") == full:
            s -= 1
        exponent = int(np.floor(np.log10(abs(full))))
        decimals, sig = max(decimals, s - 1 - exponent), max(sig, s)
    fixed = [f"{x:.{decimals}f}" if np.isfinite(x) else _special(x) for x in v]
    scientific = [f"{x:.{sig - 1}e}" if np.isfinite(x) else _special(x) for x in v]
    if max(map(len, fixed), default=0) > max(map(len, scientific), default=0):
        return scientific
    return fixed


def _special(x: float) -> str:
    return "NaN" if np.isnan(x) else ("Inf" if x > 0 else "-Inf")


def r_vector(values: np.ndarray, width: int = 80) -> str:
    """A numeric vector as R prints it: ``[1]`` then the values, wrapped at ``width`` with the index of each line."""
    cells = r_format(values, PRINT_DIGITS)
    w = max(map(len, cells), default=0)
    label_w = len(f"[{len(cells)}]")
    per_line = max(1, (width - label_w) // (w + 1))
    lines = []
    for start in range(0, len(cells), per_line):
        chunk = cells[start : start + per_line]
        lines.append(f"[{start + 1}]".rjust(label_w) + "".join(f" {c:>{w}}" for c in chunk))
    return "\n".join(lines)


__all__ = ["PRINT_DIGITS", "R_ROWS", "SUMMARY_DIGITS", "Summary", "r_format", "r_vector"]
