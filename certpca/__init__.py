"""certpca: sparse and nonnegative sparse PCA with certificates of optimality.

The public API: the functions :func:`fit`, :func:`certify`, :func:`path`,
:func:`report`, :func:`load` and the results they return; :class:`SparsePCA` for
scikit-learn pipelines.  The layers below have names of their own
(``certpca.certification``, ``certpca.reporting``, ...).

Names load on first use (PEP 562 ``__getattr__``): ``import certpca`` stays
instant, and the command line can catch Ctrl-C while numpy, scipy and cvxpy load.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from .version import __version__

if TYPE_CHECKING:
    from . import datasets
    from .api import certify, choose_k, fit, path, report, stability
    from .certification import Certificate
    from .data import Dataset
    from .errors import ConvergenceWarning, InputError
    from .estimator import SparsePCA
    from .io import load
    from .problem import Problem
    from .results import Component, Fit
    from .stability_selection import Stability

#: public name -> the module that defines it
_HOMES = {
    "fit": "api",
    "certify": "api",
    "report": "api",
    "stability": "api",
    "choose_k": "api",
    "Stability": "stability_selection",
    "path": "api",
    "load": "io",
    "Certificate": "certification",
    "Dataset": "data",
    "Problem": "problem",
    "Fit": "results",
    "Component": "results",
    "InputError": "errors",
    "ConvergenceWarning": "errors",
    "SparsePCA": "estimator",
}
_SUBPACKAGES = ("datasets",)


def __getattr__(name: str):
    if name in _SUBPACKAGES:
        return importlib.import_module(f"{__name__}.{name}")
    if name in _HOMES:
        value = getattr(importlib.import_module(f"{__name__}.{_HOMES[name]}"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *_HOMES, *_SUBPACKAGES])


__all__ = [
    "fit",
    "certify",
    "path",
    "report",
    "stability",
    "choose_k",
    "load",
    "datasets",
    "Certificate",
    "Dataset",
    "Problem",
    "Fit",
    "Component",
    "Stability",
    "InputError",
    "ConvergenceWarning",
    "SparsePCA",
    "__version__",
]
