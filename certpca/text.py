"""User-visible text: one escaping rule per output format, and shared descriptions.

Every table, summary and page of certpca escapes through these functions, so a
feature id such as ``a_b|c`` looks the same in LaTeX, Markdown and HTML.
"""

from __future__ import annotations

import re

from markupsafe import escape

_LATEX_SPECIALS = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
}
_LATEX_RE = re.compile("|".join(re.escape(c) for c in _LATEX_SPECIALS))
#: Unicode symbols of certpca's captions and cells as LaTeX, so tables compile with pdflatex too
LATEX_SYMBOLS = (
    ("wᵀCw", r"$w^\top C w$"),
    ("λ1", r"$\lambda_1$"),
    ("≥", r"$\geq$"),
    ("≤", r"$\leq$"),
    ("✓", r"$\checkmark$"),
    ("±", r"$\pm$"),
    ("×", r"$\times$"),
    ("∞", r"$\infty$"),
    ("−", "-"),
    ("–", "--"),
    ("α", r"$\alpha$"),
    ("§", r"\S{}"),
)
#: Markdown's specials escaped with a backslash; & < > as entities, since a Markdown renderer passes HTML through
_MARKDOWN_SPECIALS = {
    **{c: "\\" + c for c in "\\|*_`[]"},
    "&": "&amp;",
    "<": "&lt;",
    ">": "&gt;",
    "\r\n": " ",
    "\n": " ",
    "\r": " ",
}
_MARKDOWN_RE = re.compile("|".join(re.escape(c) for c in sorted(_MARKDOWN_SPECIALS, key=len, reverse=True)))


def latex(s: str) -> str:
    """``s`` as LaTeX text: the ten special characters escaped in one pass."""
    return _LATEX_RE.sub(lambda m: _LATEX_SPECIALS[m.group(0)], str(s))


def latex_symbols(tex: str) -> str:
    """Unicode symbols (:data:`LATEX_SYMBOLS`) in LaTeX source replaced by LaTeX commands."""
    for a, b in LATEX_SYMBOLS:
        tex = tex.replace(a, b)
    return tex


def markdown(s: str) -> str:
    """``s`` as one line of Markdown text, safe in a table cell: specials escaped, HTML inert."""
    return _MARKDOWN_RE.sub(lambda m: _MARKDOWN_SPECIALS[m.group(0)], str(s))


def html(s: str) -> str:
    """``s`` as HTML text (markupsafe: ``& < > " '`` escaped)."""
    return str(escape(str(s)))


def describe_preprocessing(p: dict) -> str:
    """The preprocessing record of a Dataset in words, e.g. ``log2 with floor 20, centred``."""
    steps = []
    if p.get("log2_floor") is not None:
        steps.append(f"log2 with floor {p['log2_floor']}")
    if p.get("center"):
        steps.append("centred")
    if p.get("scale"):
        steps.append("scaled to unit variance")
    if p.get("unit_exponent"):
        steps.append(f"divided by 2^{p['unit_exponent']}")
    if p.get("dropped_constant"):
        steps.append(f"{len(p['dropped_constant'])} constant column(s) dropped")
    return ", ".join(steps) if steps else "no preprocessing"


__all__ = ["LATEX_SYMBOLS", "describe_preprocessing", "html", "latex", "latex_symbols", "markdown"]
