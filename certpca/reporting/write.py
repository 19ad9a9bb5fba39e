"""``certpca.report(...)``: compute a run and write its page and tables under the output policy of certpca.io."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from certpca.data import Dataset, read_annotation, read_labels, with_annotation, with_labels
from certpca.io import Outputs, load
from certpca.reporting.html import render
from certpca.reporting.options import resolve
from certpca.reporting.run import compute_run
from certpca.reporting.saved import Run
from certpca.reporting.tables import (
    file_names,
    report_table_names,
    report_tables,
    table_files,
)


def report(
    data: Dataset | str | Path,
    *,
    k: int,
    output: str | Path = "report.html",
    tables: str | Path | None = None,
    force: bool = False,
    labels: str | Path | None = None,
    annotate=None,
    timings: bool = False,
    inputs: Iterable[str | Path] = (),
    **run_options: Any,
) -> Run:
    """Write the HTML report of ``data`` at cardinality ``k`` (and its tables), and return the run.

    Parameters
    ----------
    data : Dataset, bundled data set name or file path (read with :func:`certpca.io.load`'s defaults).
    k : largest number of nonzero loadings per component.
    output : the HTML file.
    tables : a folder for every table as LaTeX, Markdown and CSV (none by default).
    force : overwrite existing files (inputs are never overwritten).
    labels : class labels for a file or name: a CSV ``sample,label`` or a column of the data file.
    annotate : gene symbols and descriptions (a file, DataFrame or Series:
        :func:`certpca.data.read_annotation`), shown beside the selected features' ids.
    timings : show wall-clock times (the page then differs between runs).
    inputs : further files never to overwrite (the command line passes its data and label files; the
        data file of a Dataset read from a file, its ``source``, is protected anyway).
    run_options : the options of :func:`certpca.reporting.run.compute_run` (methods, nonneg_modes, path, ...).

    Every destination is checked before anything is computed; the page and the
    tables are renamed into place together at the end.
    """
    if isinstance(data, Dataset):
        ds = data if labels is None else with_labels(data, read_labels(labels))
        ds = ds if annotate is None else with_annotation(ds, read_annotation(annotate))
    else:
        ds = load(data, labels=labels, annotate=annotate)
    annotation_file = annotate if isinstance(annotate, (str, Path)) else None
    protected = [*inputs, ds.source, labels, annotation_file, data if isinstance(data, (str, Path)) else None]
    plan = resolve(ds, k=k, **run_options)  # bad options fail here, before any file or folder is touched
    out = Outputs(force=force, inputs=protected)
    page = out.claim(output, "report", flag="output")
    names = report_table_names(
        plan.nonneg_modes,
        path=bool(plan.ks),
        genes=plan.genes,
        scores=not ds.is_covariance and ds.sample_ids is not None,
    )
    folder = Path(tables) if tables is not None else None
    if folder is not None:
        out.claim_folder(folder, file_names(names), flag="tables")
    run = compute_run(ds, k=k, **run_options)
    with out.writing():
        out.write(page, render(run, timings=timings))
        if folder is not None:
            for name, content in table_files(report_tables(run, timings)).items():
                out.write(folder / name, content)
    return run


__all__ = ["report"]
