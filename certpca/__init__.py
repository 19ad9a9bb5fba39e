"""certpca: sparse and nonnegative sparse PCA with certificates of optimality."""
from . import datasets
from .certify import Certificate, certify
from .components import fit_components
from .data import Dataset, load
from .errors import ConvergenceWarning, InputError
from .problem import Problem
from .results import Component, Fit


def fit(data, k: int, *, nonneg: bool = False, n_components: int = 1, method: str = "em",
        deflation: str = "projection", seed: int = 0, restarts: int = 10, **options) -> Fit:
    """Fit sparse (``nonneg=True``: nonnegative sparse) principal components.

    ``data`` is a :class:`Dataset`, a :class:`Problem`, a bundled data set name or a
    path (read and centred with :func:`load`'s defaults).
    """
    if isinstance(data, Problem):
        problem, info = data, {"name": "problem", "n_samples": None, "n_features": data.dim}
    else:
        ds = data if isinstance(data, Dataset) else load(data)
        problem, info = ds.problem(), ds.describe()
    return fit_components(problem, k, n_components=n_components, method=method, nonneg=nonneg,
                          deflation=deflation, seed=seed, restarts=restarts, data=info, **options)


__version__ = "0.1.0"
__all__ = ["fit", "certify", "Certificate", "load", "datasets", "Dataset", "Problem", "Fit", "Component",
           "InputError", "ConvergenceWarning", "fit_components"]
