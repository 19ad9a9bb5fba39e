"""Reports: one self-contained HTML page per data set and k, plus publication tables.

    from certpca.report import compute_run, render, report_tables
    run = compute_run(certpca.load("leukemia"), k=50)   # the saved run (JSON-able)
    html = render(run)                                   # the page
    for t in report_tables(run): print(t.to_latex())     # booktabs tables

The command line: ``certpca report DATA --k K``, ``certpca genes``, ``certpca table``.
"""
from pathlib import Path

from certpca.callable_module import make_callable
from certpca.data import Dataset
from certpca.errors import InputError
from certpca.io import Outputs, load
from certpca.report.html import render
from certpca.report.run import compute_run, gene_selection_run
from certpca.report.tables import Table, fmt, report_tables, tables_for, write_tables


def report(data, *, k: int, output="report.html", tables=None, force: bool = False, labels=None,
           timings: bool = False, inputs=(), **run_options) -> dict:
    """Compute a run for ``data`` and write its HTML page (and with ``tables`` a folder of tables).

    ``data`` is a Dataset, a bundled name or a path (``labels``: a file or a column
    of the data file).  The output policy of :mod:`certpca.io` holds: every
    destination is checked before computing, an existing file is refused unless
    ``force``, the data, labels and ``inputs`` files are never written to, and all
    files are renamed into place together at the end.  Returns the saved run.
    """
    paths = [p for p in (data, labels) if isinstance(p, (str, Path))]
    outputs = Outputs(force=force, inputs=[*paths, *inputs])
    outputs.claim(output, "report", flag="output")
    if tables is not None and Path(tables).exists() and not Path(tables).is_dir():
        raise InputError(f"tables {tables} is a file; give a folder")
    ds = data if isinstance(data, Dataset) else load(data, labels=labels)
    run = compute_run(ds, **{"k": k, **run_options})
    html = render(run, timings=timings)
    found = report_tables(run, timings) if tables is not None else []
    if tables is not None:   # claim every table file before writing anything
        write_tables(found, Path(tables), force=force, writer=lambda p, t: outputs.claim(p, "table"))
    with outputs.writing():
        outputs.write(output, html)
        if tables is not None:
            write_tables(found, Path(tables), force=True, writer=outputs.write)
    return run


make_callable(__name__, report)

__all__ = ["compute_run", "gene_selection_run", "render", "report_tables", "tables_for", "write_tables",
           "Table", "fmt", "report"]
