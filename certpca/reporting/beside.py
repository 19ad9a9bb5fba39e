"""The report's certificate of w ≥ 0 computed at once with the plain one, in a forked child (issue 29, part 6).

The certificate of w ≥ 0 takes three things from the plain one (``reuse`` of
:func:`certpca.certification.certify_vector`): the sign-free bounds in their place, the signed twin of every
other bound once its own value is computed, and through both the target of a bound with a target option.
Computed one after the other, the two certificates were the report's critical path.  Here the plain
certificate sends each of its bounds through a pipe as soon as it is settled (``settled``) to a child that
computes the certificate of w ≥ 0, whose ``reuse`` (:class:`Streamed`) waits for a bound only when it looks
it up: its own costly bounds start at once, and every number is the one the certificate computed after the
plain one gives.

Those bounds do not depend on the vector certified when none has a support option and none reads what
another certificate left in ``Problem.memo`` (:func:`concurrent`), so the child certifies a stand-in vector
before the fits of w ≥ 0 are back, and the report's process gives their best vector its certificate from the
child's bounds (:func:`certpca.certification.recertify`: bit for bit what ``certify_vector`` gives it).  When
one has a support option (screening's hint, pbmc's list), the child waits for that best vector instead, which
the child fitting w ≥ 0 hands it (:class:`Handoff`) before it traces its paths, and certifies it itself.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import replace

import numpy as np

from certpca.certification import REGISTRY as BOUNDS
from certpca.certification import Bound, Certificate, certify_vector, recertify
from certpca.problem import Problem
from certpca.reporting.band import IN_PROCESS
from certpca.reporting.modes import ModeFits, best_fit
from certpca.reporting.options import Plan, certificate_bounds
from certpca.reporting.side import Side

#: bounds that read what a bound of another certificate left in ``Problem.memo`` (the matrix-multiplier
#: bound starts from dabe_sdp's iterate at k, certification/sdp_matrix.py): computed in a child forked
#: before the plain certificate left it there, they could differ
READS_MEMO = frozenset({"dabe_sdp_matrix"})


def concurrent(names: Sequence[str], vector: bool = False) -> bool:
    """Whether a certificate of w ≥ 0 with the bounds ``names`` can run beside the plain one with the same
    numbers: none depends on the vector's support unless the child gets the vector (``vector``, a
    :class:`Handoff`), none is solved inside cvxpy (never in a forked child, reporting/band.py ``IN_PROCESS``),
    none reads another certificate's memo (``READS_MEMO``)."""
    return not any(
        (BOUNDS[n].support_option is not None and not vector) or n in IN_PROCESS or n in READS_MEMO for n in names
    )


class Handoff:
    """The best vector of w ≥ 0, from the child that fits w ≥ 0 (``give``, reporting/modes.py ``fitted_beside``)
    to the child that certifies it (``take``): made before both are forked, each closes the end it does not use,
    the report's process both once they are forked (``forked``)."""

    def __init__(self) -> None:
        self.receive, self.send = multiprocessing.get_context("fork").Pipe(duplex=False)

    def give(self, fits: ModeFits) -> None:
        """In the fitting child: the first component of the best fit (:func:`best_fit`), or None without fits."""
        self.receive.close()
        try:
            self.send.send(best_fit(fits.fits).components[0].weights if fits.fits else None)
        except (BrokenPipeError, OSError):  # the certifying child is gone: the report's process certifies
            pass
        self.send.close()

    def take(self) -> np.ndarray | None:
        """In the certifying child: the vector, or None when none comes (no fit, or the fitting child died)."""
        self.send.close()
        try:
            return self.receive.recv()
        except EOFError:
            return None
        finally:
            self.receive.close()

    def forked(self) -> None:
        """Both children are forked: the report's process holds neither end."""
        self.send.close()
        self.receive.close()


class Streamed(Mapping[str, Bound]):
    """The bounds of a certificate computed in another process (``names``), received as each is settled: a
    lookup waits for that bound, and only for it; a bound that the other certificate did not compute is
    absent.  A thread reads the pipe as messages come, so the sender never waits for this process."""

    def __init__(self, names: Sequence[str], receive) -> None:
        self.names = frozenset(names)
        self._got: dict[str, Bound | None] = {}
        self._ended = False
        self._ready = threading.Condition()
        self._receive = receive
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        try:
            while (message := self._receive.recv()) is not None:
                with self._ready:
                    self._got[message[0]] = message[1]
                    self._ready.notify_all()
        except EOFError:  # the sender is gone: what it did not send stays absent
            pass
        finally:
            with self._ready:
                self._ended = True
                self._ready.notify_all()

    def _wait(self, name: str) -> Bound | None:
        if name not in self.names:
            return None
        with self._ready:
            self._ready.wait_for(lambda: name in self._got or self._ended)
            return self._got.get(name)

    def received(self) -> dict[str, Bound]:
        """The bounds received so far (no wait)."""
        with self._ready:
            return {n: b for n, b in self._got.items() if b is not None}

    def __getitem__(self, name: str) -> Bound:
        b = self._wait(name)
        if b is None:
            raise KeyError(name)
        return b

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self._wait(name) is not None

    def __iter__(self) -> Iterator[str]:
        return iter([n for n in sorted(self.names) if n in self])

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def __bool__(self) -> bool:  # a certificate has at least one bound (else it raises): no wait for it
        return True


def stand_in(problem: Problem) -> np.ndarray:
    """A vector feasible for every k and sign (the first unit vector), certified in place of one not fitted yet."""
    w = np.zeros(problem.dim)
    w[0] = 1.0
    return w


class NonnegBeside:
    """The certificate of w ≥ 0 at k with ``options`` (``certify_vector``'s keywords) computed in a forked child
    from the bounds the plain certificate with the bounds ``plain`` sends it (``settled``, then ``close``): of
    the vector ``handoff`` gives it, or without one of a stand-in (:func:`stand_in`)."""

    def __init__(
        self, problem: Problem, k: int, plain: Sequence[str], options: dict, handoff: Handoff | None = None
    ) -> None:
        self.receive, self.send = multiprocessing.get_context("fork").Pipe(duplex=False)
        self.parent = os.getpid()
        self.problem, self.k, self.plain_names, self.options = problem, k, list(plain), options
        self.handoff = handoff
        self.plain: dict[str, Bound] = {}
        self.w = stand_in(problem)  # the vector certified here, in the report's process, once it is known
        self.side: Side[tuple | None] = Side(self._work, fork=True)
        self.receive.close()
        if handoff is not None:
            handoff.forked()

    def settled(self, name: str, bound: Bound | None) -> None:
        """The plain certificate's hook (``certify_vector``'s ``settled``): the bound to the child."""
        try:
            self.send.send((name, bound))
        except (BrokenPipeError, OSError):  # the child died: the report's process computes it (_work)
            pass

    def close(self) -> None:
        """The plain certificate is done (or failed): nothing more will come."""
        if not self.send.closed:
            try:
                self.send.send(None)
            except (BrokenPipeError, OSError):
                pass
            self.send.close()

    def cancel(self) -> None:
        """Not needed after all (no fit of w ≥ 0, or the plain certificate failed): the child is stopped."""
        self.close()
        self.side.cancel()

    def _work(self) -> tuple[Certificate, list[int], dict, np.ndarray] | None:
        """In the child, the certificate from the bounds streamed to it (None when the vector it waits for does
        not come); in the report's process (the child died, or had no vector), of the vector there from the
        plain certificate's bounds; with the places of the bounds taken as they were, what it added to
        ``Problem.memo`` (:func:`added`) and the vector it certified."""
        before = _keys(self.problem.memo)
        w = self.w
        if os.getpid() == self.parent:
            reuse: Mapping[str, Bound] = self.plain
            given = self.plain
        else:
            self.send.close()  # only the report's process writes
            reuse = Streamed(self.plain_names, self.receive)  # read from now: the plain one never waits for it
            if self.handoff is not None:
                if (handed := self.handoff.take()) is None:
                    return None
                w = handed
        cert = certify_vector(self.problem, w, self.k, True, reuse=reuse, **self.options)
        if isinstance(reuse, Streamed):
            given = reuse.received()
        taken = [i for i, b in enumerate(cert.bounds) if given.get(b.name) is b]
        return cert, taken, added(self.problem.memo, before), w

    def certificate(self, plain: Certificate, w: np.ndarray) -> Certificate:
        """The certificate of ``w`` (≥ 0) once the plain certificate ``plain`` is done: the child's bounds, a
        bound taken from ``plain`` as the very object there (as the certificate after it holds it); what the
        child left in ``Problem.memo`` is left in this process's (the band reuses it across k).  The child
        certified ``w`` itself when it was handed it, else a stand-in whose bounds ``w`` is given
        (:func:`certpca.certification.recertify`)."""
        self.close()
        self.plain = {b.name: b for b in plain.bounds}
        self.w = w
        computed = self.side.result() or self._work()
        assert computed is not None  # in the report's process _work always certifies
        cert, taken, memo, certified = computed
        merge(self.problem.memo, memo)
        bounds = [self.plain[b.name] if i in taken else b for i, b in enumerate(cert.bounds)]
        cert = replace(cert, bounds=bounds)
        return cert if np.array_equal(certified, w) else recertify(cert, self.problem, w)


def _keys(memo: dict) -> dict:
    """The keys of ``memo``, those of a nested dict nested alike (a dict of key → its keys, or None)."""
    return {key: _keys(v) if isinstance(v, dict) else None for key, v in memo.items()}


def added(memo: dict, before: dict) -> dict:
    """What ``memo`` holds that it did not hold when its keys were ``before`` (:func:`_keys`), nested alike."""
    out = {}
    for key, v in memo.items():
        if key not in before:
            out[key] = v
        elif isinstance(v, dict) and before[key] is not None and (more := added(v, before[key])):
            out[key] = more
    return out


def merge(memo: dict, more: dict) -> None:
    """``more`` (:func:`added`) into ``memo``, where it holds nothing yet: the memo's values are functions of
    the problem alone, so where both hold one it is the same."""
    for key, v in more.items():
        if key not in memo:
            memo[key] = v
        elif isinstance(v, dict) and isinstance(memo[key], dict):
            merge(memo[key], v)


def handoff_for(problem: Problem, plan: Plan, fork: bool) -> Handoff | None:
    """A :class:`Handoff` when the plan's certificate of w ≥ 0 runs beside the plain one (``fork``, the plain one
    first) and can only with its vector (:func:`concurrent`), else None."""
    names = certificate_bounds(problem, True, plan.head_bounds)
    beside = fork and plan.nonneg_modes == (False, True)
    return Handoff() if beside and not concurrent(names) and concurrent(names, vector=True) else None


def started(
    problem: Problem, k: int, plain: Sequence[str], options: dict, handoff: Handoff | None = None
) -> NonnegBeside | None:
    """The certificate of w ≥ 0 with ``options`` started beside the plain one with the bounds ``plain`` (of a
    stand-in, or of the vector ``handoff`` gives when one of its bounds needs it), or None when it could differ
    so (:func:`concurrent`): then it is computed after the plain one."""
    if concurrent(options["bounds"]):
        return NonnegBeside(problem, k, plain, options)
    if handoff is not None and concurrent(options["bounds"], vector=True):
        return NonnegBeside(problem, k, plain, options, handoff)
    return None


@contextmanager
def streaming(beside: NonnegBeside | None) -> Iterator[Callable[[str, Bound | None], None] | None]:
    """The plain certificate's ``settled`` hook for ``beside`` (None without it); the stream closed after it,
    and the child stopped if the plain certificate fails."""
    if beside is None:
        yield None
        return
    try:
        yield beside.settled
    except BaseException:
        beside.cancel()
        raise
    finally:
        beside.close()


__all__ = [
    "Handoff",
    "NonnegBeside",
    "Streamed",
    "added",
    "concurrent",
    "handoff_for",
    "merge",
    "stand_in",
    "started",
    "streaming",
]
