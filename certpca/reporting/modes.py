"""One sign constraint's fits at k and its variance–cardinality path: the report's work that needs nothing
from the certificates, so it can run in a child process beside them (reporting/side.py, issue 29 part 6).

:func:`fit_mode` fits every method of the plan at k for one sign constraint (exactly what ``certpca fit DATA
--k K --method M [--nonneg] --json`` prints, same seed); :func:`trace_paths` traces the path of each method
on the grid.  Both depend only on the problem, the plan and the sign: the solvers keep nothing in
``Problem.memo`` across sign constraints but pure values (``floor``'s keys carry the sign), so a child forked
with a copy of the problem computes what this process would.  :func:`detached` prepares a result to cross a
pipe: the fits leave their problem behind (a copy of the covariance and its memo) and get this process's back.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial

from certpca.components import fit_components
from certpca.data import Dataset
from certpca.errors import InputError
from certpca.messages import quiet
from certpca.paths import fit_path
from certpca.problem import Problem
from certpca.reporting.options import Plan
from certpca.reporting.saved import MethodPath, PathPoint
from certpca.reporting.side import recorded
from certpca.results import Component, Fit


def suffix(nonneg: bool, text: str = " nonneg") -> str:
    """``text`` for the nonnegative problem, nothing for the plain one (labels of steps and notes)."""
    return text if nonneg else ""


@dataclass
class ModeFits:
    """One sign constraint's fits at k, with the notes of their warnings and the methods that failed."""

    fits: list[Fit] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)

    def on_path(self, plan: Plan) -> list[str]:
        """The methods whose path the report traces: those of the plan's path that fitted at k."""
        return [f.options["method"] for f in self.fits if f.options["method"] in plan.on_path]


@dataclass
class ModePaths:
    """One sign constraint's paths: the saved points per method, the components per k, the notes."""

    paths: list[MethodPath] = field(default_factory=list)
    by_k: dict[int, list[Component]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def fit_mode(ds: Dataset, problem: Problem, plan: Plan, nonneg: bool, step: Callable[[str], None]) -> ModeFits:
    """Every method of the plan at k for one sign constraint; a method that fails with an InputError is
    skipped with its reason."""
    out = ModeFits()
    for m in plan.methods_for(nonneg):
        with quiet() as caught:
            try:
                fit = fit_components(
                    problem,
                    plan.k,
                    n_components=plan.components,
                    method=m,
                    nonneg=nonneg,
                    seed=plan.seed,
                    data=ds.describe(),
                    **plan.options_for(m),
                )
            except InputError as err:
                out.skipped.setdefault(m, f"{'nonnegative' if nonneg else 'sparse'}: {err}")
                continue
        out.notes += [f"{m}{suffix(nonneg, ' (nonneg)')}: {w.message}" for w in caught]
        out.fits.append(fit)
        step(f"fit {m}{suffix(nonneg)}")
    return out


def trace_paths(
    problem: Problem, plan: Plan, nonneg: bool, methods: list[str], step: Callable[[str], None]
) -> ModePaths:
    """The path of each of ``methods`` on the plan's grid (warm-started, :func:`certpca.paths.fit_path`)."""
    out = ModePaths(by_k={kk: [] for kk in plan.ks})
    for m in methods:
        with quiet() as caught:
            comps = fit_path(problem, plan.ks, method=m, nonneg=nonneg, seed=plan.seed)
        out.notes += [f"path {m}{suffix(nonneg, ' (nonneg)')}: {w.message}" for w in caught]
        points = [
            PathPoint(
                k=c.k,
                value=float(c.variance),
                cardinality=c.cardinality,
                iterations=int(c.iterations),
                seconds=float(c.seconds),
            )
            for c in comps
        ]
        out.paths.append(MethodPath(method=m, nonneg=nonneg, points=points))
        for c in comps:
            out.by_k[c.k].append(c)
        step(f"path {m}{suffix(nonneg)}")
    return out


def best_fit(fits: list[Fit]) -> Fit:
    """The fit whose first component has the largest variance: the one the report certifies."""
    return max(fits, key=lambda f: f.components[0].variance)


def fits_and_paths(
    ds: Dataset,
    problem: Problem,
    plan: Plan,
    nonneg: bool,
    step: Callable[[str], None],
    fitted: Callable[[ModeFits], None] | None = None,
) -> tuple[ModeFits, ModePaths]:
    """A sign constraint's fits and, when the report has a path, its paths (the work of a child process,
    :func:`fitted_beside`); ``fitted(fits)`` is called with the fits before the paths are traced."""
    fits = fit_mode(ds, problem, plan, nonneg, step)
    if fitted is not None:
        fitted(fits)
    return fits, trace_paths(problem, plan, nonneg, fits.on_path(plan) if plan.ks else [], step)


def fitted_beside(
    ds: Dataset, problem: Problem, plan: Plan, nonneg: bool, fitted: Callable[[ModeFits], None] | None = None
) -> tuple[ModeFits, ModePaths, list[tuple[str, float]]]:
    """:func:`fits_and_paths` with its steps' seconds, ready to leave a child process (:func:`detached`)."""
    (fits, paths), done = recorded(partial(fits_and_paths, ds, problem, plan, nonneg, fitted=fitted))
    return detached(fits), paths, done


def detached(fitted: ModeFits) -> ModeFits:
    """``fitted`` without the fits' problem, to be sent from a child (:func:`attached` puts it back)."""
    for fit in fitted.fits:
        fit.problem = None
    return fitted


def attached(fitted: ModeFits, problem: Problem) -> ModeFits:
    """``fitted`` by a child with this process's ``problem`` in its fits, as if fitted here."""
    for fit in fitted.fits:
        fit.problem = problem
    return fitted


__all__ = [
    "ModeFits",
    "ModePaths",
    "attached",
    "best_fit",
    "detached",
    "fit_mode",
    "fits_and_paths",
    "fitted_beside",
    "suffix",
    "trace_paths",
]
