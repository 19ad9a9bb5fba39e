"""No answer below the obvious one: k = 1 exactly, and never below the best single feature or
the sign-appropriate thresholded first principal component, on every bundled data set."""

import numpy as np
import pytest

from certpca import datasets
from certpca.io import load
from certpca.solvers import solve

KS = (1, 2, 3, 5, 10, 50)


def _problems():
    for name in datasets.names():
        yield name, load(name).problem()


PROBLEMS = dict(_problems())


def _threshold_value(problem, k, nonneg):
    """Thresholded PC1 refitted on its support, computed here from the dense eigenvector."""
    C = problem.dense()
    v = np.linalg.eigh(C)[1][:, -1]
    best = 0.0
    for s in (v, -v) if nonneg else (v,):
        mag = np.maximum(s, 0) if nonneg else np.abs(s)
        support = np.argsort(-mag, kind="stable")[:k]
        support = support[mag[support] > 0]
        if support.size == 0:
            continue
        sub = C[np.ix_(support, support)]
        vals, vecs = np.linalg.eigh(sub)
        if not nonneg or np.all(vecs[:, -1] >= -1e-12) or np.all(vecs[:, -1] <= 1e-12):
            best = max(best, vals[-1])
        else:  # a mixed-sign eigenvector is not feasible: keep the thresholded vector
            w = np.maximum(s[support], 0)
            best = max(best, w @ sub @ w / (w @ w))
    return best


@pytest.mark.parametrize("name", sorted(PROBLEMS))
@pytest.mark.parametrize("nonneg", [False, True])
def test_floor_on_every_bundled_data_set(name, nonneg):
    problem = PROBLEMS[name]
    diag_max = float(problem.diag.max())
    for k in (k for k in KS if k <= problem.dim):
        comp = solve(problem, k, method="em", nonneg=nonneg)
        if k == 1:
            assert comp.variance == pytest.approx(diag_max, rel=1e-12), (name, k)
        assert comp.variance >= diag_max * (1 - 1e-12), (name, k)
        if problem.dim <= 3000:
            assert comp.variance >= _threshold_value(problem, k, nonneg) * (1 - 1e-9), (name, k)


def test_nonneg_refit_skipped_only_when_lambda1_of_the_support_cannot_beat():
    """renormalize(beat=b) under w ≥ 0 returns w unrefitted exactly when λ₁(C_SS) (numpy's eigvalsh)
    is ≤ b, and otherwise the same refit as without b; so solve's choice against the floor is unchanged."""
    from certpca.problem import Problem
    from certpca.solvers.renormalize import renormalize

    rng = np.random.default_rng(8)
    skipped = refitted = 0
    for _ in range(30):
        X = rng.standard_normal((12, 25)) @ rng.standard_normal((25, 25)) * 0.3
        P = Problem.from_data(X - X.mean(0))
        S = np.sort(rng.choice(25, size=int(rng.integers(3, 9)), replace=False))
        w = np.zeros(25)
        w[S] = np.abs(rng.standard_normal(S.size))
        w /= np.linalg.norm(w)
        lam = np.linalg.eigvalsh(P.submatrix(S))[-1]
        plain_w, plain = renormalize(P, w, S, True)
        assert plain <= lam * (1 + 1e-12)
        for b in (0.5 * lam, 0.999 * lam, 1.001 * lam, 2 * lam):
            got_w, got = renormalize(P, w, S, True, beat=b)
            v = np.linalg.eigh(P.submatrix(S))[1][:, -1]
            if np.all(v >= 0) or np.all(v <= 0):
                assert got == plain  # one-signed eigenvector: the refit is the eigenvector, no skip
            elif lam <= b:
                skipped += 1
                assert got == pytest.approx(P.variance(w)) and np.array_equal(got_w, w) and plain <= b
            else:
                refitted += 1
                assert got == plain and np.array_equal(got_w, plain_w)
    assert skipped and refitted


@pytest.mark.parametrize("nonneg", [False, True])
def test_floor_thresholds_as_the_threshold_solver_on_every_call(nonneg):
    """The floor's thresholded PC1 (a selection on the first call on a problem, one stable sort after)
    has the threshold solver's supports and weights at every k, with tied entries (duplicated columns)."""
    from certpca.problem import Problem
    from certpca.solvers import REGISTRY, _thresholded_pc1

    rng = np.random.default_rng(4)
    X = rng.standard_normal((8, 12))
    X = np.hstack([X, X[:, :5], -X[:, 5:9]])  # equal |PC1| entries, of either sign
    P = Problem.from_data(X - X.mean(0))
    threshold = REGISTRY["threshold"]
    for k in list(range(2, 26)) + [3, 9]:
        runs = [run for _, run, _ in _thresholded_pc1(P, k, nonneg)]
        starts = threshold.starts(P, nonneg, None, 0)
        assert len(runs) == len(starts)
        for run, start in zip(runs, starts):
            ref = threshold.run(P, k, nonneg, start)
            assert set(run.support.tolist()) == set(ref.support.tolist()), k
            assert np.array_equal(run.weights, ref.weights)
