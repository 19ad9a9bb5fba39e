"""Upper bounds on OPT(k, nonneg) and optimality certificates (see bounds.py for the rules)."""
from __future__ import annotations

import numpy as np

from certpca.certify.bounds import Bound, NotApplicable
from certpca.certify.certificate import REGISTRY, Certificate, certify_vector, parse_bounds
from certpca.certify.exact import ExactResult, exact
from certpca.callable_module import make_callable
from certpca.errors import InputError
from certpca.results import Component, Fit


def certify(obj, *, problem=None, k: int | None = None, nonneg: bool | None = None,
            bounds=None, budget: float | None = None, tol: float = 1e-6) -> Certificate:
    """Certificate for a Fit's first component, a Component, or a loading vector.

    A Fit carries its problem, k and sign constraint, and gets the certificate
    appended to ``fit.certificates`` (so ``fit.summary()`` shows it).  Later
    components of a deflated fit solve other problems and are not certified here.
    A Component or a vector needs ``problem``; k defaults to its cardinality.
    """
    fit = obj if isinstance(obj, Fit) else None
    if fit is not None:
        problem = fit.problem if problem is None else problem
        obj = fit.components[0]
    if isinstance(obj, Component):
        k = obj.k if k is None else k
        nonneg = obj.nonneg if nonneg is None else nonneg
        w = obj.weights
    else:
        w = np.asarray(getattr(obj, "to_numpy", lambda: obj)(), dtype=float)
    if problem is None:
        raise InputError("certify needs the problem (a certpca.Problem) the vector belongs to")
    k = int(np.count_nonzero(w)) if k is None else k
    cert = certify_vector(problem, w, k, bool(nonneg), bounds=bounds, budget=budget, tol=tol)
    if fit is not None:
        fit.certificates.append(cert)
    return cert


make_callable(__name__, certify)

__all__ = ["Bound", "NotApplicable", "REGISTRY", "Certificate", "certify", "certify_vector",
           "parse_bounds", "ExactResult", "exact"]
