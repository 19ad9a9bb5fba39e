"""Work of a report that needs nothing from the rest of it, in a forked process beside it (issue 29, part 6).

The gene-selection evaluation (its gene-set test in a child of its own) and the stability refits read the
data and a method's name only, the nonnegative fits and every path the problem and the plan
(reporting/modes.py); each runs in a child process forked when its inputs are known, while the report's
own process certifies, the band once the paths are; the nonnegative certificate runs in a child of its own
beside the plain one, which streams it the bounds it takes (reporting/beside.py).
(Niced children, to leave the cores to the certificates, were slower on a shared machine, whose other
processes took their share: reports/bench/report.md.)  How many processes: :func:`cores` (the CPU
affinity), the one place that decides.  A child computes exactly what the report's process would (the same
code on a copy of the same memory, seeded alike), so the page is the same with one process or several; the report's
budget is estimated work that its certificates and band charge (:mod:`certpca.clock`, ``Work``), which
the children do not spend.  Only the result comes back, pickled through a pipe.

Without ``fork`` (or with one core, or ``jobs=1``) the work runs in this process when its result is
asked for.  A child never runs a bound solved inside cvxpy (reporting/band.py, ``IN_PROCESS``: a
forked Clarabel deadlocked), and a child that dies is replaced by computing the work here.
"""

from __future__ import annotations

import multiprocessing
import os
import time
import traceback
from collections.abc import Callable
from typing import Generic, TypeVar

from threadpoolctl import threadpool_limits

T = TypeVar("T")


def cores(jobs: int | None = None) -> int:
    """The number of processes a report runs on: ``jobs``, or None for the cores this process may use
    (its CPU affinity, which a container or ``taskset`` sets); 1 without the ``fork`` start method."""
    if "fork" not in multiprocessing.get_all_start_methods():
        return 1
    if jobs is None:
        jobs = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(int(jobs), 1)


def can_fork(jobs: int | None = None) -> bool:
    """Whether side work runs in child processes: :func:`cores` of ``jobs`` above 1."""
    return cores(jobs) > 1


class Side(Generic[T]):
    """``work()`` started now in a forked child (``fork``) or run later in this process; ``result()``
    gives its value (or raises its exception) either way."""

    def __init__(self, work: Callable[[], T], fork: bool):
        self.work = work
        self.process = None
        if fork:
            ctx = multiprocessing.get_context("fork")
            self.receive, send = ctx.Pipe(duplex=False)
            # not a daemon: the work may fork
            self.process = ctx.Process(target=_child, args=(work, send))
            self.process.start()
            send.close()

    def result(self) -> T:
        if self.process is None:
            return self.work()
        try:
            ok, value = self.receive.recv()
        except EOFError:  # the child died without an answer: compute it here
            ok, value = True, self.work()
        finally:
            self.receive.close()
            self.process.join()
        if not ok:
            raise value
        return value

    def cancel(self) -> None:
        """The value is not needed: its child, if any, is stopped."""
        if self.process is not None:
            self.process.terminate()
            self.process.join()
            self.receive.close()


def recorded(work: Callable[..., T]) -> tuple[T, list[tuple[str, float]]]:
    """``work(step=...)``'s value and its steps with their wall-clock seconds (recorded where it ran, a child
    process perhaps, and replayed into the report's progress, ``Steps`` in reporting/run.py)."""
    done: list[tuple[str, float]] = []
    last = [time.perf_counter()]

    def record(label: str) -> None:
        now = time.perf_counter()
        done.append((label, round(now - last[0], 3)))
        last[0] = now

    return work(step=record), done


def _child(work: Callable[[], object], send) -> None:
    """In the child: the work with one BLAS thread (the parent uses the other core), its value or its
    exception sent back."""
    try:
        with threadpool_limits(limits=1):
            value = work()
        send.send((True, value))
    except BaseException as exc:  # sent back to be raised in the parent, where it would have been raised
        try:
            send.send((False, exc))
        except Exception:  # an exception that does not pickle: its text
            send.send((False, RuntimeError("".join(traceback.format_exception(exc)))))
    finally:
        send.close()


__all__ = ["Side", "can_fork", "cores", "recorded"]
