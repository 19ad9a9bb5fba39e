"""``certpca reproduce``: the published figures, rerun on the bundled data, beside the published numbers.

Each experiment is a function ``(settings) -> Result``: a matplotlib figure, its
tables (:class:`certpca.reporting.tables.Table`, written as Markdown, LaTeX and CSV),
a *published vs ours* table and plain-language notes on where we differ and why.
:func:`reproduce` runs the chosen experiments and writes, under ``out``::

    NAME/figure.svg  NAME/figure.png  NAME/*.md|tex|csv   index.html

``quick`` runs a reduced grid (CI); every random choice comes from ``seed``.
Figures reuse :mod:`certpca.reporting.plots` (deterministic SVG); tables reuse
:mod:`certpca.reporting.tables`.
"""

from __future__ import annotations

import html
import importlib.metadata as md
import io
import os
import platform
import time
from pathlib import Path

from certpca.reporting.plots import STYLE, to_svg
from certpca.reporting.tables import write_tables

from ..errors import InputError
from ..validation import check_int
from ..version import __version__
from .asteris2014 import ASTERIS, asteris2014_fig4_6
from .common import Result, Settings, mpl, published_table
from .gpower_speed import SLIDES, gpower_speed
from .sigg2008 import sigg2008_fig2, sigg2008_fig3, sigg2008_fig4
from .zass2006 import zass2006_fig5

__all__ = ["ASTERIS", "EXPERIMENTS", "SLIDES", "check_out", "parse_names", "reproduce"]

EXPERIMENTS = {
    "sigg2008-fig2": sigg2008_fig2,
    "sigg2008-fig3": sigg2008_fig3,
    "sigg2008-fig4": sigg2008_fig4,
    "asteris2014-fig4-6": asteris2014_fig4_6,
    "zass2006-fig5": zass2006_fig5,
    "gpower-speed": gpower_speed,
}


# ------------------------------------------------------------------ output
def _png(fig) -> bytes:
    matplotlib, _ = mpl()
    buf = io.BytesIO()
    with matplotlib.rc_context(STYLE):
        fig.savefig(buf, format="png", dpi=120, metadata={"Software": None}, bbox_inches="tight")
    return buf.getvalue()


def check_out(out: Path, force: bool) -> None:
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise InputError(f"`out` {out} is a file; give a folder")
    if out.is_dir() and any(out.iterdir()) and not force:
        raise InputError(f"`out` {out} is not empty; pass `force` to overwrite or choose another folder")


def parse_names(names) -> list[str]:
    names = list(names) or list(EXPERIMENTS)
    bad = [n for n in names if n not in EXPERIMENTS]
    if bad:
        raise InputError(f"unknown experiment {bad[0]!r}; choose from {', '.join(EXPERIMENTS)}")
    return list(dict.fromkeys(names))


def write_result(res: Result, out: Path) -> dict:
    folder = Path(out) / res.name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "figure.png").write_bytes(_png(res.figure))
    (folder / "figure.svg").write_text(to_svg(res.figure, res.name))
    tables = res.tables + [published_table(res)]
    write_tables(tables, folder, force=True, writer=lambda p, t: p.write_text(t))
    return {"name": res.name, "tables": [t.name for t in tables], "published": tables[-1]}


def reproduce(
    names=(), out="reports/reproduce", *, quick=False, seed=0, force=False, command=None, progress=None
) -> list[Result]:
    """Run the experiments ``names`` (default all) and write figures, tables and index.html into ``out``."""
    names = parse_names(names)
    check_int(seed, "seed", low=0)  # before the folder is made: a refused run leaves nothing
    out = Path(out)
    check_out(out, force)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise InputError(f"cannot create folder {out} for `out`: {err.strerror}; choose a writable place") from None
    settings = Settings(quick=quick, seed=seed)
    results = []
    t_all = time.perf_counter()
    for name in names:
        t0 = time.perf_counter()
        res = EXPERIMENTS[name](settings)
        res.seconds = time.perf_counter() - t0
        write_result(res, out)
        results.append(res)
        if progress:
            progress(f"{name}: {res.seconds:.1f} s")
    (out / "index.html").write_text(
        index_html(results, quick=quick, seed=seed, command=command, seconds=time.perf_counter() - t_all)
    )
    return results


def _versions() -> str:

    parts = [f"certpca {__version__}", f"Python {platform.python_version()}"]
    for pkg in ("numpy", "scipy", "matplotlib", "cvxpy", "scikit-learn"):
        try:
            parts.append(f"{pkg} {md.version(pkg)}")
        except md.PackageNotFoundError:
            parts.append(f"{pkg} not installed")
    return ", ".join(parts)


def index_html(results, *, quick, seed, command, seconds) -> str:
    esc = html.escape
    cmd = command or "certpca reproduce" + (" --quick" if quick else "")
    parts = [
        "<!doctype html><html lang='en'><head><meta charset='utf-8'><title>certpca reproduce</title>",
        "<style>body{font-family:sans-serif;max-width:62rem;margin:2rem auto;padding:0 1rem}"
        "table.tbl{border-collapse:collapse;font-size:.85rem}table.tbl td,table.tbl th{border-bottom:1px "
        "solid #ddd;padding:.2rem .5rem;text-align:left}img{max-width:100%}</style></head><body>",
        "<h1>certpca reproduce: published figures rerun</h1>",
        "<p><b>"
        + ("QUICK GRID (--quick): reduced grids for CI, not the full experiments." if quick else "Full grid.")
        + "</b></p>",
        f"<p>Command: <code>{esc(cmd)}</code><br>Date: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}"
        f"<br>Versions: {esc(_versions())}<br>Machine: {esc(platform.machine())}, {os.cpu_count()} cores, "
        f"{esc(platform.system())}<br>Seed: {seed}; total {seconds:.0f} s</p><ul>",
    ]
    for r in results:
        parts.append(f"<li><a href='#{r.name}'>{esc(r.title)}</a> ({r.seconds:.1f} s)</li>")
    parts.append("</ul>")
    for r in results:
        files = " · ".join(f"<a href='{r.name}/{f}'>{f}</a>" for f in ("figure.svg", "figure.png"))
        tabs = " · ".join(
            f"{t} (<a href='{r.name}/{t}.md'>md</a>, <a href='{r.name}/{t}.tex'>tex</a>, "
            f"<a href='{r.name}/{t}.csv'>csv</a>)"
            for t in [t.name for t in r.tables] + ["published-vs-ours"]
        )
        parts += [
            f"<h2 id='{r.name}'>{esc(r.title)}</h2>",
            f"<p><i>{esc(r.paper)}</i></p>",
            f"<p><img src='{r.name}/figure.svg' alt='{esc(r.title)}'></p>",
            f"<p>Figure: {files}<br>Tables: {tabs}</p>",
            "<h3>Published beside ours</h3>",
            published_table(r).to_html(),
        ]
        if r.notes:
            parts.append(
                "<h3>Where we differ and why</h3><ul>" + "".join(f"<li>{esc(n)}</li>" for n in r.notes) + "</ul>"
            )
    parts.append("</body></html>\n")
    return "\n".join(parts)


# --------------------------------------------------------------------- CLI
