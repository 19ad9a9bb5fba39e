"""Every bound ≥ the brute-force optimum; exact search equals it (tests/brute.py is the truth)."""

from collections import defaultdict

import numpy as np
import pytest

from certpca.certification import (
    NotApplicable,
    dabe_bound,
    dabe_sdp_bound,
    dnn_dual_bound,
    dnn_sdp_bound,
    dspca_dual_bound,
    dspca_sdp_bound,
    gershgorin_bound,
    lambda1_bound,
    matrix_dabe_bound,
    pattern_bound,
    perron_bound,
    spannogram_bound,
    split_bound,
    threshold_bound,
    trace_bound,
)
from certpca.certification.exact import exact
from certpca.certification.screening import screening_bound
from certpca.clock import Work
from certpca.problem import Problem
from tests.brute import brute_force, random_psd

FAMILIES = ["wishart", "spiked", "lowrank", "posfactor"]
CHEAP = [
    lambda1_bound,
    trace_bound,
    gershgorin_bound,
    perron_bound,
    dabe_bound,
    dspca_dual_bound,
    dnn_dual_bound,
    pattern_bound,
    spannogram_bound,
    split_bound,
    threshold_bound,
    lambda P, k, nonneg: threshold_bound(P, k, nonneg, search=True, time_limit=Work(2.0)),  # searched components
    screening_bound,
]


def _instances(n, seed):
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        fam = FAMILIES[i % 4]
        nonneg = bool((i // 4) % 2)
        D = int(rng.integers(5, 13))
        k = int(rng.integers(1, D))
        C = random_psd(rng, D, fam)
        # some problems held as a factor (N < D), as for wide data
        if i % 5 == 0:
            X = rng.standard_normal((max(2, D // 2), D)) @ np.linalg.cholesky(C + 1e-9 * np.eye(D)).T
            P = Problem.from_data(X)
            C = P.dense()
        else:
            P = Problem.from_covariance(C)
        opt, _ = brute_force(P.dense() if P.uses_factor else C, k, nonneg)
        out.append((fam, nonneg, D, k, P, opt))
    return out


INSTANCES = _instances(520, 20240601)


@pytest.mark.parametrize("chunk", range(4))  # four quarters, so that parallel test workers share them
def test_cheap_bounds_and_exact_on_520_problems(chunk):
    violations = []
    ratios = defaultdict(list)
    for fam, nonneg, D, k, P, opt in INSTANCES[130 * chunk : 130 * (chunk + 1)]:
        for f in CHEAP:
            try:
                b = f(P, k, nonneg)
            except NotApplicable:
                continue
            ratios[(b.name, fam, nonneg)].append(b.value / opt)
            if not b.value >= opt:  # tolerance 0: margins are inside b.value
                violations.append((b.name, fam, nonneg, D, k, opt, b.value))
        r = exact(P, k, nonneg)
        assert r.proven
        assert r.upper_bound >= opt
        assert abs(r.value - opt) <= 1e-9 * max(1.0, abs(opt)), (fam, nonneg, D, k, r.value, opt)
        ratios[("exact", fam, nonneg)].append(r.upper_bound / opt)
    assert not violations, violations[:5]
    _report(ratios)


def _report(ratios):
    names = sorted({n for n, _, _ in ratios})
    cols = [(f, nn) for nn in (False, True) for f in FAMILIES]
    print("\nmean UB/OPT   " + " ".join(f"{('NN-' if nn else 'S-') + f[:6]:>10}" for f, nn in cols))
    for n in names:
        cells = []
        for f, nn in cols:
            v = ratios.get((n, f, nn))
            cells.append(f"{np.mean(v):10.3f}" if v else f"{'–':>10}")
        print(f"{n:<13} " + " ".join(cells))


@pytest.mark.parametrize("chunk", range(2))
def test_relaxations_on_random_subset(chunk):
    rng = np.random.default_rng(7 + chunk)
    picks = rng.choice(len(INSTANCES), 20, replace=False)
    sdp_ratios, dnn_ratios = [], []
    for i in picks:
        fam, nonneg, D, k, P, opt = INSTANCES[i]
        b = dspca_sdp_bound(P, k, nonneg)
        assert b.value >= opt, (fam, nonneg, D, k, opt, b.value, b.params)
        sdp_ratios.append(b.value / opt)
        bs = dabe_sdp_bound(P, k, nonneg, coarse_iters=8, fine_iters=20)
        assert bs.value >= opt, (fam, nonneg, D, k, opt, bs.value, bs.params)
        bz = matrix_dabe_bound(P, k, nonneg, time_limit=Work(2.0), outer=3, steps=20)
        assert bz.value >= opt, (fam, nonneg, D, k, opt, bz.value, bz.params)
        if nonneg:
            bn = dnn_sdp_bound(P, k, nonneg)
            assert bn.value >= opt, (fam, D, k, opt, bn.value, bn.params)
            dnn_ratios.append(bn.value / opt)
    print(
        f"\nDSPCA SDP mean UB/OPT {np.mean(sdp_ratios):.4f} (n={len(sdp_ratios)}); "
        f"DNN SDP {np.mean(dnn_ratios) if dnn_ratios else float('nan'):.4f} (n={len(dnn_ratios)})"
    )
    assert np.mean(sdp_ratios) < 1.15
    if dnn_ratios:
        assert np.mean(dnn_ratios) < 1.10


def test_indefinite_covariance_is_handled():
    """A user 'covariance' with a negative eigenvalue: PSD-based bounds shift and stay valid."""
    rng = np.random.default_rng(3)
    for _ in range(30):
        D = 8
        C = random_psd(rng, D, "wishart") - 0.3 * np.eye(D)
        P = Problem.from_covariance(C)
        for nonneg in (False, True):
            opt, _ = brute_force(C, 3, nonneg)
            for f in CHEAP:
                try:
                    b = f(P, 3, nonneg)
                except NotApplicable:
                    continue
                assert b.value >= opt, (b.name, opt, b.value)


def test_bounds_report_validity_and_time():
    P = Problem.from_covariance(random_psd(np.random.default_rng(0), 8, "spiked"))
    for f in CHEAP:
        try:
            b = f(P, 3, True)
        except NotApplicable:
            continue
        assert b.validity and b.seconds >= 0 and isinstance(b.params, dict)
        assert isinstance(b.to_dict()["value"], float)


def test_not_applicable():
    P = Problem.from_covariance(np.eye(4))
    with pytest.raises(NotApplicable):
        perron_bound(P, 2, False)
    with pytest.raises(NotApplicable):
        dnn_dual_bound(P, 2, False)


def test_factor_gershgorin_matches_dense_without_forming_dxd():
    rng = np.random.default_rng(5)
    X = rng.standard_normal((6, 40))
    P = Problem.from_data(X)
    assert P.uses_factor
    Pd = Problem.from_covariance(P.dense())
    for nonneg in (False, True):
        a = gershgorin_bound(P, 5, nonneg, block_bytes=8 * 40 * 7).value
        b = gershgorin_bound(Pd, 5, nonneg).value
        assert abs(a - b) <= 1e-9 * b
