"""Upper bounds on OPT(k, nonneg) and optimality certificates.

OPT(k, nonneg) = max wᵀCw over unit w with ‖w‖₀ ≤ k (and w ≥ 0).  Modules, one job each:

* :mod:`~certpca.certification.numerics` — floating-point margins, the Bound record;
* :mod:`~certpca.certification.spec` — BoundSpec (cost, description, citation);
* :mod:`~certpca.certification.spectral` — trace, λ1, Gershgorin, Perron;
* :mod:`~certpca.certification.duals` — dABE, DSPCA dual, DNN dual, the pattern certificate;
* :mod:`~certpca.certification.lowrank` — the spannogram bound and the rank-d split;
* :mod:`~certpca.certification.relax` — the SDP relaxations (cvxpy proposes, numpy certifies);
* :mod:`~certpca.certification.sdp_sample` — the dABE ℓ0 SDP in sample space by Frank–Wolfe;
* :mod:`~certpca.certification.sdp_matrix` — the same bound with a matrix multiplier Z in place of ρI;
* :mod:`~certpca.certification.threshold` — threshold C, split into connected components (its pairs:
  :mod:`~certpca.certification.threshold_pairs`);
* :mod:`~certpca.certification.exact` — branch and bound over supports;
* :mod:`~certpca.certification.registry` — REGISTRY, the names of all bounds;
* :mod:`~certpca.certification.certificate` — certify a vector with the registered bounds;
* :mod:`~certpca.certification.components` — certify every component of a Fit on the problem it solved.

The formulas and margin rules are written out in docs/certification.md.
"""

from __future__ import annotations

from certpca.certification.certificate import Better, Certificate, certify_vector, evaluate_bound, recertify
from certpca.certification.components import certify_components, solved_problems
from certpca.certification.duals import (
    dabe_bound,
    dnn_dual_bound,
    dnn_value,
    dspca_dual_bound,
    pattern_bound,
)
from certpca.certification.exact import ExactResult, exact, exact_bound
from certpca.certification.lowrank import spannogram_bound, split_bound
from certpca.certification.numerics import Bound, NotApplicable
from certpca.certification.registry import REGISTRY, default_bounds, parse_bounds
from certpca.certification.relax import dnn_sdp_bound, dspca_sdp_bound
from certpca.certification.sdp_matrix import matrix_dabe_bound
from certpca.certification.sdp_sample import dabe_sdp_bound
from certpca.certification.spec import BoundSpec
from certpca.certification.spectral import (
    gershgorin_bound,
    lambda1_bound,
    perron_bound,
    trace_bound,
)
from certpca.certification.threshold import threshold_bound

__all__ = [
    "REGISTRY",
    "Better",
    "Bound",
    "BoundSpec",
    "Certificate",
    "ExactResult",
    "NotApplicable",
    "certify_components",
    "certify_vector",
    "dabe_bound",
    "dabe_sdp_bound",
    "matrix_dabe_bound",
    "default_bounds",
    "dnn_dual_bound",
    "dnn_sdp_bound",
    "dnn_value",
    "dspca_dual_bound",
    "dspca_sdp_bound",
    "evaluate_bound",
    "exact",
    "exact_bound",
    "gershgorin_bound",
    "lambda1_bound",
    "parse_bounds",
    "pattern_bound",
    "perron_bound",
    "recertify",
    "solved_problems",
    "spannogram_bound",
    "split_bound",
    "threshold_bound",
    "trace_bound",
]
