"""A certificate for every component of a Fit, each against the problem that component solved.

The first component maximises wᵀCw; later ones solve other problems, fixed by the
deflation scheme (Sigg & Buhmann 2008):

- ``projection`` (eq. 18), and ``quasi``/``joint`` read the same way: component j
  against the covariance deflated by components 1..j−1, C_j = (I − w wᵀ) C_{j−1} (I − w wᵀ);
  its value there is the variance it adds beyond the earlier directions' projections;
- ``disjoint`` (eq. 19): component j against C restricted to the features no earlier
  component used.

So "PC2 is certified 97%" means: on the problem PC2 faced, no k-sparse unit vector
has more than PC2's value / 0.97.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import numpy as np

from certpca.certification.certificate import DEFAULT_BUDGET, Better, Certificate, certify_vector, work_of
from certpca.clock import Work
from certpca.problem import Problem
from certpca.results import Component, Fit
from certpca.solvers.base import as_loadings, fix_sign, reach_of


def solved_problems(fit: Fit) -> list[tuple[Problem, np.ndarray]]:
    """(problem, features) per component: the operator it maximised over, and which original
    feature indices that operator's coordinates are."""
    problem = fit.problem
    if not isinstance(problem, Problem):
        raise TypeError("the Fit carries no problem; fit it with certpca.fit or fit_components")
    disjoint = fit.options.get("deflation") == "disjoint"
    out: list[tuple[Problem, np.ndarray]] = []
    current, free = problem, np.arange(problem.dim)
    last = len(fit.components) - 1
    for i, comp in enumerate(fit.components):
        w = comp.weights
        if disjoint:
            out.append((problem.subset(free), free))
            free = free[w[free] == 0]
        else:
            out.append((current, np.arange(problem.dim)))
            norm = np.linalg.norm(w)
            if norm > 0 and i < last:  # a deflated factor costs two copies of it: only when another follows
                current = current.deflate(w / norm)
    return out


def certify_components(
    fit: Fit,
    *,
    bounds=None,
    budget: float | Work | None = None,
    tol: float = 1e-6,
    start: int = 0,
    stop: int | None = None,
    time_limits: dict[str, float] | None = None,
    progress: Callable[[str, float], None] | None = None,
    fixed_work: bool = False,
) -> list[Certificate | None]:
    """One certificate per component (None for a component with no nonzero loading), each from
    :func:`~certpca.certification.certify_vector` on the problem it solved (:func:`solved_problems`).

    ``bounds``, ``tol``, ``time_limits`` and ``fixed_work`` as for ``certify_vector``; k is the component's k,
    capped by the features left.  ``budget`` (seconds of estimated work, :mod:`certpca.clock`, or a
    :class:`~certpca.clock.Work` of a larger call) is for all of them together (:func:`share_of`); with the
    default bounds and no budget it is ``DEFAULT_BUDGET`` (with ``fixed_work``: none, and no CPU safety net).
    ``progress`` is called as ``progress("component j/n: bound", seconds used of the whole budget)``.
    ``start`` skips the first components (whose certificates the caller
    already holds); the list then begins with component ``start`` + 1.  ``stop`` ends it before
    component ``stop`` + 1.
    """
    nonneg = bool(fit.options.get("nonneg", fit.components[0].nonneg))
    clock = work_of(budget if fixed_work else total_budget(bounds, budget), fixed_work)
    certificates: list[Certificate | None] = []
    chosen = list(zip(fit.components, solved_problems(fit)))[start:stop]
    for i, (comp, (problem, features)) in enumerate(chosen):
        w = comp.weights[features]
        if not w.any():
            certificates.append(None)
            continue
        certificates.append(
            certify_vector(
                problem,
                w,
                min(comp.k, problem.dim),
                nonneg,
                bounds=bounds,
                budget=share_of(clock, len(chosen) - i),
                tol=tol,
                time_limits=time_limits,
                fixed_work=fixed_work,
                progress=component_progress(progress, clock, start + i, len(fit.components)),
            )
        )
    return certificates


def total_budget(bounds, budget: float | Work | None) -> float | Work | None:
    """The budget of a whole call: ``budget``, or ``DEFAULT_BUDGET`` for the default bounds (None: none)."""
    return DEFAULT_BUDGET if budget is None and bounds is None else budget


def share_of(clock: Work, remaining: int) -> Work | None:
    """The next of ``remaining`` certificates' share of one budget: an equal share of what is left (what one
    leaves unused goes to the later ones), charged to ``clock`` too; None without a budget."""
    if clock.seconds is None:
        return None
    return Work(max(clock.left(), 0.0) / max(remaining, 1), parent=clock)


def component_progress(progress, clock: Work, j: int, n: int) -> Callable[[str, float], None] | None:
    """``progress`` of a certificate of component j + 1 of n: its bound named, the whole call's seconds."""
    if progress is None:
        return None
    return lambda name, _used: progress(f"component {j + 1}/{n}: {name}" if n > 1 else name, clock.used())


def adopted_component(problem: Problem, comp: Component, better: Better, features=None) -> Component:
    """``comp`` with the vector of ``better`` (on the coordinates ``features`` of ``problem``, all by
    default): its loadings, variance on ``problem`` and reach; ``extras["adopted"]`` says what found it."""
    w = np.zeros(problem.dim)
    w[slice(None) if features is None else features] = better.weights
    w = fix_sign(w, comp.nonneg)
    reach, reason = reach_of(problem, w, comp.k, comp.nonneg)
    return dataclasses.replace(
        comp,
        loadings=as_loadings(problem, w),
        variance=problem.variance(w),
        extras={**comp.extras, "adopted": f"found by {better.finder}, +{100 * better.gain:.3g}%"},
        status=dataclasses.replace(comp.status, reach=reach, reach_reason=reason),
    )


__all__ = [
    "adopted_component",
    "certify_components",
    "component_progress",
    "share_of",
    "solved_problems",
    "total_budget",
    "work_of",
]
