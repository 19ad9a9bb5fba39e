"""``auto``, the default method: the best of the registry's strongest solvers, at a few times EM's cost.

EM (Sigg & Buhmann 2008) from its own starts, GPower-ℓ0 (Journée et al. 2010) from its
starts and, up to ``SPANNOGRAM_MAX_DIM`` features, the exact rank-2 spannogram (Asteris et
al. 2014), each under the problem's sign constraint; and from the other sign, whose answers
are feasible or nearly so: for w ≥ 0 the vectors of the signed spannogram and of signed EM from
random starts, each flipped when it comes out all ≤ 0 and otherwise cut to the positive part of
its heavier sign; for the signed problem nonnegative EM from the positive parts of ±PC1, feasible
as it is, and signed EM from the same random starts.  The driver
(:func:`certpca.solvers.solve`) runs every start, refits each support and keeps the best,
above its floor (best single feature, thresholded PC1).  EM alone lost to a single registry
solver on khan, CBCL and pbmc (issue 27); reports/bench/defaults.md compares the two on every
bundled data set.

Up to ``L1_MAX_K`` nonzeros a GPower start also runs GPower-ℓ1 and keeps the better of the two, and
the driver ends with a swap search from the best vector (:mod:`.swap`): together they closed the
10 rows of reports/bench/defaults.md where GPower-ℓ1 or the spannogram alone had beaten the rest.
GPower iterates on the dense factor, which sparse or dask data with more features than samples
form only within ``problem.FACTOR_BYTES`` (``Problem.factor_fits``): beyond it the GPower candidates
are left out (EM, the spannogram, whose eigenvectors and submatrices come from the implicit
products, and the swap search remain), and the component's ``extras["auto"]`` says so.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .base import Run, Solver
from .em import EM
from .gpower import GPowerL0, GPowerL1
from .renormalize import renormalize
from .spannogram import Spannogram
from .swap import REFERENCE as SWAP_REFERENCE

#: the rank-2 sweep runs up to this many features: on leukemia (D = 12582) it alone took 0.11 s, twice
#: EM's whole k = 50 fit, beyond the 3 × EM's time the default may cost (issue 27; reports/bench/defaults.md)
SPANNOGRAM_MAX_DIM = 5000

#: GPower-ℓ1 also runs up to this k: it alone beat the others on 9 rows of reports/bench/defaults.md, all at
#: k ≤ 20 (pbmc --scale k = 20 even after the swap search), and on leukemia k = 50 it takes 3.5 × EM's whole fit
L1_MAX_K = 20

#: the candidate solvers, by name
CANDIDATES: dict[str, Solver] = {s.name: s for s in (EM(), GPowerL0(), GPowerL1(), Spannogram())}

#: what ``extras["auto"]`` says when the dense factor does not fit (sparse or dask data, D > N)
IMPLICIT_NOTE = (
    "GPower left out: the dense factor it iterates on would exceed the memory limit for these sparse or dask "
    "data (EM, the spannogram and the swap search ran)"
)


@dataclass(frozen=True)
class Start:
    """One candidate run: which solver, under which sign constraint, from which start."""

    method: str
    nonneg: bool
    start: object


class Auto(Solver):
    """EM, GPower (ℓ0; ℓ1 at small k) and the rank-2 spannogram under both sign constraints; the best is kept
    and polished by the driver's swap search."""

    name = "auto"
    warm_start = True  # a vector start (the floor's, a path's previous k) runs EM from it
    polish = True  # the driver's swap search from the best vector
    path_options = EM.path_options
    reference = (
        "The best of EM (" + EM.reference + "), GPower-l0 and -l1 (" + GPowerL0.reference + ") and the rank-2 "
        "spannogram ("
        + Spannogram.reference
        + "), under both sign constraints, polished by swaps ("
        + SWAP_REFERENCE
        + ")."
    )

    def starts(self, problem, nonneg, rng, restarts):
        em, gpower = CANDIDATES["em"], CANDIDATES["gpower-l0"]
        own = [Start("em", nonneg, s) for s in em.starts(problem, nonneg, rng, restarts)]
        if problem.factor_fits:
            own += [Start("gpower-l0", nonneg, s) for s in gpower.starts(problem, nonneg, rng, 0)]
        if nonneg:
            # signed answers are often one-signed: the spannogram's (pbmc --scale k = 10: the optimum) and
            # EM's from random starts (alon --log2 20 k = 50: 64.43 where the nonnegative runs reach 62.33)
            sweeps = [Start("spannogram", True, rng), Start("spannogram", False, rng)]
        else:  # and nonnegative EM from the positive parts of ±PC1 (its deterministic starts but e_j)
            sweeps = [Start("spannogram", False, rng)]
            own += [Start("em", True, s) for s in em.starts(problem, True, rng, 0)[:-1]]
        sweeps += [Start("em", False, s) for s in _random_starts(problem.dim, rng, restarts)]
        return own + (sweeps if problem.dim <= SPANNOGRAM_MAX_DIM else [])

    def run(self, problem, k, nonneg, start, **path_options):
        gpower = () if not problem.factor_fits else ("gpower-l0", "gpower-l1") if k <= L1_MAX_K else ("gpower-l0",)
        if not isinstance(start, Start):  # a vector (the floor's, a path's previous k): each warm-startable one
            runs = [self._run(problem, k, nonneg, Start(m, nonneg, start), **path_options) for m in ("em", *gpower)]
        elif start.method == "gpower-l0":
            runs = [self._run(problem, k, nonneg, Start(m, start.nonneg, start.start)) for m in gpower]
        else:
            runs = [self._run(problem, k, nonneg, start, **path_options)]
        # compared as the driver will: refitted on their supports (ℓ1's soft-thresholded weights are shrunk)
        run = runs[0]
        if len(runs) > 1:
            run = max(
                runs, key=lambda r: renormalize(problem, r.weights, r.support, nonneg)[1] if r.weights.any() else 0
            )
        if not problem.factor_fits:
            run.extras["auto"] = IMPLICIT_NOTE
        return run

    def _run(self, problem, k, nonneg, start: Start, **path_options) -> Run:
        """One candidate's run, made feasible for the problem's sign constraint, named in its extras."""
        solver = CANDIDATES[start.method]
        options = dict(solver.defaults)
        if start.method == "em":
            options.update(path_options)
        run = solver.run(problem, k, start.nonneg, start.start, **options)
        kind = (
            start.method
            if start.nonneg == nonneg
            else f"{start.method} ({'nonnegative' if start.nonneg else 'signed'})"
        )
        w = run.weights
        if nonneg and not start.nonneg:
            w = _nonnegative_part(w)
        extras = {**run.extras, "candidate": kind}
        if w is run.weights:
            return Run(w, run.support, run.iterations, run.converged, extras, run.reach, run.reach_reason)
        return Run(w, np.flatnonzero(w), run.iterations, run.converged, extras)


def _nonnegative_part(w: np.ndarray) -> np.ndarray:
    """A signed vector made feasible for w ≥ 0: itself flipped when it is all ≤ 0, else the positive part of
    its heavier sign (which the driver refits on its support)."""
    plus, minus = np.maximum(w, 0.0), np.maximum(-w, 0.0)
    part = plus if np.linalg.norm(plus) >= np.linalg.norm(minus) else minus
    norm = np.linalg.norm(part)
    return part / norm if norm > 0 else part


def _random_starts(dim: int, rng: np.random.Generator, n: int) -> list[np.ndarray]:
    """``n`` random unit vectors for signed EM, as nsprcomp's restarts (Sigg & Buhmann 2008, Sec. 3.1):
    from PC1 alone EM stopped 2.4-3.5% below nsprcomp on khan ``--scale`` (tests/test_nsprcomp_reference.py).
    Drawn from a child of ``rng``, so the other candidates' draws stay as they were."""
    (child,) = rng.spawn(1)
    starts = child.standard_normal((n, dim))
    return list(starts / np.linalg.norm(starts, axis=1, keepdims=True))
