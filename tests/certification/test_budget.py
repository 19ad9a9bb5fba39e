"""Budgets (issue 29): a bound cut short by its time limit is still a valid upper bound, and a
certificate returns within its budget (the one timing assertion, with a generous constant)."""

import dataclasses
import time

import numpy as np
import pytest

import certpca
from certpca import clock
from certpca.certification import (
    NotApplicable,
    certify_vector,
    dabe_bound,
    dabe_sdp_bound,
    dnn_dual_bound,
    dnn_sdp_bound,
    dspca_dual_bound,
    dspca_sdp_bound,
    evaluate_bound,
    gershgorin_bound,
    pattern_bound,
    spannogram_bound,
    threshold_bound,
)
from certpca.certification.components import share_of
from certpca.certification.exact import exact_bound
from certpca.certification.registry import REGISTRY
from certpca.certification.screening import screening_bound
from certpca.clock import NET_FACTOR, NET_SLACK, Deadline, Work
from certpca.problem import Problem
from tests.brute import brute_force, random_psd, small_problems

INTERRUPTIBLE = [
    threshold_bound,
    dnn_dual_bound,
    dspca_dual_bound,
    dabe_bound,
    pattern_bound,
    spannogram_bound,
    screening_bound,
    gershgorin_bound,
    dabe_sdp_bound,
    exact_bound,
]


class CountDown(Deadline):
    """A deadline that passes at its ``n``-th query: every cut point of a search in turn, with no clock."""

    def __init__(self, n: int):
        super().__init__(None)
        self.n = n

    def left(self) -> float:
        self.n -= 1
        return 1.0 if self.n > 0 else 0.0


PROBLEMS = [(P, k, nonneg, opt) for P, k, nonneg, opt, _ in small_problems(24, 29)]


@pytest.mark.parametrize("cut", [0, 1, 2, 5, 20])
def test_a_bound_cut_short_at_any_point_is_still_above_the_brute_force_optimum(cut):
    """Tolerance 0, as tests/certification/test_validity.py: the margins are inside the bound."""
    violations, cut_short = [], 0
    for P, k, nonneg, opt in PROBLEMS:
        for f in INTERRUPTIBLE:
            clock = CountDown(cut)
            try:
                b = f(P, k, nonneg, time_limit=clock)
            except NotApplicable:
                continue
            cut_short += clock.n <= 0
            if not b.value >= opt:
                violations.append((b.name, cut, P.dim, k, nonneg, opt, b.value))
    assert not violations, violations[:5]
    assert cut_short > 0  # the limits were reached: the cut-short paths ran


def test_the_threshold_bound_abandons_a_rank2_sweep_and_stays_valid():
    """The rank-2 spannogram inside the threshold family is checked per interval of its sweep (the
    leukemia --log2 20 overrun): a sweep stopped half-way adds nothing, the rest stays valid."""
    rng = np.random.default_rng(5)
    seen = []
    for _ in range(6):
        C = random_psd(rng, 11, "spiked")
        opt = brute_force(C, 4, False)[0]
        P = Problem.from_covariance(C)
        for cut in (0, 3, 10, 30, 100, 300, 1000, 3000, 10000):
            b = threshold_bound(P, 4, False, time_limit=CountDown(cut))
            assert b.value >= opt
            seen.append(b.params["time_limit_reached"])
    assert any(seen) and not all(seen)


@pytest.mark.parametrize("f", [dnn_sdp_bound, dspca_sdp_bound])
def test_an_sdp_stopped_by_its_solver_limit_gives_a_valid_repaired_dual(f):
    for P, k, nonneg, opt in PROBLEMS[:6]:
        if f is dnn_sdp_bound and not nonneg:
            continue
        try:
            b = f(P, k, nonneg, time_limit=1e-3)
        except NotApplicable:
            continue
        assert b.value >= opt, (b.name, P.dim, k, opt, b.value, b.params)


def test_a_certificate_states_the_budget_it_used():
    P, k, nonneg, opt = PROBLEMS[0]
    w = np.zeros(P.dim)
    w[:k] = 1.0
    c = certify_vector(P, w, k, nonneg, budget=5.0)
    assert c.budget == 5.0 and 0 <= c.budget_used
    assert f"used {c.budget_used:.3g} of 5 s of estimated work" in str(c)
    assert c.to_dict()["budget"] == 5.0


def test_components_share_one_budget():
    clock = Work(12.0)
    first = share_of(clock, 3)
    assert first.seconds == 4.0
    first.charge(1.0)  # what the first leaves unused goes to the later ones, and its charges count in the whole
    assert clock.used() == 1.0 and share_of(clock, 2).seconds == 5.5 and share_of(clock, 1).seconds == 11.0
    assert share_of(Work(None), 3) is None


@pytest.mark.parametrize("seed", range(4))
def test_dabe_charges_its_evaluations_once_and_a_cut_search_stays_above_the_optimum(seed):
    """dabe charges each λmax evaluation after its first at its size (duals.shrunk_gram_seconds: on pbmc's
    fifth deflated component the search cost 8 × the first component's, against one whole-run estimate):
    a memoised evaluation is not charged again, and a search cut by a small allotment is still a bound."""
    rng = np.random.default_rng(seed)
    F = rng.standard_normal((12, 14)) * rng.uniform(0.2, 2.0, 14)
    opt = brute_force(F.T @ F, 4, False)[0]
    whole = Work(None)
    P = Problem(factor=F)
    dabe_bound(P, 4, time_limit=whole)
    assert whole.used() > 0
    dabe_bound(P, 4, time_limit=(again := Work(None)))  # every ρ memoised on P: nothing to charge
    assert again.used() == 0
    cut = Work(whole.used() / 10)
    b = dabe_bound(Problem(factor=F), 4, time_limit=cut)
    assert cut.used() < whole.used() and b.value >= opt


def _run_steps(monkeypatch, seconds: float, cpu_per_work: float, step: float = 0.05) -> tuple[Work, float]:
    """Charge ``step`` of work per step until the budget is spent, on a simulated process clock that advances
    ``cpu_per_work`` CPU seconds per second charged (a machine that slow against the estimates); (the
    allotment, the CPU seconds it took)."""
    cpu = [100.0]
    monkeypatch.setattr(clock, "now", lambda: cpu[0])
    work = Work(seconds, net=NET_FACTOR)
    start = cpu[0]
    while work.left() > 0:
        work.charge(step)
        cpu[0] += cpu_per_work * step
    return work, cpu[0] - start


@pytest.mark.parametrize("cpu_per_work", [0.5, 1.0, 1.5])
def test_where_the_estimates_hold_the_net_decides_nothing(monkeypatch, cpu_per_work):
    work, _ = _run_steps(monkeypatch, 10.0, cpu_per_work)
    assert not work.net_fired() and work.used() == pytest.approx(10.0)


@pytest.mark.parametrize("cpu_per_work", [1.8, 3.0, 20.0])
def test_on_a_machine_slower_than_the_estimates_a_budget_still_ends_within_its_promise(monkeypatch, cpu_per_work):
    """The net is graded (clock.Work.left): what is left is the smaller of the work left and the CPU time left
    over NET_FACTOR, so a machine n × slower than the estimates ends within NET_FACTOR × the budget + NET_SLACK
    (+ one step) and the allotment says that the net shortened it; before, the net was 2 × and fired all at once.
    The promise of the net is 1.5 × the budget (+ NET_SLACK); the estimates keep calls nearer 1.2 ×."""
    work, cpu = _run_steps(monkeypatch, 10.0, cpu_per_work)
    assert work.net_fired() and work.used() < 10.0
    assert cpu <= 1.5 * 10.0 + NET_SLACK + cpu_per_work * 0.05 + 1e-9, cpu


def test_shares_of_a_budget_shrink_with_the_cpu_time_left_on_a_slow_machine(monkeypatch):
    """Each component's share is of what is left, the CPU time over NET_FACTOR included: on a machine 2 × slower
    than the estimates the later components still get shares (not nothing once the first ones ran over)."""
    cpu = [0.0]
    monkeypatch.setattr(clock, "now", lambda: cpu[0])
    whole = Work(12.0, net=NET_FACTOR)
    shares = []
    for remaining in (3, 2, 1):
        share = share_of(whole, remaining)
        shares.append(share.seconds)
        while share.left() > 0:
            share.charge(0.1)
            cpu[0] += 0.2
    assert all(s > 0 for s in shares) and shares[0] > shares[1] > shares[2]
    assert whole.net_fired() and cpu[0] <= NET_FACTOR * 12.0 + NET_SLACK + 0.2 + 1e-9


def test_certify_vector_returns_within_its_budget_where_the_default_certificate_runs_minutes(monkeypatch):
    """alon, log2, w >= 0, k = 10: dnn alone ran 190 s (issue 29).  The estimates are set to zero, so
    every bound that checks its limit starts, and one that charges no steps is stopped only by the budget's
    CPU safety net (a single LAPACK call, as the Perron bound's D × D eigenproblem, cannot be: its own
    estimate keeps it out); the one timing assertion of the suite (CPU seconds with a generous constant)."""
    for spec in list(REGISTRY.values()):
        if spec.estimate is not None and spec.func in INTERRUPTIBLE:
            monkeypatch.setitem(REGISTRY, spec.name, dataclasses.replace(spec, estimate=lambda p, k: 0.0))
    ds = certpca.load("alon", log2=20)
    fit = certpca.fit(ds, 10, nonneg=True)
    budget = 4.0
    cpu, wall = time.process_time(), time.perf_counter()
    cert = certpca.certify(fit, budget=budget)
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    assert cert.upper_bound >= cert.value
    assert cpu <= budget + 8.0, cpu
    assert wall <= 4 * budget + 2 + 20.0, wall
    assert cert.budget is not None and 0 < cert.budget <= budget  # one component: the whole budget


def test_no_component_overruns_its_share_so_the_last_gets_at_least_an_equal_one():
    """certpca.certify(fit, budget=10) on pbmc's 5 components left the fifth 1.31 s of its 2 s (issue 29): the
    first four each overran their share, by the sample-space SDP's first steps taken with less left than they
    cost and by the Gershgorin bound's whole-run estimate of 0.8 s for 0.02 CPU s.  Budgets are estimated
    work, so this is the same on any machine."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((120, 400)) * rng.uniform(0.5, 2, 400)
    X[:, :20] += rng.standard_normal((120, 1)) * 2
    X -= X.mean(axis=0)
    fit = certpca.fit(X, 10, n_components=4)
    budget = 0.3
    certpca.certify(fit, budget=budget)
    used = [c.budget_used for c in fit.certificates]
    # a bound stops at most one of its steps over (certpca/clock.py): here within 1% (before: 10-55% over)
    assert all(c.budget_used <= 1.01 * c.budget for c in fit.certificates), used
    assert min(c.budget for c in fit.certificates) >= 0.99 * budget / 4  # before: the last got 0.6 of it
    assert sum(used) <= budget


def test_the_sample_space_sdp_does_not_start_a_search_it_cannot_take_a_step_of():
    """A search cut after its first step bounds nothing useful, and its first steps cost more than a nearly
    spent allotment: it is skipped, nothing charged, and a certificate says why."""
    from certpca.certification.sdp_sample import FIRST_STEPS, step_seconds

    rng = np.random.default_rng(3)
    X = rng.standard_normal((40, 120))
    X -= X.mean(axis=0)
    P = Problem.from_data(X)
    first = FIRST_STEPS * step_seconds(40, 120, 120)  # every feature active: at least the first ρ's cost
    work = Work(first / 100)
    with pytest.raises(NotApplicable, match="first Frank–Wolfe step"):
        evaluate_bound(P, "dabe_sdp", 5, time_limit=work)
    assert work.used() == 0.0
    assert evaluate_bound(P, "dabe_sdp", 5, time_limit=Work(10 * first)).params["iterations"] > 0


def test_leukemia_log2_second_disjoint_component_is_certified_within_the_budget():
    """The overrun of issue 29: `certpca fit leukemia --k 50 --nonneg --components 2 --deflation disjoint
    --log2 20` ran over 7 minutes in the threshold family's rank-2 spannogram on component 2; now both
    components share the budget and the sweep stops at its share."""
    fit = certpca.fit("leukemia", 50, nonneg=True, n_components=2, deflation="disjoint", log2=20)
    budget = 6.0
    cpu = time.process_time()
    certpca.certify(fit, budget=budget)
    cpu = time.process_time() - cpu
    assert cpu <= budget + 8.0, cpu
    assert all(c is not None and c.upper_bound >= c.value for c in fit.certificates)
    first, second = fit.certificates
    assert first.budget <= budget / 2 + 1e-9 and second.budget <= budget - first.budget_used + 1e-9  # shared


def test_leukemia_log2_k50_nonneg_threshold_share_reaches_its_rank2_finalists():
    """Issue 28's expression row leukemia --log2 20 k = 50 w ≥ 0: the threshold bound needs about 7.4 s of its
    work for the rank-2 bounds of its finalists; with half of what is left of the default 15 s (about 7 s) it
    stopped at its plain best, 90.97% certified, with 60% (``BoundSpec.factor_share``) 93.39% (the issue's goal:
    93%).  Budgets are estimated work (certpca/clock.py), so the fraction does not depend on the load."""
    cert = certpca.certify(certpca.fit("leukemia", 50, nonneg=True, log2=20))
    assert not cert.net_fired
    threshold = next(b for b in cert.bounds if b.name == "threshold")
    assert cert.winner == "threshold" and threshold.params["evaluations"] > 1  # its rank-2 finalists were bounded
    assert cert.certified_fraction >= 0.93, cert.certified_fraction


def test_a_fit_says_when_the_cpu_safety_net_shortened_its_certificates(monkeypatch):
    """On a simulated machine far slower than the estimates (the process clock jumps 1 s a reading) the
    certificates still come back, each bound valid, and the fit's summary says that the net decided (so the
    result may depend on the machine); a normal run says only the work used."""
    X = np.random.default_rng(0).standard_normal((20, 30))
    fit = certpca.fit(X, 4, n_components=2)
    certpca.certify(fit, budget=2.0)
    assert "s of estimated work used" in str(fit.summary()) and "safety net" not in str(fit.summary())
    ticks = [0.0]

    def slow() -> float:
        ticks[0] += 1.0
        return ticks[0]

    monkeypatch.setattr(clock, "now", slow)
    certpca.certify(fit, budget=2.0)
    assert all(c.net_fired and c.upper_bound >= c.value for c in fit.certificates)
    assert "CPU safety net" in str(fit.summary())
