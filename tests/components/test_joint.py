"""Joint fits through Solver.fit_joint, against planted components with disjoint supports."""

import warnings

import numpy as np
import pytest

from certpca.components import fit_components
from certpca.problem import Problem
from certpca.solvers import REGISTRY
from certpca.solvers.gpower_block import gpower_block
from certpca.status import Reach
from tests.brute import brute_force


def _planted(rng, D=24, k=4, L=3, nonneg=False):
    """C = Σ_j λ_j u_j u_jᵀ + 0.01 I with u_j on disjoint supports of size k, λ = 10, 6, 3."""
    perm = rng.permutation(D)
    U = np.zeros((D, L))
    for j in range(L):
        vals = np.abs(rng.normal(1.0, 0.1, k)) * (1 if nonneg else rng.choice([-1, 1], k))
        U[perm[j * k : (j + 1) * k], j] = vals / np.linalg.norm(vals)
    return U, U @ np.diag([10.0, 6.0, 3.0][:L]) @ U.T + 0.01 * np.eye(D)


@pytest.mark.parametrize("method, nonneg", [("gpower-l1", False), ("gpower-l0", False), ("gpower-l0", True)])
def test_block_gpower_has_k_per_column_and_finds_the_planted_leader(method, nonneg):
    U, C = _planted(np.random.default_rng(3), D=14, nonneg=nonneg)
    fit = fit_components(Problem.from_covariance(C), 4, n_components=3, method=method, nonneg=nonneg, deflation="joint")
    opt, w_opt = brute_force(C, 4, nonneg)
    lead = fit.components[0]  # largest variance first
    assert set(np.flatnonzero(lead.weights)) == set(np.flatnonzero(U[:, 0])) == set(np.flatnonzero(w_opt))
    assert lead.variance == pytest.approx(opt, rel=1e-2)  # ℓ1 soft thresholding biases the weights
    for comp in fit.components:
        assert comp.cardinality == 4 and comp.status.reach is Reach.REACHED
        assert comp.method == f"{method}-joint" and comp.variance <= opt * (1 + 1e-9)
        w = comp.weights
        assert np.all(w >= 0) if nonneg else w[np.argmax(np.abs(w))] > 0  # the one sign rule
    assert [c.variance for c in fit.components] == sorted((c.variance for c in fit.components), reverse=True)


def test_nspca_joint_shares_k_times_l_nonzeros_or_says_it_cannot():
    seen = set()
    for D in (14, 24):
        _, C = _planted(np.random.default_rng(3), D=D, nonneg=True)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            fit = fit_components(
                Problem.from_covariance(C), 4, n_components=3, method="nspca", nonneg=True, deflation="joint"
            )
        total = sum(c.cardinality for c in fit.components)  # k·L = 12 over all columns
        reach = {c.status.reach for c in fit.components}
        assert all(np.all(c.weights >= 0) for c in fit.components)
        if total == 12:
            assert reach == {Reach.REACHED} and not caught
        else:  # the β map jumped over 12: said once, in the status and a warning
            assert reach == {Reach.UNREACHABLE} and total < 12 and len(caught) == 1
            assert "jumps over 12" in fit.components[0].status.reach_reason
        seen |= reach
    assert seen == {Reach.REACHED, Reach.UNREACHABLE}  # these two cases cover both
    assert all(REGISTRY[m].joint for m in ("gpower-l1", "gpower-l0", "nspca"))


def test_joint_columns_are_what_the_block_method_returns():
    _, C = _planted(np.random.default_rng(4))
    P = Problem.from_covariance(C)
    runs = REGISTRY["gpower-l1"].fit_joint(P, 4, 3, False, np.random.default_rng(0))
    W = gpower_block(P, 4, 3, penalty="l1")
    np.testing.assert_array_equal(np.column_stack([r.weights for r in runs]), W)
