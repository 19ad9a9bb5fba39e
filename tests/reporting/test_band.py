"""The certified band along the path (certpca/reporting/band.py).

What is checked: every point of the band is an upper bound on the exact optimum at its k (brute force
over supports, tests/brute.py) for every k of a path, signed and nonnegative, with every bound family
a certificate may use, within any budget; at the headline k the band is the headline certificate (the
same number); the threshold bound's values reused across k (Problem.memo) are those of a fresh problem.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from certpca.certification import REGISTRY, evaluate_bound, threshold_bound
from certpca.data import Dataset, prepare
from certpca.problem import Problem
from certpca.reporting import ReportOptions, compute_run
from certpca.reporting.band import certified_bands, is_costly
from tests.brute import brute_force, random_psd

#: every registered bound a report can share between vectors (``pattern`` is built around one support)
SHARED = [n for n in REGISTRY if n != "pattern"]


def _problems():
    rng = np.random.default_rng(29)
    out = []
    for i, family in enumerate(["wishart", "spiked", "lowrank", "posfactor"]):
        D = 9 + i % 2
        C = random_psd(rng, D, family)
        if i % 2:  # held as a factor, as wide data are
            X = rng.standard_normal((6, D)) @ np.linalg.cholesky(C + 1e-9 * np.eye(D)).T
            out.append(Problem.from_data(X))
        else:
            out.append(Problem(covariance=C))
    return out


@pytest.mark.parametrize("count", [0, 1000])
@pytest.mark.parametrize("index", range(4))
def test_every_point_of_the_band_is_above_the_exact_optimum(index, count):
    problem = _problems()[index]
    C = problem.dense()
    ks = list(range(1, problem.dim + 1))
    opt = {(nn, k): brute_force(C, k, nonneg=nn)[0] for nn in (False, True) for k in ks}
    tops = {nn: {k: (0.9 * opt[nn, k], "brute") for k in ks} for nn in (False, True)}
    names = {nn: [n for n in SHARED if nn or not REGISTRY[n].nonneg_only] for nn in (False, True)}
    bands, _ = certified_bands(problem, tops, names, heads={}, headline_k=0, count=count)
    for nn, points in bands.items():
        assert [p.k for p in points] == ks
        for p in points:
            assert p.upper_bound >= opt[nn, p.k], (nn, p.k, p.winner, p.upper_bound, opt[nn, p.k])
    if count == 0:  # no costly bound may run without a budget
        assert not any(is_costly(p.winner) for points in bands.values() for p in points)


def test_the_threshold_bound_reused_across_k_is_the_fresh_one():
    rng = np.random.default_rng(3)
    X = rng.standard_normal((8, 40)) @ rng.standard_normal((40, 40))
    shared = Problem.from_data(X)
    for nonneg in (False, True):
        for k in (2, 7, 3, 20):  # up and down the path, on one problem
            fresh = threshold_bound(Problem.from_data(X), k, nonneg)
            assert threshold_bound(shared, k, nonneg).value == fresh.value
    assert shared.memo["threshold_pairs"]  # the pairs were kept


@pytest.fixture(scope="module")
def small_run():
    rng = np.random.default_rng(5)
    n, d = 30, 12
    X = rng.standard_normal((n, d)) @ rng.standard_normal((d, d))
    ds = prepare(Dataset("band", X, pd.Index([f"g{j}" for j in range(d)]), pd.Index([f"s{i}" for i in range(n)]), None))
    options = ReportOptions(k=4, methods="em,threshold", genes=False, stability=0, progress=False)
    return ds, compute_run(ds, options)


def test_the_band_at_the_headline_k_is_the_headline_certificate(small_run):
    _, run = small_run
    for band in run.bands:
        at_k = next(p for p in band.points if p.k == run.settings.k)
        best = max((f for f in run.fits if f.nonneg == band.nonneg), key=lambda f: f.value)
        assert at_k.upper_bound == best.certificate.upper_bound
        assert at_k.winner == best.certificate.winner
        assert at_k.best_value == best.certificate.value
        assert at_k.certified_fraction == best.certificate.certified_fraction


def test_the_reports_band_is_valid_at_every_k(small_run):
    ds, run = small_run
    C = ds.problem().dense()
    assert run.settings.path == list(range(1, 13))  # small data: every k
    for band in run.bands:
        for p in band.points:
            assert p.upper_bound >= brute_force(C, p.k, nonneg=band.nonneg)[0]
            assert p.best_value <= p.upper_bound


def test_a_sign_free_bound_is_computed_once_for_both_bands(monkeypatch):
    import certpca.reporting.band as band

    problem = _problems()[1]
    assert REGISTRY["dabe_sdp"].sign_free
    calls = []

    def counted(problem, name, k, nonneg, **options):
        calls.append((k, nonneg))
        return evaluate_bound(problem, name, k, nonneg, **options)

    monkeypatch.setattr(band, "evaluate_bound", counted)
    tops = {nn: {3: (1.0, "x"), 5: (1.0, "x")} for nn in (False, True)}
    certified_bands(problem, tops, {nn: ["dabe_sdp"] for nn in (False, True)}, {}, 0, jobs=1)
    assert sorted(calls) == [(3, False), (5, False)]


def test_the_band_does_not_depend_on_the_number_of_processes():
    rng = np.random.default_rng(11)
    problem = Problem.from_data(rng.standard_normal((10, 30)) @ rng.standard_normal((30, 30)))
    ks = [2, 4, 8, 16]
    tops = {nn: {k: (float(k), "x") for k in ks} for nn in (False, True)}
    names = {nn: ["lambda1", "dabe", "split", "threshold", "dabe_sdp"] for nn in (False, True)}
    one = certified_bands(problem, tops, names, {}, 0, count=7, jobs=1)
    two = certified_bands(problem, tops, names, {}, 0, count=7, jobs=2)
    assert one == two
    assert {p.winner for points in one[0].values() for p in points} & {"threshold", "dabe_sdp"}
