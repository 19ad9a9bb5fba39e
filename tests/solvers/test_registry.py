"""Every registered solver through the one driver, against the brute-force optimum."""

import warnings

import numpy as np
import pytest

from certpca.components import fit_components
from certpca.errors import InputError
from certpca.problem import Problem
from certpca.solvers import REGISTRY, solve
from tests.brute import brute_force, random_psd

FAMILIES = ["wishart", "spiked", "lowrank", "posfactor"]
CASES = [
    (name, nonneg)
    for name, s in REGISTRY.items()
    if s.sparse
    for nonneg in (False, True)
    if (s.nonneg if nonneg else s.signed)
]


def _problems(n=24, seed=99):
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        D = int(rng.integers(5, 11))
        out.append((random_psd(rng, D, FAMILIES[i % 4]), int(rng.integers(2, D))))
    return out


PROBLEMS = _problems()


@pytest.mark.parametrize("method, nonneg", CASES, ids=[f"{m}-{'nn' if n else 'sparse'}" for m, n in CASES])
def test_solver_feasible_and_near_brute_force(method, nonneg):
    ratios = []
    for i, (C, k) in enumerate(PROBLEMS):
        opt, _ = brute_force(C, k, nonneg)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            comp = solve(
                Problem.from_covariance(C), k, method=method, nonneg=nonneg, rng=np.random.default_rng(i), restarts=3
            )
        w = comp.weights
        assert np.count_nonzero(w) <= k and np.isclose(np.linalg.norm(w), 1.0)
        if nonneg:
            assert np.all(w >= 0)
        assert comp.variance <= opt * (1 + 1e-9)
        ratios.append(comp.variance / opt)
    print(
        f"\n{method:<11} {'nonneg' if nonneg else 'sparse'}: value / brute-force OPT mean "
        f"{np.mean(ratios):.4f}, min {np.min(ratios):.4f} ({len(ratios)} problems)"
    )
    assert np.mean(ratios) >= 0.9


def test_disjoint_components_are_orthogonal_for_every_nonnegative_solver():
    X = np.abs(np.random.default_rng(3).standard_normal((25, 40)))
    P = Problem.from_data(X - X.mean(0))
    for name, s in REGISTRY.items():
        if not (s.sparse and s.nonneg):
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fit = fit_components(P, 5, n_components=3, method=name, nonneg=True, deflation="disjoint", restarts=2)
        W = fit.rotation.to_numpy()
        np.testing.assert_allclose(W.T @ W, np.eye(W.shape[1]), atol=1e-12, err_msg=name)


def test_quasi_orthogonal_components_honour_the_angle():
    X = np.abs(np.random.default_rng(4).standard_normal((30, 14))) @ np.diag(np.linspace(1, 2, 14))
    P = Problem.from_data(X - X.mean(0))
    fit = fit_components(P, 6, n_components=3, nonneg=True, deflation="quasi", min_angle=80, restarts=2)
    W = fit.rotation.to_numpy()
    assert np.all(W >= 0) and all(c.cardinality <= 6 for c in fit.components)
    cos = np.clip(W.T @ W, -1, 1)
    angles = np.degrees(np.arccos(cos[np.triu_indices(3, 1)]))
    assert np.all(angles >= 80 - 1e-6), angles


def test_joint_block_components_per_component_cardinality():
    rng = np.random.default_rng(5)
    X = rng.standard_normal((40, 30))
    P = Problem.from_data(X - X.mean(0))
    fit = fit_components(P, 4, n_components=3, method="gpower-l0", deflation="joint")
    assert [c.cardinality for c in fit.components] == [4, 4, 4]
    variances = [c.variance for c in fit.components]
    assert variances == sorted(variances, reverse=True)
    with pytest.raises(InputError, match="one component at a time"):
        fit_components(P, 4, n_components=2, method="em", deflation="joint")


def test_signed_only_and_nonneg_only_methods_say_so():
    P = Problem.from_covariance(np.eye(4) + 0.1)
    with pytest.raises(InputError, match="nonnegative components only"):
        solve(P, 2, method="nspca")
