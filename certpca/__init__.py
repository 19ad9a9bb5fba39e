"""certpca: sparse and nonnegative sparse PCA with certificates of optimality."""
from . import datasets
from .certify import Certificate, certify
from .components import fit_components
from .data import Dataset
from .io import load
from .errors import ConvergenceWarning, InputError
from .paths import fit_path, parse_grid, path_table
from .problem import Problem
from .results import Component, Fit


def _problem(data) -> tuple[Problem, dict]:
    """The covariance operator and data description of a Dataset, Problem, bundled name or path."""
    if isinstance(data, Problem):
        return data, {"name": "problem", "n_samples": None, "n_features": data.dim}
    ds = data if isinstance(data, Dataset) else load(data)
    return ds.problem(), ds.describe()


def fit(data, k: int, *, nonneg: bool = False, n_components: int = 1, method: str = "em",
        deflation: str = "projection", seed: int = 0, restarts: int = 10, **options) -> Fit:
    """Fit sparse (``nonneg=True``: nonnegative sparse) principal components.

    ``data`` is a :class:`Dataset`, a :class:`Problem`, a bundled data set name or a
    path (read and centred with :func:`load`'s defaults).
    """
    problem, info = _problem(data)
    return fit_components(problem, k, n_components=n_components, method=method, nonneg=nonneg,
                          deflation=deflation, seed=seed, restarts=restarts, data=info, **options)


def path(data, ks="1:300:20", *, nonneg: bool = False, method: str = "em", seed: int = 0,
         restarts: int = 10, bounds=None, budget: float | None = None, **options):
    """The variance–cardinality path as a DataFrame: one first component per k.

    ``ks`` is a list or a grid ("FROM:TO[:COUNT]" geometric, or "k1,k2,..."); with
    ``bounds`` (e.g. "lambda1,dabe") every point is certified.
    """
    problem, _ = _problem(data)
    ks = parse_grid(ks, problem.dim) if isinstance(ks, str) else ks
    comps = fit_path(problem, ks, method=method, nonneg=nonneg, seed=seed, restarts=restarts, **options)
    return path_table(problem, comps, bounds=bounds, budget=budget)


__version__ = "0.1.0"
__all__ = ["fit", "certify", "path", "Certificate", "load", "datasets", "Dataset", "Problem", "Fit",
           "Component", "InputError", "ConvergenceWarning", "fit_components"]
