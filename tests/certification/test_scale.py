"""Certificates at extreme scales: finite, valid and scale-equivariant from 1e-200 to 1e200.

Bounds are computed on C rescaled by a power of two (exact in floating point)
and mapped back, so scaling C by 2^j scales every bound by exactly 2^j, and a
decimal scaling by the same factor up to rounding of the input.
"""

import json

import numpy as np
import pytest

from certpca.certification import certify_vector
from certpca.certification.certificate import Certificate
from certpca.problem import Problem
from tests.brute import brute_force, random_psd

SCALES = [1e-200, 1e-150, 1e-60, 1e-12, 1.0, 1e12, 1e60, 1e154, 1e200]
CHEAP = "trace,lambda1,gershgorin,perron,dabe,dspca,dnn,threshold,split"


@pytest.mark.parametrize("nonneg", [False, True])
def test_dense_scale_sweep_finite_valid_equivariant(nonneg):
    C0 = random_psd(np.random.default_rng(2), 9, "spiked")
    opt0, w0 = brute_force(C0, 3, nonneg)
    ref = None
    for s in SCALES:
        P = Problem.from_covariance(C0 * s)
        opt, w = brute_force(C0 * s, 3, nonneg)
        c = certify_vector(P, w, 3, nonneg, bounds=CHEAP)
        assert np.isfinite(c.upper_bound) and np.isfinite(c.value), (s, c)
        assert c.upper_bound >= opt, (s, c.winner, c.upper_bound, opt)
        for b in c.bounds:
            assert np.isfinite(b.value) and b.value >= opt, (s, b.name, b.value, opt)
        assert c.lower_bound <= c.upper_bound
        json.dumps(c.to_dict(), allow_nan=False)
        ratio = c.upper_bound / s
        ref = ratio if ref is None else ref
        assert ratio == pytest.approx(ref, rel=1e-6), s  # equivariant up to the input's rounding
        assert c.certified_fraction == pytest.approx(opt0 / ref, rel=1e-6)


def test_powers_of_two_are_exactly_equivariant():
    C0 = random_psd(np.random.default_rng(3), 8, "wishart")
    X = np.random.default_rng(4).standard_normal((5, 12))
    for P0 in (Problem.from_covariance(C0), Problem.from_data(X - X.mean(axis=0))):
        w = np.zeros(P0.dim)
        w[:3] = 1
        base = certify_vector(P0, w, 3, False, bounds=CHEAP)
        for j in (-600, -301, 7, 300, 600):
            if P0.uses_factor:
                P = Problem(factor=np.ldexp(P0.factor(), j // 2))
                s2 = 2 * (j // 2)
            else:
                P = Problem.from_covariance(np.ldexp(C0, j))
                s2 = j
            c = certify_vector(P, w, 3, False, bounds=CHEAP)
            assert [b.name for b in c.bounds] == [b.name for b in base.bounds]
            for a, b in zip(base.bounds, c.bounds):
                assert np.ldexp(a.value, s2) == b.value, (j, a.name)


def test_factor_scale_sweep_is_valid():
    rng = np.random.default_rng(6)
    X = rng.standard_normal((5, 10))
    X = X - X.mean(axis=0)
    for s in (1e-100, 1e-30, 1.0, 1e30, 1e100):
        P = Problem.from_data(X * s)
        opt, w = brute_force(P.dense(), 3, False)
        c = certify_vector(P, w, 3, False, bounds=CHEAP)
        assert np.isfinite(c.upper_bound) and c.upper_bound >= opt


def test_optimal_requires_finite_bounds():
    c = Certificate(value=np.inf, lower_bound=np.inf, upper_bound=np.inf, winner="x", bounds=[], k=1, nonneg=False)
    assert not c.optimal
    c = Certificate(value=1.0, lower_bound=1.0, upper_bound=np.nan, winner="x", bounds=[], k=1, nonneg=False)
    assert not c.optimal
    d = c.to_dict()
    assert d["upper_bound"] is None
    json.dumps(d, allow_nan=False)


def test_non_finite_bound_is_skipped_with_its_reason(monkeypatch):
    """A bound that comes back NaN or inf must never win: it is skipped, named, with the reason."""
    from certpca.certification import registry
    from certpca.certification.numerics import Bound
    from certpca.certification.spec import BoundSpec

    def broken(problem, k, nonneg=False):
        return Bound(float("nan"), "trace")

    spec = registry.REGISTRY["trace"]
    monkeypatch.setitem(
        registry.REGISTRY,
        "trace",
        BoundSpec("trace", broken, spec.cost, description=spec.description, reference=spec.reference),
    )
    C = random_psd(np.random.default_rng(8), 7, "wishart")
    opt, w = brute_force(C, 2)
    c = certify_vector(Problem.from_covariance(C), w, 2, bounds="trace,lambda1")
    assert c.winner == "lambda1" and "trace" in c.skipped and "not finite" in c.skipped["trace"]
    assert np.isfinite(c.upper_bound) and c.upper_bound >= opt


def test_indefinite_input_lower_bound_stays_below_upper():
    """The pattern's support value is recomputed on the original (indefinite) C, not on its PSD factor."""
    rng = np.random.default_rng(10)
    for _ in range(20):
        A = rng.standard_normal((9, 9))
        C = (A + A.T) / 2 + 0.5 * np.eye(9)
        opt, w = brute_force(C, 3)
        c = certify_vector(Problem.from_covariance(C), w, 3, bounds="lambda1,pattern,threshold,dspca")
        assert c.lower_bound <= opt * (1 + 1e-12) + 1e-12
        assert c.lower_bound <= c.upper_bound and c.upper_bound >= opt
