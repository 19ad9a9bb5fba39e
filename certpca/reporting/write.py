"""A report written: compute a run and write its page and tables under the output policy of certpca.io."""

from __future__ import annotations

from pathlib import Path

from certpca.data import Dataset, read_annotation, read_labels, with_annotation, with_labels
from certpca.io import Outputs, load
from certpca.reporting.html import render
from certpca.reporting.options import ReportOptions, resolve
from certpca.reporting.run import compute
from certpca.reporting.saved import ReportRun
from certpca.reporting.tables import (
    file_names,
    report_table_names,
    report_tables,
    table_files,
)


def write_report(data: Dataset | str | Path, options: ReportOptions) -> ReportRun:
    """Write the HTML report of ``data`` (a Dataset, bundled name or path, read with
    :func:`certpca.io.load`'s defaults) with ``options``, and its tables; return the run.

    In this order: the data are loaded and their covariance built, once; the options are resolved, once
    (bad options fail here); every destination is claimed (an existing file without ``force``, an input,
    a missing folder fail here, before anything is computed); the run is computed; the page and the
    tables are renamed into place together at the end.
    """
    o = options
    if isinstance(data, Dataset):
        ds = data if o.labels is None else with_labels(data, read_labels(o.labels))
        ds = ds if o.annotate is None else with_annotation(ds, read_annotation(o.annotate))
    else:
        ds = load(data, labels=o.labels, annotate=o.annotate)
    problem = ds.problem()
    plan = resolve(ds, problem, o)
    annotation_file = o.annotate if isinstance(o.annotate, (str, Path)) else None
    protected = [*o.inputs, ds.source, o.labels, annotation_file, data if isinstance(data, (str, Path)) else None]
    out = Outputs(force=o.force, inputs=protected)
    page = out.claim(o.output, "report", flag="output")
    names = report_table_names(
        plan.nonneg_modes,
        path=bool(plan.ks),
        genes=plan.genes,
        scores=not ds.is_covariance and ds.sample_ids is not None,
        stability=bool(plan.stability),
    )
    folder = Path(o.tables) if o.tables is not None else None
    if folder is not None:
        out.claim_folder(folder, file_names(names), flag="tables")
    run = compute(ds, problem, plan)
    with out.writing():
        out.write(page, render(run, timings=o.timings))
        if folder is not None:
            for name, content in table_files(report_tables(run, o.timings)).items():
                out.write(folder / name, content)
    return run


__all__ = ["write_report"]
