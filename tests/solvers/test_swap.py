"""The swap search (solvers/swap.py) against independent truth: the best vector of every two-dimensional
span(u, e_j) computed directly, and brute force over supports (tests/brute.py)."""

from itertools import combinations

import numpy as np
import pytest

from certpca.problem import Problem
from certpca.solvers import solve
from certpca.solvers.swap import best_swap, swap_search
from tests.brute import brute_force, random_psd


def _refitted(C: np.ndarray, S) -> np.ndarray:
    """The top eigenvector of C_SS on support S (sign: positive sum)."""
    w = np.zeros(len(C))
    v = np.linalg.eigh(C[np.ix_(S, S)])[1][:, -1]
    w[list(S)] = v if v.sum() >= 0 else -v
    return w


def _swap_truth(C: np.ndarray, w: np.ndarray, nonneg: bool) -> float:
    """max over i ∈ supp(w), j ∉ supp(w) of the best unit vector in span(w − w_i e_i, e_j) (≥ 0 under nonneg),
    each span's 2 × 2 eigenproblem formed from an orthonormal basis; for w ≥ 0 by a fine grid of the arc."""
    best = -np.inf
    for i in np.flatnonzero(w):
        u = w.copy()
        u[i] = 0.0
        if not u.any():
            continue
        for j in np.flatnonzero(w == 0):
            e = np.zeros(len(w))
            e[j] = 1.0
            Q = np.column_stack([u / np.linalg.norm(u), e])
            if nonneg:  # both coefficients ≥ 0: the quarter circle
                t = np.linspace(0.0, np.pi / 2, 20001)
                V = Q @ np.vstack([np.cos(t), np.sin(t)])
                best = max(best, float(np.max(np.einsum("ij,ij->j", V, C @ V))))
            else:
                best = max(best, float(np.linalg.eigvalsh(Q.T @ C @ Q)[-1]))
    return best


@pytest.mark.parametrize("nonneg", [False, True])
@pytest.mark.parametrize("family", ["wishart", "spiked", "lowrank", "posfactor"])
def test_best_swap_is_the_best_two_dimensional_swap(family, nonneg):
    rng = np.random.default_rng(3)
    for _ in range(3):
        C = random_psd(rng, 9, family)
        P = Problem.from_covariance(C)
        S = sorted(rng.choice(9, 3, replace=False))
        w = _refitted(C, S)
        if nonneg:
            w = np.abs(w) / np.linalg.norm(w)  # a nonnegative unit vector on S
        found = best_swap(P, w, nonneg)
        assert found is not None
        value, out, into, v = found
        truth = _swap_truth(C, w, nonneg)
        assert value == pytest.approx(truth, rel=1e-6 if nonneg else 1e-9)
        # the vector it returns lies on the swapped support, is feasible and has that value
        support = set(np.flatnonzero(w)) - {out} | {into}
        assert set(np.flatnonzero(v)) <= support and np.linalg.norm(v) == pytest.approx(1.0)
        assert not nonneg or (v >= 0).all()
        assert v @ C @ v == pytest.approx(value, rel=1e-9)


@pytest.mark.parametrize("nonneg", [False, True])
def test_swap_search_ends_at_a_swap_maximum_below_the_optimum(nonneg):
    """From every support of a 9-feature problem: never worse than the start, never above brute force's
    optimum, and no two-dimensional swap of the end point is better (a coordinate-wise maximum)."""
    rng = np.random.default_rng(11)
    C = random_psd(rng, 9, "spiked")
    P = Problem.from_covariance(C)
    k = 3
    opt, _ = brute_force(C, k, nonneg)
    reached = 0
    for S in combinations(range(9), k):
        w = _refitted(C, S)
        if nonneg:
            w = np.abs(w) / np.linalg.norm(w)
        start = w @ C @ w
        end, value, swaps = swap_search(P, w, k, nonneg)
        assert np.count_nonzero(end) <= k and (not nonneg or (end >= 0).all())
        assert value == pytest.approx(end @ C @ end, rel=1e-12)
        assert start * (1 - 1e-12) <= value <= opt * (1 + 1e-9)
        assert _swap_truth(C, end, nonneg) <= value * (1 + 1e-6)
        reached += value >= opt * (1 - 1e-9)
    # most starts end at the optimum (measured: 65 of the 84 nonnegative starts, more of the signed)
    assert reached >= 0.75 * len(list(combinations(range(9), k)))


def test_auto_reaches_brute_force_on_random_problems():
    """auto (candidates, then the driver's swap search) on 20 random 10-feature problems: brute force's optimum."""
    rng = np.random.default_rng(0)
    hits = 0
    for _ in range(20):
        C = random_psd(rng, 10, "wishart")
        P = Problem.from_covariance(C)
        comp = solve(P, 4, method="auto", rng=0)
        opt, _ = brute_force(C, 4)
        assert comp.variance <= opt * (1 + 1e-9)
        hits += comp.variance >= opt * (1 - 1e-9)
    assert hits == 20
