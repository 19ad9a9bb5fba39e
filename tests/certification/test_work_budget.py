"""Budgets in estimated work (certpca/clock.py, issue 29): the same certificate on a busy machine, every bound
accounted for, and still valid.

No timed assertion: a budget is work charged by the bounds or for them, never a reading of a clock (the
CPU safety net behind it is not reached here, and a certificate says when it is)."""

from __future__ import annotations

import numpy as np
import pytest

from certpca.certification import REGISTRY, Bound, certify_vector
from certpca.certification.spec import BoundSpec
from certpca.clock import Work
from certpca.problem import Problem
from tests.brute import small_problems
from tests.reporting.test_reproducible import busy_siblings, pytestmark  # noqa: F401 (forked siblings)


def _wide(seed: int, n: int = 30, d: int = 300) -> Problem:
    """Wide data with a planted sparse direction: a factor problem where threshold and dabe_sdp are cut."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X[:, :12] += 2.0 * rng.normal(size=(n, 1))
    return Problem.from_data(X - X.mean(axis=0))


def _top_k(problem: Problem, k: int, nonneg: bool) -> np.ndarray:
    """A feasible vector: the top eigenvector's k largest entries (positive parts for w ≥ 0)."""
    v = np.linalg.eigh(problem.submatrix(np.arange(problem.dim)))[1][:, -1]
    v = v if v.sum() >= 0 else -v
    v = np.maximum(v, 0) if nonneg else v
    w = np.zeros(problem.dim)
    top = np.argsort(-np.abs(v))[:k]
    w[top] = v[top]
    return w


def _digest(cert) -> tuple:
    """Everything a certificate states but the seconds its bounds took (wall time)."""
    return (
        cert.upper_bound,
        cert.winner,
        sorted((b.name, b.value) for b in cert.bounds),
        sorted(cert.skipped.items()),
        cert.budget_used,
        cert.net_fired,
    )


def test_the_same_certificate_beside_busy_processes():
    """A budget that cuts threshold and the sample-space SDP: the second run, with two processes spinning on
    the cores, gives the same bounds to the last digit (with CPU seconds they moved with the load).  Each run
    on a fresh Problem: work memoised on a Problem by an earlier bound (threshold's components per ρ) is not
    charged again, so a second run on the same object may go further."""
    k = 12
    w = _top_k(_wide(1), k, False)
    quiet = certify_vector(_wide(1), w, k, budget=0.6)
    assert "threshold" in [b.name for b in quiet.bounds] and "exact" in quiet.skipped  # the budget cut
    with busy_siblings(2):
        busy = certify_vector(_wide(1), w, k, budget=0.6)
    assert _digest(busy) == _digest(quiet)
    assert not quiet.net_fired


@pytest.mark.parametrize("seed", [2, 3])
def test_a_nonnegative_certificate_is_at_most_the_signed_one_under_the_same_budget(seed):
    """OPT over w ≥ 0 ≤ OPT over all w: the nonnegative certificate's upper bound is no larger than the signed
    one's under the same budget (khan k = 50 broke it when the budget was CPU time), and the same twice."""
    P, k = _wide(seed), 12
    signed_w, nonneg_w = _top_k(P, k, False), _top_k(P, k, True)
    for budget in (0.3, 1.0, 3.0):
        signed = certify_vector(_wide(seed), signed_w, k, False, budget=budget)
        nonneg = certify_vector(_wide(seed), nonneg_w, k, True, budget=budget)
        assert nonneg.upper_bound <= signed.upper_bound, (budget, nonneg.upper_bound, signed.upper_bound)
        again = certify_vector(_wide(seed), nonneg_w, k, True, budget=budget)
        assert _digest(again) == _digest(nonneg)


def test_every_bound_charges_its_steps_or_has_an_estimate_to_be_charged():
    """'Each bound charges all or none': one that does not charge (``charges`` False) must have a whole-run
    estimate (``work_on`` > 0), else a budget would not see it at all."""
    P = _wide(4)
    for name, spec in REGISTRY.items():
        assert spec.charges or spec.work_on(P, 5) > 0, name
        if spec.charges:
            assert spec.time_option is not None, name  # it is given the allotment it charges


def _fake(name: str, charges: bool, steps: float, work: float | None):
    """A registered bound that returns λ1 and charges ``steps`` seconds to its time option when it charges."""

    def func(problem, k, nonneg=False, time_limit=None):
        if charges and isinstance(time_limit, Work):
            time_limit.charge(steps)
        return Bound(float(np.linalg.eigvalsh(problem.submatrix(np.arange(problem.dim)))[-1]) + 1.0, name, {}, 0.0)

    return BoundSpec(
        name,
        func,
        REGISTRY["gershgorin"].cost,
        time_option="time_limit",
        charges=charges,
        work=None if work is None else (lambda p, k: work),
        estimate=lambda p, k: 0.25,
    )


def test_a_bound_that_does_not_charge_is_charged_its_estimate_and_one_that_does_is_not_charged_twice(monkeypatch):
    P = _wide(5)
    w = _top_k(P, 5, False)
    monkeypatch.setitem(REGISTRY, "quiet_bound", _fake("quiet_bound", False, 0.0, 0.7))
    monkeypatch.setitem(REGISTRY, "counting_bound", _fake("counting_bound", True, 0.3, 99.0))
    quiet = certify_vector(P, w, 5, bounds=["quiet_bound"], budget=10.0)
    assert quiet.budget_used == pytest.approx(0.7)  # its whole-run estimate, once
    counting = certify_vector(P, w, 5, bounds=["counting_bound"], budget=10.0)
    assert counting.budget_used == pytest.approx(0.3 + 0.25)  # its steps and its setup (estimate), not its work
    real = certify_vector(P, w, 5, bounds=["gershgorin"], budget=10.0)
    assert real.budget_used == pytest.approx(REGISTRY["gershgorin"].work_on(P, 5)) and real.budget_used > 0


@pytest.mark.parametrize("budget", [0.0, 1e-3, 0.05, 1.0])
def test_certificates_under_any_work_budget_stay_above_brute_force(budget):
    """Tolerance 0: a bound stopped by its allotment at any step is still above the exact optimum."""
    for P, k, nonneg, opt, w in small_problems(12, 7):
        cert = certify_vector(P, w, k, nonneg, budget=budget)
        assert cert.upper_bound >= opt, (budget, P.dim, k, nonneg, cert.winner, opt, cert.upper_bound)
        assert all(b.value >= opt for b in cert.bounds)
