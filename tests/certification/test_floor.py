"""Floors (BoundSpec.floor): a value a bound cannot go below, so a certificate may skip it where the floor is at
least its best bound so far.  A floor above its bound would skip a bound that could win: the sweep below checks
every floor against its bound and against the relaxation's own optimum, on the brute-force instances."""

import dataclasses

import numpy as np
import pytest

from certpca.certification import certify_vector, dnn_dual_bound, dnn_sdp_bound
from certpca.certification.duals import dnn_floor
from certpca.certification.registry import REGISTRY
from certpca.problem import Problem
from tests.brute import brute_force, random_psd

FAMILIES = ["wishart", "spiked", "lowrank", "posfactor", "tied", "negative"]


def _problems(n: int, seed: int):
    rng = np.random.default_rng(seed)
    for i in range(n):
        D = int(rng.integers(5, 12))
        C = random_psd(rng, D, FAMILIES[i % len(FAMILIES)])
        k = int(rng.integers(1, D))
        if i % 3 == 0:  # some held as a factor, as wide data are
            X = rng.standard_normal((max(2, D // 2), D)) @ np.linalg.cholesky(C + 1e-9 * np.eye(D)).T
            yield Problem.from_data(X), k
        else:
            yield Problem.from_covariance(C), k


@pytest.mark.parametrize("seed", range(3))
def test_the_dnn_floor_is_below_the_dnn_dual_and_the_relaxations_optimum(seed):
    """floor ≤ the DNN relaxation's value ≤ every point of its dual: the cheap dual (dnn) and the SDP's
    repaired dual (dnn_sdp, near the relaxation's optimum, so the tighter check)."""
    for P, k in _problems(30, seed):
        floor = dnn_floor(P, k)
        assert floor <= dnn_dual_bound(P, k, True).value
        assert floor <= dnn_sdp_bound(P, k, True).value


def test_the_dnn_floor_reaches_the_nonnegative_optimum_on_a_planted_block():
    """A planted nonnegative block of k features: the feasible point the floor finds is at least that block's
    value, which is the optimum over w ≥ 0 (brute force)."""
    rng = np.random.default_rng(7)
    D, k = 10, 4
    u = np.zeros(D)
    u[[1, 3, 6, 8]] = 1.0
    C = 5 * np.outer(u, u) / k + np.diag(rng.uniform(0.1, 0.3, D))
    opt, _ = brute_force(C, k, True)
    assert dnn_floor(Problem.from_covariance(C), k) >= opt * (1 - 1e-9)


@pytest.mark.parametrize("seed", range(2))
def test_skipping_a_bound_below_its_floor_never_changes_a_certificate(seed, monkeypatch):
    """The same upper bound with the floor as without it (the DNN dual is computed then), and the skip says
    why; on these instances the floor skips the DNN dual in some certificates and not in others."""
    reasons = []
    for P, k in _problems(24, 100 + seed):
        w = np.maximum(np.linalg.eigh(P.dense())[1][:, -1] * np.sign(np.linalg.eigh(P.dense())[1][:, -1].sum()), 0)
        w[np.argsort(-w)[k:]] = 0
        if not w.any():
            continue
        with_floor = certify_vector(P, w, k, True, bounds="trace,lambda1,threshold,dnn")
        reasons.append(with_floor.skipped.get("dnn", ""))
        monkeypatch.setitem(REGISTRY, "dnn", dataclasses.replace(REGISTRY["dnn"], floor=None))
        without = certify_vector(P, w, k, True, bounds="trace,lambda1,threshold,dnn")
        monkeypatch.undo()
        assert with_floor.upper_bound == without.upper_bound
    assert any(r.startswith("cannot improve on") for r in reasons) and any(r == "" for r in reasons)
