"""The variance–cardinality path: one component for every k of a grid.

EM is warm-started from the previous k's solution, which is how the path stays
cheap (Sigg & Buhmann 2008, §3.1 note that the initial vector can be cached and
re-used when varying K); each k also keeps the solver's own starts when
``cold_starts`` is set, at their cost.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from .errors import InputError
from .problem import Problem
from .results import Component
from .solvers import get, solve


def fit_path(problem: Problem, ks, *, method: str = "em", nonneg: bool = False, seed: int = 0,
             restarts: int = 10, cold_starts: bool = False, **options) -> list[Component]:
    """Best component for each k in ``ks`` (increasing), warm-started along the path."""
    ks = sorted(set(int(k) for k in ks))
    if not ks or ks[0] < 1 or ks[-1] > problem.dim:
        raise InputError(f"path cardinalities must lie in 1..{problem.dim}; got {ks[:1]}..{ks[-1:]}")
    rng = np.random.default_rng(seed)
    solver = get(method)
    own = solver.starts(problem, nonneg, rng, restarts)
    out: list[Component] = []
    for k in ks:
        starts = list(own) if (cold_starts or not out) else []
        if out and out[-1].weights.any():
            starts.append(out[-1].weights)
        out.append(solve(problem, k, method=method, nonneg=nonneg, rng=rng, restarts=restarts,
                         starts=starts if starts and starts[0] is not None else None, **options))
    return out


def path_table(components: list[Component], lambda1: float) -> pd.DataFrame:
    """k, variance, variance / λ1, cardinality and seconds per path point."""
    return pd.DataFrame({
        "k": [c.k for c in components],
        "variance": [c.variance for c in components],
        "explained_of_lambda1": [c.variance / lambda1 for c in components],
        "cardinality": [c.cardinality for c in components],
        "seconds": [c.seconds for c in components],
    })
