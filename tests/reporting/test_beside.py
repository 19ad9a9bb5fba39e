"""The report's certificate of w ≥ 0 computed at once with the plain one (certpca/reporting/beside.py): the same
certificate as the one computed after it, bound for bound, and a lookup waits for its bound alone."""

import multiprocessing
import os
import signal
import threading

import numpy as np
import pytest

from certpca.certification import Bound, certify_vector
from certpca.components import fit_components
from certpca.problem import Problem
from certpca.reporting.beside import (
    Handoff,
    NonnegBeside,
    Streamed,
    _keys,
    added,
    concurrent,
    merge,
    started,
    streaming,
)
from certpca.reporting.modes import ModeFits
from certpca.reporting.side import Side, can_fork

pytestmark = pytest.mark.skipif(not can_fork(2), reason="no fork start method here")

#: the README job's headline bounds, with allotments (fixed work) small enough for a test
NAMES = ["trace", "lambda1", "gershgorin", "dabe", "split", "threshold", "dabe_sdp"]
OPTIONS = {"bounds": NAMES, "time_limits": {"dabe_sdp": 0.5, "threshold": 0.5}, "fixed_work": True}


def _problem(seed: int) -> Problem:
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((6, 10)) * np.exp(rng.standard_normal(10))  # D > N: the sample-space SDP applies
    return Problem.from_data(X - X.mean(axis=0))


def _without_seconds(cert) -> dict:
    d = cert.to_dict()
    for b in d["bounds"]:
        b.pop("seconds")
    return d


@pytest.mark.parametrize("seed", [0, 1])
def test_the_nonneg_certificate_beside_is_the_one_after_the_plain_one(seed):
    """Seed 0: the nonnegative threshold bound takes its signed twin (a wait for the plain one's); seed 1: the
    plain dabe_sdp stopped at its target, and the nonnegative certificate takes it (a sign-free bound in its
    place, whether reusable depending on the bounds before it).  Both checked, so the cases are covered."""
    k = 3
    w_plain = np.zeros(10)
    w_plain[[0, 4, 7]] = [1.0, -2.0, 0.5]
    w_nonneg = np.abs(w_plain)
    # after the plain one, in one process, as the report computed it before
    P = _problem(seed)
    plain = certify_vector(P, w_plain, k, False, **OPTIONS)
    reuse = {b.name: b for b in plain.bounds}
    after = certify_vector(P, w_nonneg, k, True, reuse=reuse, **OPTIONS)
    # beside it, in a child, on a fresh copy of the problem
    Q = _problem(seed)
    beside = NonnegBeside(Q, k, NAMES, OPTIONS)
    with streaming(beside) as settled:
        plain_here = certify_vector(Q, w_plain, k, False, settled=settled, **OPTIONS)
    at_once = beside.certificate(plain_here, w_nonneg)
    assert _without_seconds(plain_here) == _without_seconds(plain)
    assert _without_seconds(at_once) == _without_seconds(after)
    # the bounds taken from the plain certificate are its very objects, as after it
    assert [reuse.get(b.name) is b for b in after.bounds] == [
        {b.name: b for b in plain_here.bounds}.get(b.name) is b for b in at_once.bounds
    ]
    if seed == 0:
        assert any(b.params.get("signed_problem") for b in after.bounds)
    else:
        assert any(b.params.get("stopped_at_target") for b in plain.bounds)
    # what the child left in the memo is in the report's process too (the band reuses it)
    assert set(P.memo) == set(Q.memo)


#: pbmc's kind of list: screening takes the vector's support as a hint, so the child certifies the real vector
WITH_SUPPORT = [*NAMES, "screening"]
SUPPORT_OPTIONS = {**OPTIONS, "bounds": WITH_SUPPORT, "time_limits": {**OPTIONS["time_limits"], "screening": 0.5}}


@pytest.mark.parametrize("fitted", [True, False])
def test_the_nonneg_certificate_of_the_handed_vector_is_the_one_after_the_plain_one(fitted):
    """A list with screening: the child certifying w ≥ 0 waits for the best fit of the child fitting it
    (:class:`Handoff`) and certifies that vector itself; without fits (``fitted`` False) nothing is handed, and
    the report's process computes it after the plain one.  Either way, the certificate computed in one process
    after the plain one, bound for bound."""
    k = 3
    R = _problem(0)  # fitted on a problem of their own, as in a child: their memo is not the certificates'
    fits = fit_components(R, k, method="em", nonneg=True, seed=0)
    w_nonneg = fits.components[0].weights
    w_plain = fit_components(R, k, method="em", seed=0).components[0].weights
    P = _problem(0)
    plain = certify_vector(P, w_plain, k, False, **SUPPORT_OPTIONS)
    reuse = {b.name: b for b in plain.bounds}
    after = certify_vector(P, w_nonneg, k, True, reuse=reuse, **SUPPORT_OPTIONS)
    assert "screening" in reuse and "screening" in {b.name for b in after.bounds}
    Q = _problem(0)
    handoff = Handoff()
    fitting = Side(lambda: handoff.give(ModeFits(fits=[fits] if fitted else [])), fork=True)
    beside = started(Q, k, WITH_SUPPORT, SUPPORT_OPTIONS, handoff)
    assert beside is not None and beside.handoff is handoff
    with streaming(beside) as settled:
        plain_here = certify_vector(Q, w_plain, k, False, settled=settled, **SUPPORT_OPTIONS)
    fitting.result()
    child, answers = beside.side.result, []  # the child's answer, seen as the certificate takes it
    beside.side.result = lambda: answers.append(child()) or answers[-1]
    at_once = beside.certificate(plain_here, w_nonneg)
    if fitted:  # the child certified the very vector it was handed
        assert answers[0] is not None and np.array_equal(answers[0][3], w_nonneg)
    else:  # the child had nothing to certify: the report's process did
        assert answers == [None]
    assert _without_seconds(plain_here) == _without_seconds(plain)
    assert _without_seconds(at_once) == _without_seconds(after)
    assert [reuse.get(b.name) is b for b in after.bounds] == [
        {b.name: b for b in plain_here.bounds}.get(b.name) is b for b in at_once.bounds
    ]
    assert set(P.memo) == set(Q.memo)


def test_a_child_that_dies_is_replaced_by_the_certificate_after_the_plain_one():
    k, w = 3, np.zeros(10)
    w[[0, 4, 7]] = 1.0
    P = _problem(0)
    plain = certify_vector(P, w, k, False, **OPTIONS)
    after = certify_vector(P, w, k, True, reuse={b.name: b for b in plain.bounds}, **OPTIONS)
    Q = _problem(0)
    beside = NonnegBeside(Q, k, NAMES, OPTIONS)
    os.kill(beside.side.process.pid, signal.SIGKILL)
    beside.side.process.join()
    with streaming(beside) as settled:  # its pipe is broken: nothing is raised here
        plain_here = certify_vector(Q, w, k, False, settled=settled, **OPTIONS)
    assert _without_seconds(beside.certificate(plain_here, w)) == _without_seconds(after)


def _pipe():
    return multiprocessing.get_context("fork").Pipe(duplex=False)


def test_a_streamed_bound_is_waited_for_alone():
    receive, send = _pipe()
    streamed = Streamed(["a", "b", "c"], receive)
    send.send(("a", Bound(1.0, "a")))
    assert streamed["a"].value == 1.0  # b not sent yet: no wait for it
    assert "zz" not in streamed  # not among the names: absent at once
    found: dict = {}
    looking = threading.Thread(target=lambda: found.update(b="b" in streamed))
    looking.start()
    looking.join(0.2)
    assert looking.is_alive() and not found  # waits for b
    send.send(("b", None))  # the plain certificate gave none
    looking.join(5)
    assert found == {"b": False}
    send.send(None)  # the end: c never came
    assert "c" not in streamed and streamed.get("c") is None
    assert streamed.received().keys() == {"a"}
    send.close()


def test_what_a_child_adds_to_the_memo_merges_into_the_parents():
    memo = {"x": 1, "nested": {("a", 1): 2}}
    before = _keys(memo)
    memo["y"] = 3
    memo["nested"][("b", 2)] = 4
    memo["new"] = {"z": 5}
    more = added(memo, before)
    assert more == {"y": 3, "nested": {("b", 2): 4}, "new": {"z": 5}}
    parent = {"x": 1, "nested": {("a", 1): 2}}
    merge(parent, more)
    assert parent == memo


def test_bounds_that_need_the_vector_or_cvxpy_are_not_computed_beside():
    assert concurrent(NAMES)
    assert not concurrent([*NAMES, "screening"])  # a support hint: depends on the vector
    assert concurrent([*NAMES, "screening"], vector=True)  # unless the child is handed the vector (Handoff)
    assert not concurrent([*NAMES, "dnn_sdp"], vector=True)
    assert not concurrent([*NAMES, "dnn_sdp"])  # solved inside cvxpy: never in a forked child
    assert not concurrent([*NAMES, "dabe_sdp_matrix"])  # starts from the plain certificate's dabe_sdp in the memo
