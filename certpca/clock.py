"""The one clock of budgets and time limits: CPU seconds of this process.

Every budget (``certify(..., budget=)``, ``--budget``) and every time limit of a bound or search
(``time_limit=``) is counted on :func:`now`, the CPU time of the process, not the wall clock: a
busy machine slows a computation down but does not make it do less work, so the same certificate
comes out on a loaded machine as on a quiet one (up to the jitter of CPU accounting near a limit).
A certificate's bounds run with one BLAS thread (certification/certificate.py), so a CPU second is
a wall second on a quiet machine: with several threads the seconds add up, and on a busy machine
idle BLAS threads spin (a 2000 × 2000 eigenvalue problem took 13.8 CPU s on two threads and 0.7 s on
one, load 4 on 2 cores), which would make a certificate depend on the load again.  Work done in child
processes is not counted: nothing that runs under a budget forks.

A :class:`Deadline` also has a wall-clock safety net, :data:`WALL_FACTOR` times its seconds (plus
:data:`WALL_SLACK`): a process that is starved of CPU, or waits, still stops.  On a quiet machine it
is never reached.

CPU seconds are not exactly reproducible: a bound stopped by them can stop one iteration earlier on a
busy machine (cache contention), and the wall-clock safety net cuts under heavy load.  Where the result
must not depend on the machine at all (the report's byte-identical page), a bound is given
:class:`Work` instead: an allotment of *estimated* seconds that the computation charges itself, step
by step, at the cost its size predicts (``charge``); it is never measured, so the same inputs stop
at the same step.
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
    whose charges count here too.  A computation that charges nothing runs to its end under it.
    """

    __slots__ = ("parent", "spent")

    def __init__(self, seconds: float | None = None, parent: Work | None = None):
        self.seconds = None if seconds is None else max(float(seconds), 0.0)
        self.start = 0.0
        self.cpu = self.wall = math.inf  # no clock is read
        self.spent = 0.0
        self.parent = parent

    def left(self) -> float:
        if self.seconds is None or not math.isfinite(self.seconds):
            return math.inf
        return self.seconds - self.spent

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

    def renewed(self) -> Work:
        """A fresh allotment of the same seconds (for a second run with the same options)."""
        return Work(self.seconds)


def deadline(limit: Deadline | float | None) -> Deadline:
    """A Deadline from a time limit in seconds (None: none) or a Deadline or :class:`Work` (itself)."""
    return limit if isinstance(limit, Deadline) else Deadline(limit)


@contextmanager
def progress_bar(seconds: float | None, desc: str = "certifying") -> Iterator[Callable[[str, float], None] | None]:
    """``progress(label, seconds used)`` drawing a bar of a budget's CPU seconds on stderr: only on a
    terminal and once the work has run for :data:`PROGRESS_DELAY` seconds (yields None otherwise)."""
    if not sys.stderr.isatty():
        yield None
        return
    from tqdm import tqdm  # deferred: only a terminal draws a bar, and the bounds import this module

    shape = None if seconds is None else "{desc}: {percentage:3.0f}%|{bar}| {n:.1f} of {total:.3g} CPU s{postfix}"
    bar = tqdm(total=seconds, desc=desc, unit="s", delay=PROGRESS_DELAY, file=sys.stderr, leave=False, bar_format=shape)

    def progress(label: str, used: float) -> None:
        bar.set_postfix_str(label, refresh=False)
        bar.update(max(min(used, seconds if seconds is not None else used) - bar.n, 0.0))

    try:
        yield progress
    finally:
        bar.close()
