"""Render a saved run as one self-contained HTML page (jinja2 templates in ``templates/``).

No scripts, no external fonts or styles, figures inline as SVG: the page opens
offline and prints cleanly.  Byte-identical for the same run (no timestamps).
"""
from __future__ import annotations

from pathlib import Path

from certpca.report import plots
from certpca.report import tables as T
from certpca.results import _describe_preprocessing


def template_dir() -> Path:
    """``certpca/_templates`` when installed, ``<repo>/templates`` in a source checkout."""
    here = Path(__file__).resolve().parent.parent
    for folder in (here / "_templates", here.parent / "templates"):
        if (folder / "report.html.j2").is_file():
            return folder
    raise FileNotFoundError(f"report templates not found in {here / '_templates'} or {here.parent / 'templates'}; "
                            "reinstall certpca")


def environment():
    import jinja2
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(template_dir())),
                             autoescape=jinja2.select_autoescape(["html", "j2"]),
                             trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True,
                             undefined=jinja2.StrictUndefined)
    env.filters["fmt"] = T.fmt
    return env


def render(run: dict, *, timings: bool = False) -> str:
    """The report page for a saved run."""
    from markupsafe import Markup
    modes = []
    for nonneg in run["settings"]["nonneg"]:
        best = T.best_fit(run, nonneg)
        if best is None:
            continue
        tabs = {"results": T.results_table(run, nonneg, timings), "bounds": T.bounds_table(run, nonneg, timings),
                "path": T.path_table(run, nonneg), "features": T.features_table(run, nonneg)}
        modes.append({
            "nonneg": nonneg, "name": T.mode_name(nonneg), "slug": "nonneg" if nonneg else "sparse",
            "best": best, "cert": best["certificate"],
            "tables": {k: (Markup(v.to_html()), v.caption, v.name) for k, v in tabs.items() if v is not None},
            "loadings_svg": Markup(plots.loadings(run, best, f"loadings-{'nonneg' if nonneg else 'sparse'}")),
            "band": next((b for b in run["bands"] if b["nonneg"] == nonneg), None),
        })
    g = run.get("genes")
    gene_tabs = {}
    if g:
        gene_tabs = {k: (Markup(t.to_html()), t.caption, t.name)
                     for k, t in (("genes", T.genes_table(run)), ("tests", T.tests_table(run)))}
    path_svg = plots.path(run)
    genes_svg = plots.genes(run)
    data_tab = T.data_table(run)
    ctx = {
        "run": run, "d": run["data"], "s": run["settings"], "modes": modes, "timings": timings,
        "preprocessing": _describe_preprocessing(run["data"].get("preprocessing", {})),
        "data_table": (Markup(data_tab.to_html()), data_tab.caption, data_tab.name),
        "spectrum_svg": Markup(plots.spectrum(run)),
        "path_svg": Markup(path_svg) if path_svg else None,
        "genes_svg": Markup(genes_svg) if genes_svg else None,
        "genes": g, "gene_tabs": gene_tabs,
        "featured_rows": _featured(g) if g else None,
        "versions": sorted(run["versions"].items()),
    }
    return environment().get_template("report.html.j2").render(**ctx)


def _featured(g: dict) -> list[dict]:
    """The three rows at the featured size: full data, CE ranking, the component."""
    out = [g["rows"][0]]
    for sel in g["selectors"][::-1]:
        out += [r for r in g["rows"] if r["selector"] == sel and r["size"] == g["featured"]]
    return out
