"""Upper bounds on OPT(k, nonneg) and optimality certificates.

OPT(k, nonneg) = max wᵀCw over unit w with ‖w‖₀ ≤ k (and w ≥ 0).  Modules, one job each:

* :mod:`~certpca.certify.numerics` — floating-point margins, the Bound record;
* :mod:`~certpca.certify.spec` — BoundSpec (cost, description, citation);
* :mod:`~certpca.certify.spectral` — trace, λ1, Gershgorin, Perron;
* :mod:`~certpca.certify.duals` — dABE, DSPCA dual, DNN dual, the pattern certificate;
* :mod:`~certpca.certify.lowrank` — the spannogram bound and the rank-d split;
* :mod:`~certpca.certify.relax` — the SDP relaxations (cvxpy proposes, numpy certifies);
* :mod:`~certpca.certify.sdp_sample` — the dABE ℓ0 SDP in sample space by Frank–Wolfe;
* :mod:`~certpca.certify.threshold` — threshold C, split into connected components;
* :mod:`~certpca.certify.exact` — branch and bound over supports;
* :mod:`~certpca.certify.registry` — REGISTRY, the names of all bounds;
* :mod:`~certpca.certify.certificate` — certify a vector with the registered bounds.

The formulas and margin rules are written out in docs/certification.md.
"""

from __future__ import annotations

import numpy as np

from certpca.callable_module import make_callable
from certpca.certify.certificate import Certificate, certify_vector
from certpca.certify.duals import (
    dabe_bound,
    dnn_dual_bound,
    dnn_value,
    dspca_dual_bound,
    pattern_bound,
)
from certpca.certify.exact import ExactResult, exact, exact_bound
from certpca.certify.lowrank import spannogram_bound, split_bound
from certpca.certify.numerics import Bound, NotApplicable
from certpca.certify.registry import REGISTRY, default_bounds, parse_bounds
from certpca.certify.relax import dnn_sdp_bound, dspca_sdp_bound
from certpca.certify.sdp_sample import dabe_sdp_bound
from certpca.certify.spec import BoundSpec
from certpca.certify.spectral import (
    gershgorin_bound,
    lambda1_bound,
    perron_bound,
    trace_bound,
)
from certpca.certify.threshold import threshold_bound
from certpca.errors import InputError
from certpca.results import Component, Fit


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
        raise InputError.bad_argument(
            "problem", "is required to certify a Component or a vector: pass the certpca.Problem it belongs to"
        )
    k = int(np.count_nonzero(w)) if k is None else k
    cert = certify_vector(problem, w, k, bool(nonneg), bounds=bounds, budget=budget, tol=tol)
    if fit is not None:
        fit.certificates.append(cert)
    return cert


make_callable(__name__, certify)

__all__ = [
    "REGISTRY",
    "Bound",
    "BoundSpec",
    "Certificate",
    "ExactResult",
    "NotApplicable",
    "certify",
    "certify_vector",
    "dabe_bound",
    "dabe_sdp_bound",
    "default_bounds",
    "dnn_dual_bound",
    "dnn_sdp_bound",
    "dnn_value",
    "dspca_dual_bound",
    "dspca_sdp_bound",
    "exact",
    "exact_bound",
    "gershgorin_bound",
    "lambda1_bound",
    "parse_bounds",
    "pattern_bound",
    "perron_bound",
    "spannogram_bound",
    "split_bound",
    "threshold_bound",
    "trace_bound",
]
