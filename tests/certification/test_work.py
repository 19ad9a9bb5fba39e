"""Allotments of estimated work (certpca/clock.py, ``Work``): bounds stop at a step fixed by their inputs.

What is checked: a Work passes only by what is charged to it, and a share's charges count in the whole;
the exact search under an allotment of n nodes' estimated seconds stops after exactly n nodes; the
sample-space SDP and screening stop at the same step every time, cut short and still above the exact
optimum (tests/brute.py), and so does the threshold bound's rank-2 sweep; a certificate with
``fixed_work`` gives the same bounds as the bounds run under Work directly, and refuses a CPU budget.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from certpca.certification import certify_vector, evaluate_bound
from certpca.certification.threshold import threshold_bound
from certpca.clock import FLOP_RATE, Deadline, Work, deadline
from certpca.problem import Problem
from certpca.solvers.exact import exact
from certpca.solvers.spannogram.sweep2d import STEP_SECONDS
from tests.brute import brute_force, random_psd


def test_work_passes_only_by_what_is_charged():
    w = Work(1.0)
    assert w.left() == 1.0 and not w.passed() and deadline(w) is w
    share = w.within(0.25)
    assert share is not w and share.left() == 0.25
    share.charge(0.3)
    assert share.passed() and w.left() == pytest.approx(0.7) and w.used() == pytest.approx(0.3)
    assert w.within(5.0) is w  # more than is left: the whole
    assert w.renewed().left() == 1.0
    unlimited = Work()
    unlimited.charge(1e9)
    assert unlimited.left() == math.inf and not unlimited.passed()
    clock = Deadline(10.0)
    clock.charge(100.0)  # a clock is not charged
    assert not clock.passed()


def _hard(seed=4, D=12, family="wishart"):
    return random_psd(np.random.default_rng(seed), D, family)


class _Recorded(Work):
    """An unlimited Work that records what was charged each time the search asks whether it has passed (once
    in each step of its greedy start, then once before each node it expands)."""

    __slots__ = ("seen",)

    def __init__(self):
        super().__init__()
        self.seen: list[float] = []

    def passed(self) -> bool:
        self.seen.append(self.spent)
        return super().passed()


def _node_work(P, k, nonneg=False) -> list[float]:
    """The work an unlimited exact search on P charged before each node it expanded, and at its end
    (``seen[n]``: the work of the first n nodes); the first k checks are the greedy start's steps."""
    w = _Recorded()
    exact(P, k, nonneg, time_limit=w)
    return w.seen[min(k, P.dim) :] + [w.spent]


def test_exact_search_stops_after_the_nodes_of_its_allotment():
    C = _hard(seed=5)  # 5 nodes to its proof (seed 4 needs 3 since the search screens its nodes)
    P = Problem.from_covariance(C)
    k = 5
    full = exact(P, k)
    assert full.proven and full.nodes > 3
    seen = _node_work(P, k)
    for n in (1, 3):
        res = exact(P, k, time_limit=Work((seen[n - 1] + seen[n]) / 2))  # less than n nodes' work, more than n − 1
        assert res.nodes == n and not res.proven
        assert res.upper_bound >= brute_force(C, k)[0] - 1e-12 * abs(full.upper_bound)


@pytest.mark.parametrize("nonneg", [False, True])
def test_exact_search_charges_each_node_at_its_own_size(nonneg, monkeypatch):
    """Each node bound is charged at the size of its block after node screening (``node_seconds`` sees the
    sizes, recorded here), not 5000·|root|² a node as before: where node screening shrinks the nodes the
    search is charged less than that former charge, and the same seconds in two runs."""
    import certpca.solvers.exact as ex

    sizes: list[int] = []
    real = ex.node_seconds

    def recorded(features, nonneg_=False):
        sizes.append(features)
        return real(features, nonneg_)

    monkeypatch.setattr(ex, "node_seconds", recorded)
    shrunk = 0
    for seed in range(3):  # 120 features, 12 of them correlated: node screening leaves few of the rest
        rng = np.random.default_rng(seed)
        X = rng.normal(size=(60, 120))
        X[:, :12] += rng.normal(size=(60, 1))
        P = Problem.from_covariance(X.T @ X / 60)
        runs = [Work(), Work()]
        sizes.clear()
        res = [exact(P, 5, nonneg, time_limit=w) for w in runs]
        if res[0].info["screened"] == 0 or res[0].nodes < 2:
            continue
        shrunk += 1
        assert runs[0].used() == runs[1].used() > 0 and res[0].nodes == res[1].nodes
        assert min(sizes) < P.dim - 1  # some child was bounded below the size branching alone leaves
        greedy = sum(ex.greedy_step_seconds(P.dim - s, s + 1) for s in range(5))  # before the nodes
        assert runs[0].used() - greedy < res[0].nodes * 5000 * P.dim**2 / FLOP_RATE  # the former charge
    assert shrunk >= 2


@pytest.mark.parametrize("nonneg", [False, True])
def test_bounds_under_work_are_cut_at_the_same_step_and_stay_valid(nonneg):
    rng = np.random.default_rng(2)
    X = rng.normal(size=(8, 12))
    X -= X.mean(axis=0)
    P = Problem.from_data(X)
    k = 4
    opt = brute_force(P.dense(), k, nonneg)[0]
    unlimited = evaluate_bound(P, "dabe_sdp", k, nonneg, time_limit=Work())
    cut = [evaluate_bound(P, "dabe_sdp", k, nonneg, time_limit=Work(0.01)) for _ in range(2)]
    assert cut[0].params["time_limit_reached"] and not unlimited.params["time_limit_reached"]
    assert cut[0].params["iterations"] < unlimited.params["iterations"]
    assert cut[0].value == cut[1].value and cut[0].params["iterations"] == cut[1].params["iterations"]
    assert cut[0].value >= opt
    screened = [evaluate_bound(P, "screening", k, nonneg, time_limit=Work(0.0)) for _ in range(2)]
    assert screened[0].params["screening_stopped"]  # the quick pass only
    assert screened[0].value == screened[1].value and screened[0].value >= opt


def test_fixed_work_certificate_runs_its_bounds_under_work():
    C = _hard(seed=9)
    P = Problem.from_covariance(C)
    k = 5
    w = brute_force(C, k)[1]
    seen = _node_work(P, k)
    limit = (seen[2] + seen[3]) / 2  # between the work of 2 and 3 nodes
    cert = certify_vector(P, w, k, bounds=["lambda1", "exact"], time_limits={"exact": limit}, fixed_work=True)
    (found,) = [b for b in cert.bounds if b.name == "exact"]
    direct = evaluate_bound(P, "exact", k, time_limit=Work(limit))
    assert found.params["nodes"] == direct.params["nodes"] == 3 and found.value == direct.value
    # a budget is work with or without fixed_work (which only leaves out the CPU safety net)
    fixed = certify_vector(P, w, k, bounds=["lambda1", "exact"], budget=1.0, fixed_work=True)
    netted = certify_vector(P, w, k, bounds=["lambda1", "exact"], budget=1.0)
    assert fixed.budget == netted.budget == 1.0 and fixed.budget_used == netted.budget_used > 0
    assert fixed.upper_bound == netted.upper_bound


@pytest.mark.parametrize("nonneg", [False, True])
def test_threshold_rank2_sweep_stops_at_the_step_its_allotment_buys(nonneg):
    """The threshold bound's rank-2 sweep charges each interval step (sweep2d.STEP_SECONDS): an allotment of
    a third of the steps it takes unlimited stops it there, at the same step every time, with a bound no
    lower than the full run's and above the exact optimum.  (D = 22: at D = 16 the sweeps that cannot change
    the bound stop early and the whole run takes fewer than 100 steps.)"""
    C = random_psd(np.random.default_rng(0), 22, "wishart")
    P = Problem.from_covariance(C)
    opt, _ = brute_force(C, 4, nonneg)
    whole = Work()
    full = threshold_bound(P, 4, nonneg, time_limit=whole)
    steps = round(whole.used() / STEP_SECONDS)
    assert steps > 100 and not full.params["time_limit_reached"]
    runs = []
    for _ in range(2):
        w = Work(steps // 3 * STEP_SECONDS)
        runs.append(threshold_bound(P, 4, nonneg, time_limit=w))
        assert w.used() <= (steps // 3 + 1) * STEP_SECONDS
    assert runs[0].value == runs[1].value and runs[0].params["time_limit_reached"]
    assert runs[0].value >= full.value >= opt


@pytest.mark.parametrize("nonneg", [False, True])
def test_the_greedy_start_is_charged_and_stops_with_the_search(nonneg, monkeypatch):
    """The search's greedy start (O(k·D) eigenproblems: 22 CPU s at CBCL k = 180, charged nothing before)
    charges each step it takes (``greedy_step_seconds``) and stops once its allotment is spent, as the nodes do:
    with an allotment just over three steps the fourth spends it and no fifth starts, and the search still
    returns a bound at least the brute-force optimum."""
    import certpca.solvers.exact as ex

    steps: list[int] = []
    real = ex.greedy_step_seconds

    def recorded(candidates, size):
        steps.append(size)
        return real(candidates, size)

    monkeypatch.setattr(ex, "greedy_step_seconds", recorded)
    rng = np.random.default_rng(4)
    X = rng.normal(size=(30, 14))
    P = Problem.from_data(X - X.mean(axis=0))
    k = 6
    opt = brute_force(P.dense(), k, nonneg)[0]
    whole = exact(P, k, nonneg, time_limit=Work())
    assert steps == list(range(1, k + 1))  # unlimited: every step of the greedy start, each charged
    steps.clear()
    allotment = sum(real(P.dim - s, s + 1) for s in range(3)) * (1 + 1e-9)
    cut = exact(P, k, nonneg, time_limit=Work(allotment))
    assert steps == [1, 2, 3, 4]  # the fourth step spends the allotment: no fifth is started or charged
    assert not cut.proven and cut.nodes == 0
    assert cut.upper_bound >= opt and whole.upper_bound >= opt
    assert whole.proven and abs(whole.value - opt) <= 1e-9 * opt
