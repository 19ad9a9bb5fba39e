"""The registry is the one vocabulary of bounds; bound functions validate k; truncation is never exact."""

import numpy as np
import pytest

from certpca.certification import REGISTRY, NotApplicable, certify_vector, spannogram_bound
from certpca.clock import Work
from certpca.errors import InputError
from certpca.problem import Problem
from certpca.solvers.spannogram import spannogram, vertex_supports
from tests.brute import brute_force, random_psd


def test_every_bound_returns_its_registry_name_and_a_valid_value():
    C = random_psd(np.random.default_rng(4), 7, "spiked")
    P = Problem.from_covariance(C)
    for nonneg in (False, True):
        opt, _ = brute_force(C, 3, nonneg)
        for name, spec in REGISTRY.items():
            options = {}
            if spec.start_option is not None:  # it continues a bound of the same certificate, from its Bound
                options = {spec.start_option: REGISTRY[spec.continues].func(P, 3, nonneg), spec.time_option: Work(5.0)}
            try:
                b = spec.func(P, 3, nonneg, **options)
            except NotApplicable:
                assert spec.nonneg_only and not nonneg, name
                continue
            assert b.name == name
            assert b.value >= opt, (name, b.value, opt)


def test_specs_declare_cost_description_and_citation():
    costs = [s.cost for s in REGISTRY.values()]
    assert costs == sorted(costs)  # the registry lists bounds cheapest first
    for name, spec in REGISTRY.items():
        assert spec.name == name and spec.description and spec.cite() == spec.reference
    assert "Asteris" in REGISTRY["spannogram"].cite()
    assert "SIAM Review" in REGISTRY["dspca"].cite()
    assert "Journal of Machine Learning Research" in REGISTRY["dabe"].cite()
    assert "Li, Y. & Xie, W." in REGISTRY["dabe"].cite()
    assert "certpca's own" in REGISTRY["split"].cite()


def test_certificate_keys_are_registry_names():
    P = Problem.from_covariance(random_psd(np.random.default_rng(5), 8, "wishart"))
    w = np.r_[np.ones(3), np.zeros(5)]
    c = certify_vector(P, w, 3, True, bounds="lambda1,dspca,dnn,perron,spannogram")
    assert {b.name for b in c.bounds} | set(c.skipped) <= set(REGISTRY)
    assert c.winner in REGISTRY


@pytest.mark.parametrize(
    "name", ["trace", "lambda1", "gershgorin", "dabe", "pattern", "dspca", "spannogram", "split", "exact"]
)
def test_k_above_dimension_is_an_error_not_clipped(name):
    P = Problem.from_covariance(random_psd(np.random.default_rng(6), 5, "wishart"))
    with pytest.raises(InputError, match=r"^k is out of range: got 6; choose a value from 1 to 5"):
        REGISTRY[name].func(P, 6, False)
    with pytest.raises(InputError, match=r"^k "):
        REGISTRY[name].func(P, 0, False)


def test_unknown_bound_names_the_parameter():
    P = Problem.from_covariance(np.eye(3))
    with pytest.raises(InputError, match=r"^bounds .*unknown bound"):
        certify_vector(P, np.r_[1.0, 0, 0], 1, bounds="lambda1,nope")
    with pytest.raises(InputError, match=r"^budget "):
        certify_vector(P, np.r_[1.0, 0, 0], 1, budget=-1.0)


def _degenerate_tie():
    """14 curves tied at one vertex of the d = 3 arrangement: C(14, 6) = 3003 completions."""
    V = np.vstack([np.tile([1.0, 0.0, 0.0], (12, 1)), [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    return V, Problem.from_covariance(V @ V.T)


def test_truncated_alg2_is_never_exact():
    V, P = _degenerate_tie()
    _, _, truncated = vertex_supports(V, 6, False)
    assert truncated is not None and "512" in truncated
    res = spannogram(P, 6, d=3)
    assert not res.exact and res.truncated is not None
    with pytest.raises(NotApplicable, match="not exhaustive"):
        spannogram_bound(P, 6, d=3)
    # d = 2 sweeps are never truncated
    assert spannogram(P, 6, d=2).exact


def test_sign_free_bounds_give_the_same_number_with_and_without_nonneg():
    # a sign-free bound is computed once for both sign constraints (report): it must ignore nonneg
    rng = np.random.default_rng(12)
    F = rng.standard_normal((6, 30))  # wide: a factor, where dabe_sdp applies
    sign_free = [name for name, spec in REGISTRY.items() if spec.sign_free]
    assert {"trace", "lambda1", "dabe", "dspca", "dabe_sdp"} <= set(sign_free)
    for P in (Problem.from_covariance(random_psd(rng, 7, "spiked")), Problem(factor=F)):
        for name in sign_free:
            kw = {"time_limit": 1e9, "fine_iters": 5} if name == "dabe_sdp" else {}
            try:
                plain = REGISTRY[name].func(P, 3, False, **kw)
            except NotApplicable:
                continue
            assert REGISTRY[name].func(P, 3, True, **kw).value == plain.value, name


def test_reused_bounds_enter_the_certificate_as_computed():
    P = Problem.from_covariance(random_psd(np.random.default_rng(13), 8, "spiked"))
    w = np.r_[np.ones(3), np.zeros(5)]
    plain = certify_vector(P, w, 3, False, bounds="lambda1,dabe")
    reused = certify_vector(P, w, 3, True, bounds="lambda1,dabe", reuse={"dabe": plain.bounds[1]})
    fresh = certify_vector(P, w, 3, True, bounds="lambda1,dabe")
    assert [b.name for b in reused.bounds] == ["lambda1", "dabe"]
    assert reused.bounds[1] is plain.bounds[1]
    assert (reused.upper_bound, reused.winner, reused.lower_bound) == (
        fresh.upper_bound,
        fresh.winner,
        fresh.lower_bound,
    )


def test_dabe_reuses_its_grid_across_k_without_changing_the_bound():
    rng = np.random.default_rng(14)
    F = rng.standard_normal((8, 40)) * rng.uniform(0.2, 2.0, 40)
    shared = Problem(factor=F)
    along = [REGISTRY["dabe"].func(shared, k, False).value for k in (2, 5, 9)]  # one problem, as on a path
    assert len(shared.memo["dabe"]) < 3 * 32  # the 16 grid points are computed once
    assert along == [REGISTRY["dabe"].func(Problem(factor=F), k, False).value for k in (2, 5, 9)]
