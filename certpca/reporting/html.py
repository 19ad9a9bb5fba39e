"""Render a saved run as one self-contained HTML page (jinja2 templates in ``templates/``).

No scripts, no external fonts or styles, figures inline as SVG: the page opens
offline and prints cleanly.  Byte-identical for the same run (no timestamps), on one process or
several (the figures of every sign constraint but the first are drawn in a forked child,
reporting/side.py: the page is drawn after everything else, when the other core is idle).
"""

from __future__ import annotations

from functools import partial
from pathlib import Path

import jinja2
from markupsafe import Markup

from certpca import text
from certpca.certification import REGISTRY as BOUNDS
from certpca.reporting import plots
from certpca.reporting import tables as T
from certpca.reporting.saved import MethodFit, ReportRun
from certpca.reporting.side import Side, can_fork
from certpca.reporting.stability import stability_table, stable_count


def template_dir() -> Path:
    """``certpca/_templates`` when installed, ``<repo>/templates`` in a source checkout."""
    here = Path(__file__).resolve().parent.parent
    for folder in (here / "_templates", here.parent / "templates"):
        if (folder / "report.html.j2").is_file():
            return folder
    raise FileNotFoundError(
        f"report templates not found in {here / '_templates'} or {here.parent / 'templates'}; reinstall certpca"
    )


def environment() -> jinja2.Environment:
    """The templates' environment: autoescaping on (every value is HTML-escaped unless it is Markup)."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(template_dir())),
        autoescape=jinja2.select_autoescape(["html", "j2"], default_for_string=True, default=True),
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        undefined=jinja2.StrictUndefined,
    )
    env.filters["fmt"] = T.fmt
    return env


def _shown(table: T.Table | None) -> tuple[Markup, str, str] | None:
    """A table as the template's ``_table.html.j2`` takes it: (html, caption, name)."""
    return None if table is None else (Markup(table.to_html()), table.caption, table.name)


def glossary(run: ReportRun) -> list[tuple[str, str, str]]:
    """(name, what it is, reference) of every bound that appears in the run's certificates and bands."""
    names = {b.name for f in run.fits for c in [f.certificate, *f.later_certificates] if c for b in c.bounds} | {
        n for b in run.bands for n in b.bounds
    }
    return [(n, _sentence(BOUNDS[n].description), BOUNDS[n].cite()) for n in BOUNDS if n in names]


def _sentence(s: str) -> str:
    """``s`` with an initial ASCII lower-case letter capitalised (a leading symbol such as λ is kept)."""
    return s[0].upper() + s[1:] if s[:1].isascii() and s[:1].islower() else s


def skipped_in(run: ReportRun) -> tuple[dict[bool, dict[str, str]], dict[str, str]]:
    """The methods not run, as (sign constraint -> those not run in that problem alone, those run in
    neither): a method fitted in one problem is listed under the other only, never under a table that
    shows its row."""
    fitted = {nn: {f.method for f in run.fits_of(nn)} for nn in run.settings.nonneg}
    everywhere = {m: why for m, why in run.methods_skipped.items() if not any(m in f for f in fitted.values())}
    alone = {
        nn: {m: why for m, why in run.methods_skipped.items() if m not in everywhere and m not in names}
        for nn, names in fitted.items()
    }
    return alone, everywhere


def mode_figures(run: ReportRun, nonneg: bool, best: MethodFit) -> dict[str, Markup | None]:
    """The SVG figures of one sign constraint's section, whose best fit is ``best`` (None where it has none):
    loadings, sample scores, their heatmap and the stability of the selected features."""
    slug = T.mode_slug(nonneg)
    sc = run.scores_of(nonneg)
    record = run.stability_of(nonneg)
    return {
        "loadings_svg": Markup(plots.loadings(run, best, f"loadings-{slug}")),
        "scores_svg": Markup(plots.scores(run, sc, f"scores-{slug}")) if sc else None,
        "heatmap_svg": Markup(svg) if sc and (svg := plots.heatmap(run, sc, best, f"heatmap-{slug}")) else None,
        "stability_svg": Markup(plots.stability(run, record, f"stability-{slug}")) if record else None,
    }


def render(run: ReportRun, *, timings: bool = False, jobs: int | None = None) -> str:
    """The report page for a saved run; with ``jobs`` > 1 processes (None: the cores available,
    reporting/side.py) the figures of the second sign constraint are drawn beside the rest."""
    alone, everywhere = skipped_in(run)
    shown = {nn: best for nn in run.settings.nonneg if (best := run.best_fit(nn)) is not None}
    fork = can_fork(jobs)
    figures = {
        nn: Side(partial(mode_figures, run, nn, best), fork and i > 0) for i, (nn, best) in enumerate(shown.items())
    }
    path_svg, genes_svg, spectrum_svg = plots.path(run), plots.genes(run), plots.spectrum(run)  # while it draws
    modes = []
    for nonneg, best in shown.items():
        tabs = {
            "results": T.results_table(run, nonneg, timings),
            "bounds": T.bounds_table(run, nonneg, timings),
            "importance": T.importance_table(run, nonneg) if run.settings.components > 1 else None,
            "path": T.path_table(run, nonneg),
            "features": T.features_table(run, nonneg),
            "stability": stability_table(run, nonneg),
        }
        record = run.stability_of(nonneg)
        modes.append(
            {
                "nonneg": nonneg,
                "name": T.mode_name(nonneg),
                "slug": T.mode_slug(nonneg),
                "best": best,
                "cert": best.certificate,
                "tables": {k: _shown(v) for k, v in tabs.items() if v is not None},
                "skipped": alone.get(nonneg, {}),
                "stable": record,
                "stable_count": stable_count(record) if record else 0,
                **figures[nonneg].result(),
            }
        )
    g = run.genes
    gene_tabs = {"genes": _shown(T.genes_table(run)), "tests": _shown(T.tests_table(run))} if g else {}
    ctx = {
        "run": run,
        "d": run.data,
        "u": T.Units.of(run.data.units),
        "s": run.settings,
        "modes": modes,
        "timings": timings,
        "preprocessing": text.describe_preprocessing(run.data.preprocessing),
        "data_table": _shown(T.data_table(run)),
        "spectrum_svg": Markup(spectrum_svg),
        "path_svg": Markup(path_svg) if path_svg else None,
        "genes_svg": Markup(genes_svg) if genes_svg else None,
        "genes": g,
        "gene_tabs": gene_tabs,
        "versions": sorted(run.versions.items()),
        "samples": any(m["scores_svg"] for m in modes),
        "glossary": glossary(run),
        "skipped": everywhere,
    }
    return environment().get_template("report.html.j2").render(**ctx)
