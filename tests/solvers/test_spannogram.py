"""Spannogram solvers against independent truth.

Truth comes from brute force over supports (tests/brute.py), from an all-pairs
reference sweep written here (top-k at the midpoint of every cell of the full
arrangement), and from fine angle grids / random directions.
"""

import math

import numpy as np
import pytest

from certpca.errors import InputError
from certpca.problem import Problem
from certpca.solvers.spannogram import (
    covering_radius,
    grid_net,
    max_quad_on_cone,
    random_net,
    rank1_supports,
    spannogram,
    support_values,
    surrogate_factor,
    sweep_supports_2d,
    top_k_supports,
    vertex_supports,
)
from tests.brute import brute_force, random_psd

RTOL = 1e-8


def _rank_d(rng, D, d, nonneg_factor):
    A = rng.standard_normal((D, d))
    if nonneg_factor:
        A = np.abs(A)
    return A @ A.T


def _feasible(w, k, nonneg):
    assert np.isclose(np.linalg.norm(w), 1.0)
    assert np.count_nonzero(w) <= k
    if nonneg:
        assert np.all(w >= 0)


def _surrogate(C, d):
    vals, vecs = np.linalg.eigh(C)
    vals, vecs = vals[::-1], vecs[:, ::-1]
    return (vecs[:, :d] * vals[:d]) @ vecs[:, :d].T, max(vals[d], 0.0) if d < len(vals) else 0.0


# ------------------------------------------------------------- exactness
@pytest.mark.parametrize("d", [1, 2, 3])
@pytest.mark.parametrize("nonneg", [False, True])
def test_exact_on_rank_d_matrices(d, nonneg):
    """[APD14] §1: on a rank-d matrix the rank-d spannogram is optimal for every k."""
    rng = np.random.default_rng(100 * d + nonneg)
    for trial in range(12):
        D = int(rng.integers(5, 11))
        k = int(rng.integers(1, D + 1))
        C = _rank_d(rng, D, d, nonneg_factor=nonneg and trial % 2 == 0)
        opt, _ = brute_force(C, k, nonneg)
        res = spannogram(Problem.from_covariance(C), k, nonneg=nonneg, d=d)
        _feasible(res.weights, k, nonneg)
        assert res.method == "exact" and res.epsilon is None
        assert res.opt_d == pytest.approx(opt, rel=RTOL)
        assert res.value == pytest.approx(opt, rel=RTOL)
        assert res.lambda_next == pytest.approx(0.0, abs=1e-9 * opt)
        assert res.value == pytest.approx(res.weights @ C @ res.weights, rel=1e-12)


@pytest.mark.parametrize("family", ["wishart", "spiked", "lowrank", "posfactor"])
@pytest.mark.parametrize("nonneg", [False, True])
def test_opt_d_is_surrogate_optimum_and_bound_is_valid(family, nonneg):
    """opt_d = OPT(A_d) by brute force; value ≤ OPT ≤ opt_d + λ_{d+1} (docs/certification.md §4)."""
    rng = np.random.default_rng(hash((family, nonneg)) % 2**32)
    for _trial in range(4):
        D, k = 9, int(rng.integers(2, 6))
        C = random_psd(rng, D, family)
        P = Problem.from_covariance(C)
        opt, _ = brute_force(C, k, nonneg)
        for d in (1, 2, 3):
            Ad, lam = _surrogate(C, d)
            opt_d, _ = brute_force(Ad, k, nonneg)
            res = spannogram(P, k, nonneg=nonneg, d=d)
            _feasible(res.weights, k, nonneg)
            assert res.opt_d == pytest.approx(opt_d, rel=1e-7, abs=1e-10)
            assert res.lambda_next == pytest.approx(lam, abs=1e-10)
            assert res.value <= opt * (1 + 1e-10)
            assert res.exact and res.truncated is None
            assert opt <= (res.opt_d + res.lambda_next) * (1 + 1e-10)
            if not nonneg and k <= D:
                assert np.count_nonzero(res.weights) == k  # exactly k when possible


def test_factor_problem_matches_dense():
    """D > N: the operator never forms C, results agree with the dense covariance."""
    rng = np.random.default_rng(7)
    X = rng.standard_normal((8, 30))
    X -= X.mean(0)
    Pf, Pd = Problem.from_data(X), Problem.from_covariance(X.T @ X / 7)
    assert Pf.uses_factor
    for nonneg in (False, True):
        a = spannogram(Pf, 5, nonneg=nonneg, d=2)
        b = spannogram(Pd, 5, nonneg=nonneg, d=2)
        assert a.opt_d == pytest.approx(b.opt_d, rel=1e-9)
        assert a.value == pytest.approx(b.value, rel=1e-9)
        assert a.lambda_next == pytest.approx(b.lambda_next, rel=1e-9)


# ------------------------------------------------------------- the d = 2 sweep
def _reference_supports_2d(V, k, nonneg):
    """All-pairs reference: sort every critical angle, top-k at each cell midpoint."""
    n = len(V)
    iu, ju = np.triu_indices(n, 1)
    W = [V[iu] - V[ju], V if nonneg else V[iu] + V[ju]]
    W = np.vstack(W)
    th = np.mod(np.arctan2(-W[:, 0], W[:, 1]), np.pi)
    period = 2 * np.pi if nonneg else np.pi
    if nonneg:
        th = np.concatenate([th, th + np.pi])
    th = np.sort(np.concatenate([[0.0], th, [period]]))
    mids = (th[:-1] + th[1:])[np.diff(th) > 0] / 2
    out = set()
    for s in range(0, len(mids), 2000):
        m = mids[s : s + 2000]
        Y = np.cos(m)[:, None] * V[:, 0] + np.sin(m)[:, None] * V[:, 1]
        G = Y if nonneg else np.abs(Y)
        idx = np.argsort(-G, axis=1)[:, :k]
        for row, g in zip(idx, np.take_along_axis(G, idx, 1)):
            out.add(tuple(sorted(row[g > 0] if nonneg else row)))
    return out


def _as_sets(S, n):
    return {tuple(int(i) for i in row if i < n) for row in S}


def _cone_value_2d_reference(R):
    """max ‖Rc‖² over Rc ≥ 0 or ≤ 0, by brute force over a fine grid plus candidate
    angles: the unconstrained eigenvectors and every constraint boundary."""
    Q = R.T @ R
    angles = [np.arctan2(u[1], u[0]) for u in np.linalg.eigh(Q)[1].T]
    angles += [np.arctan2(r[0], -r[1]) for r in R]
    th = np.concatenate([angles, np.linspace(0, 2 * np.pi, 20001)])
    th = np.concatenate([th, th + np.pi])
    C = np.column_stack([np.cos(th), np.sin(th)])
    Y = R @ C.T
    tol = 1e-10 * np.abs(R).max()
    ok = np.all(Y >= -tol, axis=0)
    if not ok.any():
        return -np.inf
    return float(np.max(np.sum(np.maximum(Y[:, ok], 0) ** 2, axis=0)))


@pytest.mark.parametrize("nonneg", [False, True])
def test_sweep_equals_all_pairs_reference_n200(nonneg):
    rng = np.random.default_rng(11 + nonneg)
    n, k = 200, 10
    V = rng.standard_normal((n, 2)) * [2.0, 1.3]
    S, f = sweep_supports_2d(V, k, nonneg)
    ref = _reference_supports_2d(V, k, nonneg)
    assert _as_sets(S, n) == ref
    # OPT_2 = max_c f(c) ([APD14] eq. (13)): a fine angle grid approaches it from below
    vals, _, _ = support_values(V, S, nonneg)
    th = np.linspace(0, 2 * np.pi, 200001)
    Y = np.column_stack([np.cos(th), np.sin(th)]) @ V.T
    _, fg = top_k_supports(Y, k, nonneg)
    assert fg.max() <= vals[0] * (1 + 1e-12)
    assert fg.max() >= vals[0] * (1 - 1e-6)
    assert np.all(f <= vals[0] * (1 + 1e-12))  # f at a cell point ≤ its support's value


@pytest.mark.parametrize("nonneg", [False, True])
def test_sweep_opt2_equals_reference_values(nonneg):
    rng = np.random.default_rng(5 + nonneg)
    n, k = 120, 6
    V = rng.standard_normal((n, 2)) * [1.0, 0.8]
    P = Problem.from_covariance(V @ V.T)
    res = spannogram(P, k, nonneg=nonneg, d=2)
    ref = _reference_supports_2d(V, k, nonneg)
    if nonneg:
        best = max(_cone_value_2d_reference(V[list(I)]) for I in ref)
    else:
        best = max(np.linalg.eigvalsh(V[list(I)].T @ V[list(I)])[-1] for I in ref)
    assert res.opt_d == pytest.approx(best, rel=1e-6)
    # rank 2: the surrogate is C itself, so value is optimal too
    assert res.value == pytest.approx(res.opt_d, rel=1e-9)


@pytest.mark.parametrize("nonneg", [False, True])
def test_sweep_equals_alg2_vertex_enumeration(nonneg):
    """Two different constructions of S_2 ([APD14] Alg. 2 vs the pruned sweep)."""
    rng = np.random.default_rng(21 + nonneg)
    n, k = 50, 7
    V = rng.standard_normal((n, 2))
    a, _ = sweep_supports_2d(V, k, nonneg)
    b, _, truncated = vertex_supports(V, k, nonneg)
    assert truncated is None
    assert _as_sets(a, n) == _as_sets(b, n)


@pytest.mark.parametrize("nonneg", [False, True])
def test_sweep_large_k_and_pruning_small_leaves(nonneg):
    """Forcing deep refinement (tiny leaves, few first-level intervals) changes nothing."""
    rng = np.random.default_rng(31 + nonneg)
    n, k = 150, 40
    V = rng.standard_normal((n, 2)) * [1.5, 1.0]
    a, _ = sweep_supports_2d(V, k, nonneg)
    b, _ = sweep_supports_2d(V, k, nonneg, leaf=4, n_intervals=2)
    assert _as_sets(a, n) == _as_sets(b, n) == _reference_supports_2d(V, k, nonneg)


@pytest.mark.parametrize("nonneg", [False, True])
def test_d3_patch_pruning_equals_plain_alg2(nonneg):
    rng = np.random.default_rng(41 + nonneg)
    n, k = 66, 6
    V = rng.standard_normal((n, 3)) * [2.0, 1.4, 1.0]
    a, _, truncated = vertex_supports(V, k, nonneg, leaf=20)  # n > 64: patches
    assert truncated is None
    # plain Alg. 2 on all rows (forced through the small-n path)
    from certpca.solvers.spannogram.vertices import enumerate_vertices

    out = [top_k_supports(np.vstack([np.eye(3), -np.eye(3)]) @ V.T, k, nonneg)[0]]
    enumerate_vertices(V, k, nonneg, 1e-9 * np.abs(V).max() * math.sqrt(3), out)
    assert _as_sets(np.vstack(out), n) == _as_sets(a, n)


@pytest.mark.parametrize("nonneg", [False, True])
def test_d3_patches_find_opt3_by_brute_force(nonneg, monkeypatch):
    """The patch-pruned exact d = 3 sweep (hyperplane test, batched ties), forced onto small
    problems and deep patches, finds the candidate supports of plain Alg. 2 and OPT_3 of the
    surrogate by brute force over supports, also with rounded (tied) factors."""
    from certpca.solvers.spannogram import vertices

    monkeypatch.setattr(vertices, "PATCH_MIN_N", 0)
    rng = np.random.default_rng(61 + nonneg)
    for trial in range(16):
        D, k = int(rng.integers(6, 11)), int(rng.integers(1, 6))
        C = random_psd(rng, D, ["wishart", "spiked", "lowrank", "posfactor"][trial % 4])
        if trial % 3 == 2:
            C = np.round(C, 1)  # ties between curves
        P = Problem.from_covariance(C)
        V, _ = surrogate_factor(P, 3)
        Ad = V @ V.T
        opt_d, _ = brute_force(Ad, k, nonneg)
        # plain Alg. 2 over all triples, every tie completed one vertex at a time
        plain = [top_k_supports(np.vstack([np.eye(3), -np.eye(3)]) @ V.T, k, nonneg)[0]]
        with monkeypatch.context() as m:
            m.setattr(vertices, "SMALL_TIE", 0)
            vertices.enumerate_vertices(V, k, nonneg, 1e-9 * np.abs(V).max() * math.sqrt(3), plain)
        for leaf in (4, 80):  # 4: deep patches (at a vertex 3 curves stay undecided)
            S, _, truncated = vertex_supports(V, k, nonneg, leaf=leaf)
            assert truncated is None
            assert _as_sets(S, D) == _as_sets(np.vstack(plain), D), (trial, leaf)  # the cells of Alg. 2
            vals, _, _ = support_values(V, S, nonneg)
            assert vals[0] == pytest.approx(opt_d, rel=1e-7, abs=1e-10), (trial, leaf)
        assert spannogram(P, k, nonneg=nonneg, d=3).opt_d == pytest.approx(opt_d, rel=1e-7, abs=1e-10)


# ------------------------------------------------------------- pieces
def test_rank1_prop31():
    v = np.array([3.0, -5.0, 1.0, -0.5, 4.0, 0.0])
    assert [set(s) for s in rank1_supports(v, 2, False)] == [{1, 4}]
    assert [set(s) for s in rank1_supports(v, 2, True)] == [{0, 4}, {1, 3}]
    assert [set(s) for s in rank1_supports(v, 4, True)] == [{0, 2, 4}, {1, 3}]


def test_max_quad_on_cone_against_dense_search():
    rng = np.random.default_rng(3)
    for _ in range(20):
        R = rng.standard_normal((int(rng.integers(1, 8)), 2)) + [0.5, 0.2]
        val, c = max_quad_on_cone(R)
        ref = _cone_value_2d_reference(R)
        if ref == -np.inf:
            assert val == -np.inf and c is None
        else:
            assert val == pytest.approx(ref, rel=1e-6)
    for _ in range(10):  # d = 3 vs random directions
        R = rng.standard_normal((6, 3)) + [1.5, 0.0, 0.0]
        val, c = max_quad_on_cone(R)
        Z = rng.standard_normal((200000, 3))
        Z /= np.linalg.norm(Z, axis=1, keepdims=True)
        Y = Z @ R.T
        ok = np.all(Y >= 0, axis=1) | np.all(Y <= 0, axis=1)
        if c is None:
            assert not ok.any()
            continue
        y = R @ c
        assert np.all(y >= -1e-9) and np.sum(y**2) == pytest.approx(val)
        # c is feasible and attains val; no sampled feasible direction does better
        if ok.any():
            assert np.max(np.sum(Y[ok] ** 2, axis=1)) <= val * (1 + 1e-9)


@pytest.mark.parametrize("d", [2, 3])
@pytest.mark.parametrize("nonneg", [False, True])
def test_grid_net_covering_radius_is_proven(d, nonneg):
    C, eps = grid_net(d, 0.2, nonneg)
    assert eps <= 0.2
    full = C if nonneg else np.vstack([C, -C])
    exact = covering_radius(full)
    assert exact <= eps * (1 + 1e-9)
    if d == 2:
        assert exact == pytest.approx(eps)
    # Monte Carlo points are never farther than the exact covering radius
    rng = np.random.default_rng(0)
    U = rng.standard_normal((20000, d))
    U /= np.linalg.norm(U, axis=1, keepdims=True)
    dist = np.sqrt(np.maximum(2 - 2 * np.max(U @ full.T, axis=1), 0))
    assert dist.max() <= exact * (1 + 1e-9)
    assert dist.max() >= 0.7 * exact


@pytest.mark.parametrize("d", [2, 3])
@pytest.mark.parametrize("nonneg", [False, True])
def test_net_bound_is_valid(d, nonneg):
    """max_C f/(1−ε)² + λ_{d+1} ≥ OPT (docs/certification.md §4) on random problems, both nets."""
    rng = np.random.default_rng(50 + 10 * d + nonneg)
    for trial in range(8):
        D = 9
        k = int(rng.integers(2, 6))
        C = random_psd(rng, D, ["wishart", "spiked", "lowrank", "posfactor"][trial % 4])
        P = Problem.from_covariance(C)
        opt, _ = brute_force(C, k, nonneg)
        exact = spannogram(P, k, nonneg=nonneg, d=d)
        for net, kw in (("grid", {"epsilon": 0.3}), ("random", {"samples": 60, "rng": trial})):
            res = spannogram(P, k, nonneg=nonneg, d=d, net=net, **kw)
            _feasible(res.weights, k, nonneg)
            assert res.method == "net-" + net and res.epsilon is not None
            assert res.opt_d <= exact.opt_d * (1 + 1e-10)
            if res.epsilon < 1:
                assert exact.opt_d <= res.opt_d / (1 - res.epsilon) ** 2 * (1 + 1e-10)
            assert not res.exact
            if res.epsilon < 1:
                assert opt <= (res.opt_d / (1 - res.epsilon) ** 2 + res.lambda_next) * (1 + 1e-10)
            assert res.value <= opt * (1 + 1e-10)


def test_random_net_is_seeded_and_reports_realised_radius():
    C1, e1 = random_net(3, 0.3, False, rng=4)
    C2, e2 = random_net(3, 0.3, False, rng=4)
    assert np.array_equal(C1, C2) and e1 == e2
    assert e1 == pytest.approx(covering_radius(np.vstack([C1, -C1])))
    assert e1 <= 0.3  # the default size reaches the target w.h.p.


def test_surrogate_factor_rank_deficient():
    rng = np.random.default_rng(1)
    A = rng.standard_normal((6, 2))
    V, lam = surrogate_factor(Problem.from_covariance(A @ A.T), 4)
    assert V.shape == (6, 2) and lam <= 1e-12 * np.linalg.eigvalsh(A @ A.T)[-1]
    res = spannogram(Problem.from_covariance(A @ A.T), 3, d=4)
    assert res.d == 2


def test_input_errors():
    P = Problem.from_covariance(np.eye(3))
    with pytest.raises(InputError):
        spannogram(P, 0)
    with pytest.raises(InputError):
        spannogram(P, 2, d=0)
    with pytest.raises(InputError):
        spannogram(P, 2, net="sobol")
    with pytest.raises(InputError):
        spannogram(np.eye(3), 2)


@pytest.mark.parametrize("nonneg", [False, True])
def test_sweep_with_a_target(nonneg):
    """With a target above OPT_2 the sweep is the complete one (the all-pairs reference); below it, it stops
    with a candidate above the target (a feasible value: OPT_2 is above it too), and the spannogram says so —
    always at half or 90% of OPT_2, where the middles of the first-level intervals are above the target."""
    rng = np.random.default_rng(41 + nonneg)
    stopped = 0
    for _ in range(12):
        n, k = int(rng.integers(20, 120)), int(rng.integers(2, 12))
        V = rng.standard_normal((n, 2)) * [1.5, rng.uniform(0.3, 1.4)]
        C = V @ V.T  # a fresh Problem per call: a second eigh of the same one may differ in the last bit

        def run(target, C=C, k=k):
            return spannogram(Problem.from_covariance(C), k, nonneg=nonneg, d=2, target=target)

        full = run(None)
        assert full.truncated is None
        above = run(full.opt_d * (1 + 1e-6))
        assert above.truncated is None and above.opt_d == full.opt_d
        S, _ = sweep_supports_2d(V, k, nonneg, target=full.opt_d * (1 + 1e-6))
        assert _as_sets(S, n) == _reference_supports_2d(V, k, nonneg)
        for share in (0.5, 0.9, 0.999):
            below = run(share * full.opt_d)
            if below.truncated is None:  # no cell's f(c) (below its support's value) went above the target
                assert below.opt_d == full.opt_d
                continue
            assert below.truncated == "above target" and not below.exact
            assert share * full.opt_d < below.opt_d <= full.opt_d * (1 + 1e-12)
            stopped += share < 0.99
    assert stopped == 24
