"""Upper bounds on OPT(k, nonneg) and optimality certificates (see bounds.py for the rules)."""
from certpca.certify.bounds import Bound, NotApplicable
from certpca.certify.certificate import REGISTRY, Certificate, certify_vector, parse_bounds
from certpca.certify.exact import ExactResult, exact

__all__ = ["Bound", "NotApplicable", "REGISTRY", "Certificate", "certify_vector", "parse_bounds",
           "ExactResult", "exact"]
