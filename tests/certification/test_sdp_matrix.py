"""The dABE bound with a matrix multiplier (certification/sdp_matrix.py) against brute force, zero tolerance:
signed and nonnegative, dense and factor problems, tied optima and strongly negative correlations."""

import numpy as np
import pytest

from certpca.certification import matrix_dabe_bound
from certpca.certification.duals import factor_with_error
from certpca.certification.sdp_matrix import _primal, _sqrt_psd, certified_value
from certpca.certification.sdp_sample import _Iterate, _Sample, dual_value
from certpca.clock import Work
from certpca.problem import Problem
from tests.brute import brute_force, random_psd

FAMILIES = ["wishart", "spiked", "lowrank", "posfactor", "tied", "negative"]


def _problems(n, seed):
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        fam = FAMILIES[i % len(FAMILIES)]
        nonneg = bool((i // len(FAMILIES)) % 2)
        D = int(rng.integers(6, 12))
        k = int(rng.integers(2, D - 1))
        C = random_psd(rng, D, fam)
        if i % 3 == 0:  # a factor problem (N < D), as for wide data
            X = rng.standard_normal((max(3, D // 2), D)) @ np.linalg.cholesky(C + 1e-9 * np.eye(D)).T
            P = Problem.from_data(X)
            C = P.dense()
        else:
            P = Problem.from_covariance(C)
        out.append((fam, nonneg, k, P, C))
    return out


@pytest.mark.parametrize("chunk", range(2))
def test_never_below_the_brute_force_optimum(chunk):
    gains = []
    for fam, nonneg, k, P, C in _problems(36, 90 + chunk):
        opt, _ = brute_force(C, k, nonneg)
        b = matrix_dabe_bound(P, k, nonneg, time_limit=Work(5.0), outer=4, steps=30)
        assert b.value >= opt, (fam, nonneg, k, P.uses_factor, opt, b.value, b.params)
        assert b.value <= b.params["dabe_sdp"]  # the minimum with dABE's own bound
        gains.append(b.params["dabe_sdp"] / b.value)
    assert max(gains) > 1.001  # a matrix Z went below ρI somewhere (the strengthening does something)


def test_scalar_z_certifies_what_dabe_certifies():
    """Z = ρI through R = √ρ·I: the transformed certificate equals dual_value's at ρ (same dual point)."""
    rng = np.random.default_rng(5)
    P = Problem.from_data(rng.standard_normal((8, 30)) * rng.uniform(0.3, 2.0, 30))
    F, ferr = factor_with_error(P)
    asq = np.einsum("ij,ij->j", F, F)
    rho = float(np.quantile(asq, 0.5))
    r, k = F.shape[0], 4
    S = _Sample(F, asq, rho)
    _, y = S.primal(_Iterate.start(r))
    scalar = dual_value(F, asq, rho, k, S.act, y, ferr)
    Y = np.zeros_like(F)
    Y[:, S.act] = y
    matrix = certified_value(F, ferr, np.sqrt(rho) * np.eye(r), Y, k)
    assert matrix == pytest.approx(scalar, rel=1e-9)


def test_primal_with_scalar_z_is_dabes_primal():
    """With Z = ρI the secular roots are dABE's h_i: k⟨Z, X⟩ + Σh_i = kρ + ψ(X) on a random spectraplex point."""
    rng = np.random.default_rng(6)
    F = rng.standard_normal((6, 25))
    asq = np.einsum("ij,ij->j", F, F)
    rho = float(np.quantile(asq, 0.3))
    u = rng.standard_normal(6)
    X = _Iterate.start(6)
    B, ub = X.extend(u / np.linalg.norm(u))
    X = X.toward(B, ub, 0.4)
    dense = X.alpha * np.eye(6) + X.B @ X.K @ X.B.T
    psi, _ = _Sample(F, asq, rho).primal(X)
    value, p, _ = _primal(F, dense, rho * np.eye(6), 3)
    assert value == pytest.approx(3 * rho + psi, rel=1e-9)
    assert np.all(np.linalg.eigvalsh(_sqrt_psd(dense)) >= 0)


def test_charges_its_work_and_stops():
    """Each Frank–Wolfe step is charged to the Work it is given: a small allotment ends the Z steps early, a
    larger one allows more, and the bound stays valid either way."""
    rng = np.random.default_rng(8)
    P = Problem.from_data(rng.standard_normal((20, 12)) * rng.uniform(0.3, 2.0, 12))
    opt, _ = brute_force(P.dense(), 5, False)
    small, large = Work(0.01), Work(5.0)
    b_small = matrix_dabe_bound(P, 5, time_limit=small, steps=20)
    b_large = matrix_dabe_bound(P, 5, time_limit=large, steps=20)
    assert small.passed() and b_small.params["time_limit_reached"]
    assert b_small.params["z_steps"] < b_large.params["z_steps"]
    assert min(b_small.value, b_large.value) >= opt
