"""The best-first exact search against brute force (tests/brute.py), also where greedy selection fails."""

from itertools import combinations

import numpy as np
import pytest

from certpca.problem import Problem
from certpca.solvers.exact import exact, rank2_node_bound, schur_prunes, top_eigs
from tests.brute import brute_force, random_psd

FAMILIES = ["wishart", "spiked", "lowrank", "posfactor"]


def _greedy_trap(rng, D):
    """Feature 0 is the best single feature but in no optimal pair: features 1, 2 together beat it.

    Greedy forward selection starts from feature 0 and, for k = 2, ends at λ = 1.0 + small;
    the optimum is {1, 2} with λ = 0.9 + 0.8 = 1.7 (up to the noise).
    """
    C = 0.01 * random_psd(rng, D, "wishart")
    C[0, 0] += 1.0
    C[1:3, 1:3] += np.array([[0.9, 0.8], [0.8, 0.9]])
    return C


def _cases():
    rng = np.random.default_rng(20261123)
    out = []
    for i in range(16):
        D = int(rng.integers(8, 15))
        k = int(rng.integers(2, min(D, 8)))
        out.append((f"{FAMILIES[i % 4]}-{i}", random_psd(rng, D, FAMILIES[i % 4]), k))
    for i in range(4):
        out.append((f"trap-{i}", _greedy_trap(rng, int(rng.integers(8, 15))), 2))
    return out


@pytest.mark.parametrize("nonneg", [False, True])
@pytest.mark.parametrize(("name", "C", "k"), _cases(), ids=lambda x: x if isinstance(x, str) else "")
def test_exact_equals_brute_force(name, C, k, nonneg):
    opt, _ = brute_force(C, k, nonneg)
    r = exact(Problem.from_covariance(C), k, nonneg)
    assert r.proven
    assert r.upper_bound >= opt
    assert abs(r.value - opt) <= 1e-9 * max(1.0, abs(opt)), (r.value, opt)
    assert r.upper_bound - r.value <= 1e-8 * max(1.0, abs(opt))
    assert np.count_nonzero(r.weights) <= k
    assert abs(float(r.weights @ C @ r.weights) - r.value) <= 1e-12 * max(1.0, abs(opt))
    if nonneg:
        assert np.all(r.weights >= 0)


def test_greedy_trap_is_a_trap():
    """The trap above defeats greedy forward selection (so the search must find {1, 2} itself)."""
    C = _greedy_trap(np.random.default_rng(0), 10)
    first = int(np.argmax(np.diag(C)))
    greedy = max(np.linalg.eigvalsh(C[np.ix_([first, j], [first, j])])[-1] for j in range(10) if j != first)
    opt, w = brute_force(C, 2)
    assert first == 0 and greedy < opt - 0.5
    assert set(np.flatnonzero(w)) == {1, 2}


@pytest.mark.parametrize("nonneg", [False, True])
def test_stopped_search_keeps_a_valid_bound(nonneg):
    """Stopped before its first node, the search is unproven and its bound still ≥ the brute-force OPT."""
    rng = np.random.default_rng(3)
    for fam in FAMILIES:
        C = random_psd(rng, 14, fam)
        opt, _ = brute_force(C, 6, nonneg)
        for limits in ({"time_limit": 0.0}, {"node_limit": 1}):
            r = exact(Problem.from_covariance(C), 6, nonneg, **limits)
            assert not r.proven, (fam, limits)
            assert r.upper_bound >= opt
            assert r.value <= opt * (1 + 1e-12)


def _node_opt(C, I, R, t, nonneg):
    """Brute force over the node (I, R): max of wᵀCw, w unit on I ∪ J (J ⊆ R, |J| ≤ t), w ≥ 0 if nonneg."""
    best = -np.inf
    for size in range(t + 1):
        for J in combinations(R, size):
            S = list(I) + list(J)
            if not S:
                continue
            sub = C[np.ix_(S, S)]
            best = max(best, brute_force(sub, len(S), True)[0] if nonneg else np.linalg.eigvalsh(sub)[-1])
    return best


@pytest.mark.parametrize("nonneg", [False, True])
def test_node_bounds_never_below_the_node_optimum(nonneg):
    """The rank-2 bound with I kept is ≥ the node's optimum, and the Schur test never prunes above it."""
    rng = np.random.default_rng(11 if nonneg else 12)
    checked = 0
    for i in range(60):
        D = int(rng.integers(6, 10))
        C = random_psd(rng, D, FAMILIES[i % 4])
        perm = rng.permutation(D)
        m = int(rng.integers(1, D - 2))
        t = int(rng.integers(1, D - m + 1))
        A = C[np.ix_(perm, perm)]
        I, R = list(range(m)), list(range(m, D))
        opt = _node_opt(A, I, R, t, nonneg)
        assert rank2_node_bound(A, m, m + t, nonneg, -np.inf, top_eigs(A)) >= opt
        for level in (opt * (1 - 1e-9), opt * (1 - 1e-3), opt * (1 + 1e-3)):
            if schur_prunes(A, m, t, level, nonneg):
                assert level >= opt, (i, m, t, level, opt)
                checked += 1
    assert checked > 0
