import json
import time

import numpy as np
import pytest

from certpca.certification.certificate import (
    REGISTRY,
    Certificate,
    certify_vector,
    default_bounds,
    parse_bounds,
)
from certpca.clock import Work
from certpca.errors import InputError
from certpca.problem import Problem
from tests.brute import brute_force, random_psd


@pytest.fixture
def prob():
    C = random_psd(np.random.default_rng(11), 10, "spiked")
    return Problem.from_covariance(C), C


def test_fields_and_gap_arithmetic(prob):
    P, C = prob
    opt, wopt = brute_force(C, 4)
    w = np.zeros(10)
    w[np.argsort(-np.diag(C))[:4]] = 1.0
    c = certify_vector(P, w, 4, bounds="lambda1,gershgorin,dspca")
    assert c.value == pytest.approx(P.variance(w / np.linalg.norm(w)))
    assert c.upper_bound == min(b.value for b in c.bounds)
    assert c.winner == min(c.bounds, key=lambda b: b.value).name
    assert c.gap == pytest.approx(c.upper_bound - c.value)
    assert c.certified_fraction == pytest.approx(c.value / c.upper_bound)
    assert c.upper_bound >= opt >= c.value
    d = c.to_dict()
    json.dumps(d)
    assert {
        "value",
        "lower_bound",
        "upper_bound",
        "winner",
        "bounds",
        "certified_fraction",
        "gap",
        "optimal",
        "tol",
        "k",
        "nonneg",
    } <= set(d)
    assert isinstance(d["upper_bound"], float) and isinstance(d["bounds"][0]["value"], float)
    assert "Certificate" in str(c)


def test_optimal_flag(prob):
    P, C = prob
    opt, wopt = brute_force(C, 4)
    c = certify_vector(P, wopt, 4, bounds=["exact"])
    assert c.optimal and c.relative_gap <= 1e-6
    c2 = Certificate(value=1.0, lower_bound=1.0, upper_bound=1.1, winner="x", bounds=[], k=1, nonneg=False, tol=0.05)
    assert not c2.optimal
    c3 = Certificate(value=1.0, lower_bound=1.0, upper_bound=1.1, winner="x", bounds=[], k=1, nonneg=False, tol=0.1)
    assert c3.optimal


def test_default_order_cheapest_first_and_stop_when_optimal(prob):
    P, C = prob
    opt, wopt = brute_force(C, 4)
    c = certify_vector(P, wopt, 4)
    costs = [REGISTRY[b.name].cost for b in c.bounds]
    assert costs == sorted(costs)
    assert c.upper_bound >= opt
    assert c.optimal  # exact (or an earlier bound) proves it
    assert set(default_bounds(P, False)) >= {"lambda1", "trace", "exact"}
    assert "perron" not in default_bounds(P, False)


def test_budget_skips_expensive_bounds(prob):
    P, C = prob
    w = np.zeros(10)
    w[:3] = 1
    c = certify_vector(P, w, 3, bounds="trace,lambda1,dspca_sdp,exact", budget=0.0)
    # the first bound always runs (budget checked before each, 0 s is spent after the first)
    assert c.bounds[0].name == "trace"
    assert "dspca_sdp" in c.skipped and "budget" in c.skipped["dspca_sdp"]


def test_nonneg_only_bounds_skipped_for_sparse(prob):
    P, _ = prob
    w = np.zeros(10)
    w[:3] = 1
    c = certify_vector(P, w, 3, bounds="lambda1,perron")
    assert "perron" in c.skipped


@pytest.mark.parametrize(
    "w,k,nonneg,msg",
    [
        (np.zeros(10), 3, False, "zero"),
        (np.ones(10), 3, False, "nonzeros"),
        (np.r_[1.0, -1.0, np.zeros(8)], 3, True, "negative"),
        (np.ones(9), 9, False, "length"),
        (np.r_[np.nan, np.zeros(9)], 3, False, "finite"),
        (np.r_[1.0, np.zeros(9)], 0, False, "k"),
    ],
)
def test_bad_vectors_raise_input_error(prob, w, k, nonneg, msg):
    P, _ = prob
    with pytest.raises(InputError, match=msg):
        certify_vector(P, w, k, nonneg)


def test_unknown_bound_name():
    with pytest.raises(InputError, match="unknown bound"):
        parse_bounds("lambda1,nope")


def test_factor_problem_never_needs_dense():
    """Wide data: the default bounds run in sample space; nothing D × D (D above DENSE_LIMIT)."""
    rng = np.random.default_rng(2)
    X = rng.standard_normal((20, 3500))
    P = Problem.from_data(X)
    assert P.uses_factor
    P.dense = None  # any attempt to form D × D would fail loudly
    v = P.first_pc()
    w = np.zeros_like(v)
    idx = np.argsort(-np.abs(v))[:10]
    w[idx] = v[idx]
    t = time.perf_counter()
    c = certify_vector(P, w, 10, bounds="trace,lambda1,gershgorin,dabe,pattern,dspca")
    assert "dspca" in c.skipped
    assert c.upper_bound >= c.value
    assert time.perf_counter() - t < 60


def test_a_bound_estimated_to_overrun_the_budget_is_skipped_with_the_reason(prob, monkeypatch):
    import dataclasses

    P, _ = prob
    w = np.zeros(10)
    w[:3] = 1
    # the pattern certificate charges no steps: its whole-run estimate (``work``) is what must fit
    monkeypatch.setitem(REGISTRY, "pattern", dataclasses.replace(REGISTRY["pattern"], work=lambda p, k: 1e6))
    c = certify_vector(P, w, 3, bounds="trace,pattern,lambda1", budget=1000.0)
    assert "pattern" in c.skipped and "estimated 1e+06 s" in c.skipped["pattern"]
    assert {b.name for b in c.bounds} == {"trace", "lambda1"}
    # without a budget nothing is estimated away
    assert "pattern" in {b.name for b in certify_vector(P, w, 3, bounds="trace,pattern").bounds}


def test_searches_stopped_by_their_time_limit_stay_valid():
    from certpca.certification import dabe_bound, pattern_bound

    rng = np.random.default_rng(2)
    for _ in range(4):
        C = random_psd(rng, 9, "spiked")
        P = Problem.from_covariance(C)
        for nonneg in (False, True):
            opt = brute_force(C, 3, nonneg)[0]
            for bound in (dabe_bound, pattern_bound):
                b = bound(P, 3, nonneg, time_limit=0.0)
                assert b.value >= opt * (1 - 1e-12)
                assert b.value >= bound(P, 3, nonneg).value * (1 - 1e-12)  # one evaluation: never tighter


def test_minimize_1d_stops_at_its_deadline_or_target():
    from certpca.certification.numerics import minimize_1d
    from certpca.clock import Deadline

    calls = []

    def f(x):
        calls.append(x)
        return (x - 0.3) ** 2

    full = minimize_1d(f, 0.0, 1.0, 16, 14)
    n_full = len(calls)
    calls.clear()
    assert minimize_1d(f, 0.0, 1.0, 16, 14, deadline=Deadline(0.0)) == (f(0.0), 0.0)
    assert len(calls) == 2  # one evaluation in the search (the second call is the check above)
    calls.clear()
    v, x = minimize_1d(f, 0.0, 1.0, 16, 14, target=0.01)
    assert v <= 0.01 and len(calls) < n_full
    assert full[0] <= v


def test_summary_tables_every_bound_tightest_first_in_text_html_and_latex(prob):
    P, C = prob
    w = np.linalg.eigh(C[:3, :3])[1][:, -1]
    cert = certify_vector(P, np.r_[w, np.zeros(P.dim - 3)], 3, bounds="trace,lambda1,gershgorin,dabe")
    s = cert.summary()
    values = [b.value for b in cert.bounds]
    assert list(s.table["Upper bound"]) == sorted(values) and s.table.index[0] == cert.winner
    np.testing.assert_allclose(s.table["Certified fraction"], cert.value / s.table["Upper bound"])
    text = str(s)
    assert text.startswith("Certificate for k = 3") and "Upper bounds on OPT:" in text
    assert ("proven optimal" if cert.optimal else "not proven optimal") in text
    latex = s.as_latex()
    assert r"\%" in latex and "% " not in latex.replace(r"\%", "")  # a bare % would comment out the row
    html = s.as_html()
    assert html.count("<tr>") == len(values) and "&lt;= OPT &lt;=" in html


@pytest.mark.parametrize("nonneg", [False, True])
def test_at_d_1e5_every_default_bound_runs_in_the_budget_or_is_skipped_with_the_reason(monkeypatch, nonneg):
    """Not timed: the flop rate is set so low that every estimated bound is beyond the budget."""
    import dataclasses

    from certpca.certification import numerics
    from certpca.certification.registry import default_bounds

    rng = np.random.default_rng(0)
    X = rng.standard_normal((5, 100_000)) * rng.uniform(0.5, 2.0, 100_000)
    X -= X.mean(axis=0)
    P = Problem.from_data(X)
    w = np.zeros(P.dim)
    w[np.argsort(-P.diag)[:10]] = 1.0
    names = set(default_bounds(P, nonneg))
    limits = {}
    for name in names:
        spec = REGISTRY[name]

        def spy(*args, spec=spec, **kwargs):
            limits[spec.name] = kwargs.get(spec.time_option) if spec.time_option else None
            return spec.func(*args, **kwargs)

        monkeypatch.setitem(REGISTRY, name, dataclasses.replace(spec, func=spy))
    monkeypatch.setattr(numerics, "FLOP_RATE", 1e3)  # 1000 flops a second
    # trace's O(D) pass is charged too (linear_seconds): at this rate it would take the whole budget
    monkeypatch.setitem(REGISTRY, "trace", dataclasses.replace(REGISTRY["trace"], work=lambda p, k: 0.0))
    c = certify_vector(P, w, 10, nonneg, budget=30.0)
    ran = {b.name for b in c.bounds}
    assert ran | set(c.skipped) == names and not ran & set(c.skipped)
    # what ran: trace (the cheapest bound always runs, O(D)); every other one is estimated beyond the budget,
    # a bound that charges its steps by what comes before its first, one that does not by its
    # whole run (certpca/clock.py: each bound charges all or none)
    assert ran == {"trace"} and set(limits) == ran
    for name in names - ran:
        assert REGISTRY[name].estimate is not None or REGISTRY[name].work is not None
        assert "without a pause, more than the" in c.skipped[name] and "of the 30 s budget" in c.skipped[name]
    assert all(b.value >= c.value for b in c.bounds)


def test_time_limits_cap_a_named_time_limited_bound_without_a_budget(monkeypatch):
    import dataclasses

    import certpca.certification.certificate as cc

    P = Problem(factor=np.random.default_rng(31).standard_normal((8, 40)))
    w = np.r_[np.ones(3), np.zeros(37)]
    spec = cc.REGISTRY["dabe_sdp"]
    seen: dict = {}

    def spy(problem, k, nonneg=False, **kw):
        seen.update(kw)
        return spec.func(problem, k, nonneg, **kw)

    monkeypatch.setitem(cc.REGISTRY, "dabe_sdp", dataclasses.replace(spec, func=spy))
    c = certify_vector(P, w, 3, bounds="lambda1,dabe_sdp", time_limits={"dabe_sdp": 0.5})
    # no budget: the limit as given, nothing skipped; and λ1's bound, on the rescaled problem dabe_sdp sees, to beat
    target = np.ldexp(c.bounds[0].value, -cc._rescale_exponents(P)[1])
    # the limit is an allotment of work (certpca/clock.py) of the seconds given
    limit = seen.pop("time_limit")
    assert isinstance(limit, Work) and limit.seconds == 0.5
    assert seen == {"target": target} and c.skipped == {}
    seen.clear()
    certify_vector(P, w, 3, bounds="lambda1,dabe_sdp", time_limits={"dabe_sdp": 30.0}, budget=2.0)
    assert 0 < seen["time_limit"].seconds <= 0.85 * 2.0  # at most what the budget leaves


def test_a_bound_that_cannot_win_stops_early_and_changes_nothing(monkeypatch):
    """dabe_sdp is given the best bound so far (trace's, on standardised data with one strong factor) and
    abandons each ρ whose relaxation value reaches it: the same certificate from far fewer Frank–Wolfe steps."""
    import dataclasses

    import certpca.certification.certificate as cc

    rng = np.random.default_rng(0)
    X = rng.standard_normal((10, 1)) + 0.25 * rng.standard_normal((10, 60))
    P = Problem.from_data((X - X.mean(0)) / X.std(0, ddof=1))
    w = np.r_[np.ones(20), np.zeros(40)]
    c = certify_vector(P, w, 20, bounds="trace,dabe_sdp")
    monkeypatch.setitem(cc.REGISTRY, "dabe_sdp", dataclasses.replace(cc.REGISTRY["dabe_sdp"], target_option=None))
    full = certify_vector(P, w, 20, bounds="trace,dabe_sdp")
    assert (c.winner, c.upper_bound, c.lower_bound) == ("trace", full.upper_bound, full.lower_bound)
    stopped, ran = c.bounds[1], full.bounds[1]
    assert ran.params["stopped_at_target"] == 0 and ran.value > c.upper_bound  # it could not have won
    assert stopped.params["stopped_at_target"] > 0 and stopped.value >= ran.value
    assert 4 * stopped.params["iterations"] < ran.params["iterations"]
    said = "dabe_sdp stopped where it could not go below the bounds before it"
    assert said in c.summary().notes and said not in full.summary().notes
    assert "; stopped where it could not go below" in str(c) and "stopped" not in str(full)


def test_a_reused_bound_that_stopped_below_this_certificates_best_is_computed_again():
    import dataclasses

    from certpca.certification.sdp_sample import dabe_sdp_bound

    P = Problem.from_data(np.random.default_rng(32).standard_normal((8, 40)))
    w = np.r_[np.ones(3), np.zeros(37)]
    kept, stopped = dabe_sdp_bound(P, 3), dabe_sdp_bound(P, 3, target=0.0)
    assert kept.params["stopped_at_target"] == 0 < stopped.params["stopped_at_target"]
    lam1 = certify_vector(P, w, 3, True, bounds="lambda1").upper_bound  # the best bound before dabe_sdp
    above = dataclasses.replace(stopped, params={**stopped.params, "target": lam1})  # stopped at λ1's value
    below = dataclasses.replace(stopped, params={**stopped.params, "target": 0.999 * lam1})
    for given, reused in ((kept, True), (stopped, False), (above, True), (below, False)):
        c = certify_vector(P, w, 3, True, bounds="lambda1,dabe_sdp", reuse={"dabe_sdp": given})
        assert (c.bounds[1] is given) is reused
    computed = certify_vector(P, w, 3, False, bounds="lambda1,dabe_sdp").bounds[1]
    assert computed.params["target"] == lam1  # the target it was given, on the original scale


def test_the_exact_search_first_runs_before_the_sdps_and_settles_lrs_k10():
    """LRS (93 features) k = 10: the exact search proves the optimum in a fraction of a second, so its
    first run before the SDPs leaves them nothing to do (they took 17 s before it)."""
    from certpca import datasets
    from certpca.certification.schedule import schedule
    from certpca.solvers import solve

    names = ["trace", "dabe", "dspca_sdp", "exact"]  # cheapest first, as certify_vector sorts them
    assert schedule(names) == [("trace", None), ("dabe", None), ("exact", 2.0), ("dspca_sdp", None), ("exact", None)]
    assert schedule(["trace", "exact"]) == [("trace", None), ("exact", None)]  # nothing costlier before it
    P = datasets.load("lrs").problem()
    w = solve(P, 10).weights
    c = certify_vector(P, w, 10, budget=60.0)
    assert c.optimal and c.winner == "exact"
    assert [b.name for b in c.bounds].count("exact") == 1
    assert "dspca_sdp" in c.skipped  # never started
    brute = max(np.linalg.eigvalsh(P.submatrix(np.flatnonzero(w)))[-1], 0)  # the proven support's λmax
    assert c.upper_bound >= brute * (1 - 1e-12)


def test_a_first_run_that_proves_nothing_is_replaced_by_the_full_run(prob, monkeypatch):
    import dataclasses

    P, C = prob
    opt, w = brute_force(C, 4, False)
    w = w.copy()
    w[np.flatnonzero(w)[0]] *= 0.5  # a feasible vector below the optimum: nothing stops early
    # a first run too short to prove anything: its bound stands until the full run replaces it
    runs = []
    spec = REGISTRY["exact"]

    def recorded(*args, **kw):
        runs.append(spec.func(*args, **kw))
        return runs[-1]

    monkeypatch.setitem(REGISTRY, "exact", dataclasses.replace(spec, probe=0.0, func=recorded))
    c = certify_vector(P, w, 4, bounds="trace,exact,dspca_sdp", budget=60.0, stop_when_optimal=True)
    assert [r.params["proven"] for r in runs] == [False, True]
    exact = [b for b in c.bounds if b.name == "exact"]
    assert len(exact) == 1 and exact[0].params["proven"]
    assert opt <= exact[0].value <= opt * (1 + 1e-9)
    assert runs[1].value < runs[0].value  # (both on the certificate's rescaled problem)


def test_on_wide_data_the_bounds_that_form_the_dense_covariance_come_last():
    """A factor problem (D > r): the bounds that form the D × D covariance (dspca, dnn, perron, screening) are
    computed after those that read the factor (``BoundSpec.factor_cost``), and the threshold bound leaves 40%
    of the budget to the sample-space SDP (``BoundSpec.factor_share``); a dense problem keeps the cost order
    and shares. Before, on alon raw k = 20 w ≥ 0 dspca took the budget (threshold and dabe_sdp skipped: 83.7%
    certified against 90.6% for the signed problem), and on golub raw k = 50 signed the threshold bound did
    (83.1%; dabe_sdp alone: 94.9% in 1 CPU s)."""
    from certpca.certification.schedule import computing_order

    rng = np.random.default_rng(3)
    wide = Problem(factor=rng.standard_normal((6, 40)))
    dense = Problem.from_covariance(random_psd(rng, 8, "spiked"))
    names = ["dnn", "dabe_sdp", "perron", "threshold", "dspca", "trace", "screening", "dabe", "gershgorin"]
    order = computing_order(names, wide)
    assert order == ["trace", "gershgorin", "dabe", "threshold", "dabe_sdp", "perron", "dspca", "dnn", "screening"]
    assert computing_order(names, dense) == [n for n in REGISTRY if n in names]  # the registry is by cost
    # on wide data the threshold bound leaves 40% of the budget to the sample-space SDP after it
    assert REGISTRY["threshold"].share_on(wide, 0.85) == 0.6 and REGISTRY["threshold"].share_on(dense, 0.85) == 0.85
    assert REGISTRY["dabe_sdp"].share_on(wide, 0.85) == 0.85
    assert {n for n in REGISTRY if REGISTRY[n].cost_on(wide) > REGISTRY[n].cost} == {
        "perron",
        "dspca",
        "dnn",
        "screening",
    }
