"""The sample-space SDP's low-rank iterate against the dense spectraplex point it stands for."""

import math

import numpy as np
import pytest

from certpca.certification import sdp_sample as sdp


def dense_primal(F, asq, rho, X):
    """ψ and the unit y_i at X' = (1 − MIX)X + MIX·I/r from a full eigh of the dense X (module docstring)."""
    r = X.shape[0]
    x, Q = np.linalg.eigh((1 - sdp.MIX) * X + sdp.MIX * np.eye(r) / r)
    x = np.maximum(x, 0.0)
    c = Q.T @ F[:, asq > rho]
    lam = sdp._roots(x, c * c, rho)
    y = Q @ ((x[:, None] / (lam[None, :] + rho * x[:, None])) * c)
    return float(lam.sum()), y / np.linalg.norm(y, axis=0)


def test_low_rank_iterate_gives_the_dense_primal():
    rng = np.random.default_rng(21)
    r, d = 12, 40
    F = rng.standard_normal((r, d)) * rng.uniform(0.2, 2.0, d)
    asq = np.einsum("ij,ij->j", F, F)
    rho = float(np.quantile(asq, 0.4))
    S = sdp._Sample(F, asq, rho)
    X, dense = sdp._Iterate.start(r), np.eye(r) / r
    steps = [rng.standard_normal(r) for _ in range(r + 3)]  # more steps than r: the basis fills up
    steps.insert(3, steps[1].copy())  # a direction already in the span adds no column
    for step, t in zip(steps, rng.uniform(0.05, 0.6, len(steps))):
        u = step / np.linalg.norm(step)
        B, ub = X.extend(u)
        X = X.toward(B, ub, t)
        dense = (1 - t) * dense + t * np.outer(u, u)
        assert X.B.shape[1] <= r
        np.testing.assert_allclose(X.B.T @ X.B, np.eye(X.B.shape[1]), atol=1e-12)
        np.testing.assert_allclose(X.alpha * np.eye(r) + X.B @ X.K @ X.B.T, dense, atol=1e-13)
        psi, y = S.primal(X)
        psi_ref, y_ref = dense_primal(F, asq, rho, dense)
        assert abs(psi - psi_ref) <= 1e-10 * psi_ref
        np.testing.assert_allclose(np.abs(np.sum(y * y_ref, axis=0)), 1.0, atol=1e-8)  # same unit directions
    assert X.B.shape[1] == r


def test_direction_is_the_top_eigenvector_of_the_sum_of_the_y_i():
    rng = np.random.default_rng(22)
    for r, d in ((12, 8), (6, 40)):  # fewer active features than rows (the smaller side), and more
        F = rng.standard_normal((r, d)) * rng.uniform(0.5, 2.0, d)
        asq = np.einsum("ij,ij->j", F, F)
        S = sdp._Sample(F, asq, 0.2 * float(asq.min()))
        _, y = S.primal(sdp._Iterate.start(r))
        s = np.sum(S.Fa * y, axis=0)
        gap = s * s - S.rho
        ok = gap > 0
        W = S.Fa[:, ok] * s[ok] - S.rho * y[:, ok]
        vals, vecs = np.linalg.eigh((W / gap[ok]) @ W.T)
        assert vals[-1] - vals[-2] > 1e-6 * vals[-1]  # a unique top eigenvector
        assert abs(S.direction(y) @ vecs[:, -1]) == pytest.approx(1.0, abs=1e-10)


def test_no_dual_point_goes_below_the_primal_value_at_its_rho():
    """Weak duality at one ρ, the fact that lets a search stop once kρ + ψ(X) reaches a target: the
    smallest dual value Frank–Wolfe finds is at least kρ + its best primal value."""
    rng = np.random.default_rng(23)
    for _ in range(30):
        r, d = int(rng.integers(3, 12)), int(rng.integers(10, 60))
        F = rng.standard_normal((r, d)) * rng.uniform(0.1, 3.0, d)
        asq = np.einsum("ij,ij->j", F, F)
        k = int(rng.integers(1, d))
        for q in (0.2, 0.5, 0.8):
            rho = float(np.quantile(asq, q))
            best, _, psi, _, stopped = sdp._frank_wolfe(
                sdp._Sample(F, asq, rho), sdp._Iterate.start(r), 60, k, F, asq, 0.0, math.inf
            )
            assert not stopped and psi > 0
            assert best >= k * rho + psi


def test_the_roots_are_the_terms_h_i_approached_from_below_from_any_start():
    """h = λmax(diag(−ρx) + zzᵀ)₊ with z = √x·c (the i-th term of ψ at X = Q diag(x) Qᵀ) is the root of
    Σ_j x_j c_j²/(λ + ρx_j) = 1: from 0, from above the root (far, and within the tolerance) and from
    below, never above it."""
    rng = np.random.default_rng(24)
    for _ in range(200):
        m, n = int(rng.integers(1, 30)), 12
        x = rng.dirichlet(np.full(m, rng.uniform(0.1, 2.0)))
        x = (1 - sdp.MIX) * x + sdp.MIX / m
        c2 = rng.exponential(size=(m, n)) * rng.uniform(0.01, 100.0, n)
        rho = float(rng.uniform(0.01, 30.0))
        z = np.sqrt(x)[:, None] * np.sqrt(c2)
        h = np.array([max(np.linalg.eigvalsh(np.diag(-rho * x) + np.outer(zi, zi))[-1], 0.0) for zi in z.T])
        for start in (None, 2.0 * h + 1.0, h * (1 + 1e-10) + 1e-300, 0.5 * h):
            lam = sdp._roots(x, c2, rho, start)
            assert np.all(lam <= h * (1 + 1e-12) + 1e-300)
            np.testing.assert_allclose(lam, h, rtol=1e-8, atol=1e-12 * rho)
