"""The one currency of budgets and time limits: seconds of *estimated work*, with a CPU safety net.

Every budget (``certify(..., budget=)``, ``fit(..., budget=)``, ``--budget``) and every time limit a
certificate gives a bound (``time_limits=``) is a :class:`Work`: an allotment of estimated seconds that
the computation charges itself, step by step, at the cost its size predicts (``charge``: a Frank–Wolfe
step, a branch-and-bound node, a screening pass, a threshold evaluation, a spannogram step); a bound
that cannot charge its own steps is charged the estimate of its whole run (``BoundSpec.work``) by the
certificate, which then starts it only when that fits in what is left.  Each bound charges all of its
work or none of it (then the certificate charges its estimate), never both or neither.  No clock is
read, so the same inputs stop at the same step and give the same certificate on a quiet machine as on
a busy one: a result does not change with the machine's load.

The estimates are calibrated on the bundled data against the CPU seconds the same computations took
(bench/bench_work.py, reports/bench/work.md), so a budget of b seconds takes about b CPU seconds, and on
a quiet machine about b wall seconds.

*Safety net.*  The estimates hold on the machines they were calibrated on; on a slower one a budget of
work would take more CPU seconds than it says.  So behind the work, a budget's :class:`Work` also counts the
CPU time of the process (:func:`now`): it may use at most :data:`NET_FACTOR` × its seconds +
:data:`NET_SLACK` of it, and what is left of the budget is the smaller of the work left and the CPU time left
over :data:`NET_FACTOR` (as a :class:`Deadline`'s wall-clock net).  Where the estimates hold the work is the
smaller and no clock decides anything; where the machine runs slower than they say (CPU seconds above
:data:`NET_FACTOR` × the work charged + :data:`NET_SLACK`), the CPU time left is the smaller: the shares of
later bounds and components shrink with it, the call still ends within its promise, and the certificate
says that the net shortened its work and so that its result may depend on the machine and its load
(``fired``).  1.5: the calibration machine's certificates used 0.57–0.86 CPU seconds per second of work
(reports/bench/work.md), a machine 1.4 × slower 0.81–1.19 on its own; with two more processes on its two
cores contention raised its CPU seconds by up to half again (leukemia ``--log2 20`` k = 50 w ≥ 0, 0.83 alone),
and at 1.2 the net then decided that certificate.  So the estimates keep a call within about 1.2 × its
budget on such a machine (reports/bench/budgets.md), and the net keeps any call within 1.5 × + 1 s.

*No wall clock.*  A budget used to end also after 4 × its seconds of wall time; under load that cut
certificates short (golub raw k = 50 at load 16: 3.3 of its 15 CPU s, 81.3% certified instead of
94.94%), so the result depended on the load.  A budget is a promise about work and CPU time: on a quiet
machine a call takes about its budget in wall seconds, on a machine busy with n other processes per
core about (n + 1) times as long, with the same result.  A certificate's bounds run with one BLAS thread
(certification/certificate.py): with several, idle threads spinning on a busy machine add CPU seconds
(a 2000 × 2000 eigenproblem took 13.8 CPU s on two threads and 0.7 s on one, load 4 on 2 cores).

A :class:`Deadline` (CPU seconds of the process, with a wall-clock net of :data:`WALL_FACTOR` × its
seconds + :data:`WALL_SLACK`) remains for a bound function called by itself with ``time_limit`` in
seconds, and the solvers' own time limits.
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

#: a deadline of s CPU seconds also ends after WALL_FACTOR·s + WALL_SLACK wall seconds
WALL_FACTOR = 4.0
WALL_SLACK = 2.0

#: a budget of s seconds of work uses at most NET_FACTOR·s + NET_SLACK CPU seconds (the safety net)
NET_FACTOR = 1.5
NET_SLACK = 1.0

#: what a result says when the safety net decided part of it
NET_NOTE = (
    f"the CPU safety net ({NET_FACTOR:g} × the budget) shortened the work: this machine ran slower than the work "
    "estimates, so the result may depend on the machine and its load"
)

#: floating-point operations per second assumed when a computation's cost is estimated (a bound's
#: before it starts, a step of :class:`Work`): a third of what one BLAS thread did on the bench
#: machine (reports/bench/scale.md)
FLOP_RATE = 1e10

#: a progress bar (:func:`progress_bar`) appears once the work has run this many seconds
PROGRESS_DELAY = 2.0


def now() -> float:
    """The budget clock: CPU seconds of this process (all its threads)."""
    return time.process_time()


class TimeUp(Exception):
    """Raised by :meth:`Deadline.check` inside a computation that has no valid partial result."""


class Deadline:
    """A point on the budget clock ``seconds`` from its creation (None: never); cheap to check.

    ``left()`` is the CPU seconds left (inf without a limit), ``passed()`` whether it is reached,
    ``check()`` raises :class:`TimeUp` once it has, ``used()`` the CPU seconds since creation,
    ``within(s)`` the earlier of this deadline and s from now.
    """

    __slots__ = ("cpu", "seconds", "start", "wall")

    def __init__(self, seconds: float | None = None):
        self.seconds = None if seconds is None else max(float(seconds), 0.0)
        self.start = now()
        if self.seconds is None or not math.isfinite(self.seconds):
            self.cpu = self.wall = math.inf
        else:
            self.cpu = self.start + self.seconds
            self.wall = time.perf_counter() + WALL_FACTOR * self.seconds + WALL_SLACK

    def left(self) -> float:
        if self.cpu == math.inf:
            return math.inf
        return min(self.cpu - now(), (self.wall - time.perf_counter()) / WALL_FACTOR)

    def passed(self) -> bool:
        return self.left() <= 0

    def check(self) -> None:
        """Raise :class:`TimeUp` when the deadline has passed."""
        if self.passed():
            raise TimeUp

    def used(self) -> float:
        return now() - self.start

    def within(self, seconds: float | None) -> Deadline:
        """The earlier of this deadline and ``seconds`` from now (None: this one)."""
        if seconds is None or seconds >= self.left():
            return self
        return Deadline(seconds)

    def charge(self, seconds: float) -> None:
        """Count ``seconds`` of estimated work done: nothing for a clock, the whole point of :class:`Work`."""


class Work(Deadline):
    """An allotment of ``seconds`` of estimated work (None: unlimited), with a Deadline's interface.

    Its time passes only by :meth:`charge`: a computation charges each step, node or test at the
    seconds its size predicts (the cost models beside the registry's estimates), so it stops after a
    number of steps fixed by its inputs, whatever the machine's load.  ``within(s)`` is a share of it
    whose charges count here too, and which ends when this one does.  A computation that charges nothing
    runs to its end under it.  ``net``: a factor of a CPU safety net (:data:`NET_FACTOR`; None: none) —
    of ``net`` × seconds + :data:`NET_SLACK` CPU seconds from its creation; what is left is at most the
    CPU seconds left of it over ``net``, and ``fired`` says that this bound was ever the smaller.
    """

    __slots__ = ("factor", "fired", "net", "parent", "spent")

    def __init__(self, seconds: float | None = None, parent: Work | None = None, net: float | None = None):
        self.seconds = None if seconds is None else max(float(seconds), 0.0)
        self.start = 0.0
        self.cpu = self.wall = math.inf  # no clock is read, but by the safety net
        self.spent = 0.0
        self.parent = parent
        self.fired = False
        s = self.seconds
        self.factor = 1.0 if net is None else net
        self.net: float | None = None
        if net is not None and s is not None and math.isfinite(s):
            self.net = now() + net * s + NET_SLACK

    def left(self) -> float:
        own = math.inf if self.seconds is None else self.seconds - self.spent
        if self.net is not None:
            cpu_left = (self.net - now()) / self.factor
            if cpu_left < own:  # the machine runs slower than the estimates: the net decides
                self.fired = True
                own = cpu_left
        return own if self.parent is None else min(own, self.parent.left())

    def used(self) -> float:
        return self.spent

    def within(self, seconds: float | None) -> Deadline:
        if seconds is None or seconds >= self.left():
            return self
        return Work(seconds, parent=self)

    def charge(self, seconds: float) -> None:
        self.spent += seconds
        if self.parent is not None:
            self.parent.charge(seconds)

    def net_fired(self) -> bool:
        """Whether the CPU safety net of this allotment, or of one it is a share of, has shortened it."""
        return self.fired or (self.parent is not None and self.parent.net_fired())

    def renewed(self) -> Work:
        """A fresh allotment of the same seconds, a share of the same parent (a second run with the same options)."""
        return Work(self.seconds, parent=self.parent)


def deadline(limit: Deadline | float | None) -> Deadline:
    """A Deadline from a time limit in seconds (None: none) or a Deadline or :class:`Work` (itself)."""
    return limit if isinstance(limit, Deadline) else Deadline(limit)


@contextmanager
def progress_bar(
    seconds: float | Work | None, desc: str = "certifying"
) -> Iterator[Callable[[str, float], None] | None]:
    """``progress(label, seconds used)`` drawing a bar of a budget's seconds of work on stderr: only on a
    terminal and once the work has run for :data:`PROGRESS_DELAY` seconds (yields None otherwise)."""
    if not sys.stderr.isatty():
        yield None
        return
    seconds = seconds.seconds if isinstance(seconds, Work) else seconds
    from tqdm import tqdm  # deferred: only a terminal draws a bar, and the bounds import this module

    shape = None if seconds is None else "{desc}: {percentage:3.0f}%|{bar}| {n:.1f} of {total:.3g} s{postfix}"
    bar = tqdm(total=seconds, desc=desc, unit="s", delay=PROGRESS_DELAY, file=sys.stderr, leave=False, bar_format=shape)

    def progress(label: str, used: float) -> None:
        bar.set_postfix_str(label, refresh=False)
        bar.update(max(min(used, seconds if seconds is not None else used) - bar.n, 0.0))

    try:
        yield progress
    finally:
        bar.close()


class Stall:
    """Whether a search's best bound, below ``target``, fell by less than ``rtol`` (relative) over the last
    ``window`` seconds of ``deadline``'s work; ``fired`` once it has.  Above ``target`` it never stalls (dabe_sdp's
    refinement, certpca/certification/sdp_sample.py: the matrix bound after it starts only from a bound that
    leads; the exact search on a threshold component, certpca/certification/threshold.py, passes inf)."""

    def __init__(self, deadline, best: float, target: float, window: float, rtol: float):
        self.deadline, self.target, self.window, self.rtol = deadline, target, window, rtol
        self.best, self.fired = best, False
        self.marks: list[tuple[float, float]] = [(deadline.used(), best)]  # (work used, best bound then)

    def seen(self, value: float) -> bool:
        """Record a bound just computed; True (and ``fired``) when the best has stalled."""
        self.best = min(self.best, value)
        now = self.deadline.used()
        self.marks.append((now, self.best))
        while len(self.marks) > 1 and self.marks[1][0] <= now - self.window:
            self.marks.pop(0)
        then, before = self.marks[0]
        flat = now - then >= self.window and before - self.best <= self.rtol * self.best
        self.fired = flat and self.best < self.target
        return self.fired
