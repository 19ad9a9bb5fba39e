"""Reports: one self-contained HTML page per data set and k, plus publication tables.

    from certpca.report import report, compute_run, render, report_tables
    run = report("leukemia", k=50, output="leukemia.html", tables="tables")   # page and tables
    run = compute_run(certpca.load("leukemia"), k=50)   # the saved run (typed; run.to_json())
    html = render(run)                                   # the page
    for t in report_tables(run): print(t.to_latex())     # booktabs tables

The command line: ``certpca report DATA --k K``, ``certpca genes``, ``certpca table``.
"""

from certpca.callable_module import make_callable
from certpca.report.api import report
from certpca.report.genes import gene_selection_run
from certpca.report.html import render
from certpca.report.run import compute_run
from certpca.report.saved import FORMAT, Run
from certpca.report.tables import Table, fmt, report_tables, tables_for, write_tables

make_callable(__name__, report)  # `certpca.report(...)` is both this package and its main function

__all__ = [
    "FORMAT",
    "Run",
    "Table",
    "compute_run",
    "fmt",
    "gene_selection_run",
    "render",
    "report",
    "report_tables",
    "tables_for",
    "write_tables",
]
