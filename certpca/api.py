"""The public functions of certpca: fit, certify, path (report is :func:`certpca.reporting.write.report`)."""

from __future__ import annotations

import numpy as np

from . import components, paths, validation
from .certification import Certificate, certify_vector
from .data import Dataset, read_annotation, with_annotation
from .data.chunked import ChunkedData, is_dask_array
from .data.convert import is_anndata
from .errors import InputError
from .io import load
from .problem import Problem
from .results import Component, Fit


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
    k: int,
    *,
    nonneg: bool = False,
    n_components: int = 1,
    method: str = "em",
    deflation: str = "projection",
    seed: int = 0,
    restarts: int = 10,
    layer: str | None = None,
    use_raw: bool = False,
    key_added: str | None = "spca",
    annotate=None,
    client=None,
    **options,
) -> Fit:
    """Fit sparse (``nonneg=True``: nonnegative sparse) principal components.

    ``data`` is a :class:`Dataset`, a :class:`Problem`, a bundled data set name, a path,
    or a numpy array, DataFrame, scipy.sparse matrix or AnnData (read and centred with
    :func:`load`'s defaults; ``layer``/``use_raw`` choose an AnnData's matrix).  A fit of
    samples × features data carries R prcomp's scores ``x``, ``center``, ``scale`` and
    ``predict``.  An AnnData gets the fit stored in place as ``sc.pp.pca`` does
    (:meth:`Fit.to_anndata` under ``key_added``; None: not stored).  ``annotate`` (a file,
    DataFrame or Series of gene symbols: :func:`certpca.data.read_annotation`) becomes
    ``Fit.annotation``.  A dask array (or :class:`~certpca.data.chunked.ChunkedData`) is read in
    row blocks (D ≤ N) or blocks of whole columns (D > N), on the threaded scheduler or on the
    ``dask.distributed`` ``client``.
    """
    ds: Dataset | ChunkedData | Problem
    if isinstance(data, (Problem, ChunkedData)):
        ds = data
    elif isinstance(data, Dataset):
        ds = data if annotate is None else with_annotation(data, read_annotation(annotate))
    elif is_dask_array(data):
        ds = ChunkedData.prepare(data, client=client)
    else:
        # held as given (no centred copy): the fit needs only the covariance operator and the scores
        ds = load(data, layer=layer, use_raw=use_raw, annotate=annotate, copy=False)
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
    if key_added is not None and is_anndata(data):
        result.to_anndata(data, key_added, params={"layer": layer, "use_raw": use_raw})
    return result


def path(
    data,
    ks="1:300:20",
    *,
    nonneg: bool = False,
    method: str = "em",
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

    A Fit carries its problem, k and sign constraint: every component is certified on the
    problem it solved (:func:`~certpca.components.certify_fit`; ``budget`` is per component) and
    ``fit.certificates`` holds them all (None for an all-zero component), so
    ``fit.summary()`` shows them; the first is returned.  A better vector a bound's search
    found is adopted into the fit (projection and disjoint deflation: later components are
    fitted again after it; a note in the certificate says so); store the fit in an AnnData
    (:meth:`Fit.to_anndata`) again afterwards.  A Component or a vector needs ``problem``;
    k defaults to its cardinality; it is never replaced: a better vector is in
    ``Certificate.better``.
    """
    if isinstance(obj, Fit):
        components.certify_fit(obj, bounds=bounds, budget=budget, tol=tol)
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
    return certify_vector(problem, w, k, bool(nonneg), bounds=bounds, budget=budget, tol=tol)
