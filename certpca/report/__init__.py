"""Reports: one self-contained HTML page per data set and k, plus publication tables.

    from certpca.report import compute_run, render, report_tables
    run = compute_run(certpca.load("leukemia"), k=50)   # the saved run (JSON-able)
    html = render(run)                                   # the page
    for t in report_tables(run): print(t.to_latex())     # booktabs tables

The command line: ``certpca report DATA --k K``, ``certpca genes``, ``certpca table``.
"""
from certpca.report.html import render
from certpca.report.run import compute_run, gene_selection_run
from certpca.report.tables import Table, fmt, report_tables, tables_for, write_tables


def write_report(data, k: int, path, **options) -> dict:
    """Compute a run for ``data`` (a Dataset, bundled name or file) and write its HTML to ``path``."""
    from pathlib import Path

    from certpca.data import Dataset
    from certpca.io import load
    ds = data if isinstance(data, Dataset) else load(data)
    timings = options.pop("timings", False)
    run = compute_run(ds, k=k, **options)
    Path(path).write_text(render(run, timings=timings), encoding="utf-8")
    return run


__all__ = ["compute_run", "gene_selection_run", "render", "report_tables", "tables_for", "write_tables",
           "Table", "fmt", "write_report"]
