"""Screening inside the branch and bound's nodes (certpca/solvers/exact.py: node_screen) against brute force
(tests/brute.py), zero tolerance, signed and nonnegative, tied optima and strongly negative correlations: a
candidate it removes is in no support above the level, so it never removes a feature of an optimal support
below OPT; and the search with it returns the brute-force optimum with a valid proof."""

from itertools import combinations

import numpy as np
import pytest

from certpca.problem import Problem
from certpca.solvers.exact import exact, node_screen
from tests.brute import brute_force, random_psd, small_problems

FAMILIES = ["wishart", "spiked", "lowrank", "posfactor", "tied", "negative"]


def _best_with(C, I, j, R, k, nonneg):
    """max of wᵀCw over unit w (w ≥ 0 when nonneg) supported in I ∪ {j} ∪ J, J ⊆ R∖{j}, |J| ≤ k − |I| − 1:
    every support the node test speaks for when it removes j, by brute force."""
    rest = [r for r in R if r != j]
    best = -np.inf
    for J in combinations(rest, min(k - len(I) - 1, len(rest))):
        S = sorted((*I, j, *J))
        sub = C[np.ix_(S, S)]
        best = max(best, brute_force(sub, len(S), True)[0] if nonneg else float(np.linalg.eigvalsh(sub)[-1]))
    return best


def test_a_candidate_removed_at_a_node_is_in_no_support_of_the_node_above_the_level():
    """Random nodes (I, R) of random problems, at levels from below the best value of the supports
    through j to above OPT: a removal where some support of the node through j is above the level is a bug."""
    rng = np.random.default_rng(20261127)
    wrong, removed, tests, kept_optimal = [], 0, 0, 0
    for n in range(300):
        fam = FAMILIES[n % len(FAMILIES)]
        nonneg = bool((n // len(FAMILIES)) % 2)
        D = int(rng.integers(6, 10))
        k = int(rng.integers(3, min(6, D)))
        C = random_psd(rng, D, fam)
        opt, w_opt = brute_force(C, k, nonneg)
        S_opt = set(np.flatnonzero(w_opt).tolist())
        m = int(rng.integers(0, k - 1))
        # half the nodes fix part of the optimal support (where the test must keep the rest), half at random
        pool = sorted(S_opt) if n % 2 and len(S_opt) > m else list(range(D))
        I = sorted(rng.choice(pool, m, replace=False).tolist())
        R = [i for i in range(D) if i not in I]
        A = C[np.ix_(I + R, I + R)]
        bests = {j: _best_with(C, I, j, R, k, nonneg) for j in R}
        for level in (opt * (1 - 1e-7), opt * 0.98, opt, opt * 1.02, *(b * (1 - 1e-7) for b in bests.values())):
            keep = node_screen(A, m, k, level)
            if keep is None:
                continue
            tests += 1
            kept = {R[p] for p in keep}
            for j in R:
                if j not in kept:
                    removed += 1
                    if bests[j] > level:
                        wrong.append((fam, nonneg, D, k, I, j, level, bests[j]))
            if level < opt and set(I) <= S_opt:
                assert S_opt - set(I) <= kept, (fam, nonneg, I, S_opt, kept)
                kept_optimal += 1
    assert not wrong, wrong[:5]
    assert removed > tests and kept_optimal > 50, (removed, tests, kept_optimal)


@pytest.mark.parametrize("nonneg", [False, True])
def test_search_with_node_screening_returns_the_brute_force_optimum(nonneg):
    """The search with node screening (the default) on small problems of every family: the brute-force
    optimum, proven, with an upper bound ≥ OPT (zero tolerance); node screening removed candidates somewhere."""
    rng = np.random.default_rng(11 + nonneg)
    screened = 0
    for i in range(48):
        D = int(rng.integers(7, 12))
        k = int(rng.integers(2, D - 1))
        C = random_psd(rng, D, FAMILIES[i % len(FAMILIES)])
        opt, _ = brute_force(C, k, nonneg)
        res = exact(Problem.from_covariance(C), k, nonneg, starts=[np.eye(D)[0]])  # a poor incumbent: nodes branch
        assert res.proven and res.upper_bound >= opt
        assert res.value == pytest.approx(opt, rel=1e-9) and res.upper_bound <= opt * (1 + 1e-8)
        w = res.weights
        assert np.count_nonzero(w) <= k and (not nonneg or w.min() >= 0)
        screened += res.info["screened"]
    assert screened > 0


def test_search_with_and_without_node_screening_agree_on_the_shared_small_problems():
    """tests/brute.py's small problems: both searches reach the brute-force optimum, each bound valid."""
    for P, k, nonneg, opt, _ in small_problems(40, 3):
        for on in (True, False):
            res = exact(P, k, nonneg, screen_nodes=on)
            assert res.proven and res.upper_bound >= opt
            assert res.value == pytest.approx(opt, rel=1e-9)


def test_node_screening_charges_every_pass_it_makes(monkeypatch):
    """The work node screening charges is what it does, counted independently here: forming the Schur matrix
    (2|I| operations per entry of C_RR) and each of its passes at its size (``quick_pass_seconds``: per entry of
    the candidates' block and per candidate), which repeat while one removes a candidate (it was charged one pass
    per node before)."""
    import certpca.solvers.exact as ex
    from certpca.clock import FLOP_RATE, Work

    sizes: list[int] = []
    real = ex.quick_pass

    def counted(M, F, k, level):
        sizes.append(len(F))
        return real(M, F, k, level)

    monkeypatch.setattr(ex, "quick_pass", counted)
    rng = np.random.default_rng(5)
    repeated = 0
    for n in range(60):
        D = int(rng.integers(8, 14))
        C = random_psd(rng, D, FAMILIES[n % len(FAMILIES)])
        k, m = 4, int(rng.integers(0, 3))
        opt, _ = brute_force(C, k, False)
        sizes.clear()
        work = Work(100.0)
        keep = node_screen(C, m, k, opt * 0.99, work)
        if keep is None:
            assert work.used() == pytest.approx(2 * m * (D - m) ** 2 / FLOP_RATE, rel=1e-12)
            continue
        expected = 2 * m * (D - m) ** 2 / FLOP_RATE + sum(ex.quick_pass_seconds(s) for s in sizes)
        assert work.used() == pytest.approx(expected, rel=1e-12)
        repeated += len(sizes) > 1
    assert repeated > 0  # some nodes took more than one pass
