"""Reports: one self-contained HTML page per data set and k, plus publication tables.

    from certpca.reporting import ReportOptions, write_report, compute_run, render, report_tables
    options = ReportOptions(k=50, output="leukemia.html", tables="tables")
    run = write_report("leukemia", options)               # page and tables (certpca.report does this)
    run = compute_run(certpca.load("leukemia"), options)  # the saved run (typed; run.to_json())
    html = render(run)                                   # the page
    for t in report_tables(run): print(t.to_latex())     # booktabs tables

The command line: ``certpca report DATA --k K``, ``certpca genes``, ``certpca table``.
"""

from certpca.reporting.genes import gene_selection_run
from certpca.reporting.html import render
from certpca.reporting.options import ReportOptions
from certpca.reporting.run import compute_run
from certpca.reporting.saved import FORMAT, ReportRun
from certpca.reporting.tables import Table, fmt, report_tables, tables_for, write_tables
from certpca.reporting.write import write_report

__all__ = [
    "FORMAT",
    "ReportOptions",
    "ReportRun",
    "Table",
    "compute_run",
    "fmt",
    "gene_selection_run",
    "render",
    "report_tables",
    "tables_for",
    "write_report",
    "write_tables",
]
