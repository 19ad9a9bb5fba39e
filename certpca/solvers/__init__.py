"""Solver registry and the one driver that runs any of them.

The driver owns what every method shares: starts and restarts, timing,
variational renormalisation and the choice of the best run.
"""
from __future__ import annotations

import time
import warnings

import numpy as np
import pandas as pd

from ..errors import ConvergenceWarning, InputError
from ..problem import Problem
from ..results import Component
from .base import Run, Solver
from .baselines import PCA, Threshold
from .em import EM
from .nspca import NSPCA
from .gpower import GPowerL0, GPowerL1
from .renormalize import renormalize
from .spannogram import Spannogram

REGISTRY: dict[str, Solver] = {s.name: s for s in (EM(), Threshold(), PCA(), GPowerL1(), GPowerL0(), NSPCA(), Spannogram())}


def get(name: str) -> Solver:
    """The solver registered under ``name``."""
    try:
        return REGISTRY[name]
    except KeyError:
        raise InputError(f"unknown method '{name}'; choose one of {', '.join(REGISTRY)}") from None


def solve(problem: Problem, k: int, *, method: str = "em", nonneg: bool = False,
          rng: np.random.Generator | None = None, restarts: int = 10,
          renormalize_support: bool = True, starts: list[np.ndarray] | None = None,
          **options) -> Component:
    """Best component found by ``method`` over its starts.

    ``k`` is the largest cardinality; methods deliver exactly k nonzeros unless the
    data do not allow it (e.g. fewer than k positive entries are reachable under
    ``nonneg``).  Unknown options are an InputError.  The result is never below
    :func:`floor` (the best single feature, thresholded PC1) unless an explicit
    option of the method fixes its sparsity.
    """
    solver = get(method)
    if nonneg and not solver.nonneg:
        raise InputError(f"method '{method}' cannot impose nonnegativity; drop --nonneg or use em")
    if not nonneg and not solver.signed:
        raise InputError(f"method '{method}' finds nonnegative components only; add --nonneg or use em")
    if not solver.sparse:
        k = problem.dim
    unknown = set(options) - set(solver.defaults)
    if unknown:
        raise InputError(f"method '{method}' has no option {', '.join(sorted(unknown))}; "
                         f"its options: {', '.join(solver.defaults) or 'none'}")
    opts = {**solver.defaults, **options}
    rng = np.random.default_rng(0) if rng is None else rng

    t0 = time.perf_counter()
    best: tuple[float, np.ndarray, Run] | None = None
    iterations, n_starts = 0, 0
    if starts is None:
        starts = solver.starts(problem, nonneg, rng, restarts)
    for start in starts:
        run = solver.run(problem, k, nonneg, start, **opts)
        n_starts += 1
        iterations += run.iterations
        if not run.converged:
            warnings.warn(f"{method} did not converge from start {n_starts} in {run.iterations} "
                          "iterations; raise max_iter or loosen tol", ConvergenceWarning, stacklevel=2)
        w = run.weights
        if renormalize_support and solver.sparse and run.weights.any():
            w = renormalize(problem, w, run.support, nonneg)
        value = problem.variance(w)
        if best is None or value > best[0]:
            best = (value, w, run)
    seconds = time.perf_counter() - t0

    value, w, run = best
    extras = dict(run.extras)
    if solver.sparse and not options:   # an explicit option (e.g. GPower's γ) fixes the sparsity: respected
        floor_value, floor_w, floor_name = floor(problem, k, nonneg)
        if floor_value > value:
            value, w = floor_value, floor_w
            extras["floor"] = f"{method}'s own best ({best[0]:.6g}) was below the {floor_name}"
            if solver.warm_start:   # the method may still improve on the floor, e.g. grow its support to k
                again = solver.run(problem, k, nonneg, floor_w, **opts)
                w2 = renormalize(problem, again.weights, again.support, nonneg) if again.weights.any() else w
                if problem.variance(w2) > value:
                    value, w = problem.variance(w2), w2
                    extras["floor"] += f", and {method} started from it reached more"
    w = _fix_sign(w, nonneg)
    if solver.sparse and 0 < np.count_nonzero(w) < min(k, problem.dim) and _can_grow(problem, w, nonneg):
        warnings.warn(f"{method} found only {np.count_nonzero(w)} nonzero loadings for k = {k} although "
                      "adding a feature would raise the variance; try more restarts or another method",
                      stacklevel=2)
    return Component(
        loadings=_series(problem, w), variance=value, method=method, k=k, nonneg=nonneg,
        options={**opts, "restarts": restarts, "starts": n_starts, "renormalize": renormalize_support},
        iterations=iterations, converged=run.converged, seconds=seconds, extras=extras)


def floor(problem: Problem, k: int, nonneg: bool) -> tuple[float, np.ndarray, str]:
    """The obvious answers no solver may fall below: the best single feature and thresholded PC1.

    k = 1 is solved exactly by the largest diagonal entry (a unit vector e_j, feasible
    with or without w ≥ 0); for k ≥ 2 the sign-appropriate k largest entries of PC1
    (Cadima & Jolliffe 1995), refitted on their support, often beat a poor local optimum.
    Returns (value, vector, what it is).
    """
    j = int(np.argmax(problem.diag))
    single = np.zeros(problem.dim)
    single[j] = 1.0
    best = (float(problem.diag[j]), single, "best single feature")
    if k >= 2:
        threshold = REGISTRY["threshold"]
        for start in threshold.starts(problem, nonneg, np.random.default_rng(0), 0):
            run = threshold.run(problem, k, nonneg, start)
            if run.weights.any():
                w = renormalize(problem, run.weights, run.support, nonneg)
                if problem.variance(w) > best[0]:
                    best = (problem.variance(w), w, "thresholded first principal component")
    return best


def _can_grow(problem: Problem, w: np.ndarray, nonneg: bool) -> bool:
    """Whether some unused feature has a gradient entry that makes adding it pay.

    With g = Cw, putting weight ε on an unused feature j changes wᵀCw by 2εg_j + O(ε²):
    a gain when g_j ≠ 0 (sparse: either sign of ε) or g_j > 0 (nonnegative).  When no
    such feature exists the smaller support is what the data favour locally.
    """
    g = problem.matvec(w)[w == 0]
    scale = np.sqrt(problem.variance(w) * problem.diag.max()) * 1e-9
    return bool(np.any(g > scale) if nonneg else np.any(np.abs(g) > scale))


def _fix_sign(w: np.ndarray, nonneg: bool) -> np.ndarray:
    """Deterministic sign: nonnegative vectors as they are, others with a positive largest entry."""
    if nonneg or not w.any():
        return w
    return w if w[np.argmax(np.abs(w))] > 0 else -w


def _series(problem: Problem, w: np.ndarray) -> pd.Series:
    return pd.Series(w, index=problem.feature_ids, name="loading")


__all__ = ["REGISTRY", "Solver", "get", "solve"]
