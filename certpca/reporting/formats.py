"""The report's one formatting of numbers (:func:`fmt`) and its :class:`Table`: a caption, a frame of
display strings (the HTML, LaTeX and Markdown all show these very strings) and a frame of raw numbers
for the CSV."""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd

from certpca import text

FORMATS = {
    "value": "{:.6g}",  # variances, bounds
    "fraction": "{:.4f}",  # certified fraction, Jaccard
    "percent": "{:.2%}",  # shares of variance
    "p": "{:.3g}",  # p-values
    "loading": "{:+.4f}",
    "seconds": "{:.2f}",
    "int": "{:d}",
}


def proven(optimal: bool) -> str:
    """A certificate's verdict in words: a proof, or the absence of one (never "not optimal")."""
    return "proven optimal" if optimal else "not proven"


def fmt(x, kind: str = "value") -> str:
    """The one formatting function of the report (HTML, LaTeX, Markdown, text)."""
    if x is None:
        return "–"
    if isinstance(x, bool):
        return "yes" if x else "no"
    if kind == "int":
        return f"{int(x):d}"
    x = float(x)
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "∞" if x > 0 else "−∞"
    return FORMATS[kind].format(x)


@dataclass
class Table:
    name: str  # file stem under --tables
    caption: str
    display: pd.DataFrame
    raw: pd.DataFrame

    def to_html(self) -> str:
        styler = self.display.style.hide(axis="index")
        styler.format(escape="html").format_index(escape="html", axis=1)  # ids come from the user's file
        styler.set_uuid(self.name)
        html = styler.to_html(exclude_styles=True, doctype_html=False)  # no ids, no style block
        return html.replace("<table>", '<table class="tbl">', 1)  # (exclude_styles drops attributes)

    def to_latex(self) -> str:
        styler = self.display.style.hide(axis="index")
        styler.format(formatter=text.latex).format_index(formatter=text.latex, axis=1)
        caption = text.latex(self.caption)
        cols = "l" + "".join("r" if _numeric(self.raw, c) else "l" for c in list(self.raw.columns)[1:])
        cols = cols[: self.display.shape[1]].ljust(self.display.shape[1], "l")
        return text.latex_symbols(
            styler.to_latex(hrules=True, caption=caption, label=f"tab:{self.name}", column_format=cols, position="htbp")
        )

    def to_markdown(self) -> str:
        cols = [str(c) for c in self.display.columns]
        lines = [
            f"Table: {text.markdown(self.caption)}",
            "",
            "| " + " | ".join(text.markdown(c) for c in cols) + " |",
            "|" + "|".join(" --- " for _ in cols) + "|",
        ]
        for row in self.display.itertuples(index=False):
            lines.append("| " + " | ".join(text.markdown(v) for v in row) + " |")
        return "\n".join(lines) + "\n"

    def to_csv(self) -> str:
        return self.raw.to_csv(index=False, lineterminator="\n")


def _numeric(frame: pd.DataFrame, column) -> bool:
    return pd.api.types.is_numeric_dtype(frame[column]) and not pd.api.types.is_bool_dtype(frame[column])


def make_table(name, caption, rows_display, rows_raw) -> Table:
    """A Table from rows of display strings and rows of raw values."""
    return Table(name, caption, pd.DataFrame(rows_display), pd.DataFrame(rows_raw))


@dataclass(frozen=True)
class Units:
    """What the data's rows and columns are (``Dataset.units``), plural and singular, so the page speaks of
    cells and genes for AnnData and of samples and features otherwise."""

    rows: str = "samples"
    cols: str = "features"

    @classmethod
    def of(cls, units) -> Units:
        rows, cols = units or ("samples", "features")
        return cls(str(rows), str(cols))

    @property
    def row(self) -> str:
        return _singular(self.rows)

    @property
    def col(self) -> str:
        return _singular(self.cols)


def _singular(word: str) -> str:
    return word[:-1] if word.endswith("s") and not word.endswith("ss") else word


def mode_name(nonneg: bool) -> str:
    return "nonnegative sparse" if nonneg else "sparse"


def mode_slug(nonneg: bool) -> str:
    """The file-name part of a sign constraint: ``nonneg`` or ``sparse``."""
    return "nonneg" if nonneg else "sparse"


__all__ = ["FORMATS", "Table", "Units", "fmt", "make_table", "mode_name", "mode_slug", "proven"]
