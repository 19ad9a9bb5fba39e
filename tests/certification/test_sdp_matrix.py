"""The dABE bound with a matrix multiplier (certification/sdp_matrix.py) against brute force, zero tolerance:
signed and nonnegative, dense and factor problems, tied optima and strongly negative correlations."""

import dataclasses

import numpy as np
import pytest

from certpca.certification import (
    REGISTRY,
    certify_vector,
    dabe_sdp_bound,
    default_bounds,
    matrix_dabe_bound,
    sdp_sample,
)
from certpca.certification.duals import factor_with_error
from certpca.certification.numerics import NotApplicable
from certpca.certification.schedule import computing_order
from certpca.certification.sdp_matrix import GROW, GROW_CAP, _next_step, _primal, _sqrt_psd, certified_value
from certpca.certification.sdp_sample import _Iterate, _Sample, dual_value
from certpca.clock import Stall, Work
from certpca.problem import Problem
from tests.brute import brute_force, random_psd

FAMILIES = ["wishart", "spiked", "lowrank", "posfactor", "tied", "negative"]


def _problems(n, seed):
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        fam = FAMILIES[i % len(FAMILIES)]
        nonneg = bool((i // len(FAMILIES)) % 2)
        D = int(rng.integers(6, 12))
        k = int(rng.integers(2, D - 1))
        C = random_psd(rng, D, fam)
        if i % 3 == 0:  # a factor problem (N < D), as for wide data
            X = rng.standard_normal((max(3, D // 2), D)) @ np.linalg.cholesky(C + 1e-9 * np.eye(D)).T
            P = Problem.from_data(X)
            C = P.dense()
        else:
            P = Problem.from_covariance(C)
        out.append((fam, nonneg, k, P, C))
    return out


@pytest.mark.parametrize("chunk", range(2))
def test_never_below_the_brute_force_optimum(chunk):
    gains = []
    for fam, nonneg, k, P, C in _problems(36, 90 + chunk):
        opt, _ = brute_force(C, k, nonneg)
        b = matrix_dabe_bound(P, k, nonneg, time_limit=Work(5.0), outer=4, steps=30)
        assert b.value >= opt, (fam, nonneg, k, P.uses_factor, opt, b.value, b.params)
        assert b.value <= b.params["dabe_sdp"]  # the minimum with dABE's own bound
        gains.append(b.params["dabe_sdp"] / b.value)
    assert max(gains) > 1.001  # a matrix Z went below ρI somewhere (the strengthening does something)


def test_scalar_z_certifies_what_dabe_certifies():
    """Z = ρI through R = √ρ·I: the transformed certificate equals dual_value's at ρ (same dual point)."""
    rng = np.random.default_rng(5)
    P = Problem.from_data(rng.standard_normal((8, 30)) * rng.uniform(0.3, 2.0, 30))
    F, ferr = factor_with_error(P)
    asq = np.einsum("ij,ij->j", F, F)
    rho = float(np.quantile(asq, 0.5))
    r, k = F.shape[0], 4
    S = _Sample(F, asq, rho)
    _, y = S.primal(_Iterate.start(r))
    scalar = dual_value(F, asq, rho, k, S.act, y, ferr)
    Y = np.zeros_like(F)
    Y[:, S.act] = y
    matrix = certified_value(F, ferr, np.sqrt(rho) * np.eye(r), Y, k)
    assert matrix == pytest.approx(scalar, rel=1e-9)


def test_primal_with_scalar_z_is_dabes_primal():
    """With Z = ρI the secular roots are dABE's h_i: k⟨Z, X⟩ + Σh_i = kρ + ψ(X) on a random spectraplex point."""
    rng = np.random.default_rng(6)
    F = rng.standard_normal((6, 25))
    asq = np.einsum("ij,ij->j", F, F)
    rho = float(np.quantile(asq, 0.3))
    u = rng.standard_normal(6)
    X = _Iterate.start(6)
    B, ub = X.extend(u / np.linalg.norm(u))
    X = X.toward(B, ub, 0.4)
    dense = X.alpha * np.eye(6) + X.B @ X.K @ X.B.T
    psi, _ = _Sample(F, asq, rho).primal(X)
    value, p, _ = _primal(F, dense, rho * np.eye(6), 3)
    assert value == pytest.approx(3 * rho + psi, rel=1e-9)
    assert np.all(np.linalg.eigvalsh(_sqrt_psd(dense)) >= 0)


def test_charges_its_work_and_stops():
    """Each Frank–Wolfe step is charged to the Work it is given: a small allotment ends the Z steps early, a
    larger one allows more, and the bound stays valid either way."""
    rng = np.random.default_rng(8)
    P = Problem.from_data(rng.standard_normal((20, 12)) * rng.uniform(0.3, 2.0, 12))
    opt, _ = brute_force(P.dense(), 5, False)
    small, large = Work(0.01), Work(5.0)
    b_small = matrix_dabe_bound(P, 5, time_limit=small, steps=20)
    b_large = matrix_dabe_bound(P, 5, time_limit=large, steps=20)
    assert small.passed() and b_small.params["time_limit_reached"]
    assert b_small.params["z_steps"] < b_large.params["z_steps"]
    assert min(b_small.value, b_large.value) >= opt


def test_z_steps_are_charged_without_frank_wolfe_steps():
    """A Z step's own work (its certified value, first primal point and direction) is charged even when it makes
    no Frank–Wolfe step: with none per Z, a small allotment still ends the Z steps before ``outer`` (uncharged,
    CBCL k = 30 ran all 400 on a 60 s budget), and the bound stays valid."""
    rng = np.random.default_rng(8)
    P = Problem.from_data(rng.standard_normal((20, 12)) * rng.uniform(0.3, 2.0, 12))
    opt, _ = brute_force(P.dense(), 5, False)
    work = Work(0.1)
    b = matrix_dabe_bound(P, 5, time_limit=work, steps=0, outer=400, patience=None)
    assert b.params["time_limit_reached"] and 0 < b.params["z_steps"] < 400
    assert b.value >= opt


def test_the_step_on_z_grows_only_after_two_z_steps_in_a_row_not_worse():
    """The step rule: halved after a worse Z step; after one not worse it stays (one better value may be the inner
    problem's noise), after the second in a row it grows by ``GROW``, never above ``GROW_CAP`` × the first step."""
    eta0 = 0.1
    eta, steady = _next_step(eta0, eta0, False, False)  # the first Z step (dABE's point) is never worse
    assert (eta, steady) == (eta0, True)
    eta, steady = _next_step(eta, eta0, False, steady)
    assert eta == pytest.approx(GROW * eta0) and steady
    eta, steady = _next_step(eta, eta0, True, steady)
    assert eta == pytest.approx(GROW * eta0 / 2) and not steady
    eta, steady = _next_step(eta, eta0, False, steady)  # one not worse after a worse one: no growth yet
    assert eta == pytest.approx(GROW * eta0 / 2) and steady
    for _ in range(20):
        eta, steady = _next_step(eta, eta0, False, steady)
    assert eta == pytest.approx(GROW_CAP * eta0)


def test_the_z_steps_end_once_they_stop_gaining():
    """With a budget far beyond what the Z steps can use, they end after ``PATIENCE`` steps in a row without a
    relative gain of ``PATIENCE_RTOL``, not at ``outer``; the steps a patient run leaves out gain no more than
    that here, and the bound stays valid."""
    from certpca.certification.sdp_matrix import PATIENCE, PATIENCE_RTOL

    rng = np.random.default_rng(8)
    P = Problem.from_data(rng.standard_normal((20, 12)) * rng.uniform(0.3, 2.0, 12))
    opt, _ = brute_force(P.dense(), 5, False)
    patient = matrix_dabe_bound(P, 5, time_limit=Work(1e6), outer=400)
    P.memo.clear()
    full = matrix_dabe_bound(P, 5, time_limit=Work(1e6), outer=400, patience=None)
    assert patient.params["stalled"] and not patient.params["time_limit_reached"]
    assert PATIENCE <= patient.params["z_steps"] < full.params["z_steps"] == 400
    assert full.value <= patient.value <= full.value * (1 + 2 * PATIENCE_RTOL)
    assert min(patient.value, full.value) >= opt


def test_warm_start_from_dabe_sdp_never_below_the_optimum():
    """Started where a dabe_sdp search left off (Problem.memo, as in a certificate): valid, at dABE's ρ, and
    at most dABE's bound, on every family, signed and nonnegative, dense and factor problems."""
    for fam, nonneg, k, P, C in _problems(24, 95):
        opt, _ = brute_force(C, k, nonneg)
        first = dabe_sdp_bound(P, k, nonneg, coarse_iters=8, fine_iters=20)
        b = matrix_dabe_bound(P, k, nonneg, time_limit=Work(2.0), outer=6)
        assert b.value >= opt, (fam, nonneg, k, P.uses_factor, opt, b.value, b.params)
        assert b.params["rho"] == first.params["rho"] and b.params["dabe_sdp"] == first.value
        assert b.value <= first.value


def test_cold_start_does_not_depend_on_the_memo():
    """With ``warm`` false (the report's band) it runs its own dabe_sdp start: the same bound, with the same
    work charged, on a fresh problem as on one whose memo holds another dabe_sdp search at that k."""
    for fam, nonneg, k, P, C in _problems(12, 96):
        dabe_sdp_bound(P, k, nonneg, coarse_iters=2, fine_iters=3)  # a different start, left in P.memo
        fresh = Problem.from_covariance(C) if not P.uses_factor else Problem(factor=P.factor())
        works = [Work(0.05), Work(0.05)]
        b = [matrix_dabe_bound(Q, k, nonneg, time_limit=w, outer=4, warm=False) for Q, w in zip((P, fresh), works)]
        assert (b[0].value, works[0].used()) == (b[1].value, works[1].used()), (fam, nonneg, k)
        assert b[0].value >= brute_force(C, k, nonneg)[0]


def test_skipped_when_another_bound_leads():
    """The scheduling rule: with a target (a certificate's best bound so far) below dabe_sdp's bound, its start,
    it does not run; at dabe_sdp's bound it does."""
    rng = np.random.default_rng(9)
    P = Problem(factor=rng.standard_normal((6, 40)))
    first = dabe_sdp_bound(P, 4, coarse_iters=8, fine_iters=20)
    with pytest.raises(NotApplicable, match="another bound leads"):
        matrix_dabe_bound(P, 4, time_limit=Work(1.0), target=0.99 * first.value)
    assert matrix_dabe_bound(P, 4, time_limit=Work(1.0), target=first.value).value <= first.value


def test_default_where_dabe_sdp_is_and_after_it():
    """In the default list wherever dabe_sdp is, on a factor problem (wide data) and on a dense one with D > 150,
    and not on a small dense one; a certificate computes it after dabe_sdp (and threshold_search) and starts it
    where dabe_sdp ended, or skips it when another bound leads."""
    rng = np.random.default_rng(10)
    wide = Problem.from_data(rng.standard_normal((8, 60)) * rng.uniform(0.2, 2.0, 60))
    dense = Problem.from_covariance(random_psd(rng, 8, "spiked"))
    large = Problem.from_covariance(random_psd(rng, 160, "spiked"))
    assert "dabe_sdp_matrix" in default_bounds(wide, False)
    assert "dabe_sdp_matrix" not in default_bounds(dense, False)
    for P in (wide, large):
        assert "dabe_sdp_matrix" in default_bounds(P, False) and "dabe_sdp" in default_bounds(P, False)
        order = computing_order(default_bounds(P, False), P)
        between = order[order.index("dabe_sdp") + 1 : order.index("dabe_sdp_matrix")]
        assert between == ["threshold_search"]  # after dabe_sdp: only the threshold bound's search in between
    ran = skipped = 0
    for seed in range(6):
        P = Problem.from_data(np.random.default_rng(seed).standard_normal((8, 60)))
        w = np.zeros(60)
        w[:5] = 1.0
        # Gershgorin as the other bound: the threshold bound's component search solves these 60 features
        cert = certify_vector(P, w, 5, bounds=["gershgorin", "dabe_sdp", "dabe_sdp_matrix"], budget=3.0)
        got = {b.name: b for b in cert.bounds}
        if "dabe_sdp_matrix" in got:
            ran += 1
            assert got["dabe_sdp_matrix"].params["rho"] == got["dabe_sdp"].params["rho"]
            assert got["dabe_sdp"].value <= got["gershgorin"].value
        else:
            skipped += 1
            assert "another bound leads" in cert.skipped["dabe_sdp_matrix"]
            assert got["gershgorin"].value < got["dabe_sdp"].value
    assert ran >= 1 and skipped >= 1  # these seeds meet both cases


def test_stall_fires_after_a_window_without_gain_and_only_below_the_target():
    """The stall rule (clock.Stall, of dabe_sdp and of the threshold bound's component search): over a window
    of work with less than rtol gain it fires, with more it does not, and above the target (another bound
    leads, so the matrix bound would not start) never."""
    work = Work(None)
    gaining = Stall(work, 2.0, target=np.inf, window=1.0, rtol=1e-3)
    flat = Stall(work, 2.0, target=np.inf, window=1.0, rtol=1e-3)
    behind = Stall(work, 2.0, target=1.0, window=1.0, rtol=1e-3)
    fired = []
    for i in range(1, 30):
        work.charge(0.125)
        fired.append((gaining.seen(2.0 * 0.99**i), flat.seen(2.0 - 1e-6 * i), behind.seen(2.0 - 1e-6 * i)))
    assert not any(g for g, _, _ in fired)
    assert [f for _, f, _ in fired].index(True) == 7  # the first time a whole window (8 × 0.125 s) has passed
    assert not any(b for _, _, b in fired)


def test_dabe_sdp_stops_when_stalled_and_stays_valid(monkeypatch):
    """With ``stall`` (a short window here), dabe_sdp ends its ρ refinement once its bound stalls: no more
    Frank–Wolfe steps than without, fewer somewhere, and never below the brute-force optimum."""
    monkeypatch.setattr(sdp_sample, "STALL_WINDOW", 0.002)
    fewer = 0
    for fam, nonneg, k, P, C in _problems(24, 97):
        opt, _ = brute_force(C, k, nonneg)
        full = dabe_sdp_bound(P, k, nonneg, time_limit=Work(5.0))
        cut = dabe_sdp_bound(P, k, nonneg, time_limit=Work(5.0), stall=True)
        assert cut.value >= opt, (fam, nonneg, k, opt, cut.value)
        assert cut.params["iterations"] <= full.params["iterations"] and not full.params["stalled"]
        fewer += cut.params["stalled"] and cut.params["iterations"] < full.params["iterations"]
    assert fewer > 0


def test_a_certificate_lets_dabe_sdp_stall_only_when_the_matrix_bound_continues_it(monkeypatch):
    """The schedule: dabe_sdp is told to stop once stalled where dabe_sdp_matrix comes after it (and continues
    from its start), and not where it is the last semidefinite bound."""
    spec = REGISTRY["dabe_sdp"]
    told = []

    def recorded(problem, k, nonneg=False, **options):
        told.append(options.get("stall", False))
        return spec.func(problem, k, nonneg, **options)

    monkeypatch.setitem(REGISTRY, "dabe_sdp", dataclasses.replace(spec, func=recorded))
    P = Problem.from_data(np.random.default_rng(11).standard_normal((8, 40)))
    w = np.zeros(40)
    w[:4] = 1.0
    certify_vector(P, w, 4, bounds=["dabe_sdp", "dabe_sdp_matrix"], budget=2.0)
    certify_vector(P, w, 4, bounds=["dabe_sdp"], budget=2.0)
    assert told == [True, False]
