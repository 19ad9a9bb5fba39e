"""The report's certificates are certpca.certify's: the same numbers to the last bit.

The report computes the bounds once per sign constraint and certifies every method's vector with them
(:func:`certpca.certification.recertify`); each certificate is compared with
:func:`certpca.certification.certify_vector` run on that vector with the same bounds.  On lrs at k = 5
the lower bound used to differ in the last bits (a feasible value taken from the rescaled problem).
"""

from __future__ import annotations

import numpy as np
import pytest

import certpca
from certpca.certification import REGISTRY, certify_vector, evaluate_bound, recertify
from certpca.errors import InputError
from certpca.reporting import ReportOptions, compute_run


@pytest.fixture(scope="module")
def lrs():
    ds = certpca.load("lrs")
    options = ReportOptions(
        k=5, methods="em,threshold", nonneg_modes=(False,), path="", genes=False, progress=False, stability=0
    )
    run = compute_run(ds, options)
    return ds.problem(), run


def test_report_certificate_is_certify_vectors_to_the_last_bit(lrs):
    problem, run = lrs
    names = run.settings.bounds["sparse"]
    assert "dabe_sdp" not in names  # no time limit: the bounds are deterministic, so equal upper bounds too
    for f in run.fits:
        w = np.zeros(problem.dim)
        position = {fid: i for i, fid in enumerate(certpca.load("lrs").feature_ids)}
        for fid, v in f.components[0].loadings.items():
            w[position[fid]] = v
        mine, theirs = f.certificate, certify_vector(problem, w, 5, False, bounds=names)
        assert mine.value == theirs.value
        assert mine.lower_bound == theirs.lower_bound
        assert mine.upper_bound == theirs.upper_bound and mine.winner == theirs.winner


def test_recertify_equals_certify_vector_and_refuses_support_bounds(lrs):
    problem, _ = lrs
    rng = np.random.default_rng(0)
    w1, w2 = np.zeros(problem.dim), np.zeros(problem.dim)
    w1[rng.choice(problem.dim, 5, replace=False)] = rng.random(5)
    w2[rng.choice(problem.dim, 4, replace=False)] = rng.random(4)
    for nonneg in (False, True):
        shared = certify_vector(problem, w1, 5, nonneg, bounds="lambda1,dabe,spannogram")
        again, direct = (
            recertify(shared, problem, w2),
            certify_vector(problem, w2, 5, nonneg, bounds="lambda1,dabe,spannogram"),
        )
        assert (again.value, again.lower_bound, again.upper_bound) == (
            direct.value,
            direct.lower_bound,
            direct.upper_bound,
        )
    with pytest.raises(InputError, match="shared holds pattern"):
        recertify(certify_vector(problem, w1, 5, bounds="lambda1,pattern"), problem, w2)
    # screening takes the support as a hint only: its bound serves another vector (the report shares it);
    # the bounds are the shared ones, and the value, lower bound and better vector are w2's own
    shared = certify_vector(problem, w1, 5, bounds="lambda1,screening")
    again = recertify(shared, problem, w2)
    assert again.bounds == shared.bounds and again.value == problem.variance(w2 / np.linalg.norm(w2))


def test_evaluate_bound_is_the_certificates_bound(lrs):
    problem, _ = lrs
    w = np.zeros(problem.dim)
    w[:5] = 1.0
    for name in ("trace", "lambda1", "dabe"):
        assert REGISTRY[name].support_option is None
        cert = certify_vector(problem, w, 5, False, bounds=[name])
        assert evaluate_bound(problem, name, 5, False).value == cert.upper_bound
