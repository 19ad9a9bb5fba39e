"""Former home of every bound, kept so that ``certpca.certify.bounds.<name>`` still imports.

The bounds now live by job in spectral.py, duals.py and lowrank.py (margins in
numerics.py); import them from :mod:`certpca.certify`.  Still used by
certpca/reproduce/asteris2014.py.
"""
from certpca.certify.duals import (
           dabe_bound,
           dnn_dual_bound,
           dnn_value,
           dspca_dual_bound,
           pattern_bound,
)
from certpca.certify.lowrank import spannogram_bound, split_bound
from certpca.certify.numerics import DENSE_LIMIT, Bound, NotApplicable
from certpca.certify.spectral import (
           gershgorin_bound,
           lambda1_bound,
           perron_bound,
           trace_bound,
)

__all__ = [
           "DENSE_LIMIT",
           "Bound",
           "NotApplicable",
           "dabe_bound",
           "dnn_dual_bound",
           "dnn_value",
           "dspca_dual_bound",
           "gershgorin_bound",
           "lambda1_bound",
           "pattern_bound",
           "perron_bound",
           "spannogram_bound",
           "split_bound",
           "trace_bound",
]
