"""One component at a time: projection deflation or disjoint supports (Sigg & Buhmann 2008, eqs. 18, 19)."""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Sequence

import numpy as np

from ..problem import Problem
from ..results import Component
from ..solvers import solve
from ..solvers.base import as_loadings
from ..status import Reach


def sequential_components(
    problem: Problem,
    ks: list[int],
    *,
    method: str,
    nonneg: bool,
    disjoint: bool,
    rng: np.random.Generator,
    restarts: int,
    renormalize: bool,
    options: dict,
    fixed: Sequence[Component] = (),
) -> list[Component]:
    """One component per cardinality in ``ks``, each by :func:`~certpca.solvers.solve` on the deflated
    problem (eq. 18) or, ``disjoint``, on the features no earlier component used (eq. 19).

    ``fixed`` are the first components, kept as they are (deflated by, their features used): the
    rest are fitted after them (a component adopted from a certificate, :mod:`.adopt`).

    Disjoint components stop early, with a warning, once every feature is used; a
    component that finds fewer than k features left gets reach ``unreachable``.
    """
    components: list[Component] = []
    current = problem
    free = np.arange(problem.dim)  # features still available (disjoint scheme)
    for i, k in enumerate(ks):
        if i < len(fixed):
            w = fixed[i].weights
            if disjoint:
                free = free[w[free] == 0]
            elif i + 1 < len(ks):
                current = current.deflate(w)
            components.append(fixed[i])
            continue
        if disjoint:
            if free.size == 0:
                warnings.warn(
                    f"all features are used after {len(components)} disjoint components; stopping early", stacklevel=3
                )
                break
            k_left = min(k, free.size)  # made visible below as reach 'unreachable'
            comp = solve(
                problem.subset(free),
                k_left,
                method=method,
                nonneg=nonneg,
                rng=rng,
                restarts=restarts,
                renormalize_support=renormalize,
                **options,
            )
            w = np.zeros(problem.dim)
            w[free] = comp.weights
            if k_left < k:
                comp = _too_few_left(comp, k, free.size)
            free = free[comp.weights == 0]
        else:
            comp = solve(
                current,
                k,
                method=method,
                nonneg=nonneg,
                rng=rng,
                restarts=restarts,
                renormalize_support=renormalize,
                **options,
            )
            w = comp.weights
            if i + 1 < len(ks):  # a deflated factor is two more copies of it in memory: only when used
                current = current.deflate(w)
        components.append(_on_full_problem(problem, comp, w))
    return components


def _too_few_left(comp: Component, k: int, n_left: int) -> Component:
    """The component asked for k, with reach ``unreachable`` because only n_left features were left."""
    reason = f"only {n_left} features are left unused by the earlier disjoint components"
    warnings.warn(f"k = {k} is unreachable for disjoint component: {reason}", stacklevel=4)
    status = dataclasses.replace(comp.status, reach=Reach.UNREACHABLE, reach_reason=reason)
    return dataclasses.replace(comp, k=k, status=status)


def _on_full_problem(problem: Problem, comp: Component, w: np.ndarray) -> Component:
    """The component re-indexed by all features, its variance on the original C."""
    return dataclasses.replace(comp, loadings=as_loadings(problem, w), variance=problem.variance(w))
