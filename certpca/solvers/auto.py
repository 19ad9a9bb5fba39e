"""``auto``: the best of the registry's strongest solvers, at a few times EM's cost (issue 27's default-to-be).

EM (Sigg & Buhmann 2008) from its own starts, GPower-ℓ0 (Journée et al. 2010) from its
starts and, up to ``SPANNOGRAM_MAX_DIM`` features, the exact rank-2 spannogram (Asteris et
al. 2014), each under the problem's sign constraint; and from the other sign, whose answers
are feasible or nearly so: for w ≥ 0 the signed spannogram's vector, flipped when it comes
out all ≤ 0 and otherwise cut to the positive part of its heavier sign; for the signed
problem nonnegative EM from the positive parts of ±PC1, feasible as it is.  The driver
(:func:`certpca.solvers.solve`) runs every start, refits each support and keeps the best,
above its floor (best single feature, thresholded PC1).  EM alone lost to a single registry
solver on khan, CBCL and pbmc (issue 27); reports/bench/defaults.md compares the two on every
bundled data set.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .base import Run, Solver
from .em import EM
from .gpower import GPowerL0
from .spannogram import Spannogram

#: the rank-2 sweep runs up to this many features: on leukemia (D = 12582) it alone took 0.11 s, twice
#: EM's whole k = 50 fit, beyond the 3 × EM's time the default may cost (issue 27; reports/bench/defaults.md)
SPANNOGRAM_MAX_DIM = 5000

#: the candidate solvers, by name
CANDIDATES: dict[str, Solver] = {s.name: s for s in (EM(), GPowerL0(), Spannogram())}


#: the candidates run from a vector start (the driver's floor, a path's previous k), as each alone would be
WARM = ("em", "gpower-l0")


@dataclass(frozen=True)
class Start:
    """One candidate run: which solver, under which sign constraint, from which start."""

    method: str
    nonneg: bool
    start: object


class Auto(Solver):
    """EM, GPower-ℓ0 and the rank-2 spannogram under both sign constraints; the best is kept."""

    name = "auto"
    warm_start = True  # a vector start (the floor's, a path's previous k) runs EM from it
    path_options = EM.path_options
    reference = (
        "The best of EM (" + EM.reference + "), GPower-l0 (" + GPowerL0.reference + ") and the rank-2 "
        "spannogram (" + Spannogram.reference + "), under both sign constraints."
    )

    def starts(self, problem, nonneg, rng, restarts):
        em, gpower = CANDIDATES["em"], CANDIDATES["gpower-l0"]
        own = [Start("em", nonneg, s) for s in em.starts(problem, nonneg, rng, restarts)]
        own += [Start("gpower-l0", nonneg, s) for s in gpower.starts(problem, nonneg, rng, 0)]
        if nonneg:
            # the signed spannogram's vector is often one-signed (pbmc --scale k = 10: the optimum)
            sweeps = [Start("spannogram", True, rng), Start("spannogram", False, rng)]
        else:  # and nonnegative EM from the positive parts of ±PC1 (its deterministic starts but e_j)
            sweeps = [Start("spannogram", False, rng)]
            own += [Start("em", True, s) for s in em.starts(problem, True, rng, 0)[:-1]]
        return own + (sweeps if problem.dim <= SPANNOGRAM_MAX_DIM else [])

    def run(self, problem, k, nonneg, start, **path_options):
        if not isinstance(start, Start):  # a vector (the floor's, a path's previous k): each warm-startable one
            runs = [self.run(problem, k, nonneg, Start(m, nonneg, start), **path_options) for m in WARM]
            return max(runs, key=lambda r: problem.variance(r.weights))
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
