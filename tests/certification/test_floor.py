"""Floors (BoundSpec.floor): a value a bound cannot go below, so a certificate may skip it where the floor is at
least its best bound so far.  A floor above its bound would skip a bound that could win: the sweep below checks
every floor against its bound and against the relaxation's own optimum, on the brute-force instances."""

import dataclasses

import numpy as np
import pytest

from certpca.certification import certify_vector, dnn_dual_bound, dnn_sdp_bound, dspca_dual_bound, dspca_sdp_bound
from certpca.certification.duals import l1_sphere_floor
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
def test_each_floor_is_below_its_dual_and_the_relaxations_optimum(seed):
    """floor ≤ the relaxation's value ≤ every point of its dual: the cheap duals (dspca, dnn) and the SDPs'
    repaired duals (dspca_sdp, dnn_sdp, near the relaxations' optima, so the tighter checks)."""
    for P, k in _problems(30, seed):
        signed, nonneg = l1_sphere_floor(P, k, False), l1_sphere_floor(P, k, True)
        assert signed <= dspca_dual_bound(P, k).value and signed <= dspca_sdp_bound(P, k).value
        assert nonneg <= dnn_dual_bound(P, k, True).value and nonneg <= dnn_sdp_bound(P, k, True).value


@pytest.mark.parametrize("signs", [(1, 1, 1, 1), (1, -1, 1, -1)])
def test_a_floor_reaches_the_optimum_on_a_planted_block(signs):
    """A planted block of k features: the feasible point a floor finds is at least that block's value, the
    optimum (brute force; over w ≥ 0 for a block of one sign)."""
    rng = np.random.default_rng(7)
    D, k = 10, 4
    u = np.zeros(D)
    u[[1, 3, 6, 8]] = signs
    C = 5 * np.outer(u, u) / k + np.diag(rng.uniform(0.1, 0.3, D))
    P = Problem.from_covariance(C)
    assert l1_sphere_floor(P, k, False) >= brute_force(C, k, False)[0] * (1 - 1e-9)
    if min(signs) > 0:
        assert l1_sphere_floor(P, k, True) >= brute_force(C, k, True)[0] * (1 - 1e-9)


@pytest.mark.parametrize("nonneg, name", [(True, "dnn"), (False, "dspca")])
def test_skipping_a_bound_below_its_floor_never_changes_a_certificate(nonneg, name, monkeypatch):
    """The same upper bound with the floor as without it (the dual is computed then), and the skip says why;
    on these instances the floor skips the dual in some certificates and not in others."""
    bounds = f"trace,lambda1,threshold,{name}"
    reasons = []
    for P, k in _problems(36, 100):
        v = np.linalg.eigh(P.dense())[1][:, -1]
        w = np.maximum(v * np.sign(v.sum()), 0) if nonneg else v.copy()
        w[np.argsort(-np.abs(w))[k:]] = 0
        if not w.any():
            continue
        with_floor = certify_vector(P, w, k, nonneg, bounds=bounds)
        reasons.append(with_floor.skipped.get(name, ""))
        monkeypatch.setitem(REGISTRY, name, dataclasses.replace(REGISTRY[name], floor=None))
        without = certify_vector(P, w, k, nonneg, bounds=bounds)
        monkeypatch.undo()
        assert with_floor.upper_bound == without.upper_bound
    assert any(r.startswith("cannot improve on") for r in reasons) and any(r == "" for r in reasons)
