"""The public functions of certpca: fit, certify, path, report."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from . import components, paths, validation
from .certification import Certificate, certify_vector
from .certification.components import total_budget
from .clock import progress_bar
from .crossval import KChoice
from .crossval import choose_k as cross_validated_k
from .data import Dataset, read_annotation, with_annotation
from .data.chunked import ChunkedData, is_dask_array
from .data.convert import anndata_mask, is_anndata
from .errors import InputError
from .io import load
from .problem import Problem
from .reporting.options import BUDGET, DEFAULT_PATH, GENE_SIZES, N_INIT, STABILITY, ReportOptions
from .reporting.saved import ReportRun
from .results import Component, Fit
from .stability_selection import THRESHOLD, Stability
from .stability_selection import stability as stability_selection


def _problem(data, client=None) -> tuple[Problem, dict]:
    """The covariance operator and data description of a Dataset, Problem, dask array,
    bundled name or path."""
    if isinstance(data, Problem):
        return data, {"name": "problem", "n_samples": None, "n_features": data.dim}
    if isinstance(data, (Dataset, ChunkedData)):
        ds = data
    elif is_dask_array(data):
        ds = ChunkedData.prepare(data, client=client)
    else:
        ds = load(data, copy=False)
    return ds.problem(), ds.describe()


def fit(
    data,
    k: int | Sequence[int],
    *,
    nonneg: bool = False,
    n_components: int | None = None,
    method: str = "auto",
    deflation: str = "projection",
    center: bool | None = None,
    scale: bool | None = None,
    log2: float | None = None,
    seed: int = 0,
    restarts: int = 10,
    layer: str | None = None,
    use_raw: bool = False,
    mask_var="default",
    key_added: str | None = None,
    inplace: bool = True,
    annotate=None,
    client=None,
    **options,
) -> Fit:
    """Fit sparse (``nonneg=True``: nonnegative sparse) principal components.

    ``data`` is a :class:`Dataset`, a :class:`Problem`, a bundled data set name, a path,
    or a numpy array, DataFrame, scipy.sparse matrix or AnnData, read and prepared as
    :func:`load` does with ``center`` (default True), ``scale`` (default False) and ``log2``
    (R's ``prcomp(x, center, scale.)``; a Dataset or Problem is prepared already).  ``k`` is an
    int or one cardinality per component (nsprcomp's vector ``k``); ``n_components`` defaults to
    its length, else 1.  A fit of samples × features data carries R prcomp's scores ``x``,
    ``center``, ``scale`` and ``predict``.

    An AnnData is read as ``sc.pp.pca`` reads it (``layer``/``use_raw``; ``mask_var``: by default
    the ``var["highly_variable"]`` genes when that column exists, None for all genes, or a column
    name or boolean array) and, with ``inplace``, gets the fit stored as ``sc.pp.pca`` stores
    PCA (:meth:`Fit.to_anndata`): ``key_added`` None writes ``obsm["X_spca"]``,
    ``varm["spca_loadings"]``, ``uns["spca"]``; ``"pca"`` writes scanpy's own ``X_pca``, ``PCs``,
    ``pca`` (so ``sc.pl.pca*`` and ``sc.pp.neighbors`` use the sparse components); any other
    name writes ``obsm``, ``varm`` and ``uns`` under that name, as scanpy's ``key_added`` does.
    ``annotate`` (a file, DataFrame or Series of gene symbols: :func:`certpca.data.read_annotation`)
    becomes ``Fit.annotation``.  A dask array (or :class:`~certpca.data.chunked.ChunkedData`) is read in
    row blocks (D ≤ N) or blocks of whole columns (D > N), on the threaded scheduler or on the
    ``dask.distributed`` ``client``.
    """
    preparation = {n: v for n, v in (("center", center), ("scale", scale), ("log2", log2)) if v is not None}
    mask_name, mask = anndata_mask(data, mask_var, use_raw=use_raw) if is_anndata(data) else (None, None)
    ds: Dataset | ChunkedData | Problem
    if isinstance(data, (Problem, ChunkedData, Dataset)) or is_dask_array(data):
        if preparation:
            name = next(iter(preparation))
            raise InputError.bad_argument(name, "applies when fit reads the data; prepare it with certpca.load instead")
    if isinstance(data, (Problem, ChunkedData)):
        ds = data
    elif isinstance(data, Dataset):
        ds = data if annotate is None else with_annotation(data, read_annotation(annotate))
    elif is_dask_array(data):
        ds = ChunkedData.prepare(data, client=client)
    else:
        # held as given (no centred copy): the fit needs only the covariance operator and the scores
        source = data if mask is None else data[:, mask]
        ds = load(
            source,
            center=center is not False,
            scale=bool(scale),
            log2=log2,
            layer=layer,
            use_raw=use_raw,
            annotate=annotate,
            copy=False,
        )
    problem, info = _problem(ds)
    result = components.fit_components(
        problem,
        k,
        n_components=n_components,
        method=method,
        nonneg=nonneg,
        deflation=deflation,
        seed=seed,
        restarts=restarts,
        data=info,
        **options,
    )
    if isinstance(ds, Problem):
        return result
    result.attach_data(ds)
    if inplace and is_anndata(data):
        result.to_anndata(data, key_added, params={"layer": layer, "use_raw": use_raw, "mask_var": mask_name})
    return result


def path(
    data,
    ks="1:300:20",
    *,
    nonneg: bool = False,
    method: str = "auto",
    seed: int = 0,
    restarts: int = 10,
    bounds=None,
    budget: float | None = None,
    client=None,
    **options,
):
    """The variance–cardinality path as a DataFrame: one first component per k.

    ``ks`` is a list or a grid ("FROM:TO[:COUNT]" geometric, or "k1,k2,..."); with
    ``bounds`` (e.g. "lambda1,dabe") every point is certified.  ``data`` and ``client`` as
    for :func:`fit`.
    """
    problem, _ = _problem(data, client)
    comps = paths.fit_path(
        problem,
        validation.parse_grid(ks, problem.dim),
        method=method,
        nonneg=nonneg,
        seed=seed,
        restarts=restarts,
        **options,
    )
    return paths.path_table(problem, comps, bounds=bounds, budget=budget)


def certify(
    obj,
    *,
    problem=None,
    k: int | None = None,
    nonneg: bool | None = None,
    bounds=None,
    budget: float | None = None,
    tol: float = 1e-6,
) -> Certificate:
    """Certificate for a Fit's first component, a Component, or a loading vector.

    ``budget`` is seconds of estimated work (:mod:`certpca.clock`: about as many CPU seconds, and the
    same certificate on a busy machine as on a quiet one) for the whole call, every component and
    bound (default: ``DEFAULT_BUDGET``, 15 s, with the default bounds; none with explicit
    ``bounds``); each certificate says what it used.  On a terminal a progress bar shows after 2 s.
    A Fit carries its problem, k and sign constraint: every component is certified on the
    problem it solved (:func:`~certpca.components.certify_fit`, sharing the budget) and
    ``fit.certificates`` holds them all (None for an all-zero component), so
    ``fit.summary()`` shows them; the first is returned.  A better vector a bound's search
    found is adopted into the fit (projection and disjoint deflation: later components are
    fitted again after it; a note in the certificate says so); store the fit in an AnnData
    (:meth:`Fit.to_anndata`) again afterwards.  A Component or a vector needs ``problem``;
    k defaults to its cardinality; it is never replaced: a better vector is in
    ``Certificate.better``.
    """
    total = total_budget(bounds, budget)
    if isinstance(obj, Fit):
        with progress_bar(total) as progress:
            components.certify_fit(obj, bounds=bounds, budget=budget, tol=tol, progress=progress)
        first = obj.certificates[0]
        if first is None:
            raise InputError.bad_argument("fit", "has an all-zero first component; there is nothing to certify")
        return first
    if isinstance(obj, Component):
        k = obj.k if k is None else k
        nonneg = obj.nonneg if nonneg is None else nonneg
        w = obj.weights
    else:
        w = np.asarray(getattr(obj, "to_numpy", lambda: obj)(), dtype=float)
    if problem is None:
        raise InputError.bad_argument(
            "problem", "is required to certify a Component or a vector: pass the certpca.Problem it belongs to"
        )
    k = int(np.count_nonzero(w)) if k is None else k
    with progress_bar(total) as progress:
        return certify_vector(problem, w, k, bool(nonneg), bounds=bounds, budget=budget, tol=tol, progress=progress)


def report(
    data,
    *,
    k: int,
    output: str | Path = "report.html",
    tables: str | Path | None = None,
    force: bool = False,
    labels: str | Path | None = None,
    annotate: Any = None,
    timings: bool = False,
    inputs: Sequence[str | Path | None] = (),
    methods: str | Sequence[str] | None = None,
    nonneg_modes: Sequence[bool] = (False, True),
    components: int = 1,
    path: str | None = DEFAULT_PATH,
    path_methods: str | Sequence[str] | None = None,
    seed: int = 0,
    bounds: str | Sequence[str] | None = None,
    path_bounds: str | Sequence[str] | None = None,
    genes: bool | None = None,
    gene_sizes: Sequence[int] = GENE_SIZES,
    gene_k: int | None = None,
    n_init: int = N_INIT,
    budget: float = BUDGET,
    stability: int = STABILITY,
    command: str = "",
    progress: bool | None = None,
) -> ReportRun:
    """Write the HTML report of ``data`` at cardinality ``k`` (and its tables), and return the saved run.

    ``data`` is a :class:`Dataset`, a bundled data set name or a file path (read with :func:`load`'s
    defaults; ``labels``, a CSV ``sample,label`` or a column of the data file, and ``annotate``, gene
    symbols: :func:`certpca.data.read_annotation`).  The page goes to ``output``, every table as LaTeX,
    Markdown and CSV to the folder ``tables``; nothing is overwritten without ``force``, inputs (and
    ``inputs``) never.  Every keyword is a field of :class:`certpca.reporting.ReportOptions`, which says
    what each does; the defaults are its defaults (a test checks they agree).
    """
    options = ReportOptions(
        k=k,
        output=output,
        tables=tables,
        force=force,
        labels=labels,
        annotate=annotate,
        timings=timings,
        inputs=inputs,
        methods=methods,
        nonneg_modes=nonneg_modes,
        components=components,
        path=path,
        path_methods=path_methods,
        seed=seed,
        bounds=bounds,
        path_bounds=path_bounds,
        genes=genes,
        gene_sizes=gene_sizes,
        gene_k=gene_k,
        n_init=n_init,
        budget=budget,
        stability=stability,
        command=command,
        progress=progress,
    )
    from .reporting.write import write_report  # here: only a report needs jinja2, the plots and tables

    return write_report(data, options)


def stability(
    data,
    k,
    *,
    n_subsamples: int = 100,
    fraction: float = 0.5,
    threshold: float = THRESHOLD,
    seed: int = 0,
    n_jobs: int | None = None,
    **fit_options,
) -> Stability:
    """How often each feature is selected when the fit is repeated on halves of the samples.

    ``data`` as for :func:`fit` (read with :func:`load`'s defaults); ``fit_options`` as for
    :func:`fit` (``n_components``, ``nonneg``, ``method``, ...).  See
    :func:`certpca.stability_selection.stability` for the subsampling (complementary pairs of halves), the
    matching of components and the bound on the expected number of false selections.
    """
    ds = data if isinstance(data, Dataset) else load(data, copy=False)
    return stability_selection(
        ds,
        k,
        n_subsamples=n_subsamples,
        fraction=fraction,
        threshold=threshold,
        seed=seed,
        n_jobs=n_jobs,
        **fit_options,
    )


def choose_k(
    data,
    ks="1:300:20",
    *,
    n_folds: int = 5,
    seed: int = 0,
    nonneg: bool = False,
    method: str = "auto",
    restarts: int = 10,
) -> KChoice:
    """k for the first component chosen by cross-validated reconstruction of held-out entries
    (Witten, Tibshirani & Hastie 2009) with the one-standard-error rule; ``ks`` a list or a grid as
    for :func:`path`; ``data`` as for :func:`fit`.  Returns the choice and the curve it came from
    (:class:`certpca.crossval.KChoice`)."""
    ds = data if isinstance(data, Dataset) else load(data, copy=False)
    grid = validation.parse_grid(ks, ds.n_features)
    return cross_validated_k(ds, grid, n_folds=n_folds, seed=seed, nonneg=nonneg, method=method, restarts=restarts)
