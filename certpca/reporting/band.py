"""The certified band along the path: at each k, the best value found .. the best upper bound on OPT(k).

The band uses the headline certificate's bound families (or the report's ``path_bounds``), each bound
computed as a certificate computes it (:func:`certpca.certification.evaluate_bound`):

* at the headline k the band *is* the headline certificate (its upper bound and winner);
* at every other k the bounds below the search class (trace, λ1, Gershgorin, dABE, …) run for every k;
* the costly ones (threshold-and-split, the sample-space SDP, …): ``BAND_BOUNDS`` computations over
  the whole path, in rounds: each round gives every k its next costly bound, the k whose band is
  loosest so far (lowest certified fraction) first; sign-free bounds first (one computation serves
  both signs), then those tightest in the headline certificate; none at a k already certified
  optimal.  They share the band's part of the report's budget (``seconds`` of estimated work): each
  bound of a round gets an equal allotment of what is left over the computations left
  (certpca/clock.py ``Work``, which the bound charges step by step), so the work charged stays within it;
  none starts once it is spent (a note says so; behind it a safety net of ``CPU_NET`` times it in CPU
  seconds, after which the band would depend on the machine).  What they reuse
  across k: the threshold bound's pairs and components per ρ, dABE's λmax per ρ (``Problem.memo``);
  the bounds at every k and each round's run in parallel, one process per core.

Validity: every point is the minimum of valid upper bounds on OPT(k, nonneg); for w ≥ 0 the bounds of
the plain problem count too (OPT over w ≥ 0 ≤ OPT over all w).  The sample-space SDP runs a fixed
number of Frank–Wolfe steps (``BAND_SDP_ITERS``) within its allotment, and every bound with a time option
gets its allotment as work (:class:`certpca.clock.Work`), under which its own caps (the exact search's,
screening's) count estimated work too, so its value does not depend on the machine's load.
"""

from __future__ import annotations

import multiprocessing
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from contextlib import nullcontext

from threadpoolctl import threadpool_limits

from certpca.certification import REGISTRY as BOUNDS
from certpca.certification import Bound, Certificate, NotApplicable, evaluate_bound
from certpca.certification.spec import COST_SEARCH
from certpca.clock import Work
from certpca.errors import TooLarge
from certpca.problem import Problem
from certpca.reporting.saved import BandPoint
from certpca.reporting.side import cores

#: costly bounds computed over the whole path (a count, not seconds, so the band does not depend on the
#: machine's load): leukemia k = 50, 9 k: the sample-space SDP at the 7 other k, then threshold at the
#: 3 loosest (reports/bench/report.md)
BAND_BOUNDS = 10
#: the CPU seconds of a safety net behind the band's budget, as a multiple of it: only a bound far costlier than
#: its estimate reaches it, and only then does the band depend on the machine (a note says so)
CPU_NET = 4.0
#: bounds computed at every k whatever their cost class (dABE keeps its λmax per ρ for the other k)
EVERY_K = ("dabe",)
#: options of a bound in the band: the sample-space SDP runs a fixed number of Frank–Wolfe steps per ρ
#: (coarse pass, refinement) and no time limit (leukemia: within 1 % of the certificate's 6 s limit at
#: every k of the path, in a third of the time)
BAND_SDP_ITERS = (10, 15)
#: the matrix-multiplier bound runs its own dabe_sdp start (a start left in a worker's memo would make the
#: band depend on which worker got which task), and the threshold bound its own exact search on its components,
#: which a certificate runs as the bound threshold_search (the band has no certificate to continue)
BAND_OPTIONS: Mapping[str, Mapping[str, object]] = {
    "dabe_sdp": {"coarse_iters": BAND_SDP_ITERS[0], "fine_iters": BAND_SDP_ITERS[1]},
    "dabe_sdp_matrix": {"warm": False},
    "threshold": {"search": True},
}


def is_costly(name: str) -> bool:
    """A bound the band computes within its budget rather than at every k."""
    return BOUNDS[name].cost >= COST_SEARCH and name not in EVERY_K


def in_band(name: str) -> bool:
    """A bound the band can compute: not one that continues a bound of the same certificate
    (``BoundSpec.start_option``)."""
    return BOUNDS[name].start_option is None


#: a k whose band is within this relative gap is certified optimal: no costly bound runs there
OPTIMAL_TOL = 1e-6


class _Bounds:
    """The band's bounds per (name, k, sign); a sign-free bound is computed on the plain problem once (``key``)."""

    def __init__(self) -> None:
        self.done: dict[tuple[str, int, bool], Bound | None] = {}

    def key(self, name: str, k: int, nonneg: bool) -> tuple[str, int, bool]:
        return name, k, nonneg and not BOUNDS[name].sign_free

    def best(self, k: int, nonneg: bool) -> Bound | None:
        """The smallest bound at k; for w ≥ 0 those of the plain problem count too."""
        found = [b for (_, kk, nn), b in self.done.items() if b is not None and kk == k and (nn == nonneg or not nn)]
        return min(found, key=lambda b: (b.value, b.name), default=None)


# the problem the worker processes read, set before the pool forks (nothing is pickled per task)
_SHARED: dict = {}

#: bounds solved inside cvxpy run in this process, never in a forked worker: its native solvers keep
#: thread pools whose locks a forked child can inherit held (a dnn_sdp by Clarabel hung in a worker)
IN_PROCESS = frozenset({"dspca_sdp", "dnn_sdp"})


def _bound(
    problem: Problem, key: tuple[str, int, bool], allotment: float | None = None
) -> tuple[Bound | None, float, float]:
    """The bound ``key`` = (name, k, nonneg) of the band (None when it does not apply) within ``allotment``
    seconds of estimated work (None: unlimited), its seconds of estimated work (charged to its Work, else its
    registry estimate) and its CPU seconds."""
    name, k, nonneg = key
    spec = BOUNDS[name]
    t0 = time.process_time()
    options: dict[str, object] = dict(BAND_OPTIONS.get(name, {}))
    work = Work(allotment)
    if spec.time_option is not None:  # its own caps (the exact search's, screening's) in work, not time
        options.setdefault(spec.time_option, work)
    try:
        bound = evaluate_bound(problem, name, k, nonneg, **options)
    except (NotApplicable, TooLarge):
        bound = None
    estimated = work.used() or (0.0 if spec.estimate is None else spec.estimate(problem, k))
    return bound, estimated, time.process_time() - t0


def _worker(task: tuple[tuple[str, int, bool], float | None]) -> tuple[Bound | None, float, float]:
    """:func:`_bound` of ``task`` = (key, allotment) on the shared problem with one BLAS thread (the processes
    already use the cores)."""
    with threadpool_limits(limits=1):
        return _bound(_SHARED["problem"], *task)


def _computed(pool, keys: list[tuple[str, int, bool]], allotment: float | None) -> tuple[list, list]:
    """The bounds ``keys`` each within ``allotment`` (:func:`_worker`): on the pool when there is one, while this
    process computes those solved inside cvxpy (``IN_PROCESS``); the keys in the order of their results."""
    forked = [key for key in keys if pool is not None and key[0] not in IN_PROCESS]
    here = [key for key in keys if key not in forked]
    pending = pool.map(_worker, [(key, allotment) for key in forked]) if forked else iter(())  # submitted now
    runs = [_worker((key, allotment)) for key in here]
    return forked + here, [*pending, *runs]


def _round(todo: dict, bounds: _Bounds, fraction) -> list[tuple[str, int, bool]]:
    """One round: each (sign, k) left, loosest first, takes its next costly bound; one already computed
    or taken this round (a sign-free bound of the other sign) serves it for the round.  The round's
    bounds do not depend on each other, so they run in parallel with the same results."""
    tasks: list[tuple[str, int, bool]] = []
    for nonneg, k in sorted(todo, key=lambda sk: (fraction(*sk), sk[1], sk[0])):
        left = todo[nonneg, k]
        if fraction(nonneg, k) < 1 - OPTIMAL_TOL:
            key = bounds.key(left.pop(0), k, nonneg)
            if key not in bounds.done and key not in tasks:
                tasks.append(key)
        if not left or fraction(nonneg, k) >= 1 - OPTIMAL_TOL:
            del todo[nonneg, k]
    return tasks


def _order(costly: list[str], head: Certificate | None) -> list[str]:
    """The costly bounds in the order a k gets them: sign-free first (they serve both signs), then the
    tighter in the headline certificate first (what pays on these data; the threshold bound with its search there,
    threshold_search), then by cost class."""
    rank: dict[str, float] = {}
    for b in [] if head is None else head.bounds:  # a bound continuing another ranks the one it continues
        spec = BOUNDS[b.name]
        name = spec.continues if spec.start_option and spec.continues else b.name
        rank[name] = min(rank.get(name, float("inf")), b.value)
    return sorted(costly, key=lambda n: (not BOUNDS[n].sign_free, rank.get(n, float("inf")), BOUNDS[n].cost))


def certified_bands(
    problem: Problem,
    tops: Mapping[bool, Mapping[int, tuple[float, str]]],
    names: Mapping[bool, Sequence[str]],
    heads: Mapping[bool, Certificate],
    headline_k: int,
    seconds: float | None = None,
    count: int = BAND_BOUNDS,
    jobs: int | None = None,
) -> tuple[dict[bool, list[BandPoint]], list[str]]:
    """Per sign constraint, the band's points on the path's k (ascending); and the notes.

    ``tops[nonneg][k]`` is (the best value found at k, its method); ``names[nonneg]`` the bounds;
    ``heads[nonneg]`` the headline certificate at ``headline_k``, which stands for the band there;
    ``seconds`` (of estimated work; None: unlimited) and ``count`` the costly bounds' budget (module
    docstring); ``jobs`` processes compute
    each round's bounds (None: :func:`certpca.reporting.side.cores`; the band is the same for any number).
    """
    jobs = cores(jobs)
    bounds = _Bounds()
    todo: dict[tuple[bool, int], list[str]] = {}
    cheap: list[tuple[str, int, bool]] = []  # the bounds below the search class at every k, each once
    for nonneg, top in tops.items():
        for k in top:
            if k == headline_k and nonneg in heads:
                continue
            usable = [n for n in names[nonneg] if in_band(n)]
            cheap += [bounds.key(n, k, nonneg) for n in usable if not is_costly(n)]
            todo[nonneg, k] = _order([n for n in usable if is_costly(n)], heads.get(nonneg))

    def fraction(nonneg: bool, k: int) -> float:
        b = bounds.best(k, nonneg)
        return 0.0 if b is None or b.value <= 0 else tops[nonneg][k][0] / b.value

    spent, cpu, computed, notes = 0.0, 0.0, 0, []
    _SHARED["problem"] = problem  # before the pool forks
    fork = multiprocessing.get_context("fork") if jobs > 1 else None
    with ProcessPoolExecutor(jobs, mp_context=fork) if fork else nullcontext() as pool:
        # the cheap bounds do not depend on each other either (nor on an allotment): on the pool too
        for key, (bound, _, _) in zip(*_computed(pool, list(dict.fromkeys(cheap)), None)):
            bounds.done[key] = bound
        todo = {sk: left for sk, left in todo.items() if left}
        while todo and computed < count:
            if seconds is not None and spent >= seconds:
                notes.append(f"band: no further costly bound started after its {seconds:.3g} s of estimated work")
                break
            if seconds is not None and cpu >= CPU_NET * seconds:
                notes.append(
                    f"band: no further costly bound started after {CPU_NET * seconds:.3g} s of CPU time (a safety "
                    "net: the band then depends on the machine's speed and load)"
                )
                break
            tasks = _round(todo, bounds, fraction)[: count - computed]
            each = None if seconds is None else (seconds - spent) / (count - computed)  # what is left, shared
            for key, (bound, estimated, seconds_used) in zip(*_computed(pool, tasks, each)):
                bounds.done[key] = bound
                spent += estimated
                cpu += seconds_used
            computed += len(tasks)
    _SHARED.clear()
    out: dict[bool, list[BandPoint]] = {}
    for nonneg, top in tops.items():
        points = []
        for k in sorted(top):
            value, method = top[k]
            if k == headline_k and nonneg in heads:
                upper, winner = heads[nonneg].upper_bound, heads[nonneg].winner
            else:
                win = bounds.best(k, nonneg)
                if win is None:
                    continue
                upper, winner = win.value, win.name
            points.append(
                BandPoint(
                    k=k,
                    best_value=float(value),
                    best_method=method,
                    upper_bound=float(upper),
                    winner=winner,
                    certified_fraction=float(value / upper) if upper > 0 else float("nan"),
                )
            )
        out[nonneg] = points
    return out, notes


__all__ = ["BAND_BOUNDS", "BAND_SDP_ITERS", "CPU_NET", "EVERY_K", "certified_bands", "is_costly"]
