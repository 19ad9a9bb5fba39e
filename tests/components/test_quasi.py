"""Quasi-orthogonal EM (Sigg & Buhmann 2008, eq. 20): the QP M-step against Algorithm 2 and KKT."""

import itertools
import time

import numpy as np
import pytest

from certpca.components.quasi import (
    MStepQP,
    angle_deg,
    l1_level,
    quasi_mstep,
    quasi_orthogonal_components,
)
from certpca.errors import InputError
from certpca.problem import Problem
from certpca.solvers.em import em_step
from tests.brute import random_psd


def _unit_nonneg(rng, *shape):
    x = np.abs(rng.standard_normal(shape))
    return x / np.linalg.norm(x, axis=0)


@pytest.mark.parametrize("with_v", [False, True])
def test_alpha_zero_qp_mstep_is_the_closed_form_em_step(with_v):
    """At α = 0 the CVXPY QP (eqs. 14, 17, 20) reproduces Algorithm 2's soft threshold."""
    rng = np.random.default_rng(0)
    for trial in range(8):
        D = 25
        P = Problem.from_covariance(random_psd(rng, D, ["wishart", "posfactor"][trial % 2]))
        V = _unit_nonneg(rng, D, 2) if with_v else np.zeros((D, 0))
        qp = MStepQP(V)
        w = _unit_nonneg(rng, D)
        for k in (1, 4, 11, D):
            new, extras = quasi_mstep(P, w, k, V, 0.0, qp)
            ref, _ = em_step(P, w, k, True)
            assert extras["solver"] == "CLARABEL" and extras["status"] == "optimal"
            np.testing.assert_allclose(new, ref, atol=1e-6)
            assert set(np.flatnonzero(new)) == set(np.flatnonzero(ref))


def test_penalised_mstep_is_the_qp_optimum_with_the_largest_l1_ball():
    """α > 0: CVXPY and the exact Newton solution agree, the KKT conditions hold, and λ is minimal."""
    rng = np.random.default_rng(1)
    for trial in range(10):
        D, K = 30, int(rng.integers(2, 12))
        P = Problem.from_covariance(random_psd(rng, D, "posfactor"))
        V = _unit_nonneg(rng, D, 1 + trial % 3)
        w = _unit_nonneg(rng, D)
        alpha = 10 ** rng.uniform(-1, 2)
        b = P.matvec(w)
        s = w @ b
        lam, w_np = l1_level(b, s, V, alpha, K)
        assert np.count_nonzero(w_np) <= K and np.all(w_np >= 0)
        # KKT of min s‖w‖² + α‖Vᵀw‖² − 2bᵀw + λ1ᵀw over w ≥ 0
        grad = 2 * s * w_np + 2 * alpha * V @ (V.T @ w_np) - 2 * b + lam
        scale = np.abs(b).max()
        assert np.all(np.abs(grad[w_np > 0]) <= 1e-9 * scale) and np.all(grad[w_np == 0] >= -1e-9 * scale)
        # a slightly smaller λ (a larger ℓ1 ball) gives more nonzeros: λ is the smallest
        # (solved by CVXPY, independently of the Newton code)
        if lam > 0 and np.count_nonzero(w_np) == K:
            x, _, status = MStepQP(V).solve(b - lam * (1 - 1e-4) / 2, s, alpha)
            assert status == "optimal" and np.sum(x > 1e-8 * x.max()) > K
        new, extras = quasi_mstep(P, w, K, V, alpha, MStepQP(V))
        assert extras["status"] == "optimal" and extras["max_diff_vs_newton"] < 1e-4
        np.testing.assert_allclose(new, w_np / np.linalg.norm(w_np), atol=1e-5)


def _check_components(W, records, k, min_angle):
    for w in W:
        assert np.all(w >= 0) and np.count_nonzero(w) <= k and np.isclose(np.linalg.norm(w), 1)
    for a, b in itertools.combinations(W, 2):
        assert angle_deg(a, b) >= min_angle - 1e-6
    assert records[0]["angle"] is None and all(r["met"] for r in records)
    for r in records[1:]:
        assert r["angle"] >= min_angle - 1e-6


def test_components_honour_the_minimum_angle_with_cvxpy():
    rng = np.random.default_rng(2)
    P = Problem.from_covariance(random_psd(rng, 14, "posfactor"))  # PC1 > 0: plain EM repeats it
    W, records = quasi_orthogonal_components(P, 5, 3, min_angle_deg=85, rng=rng, restarts=1)
    _check_components(W, records, 5, 85)
    assert records[1]["alpha"] > 0 and records[1]["solver"] == "CLARABEL"
    print("\n", [(round(r["alpha"], 3), round(r["angle"] or 0, 2), round(r["variance"], 3)) for r in records])


def test_components_honour_the_minimum_angle():
    rng = np.random.default_rng(3)
    X = np.abs(rng.standard_normal((200, 30))) @ np.abs(rng.standard_normal((30, 30)))
    P = Problem.from_data(X - X.mean(0))
    alphas = {}
    for min_angle in (60, 89):
        W, records = quasi_orthogonal_components(
            P, 8, 3, min_angle_deg=min_angle, rng=np.random.default_rng(0), restarts=1, qp="numpy"
        )
        _check_components(W, records, 8, min_angle)
        alphas[min_angle] = records[1]["alpha"]
    assert alphas[89] >= alphas[60] > 0  # a wider angle needs a larger penalty


def test_without_penalty_the_first_component_repeats():
    rng = np.random.default_rng(4)
    P = Problem.from_covariance(random_psd(rng, 12, "posfactor"))
    W, records = quasi_orthogonal_components(P, 4, 2, rng=rng, restarts=1, qp="numpy")
    assert angle_deg(W[0], W[1]) < 1.0 and records[1]["alpha"] == 0.0


def test_leukemia_sized_qp_stays_thin():
    """D = 12582, N = 72: the CVXPY M-step has O(D) variables and a D × 2 constraint block."""
    rng = np.random.default_rng(5)
    X = rng.standard_normal((72, 12582)) + np.abs(rng.standard_normal((72, 1)))
    P = Problem.from_data(X - X.mean(0))
    assert P.uses_factor
    V = _unit_nonneg(rng, 12582, 2)
    qp = MStepQP(V)
    w = _unit_nonneg(rng, 12582)
    t0 = time.perf_counter()
    new, extras = quasi_mstep(P, w, 50, V, 5.0 * P.eigenvalues()[0], qp)
    seconds = time.perf_counter() - t0
    print(
        f"\nD = 12582 M-step: {extras['solver']} {extras['status']} in {seconds:.2f} s, "
        f"diff vs Newton {extras['max_diff_vs_newton']:.1e}"
    )
    assert extras["solver"] == "CLARABEL" and extras["status"] == "optimal"
    assert np.count_nonzero(new) == 50 and np.all(new >= 0)
    assert extras["max_diff_vs_newton"] < 1e-3  # interior-point accuracy at this size


def test_bad_input():
    P = Problem.from_covariance(np.eye(3) + 1)
    with pytest.raises(InputError, match="min_angle_deg is out of range: got 95; choose a value from 0 to 90"):
        quasi_orthogonal_components(P, 2, 2, min_angle_deg=95)
    with pytest.raises(InputError, match="qp"):
        quasi_orthogonal_components(P, 2, 2, qp="gurobi")
    with pytest.raises(InputError, match="k is out of range: got 4; choose a value from 1 to 3"):
        quasi_orthogonal_components(P, 4, 2)
