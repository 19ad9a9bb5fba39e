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
* :mod:`~certpca.certify.certificate` — certify a vector with the registered bounds;
* :mod:`~certpca.certify.components` — certify every component of a Fit on the problem it solved.

The formulas and margin rules are written out in docs/certification.md.
"""

from __future__ import annotations

import numpy as np

from certpca.callable_module import make_callable
from certpca.certify.certificate import Certificate, certify_vector
from certpca.certify.components import certify_components, solved_problems
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

    A Fit carries its problem, k and sign constraint: every component is certified on the
    problem it solved (:func:`certify_components`; ``budget`` is per component) and
    ``fit.certificates`` holds them all (None for an all-zero component), so
    ``fit.summary()`` shows them; the first is returned.  A Component or a vector needs
    ``problem``; k defaults to its cardinality.
    """
    if isinstance(obj, Fit):
        obj.certificates = certify_components(obj, bounds=bounds, budget=budget, tol=tol)
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


make_callable(__name__, certify)

__all__ = [
    "REGISTRY",
    "Bound",
    "BoundSpec",
    "Certificate",
    "ExactResult",
    "NotApplicable",
    "certify",
    "certify_components",
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
    "solved_problems",
    "spannogram_bound",
    "split_bound",
    "threshold_bound",
    "trace_bound",
]
