"""Solver registry and the one driver that runs any of them.

The driver owns what every method shares: starts and restarts, timing,
variational renormalisation and the choice of the best run.
"""

from __future__ import annotations

import time
import warnings

import numpy as np

from ..errors import ConvergenceWarning, InputError
from ..problem import Problem
from ..results import Component
from ..status import Convergence, Reach, Status
from ..validation import check_cardinality, check_int, check_random_state
from .auto import Auto
from .base import Run, Solver, as_loadings, fix_sign, reach_of, top_k
from .baselines import PCA, Threshold
from .em import EM
from .gpower import GPowerL0, GPowerL1
from .nspca import NSPCA
from .renormalize import renormalize
from .search import Exact
from .spannogram import Spannogram
from .swap import swap_search

#: the method of a fit, a path and ``certpca certify``'s own vector unless one is named (reports/bench/defaults.md)
DEFAULT_METHOD = "auto"

REGISTRY: dict[str, Solver] = {
    s.name: s for s in (Auto(), EM(), Threshold(), PCA(), GPowerL1(), GPowerL0(), NSPCA(), Spannogram(), Exact())
}


def get(name: str) -> Solver:
    """The solver registered under ``name``."""
    try:
        return REGISTRY[name]
    except KeyError:
        raise InputError(f"unknown method '{name}'; choose one of {', '.join(REGISTRY)}") from None


def check_method(method: str, nonneg: bool, options: dict | None = None) -> Solver:
    """The solver for ``method`` after checking it can honour ``nonneg`` and knows ``options``."""
    solver = get(method)
    if nonneg and not solver.nonneg:
        raise InputError.bad_argument(
            "nonneg",
            f"cannot be True for method '{method}', which cannot impose nonnegativity; "
            "drop `nonneg` or use `method='auto'`",
        )
    if not nonneg and not solver.signed:
        raise InputError.bad_argument(
            "nonneg",
            f"must be True for method '{method}', which finds nonnegative components only; "
            "add `nonneg=True` or use `method='auto'`",
        )
    unknown = set(options or {}) - set(solver.defaults)
    if unknown:
        raise InputError(
            f"method '{method}' has no option {', '.join(sorted(unknown))}; "
            f"its options: {', '.join(solver.defaults) or 'none'}"
        )
    return solver


def solve(
    problem: Problem,
    k: int,
    *,
    method: str = "em",
    nonneg: bool = False,
    rng: np.random.Generator | int | None = None,
    restarts: int = 10,
    renormalize_support: bool = True,
    starts: list[np.ndarray | None] | None = None,
    run_options: dict | None = None,
    **options,
) -> Component:
    """Best component found by ``method`` over its starts.

    ``k`` is the largest cardinality; methods deliver exactly k nonzeros unless the
    data do not allow it (e.g. fewer than k positive entries are reachable under
    ``nonneg``); ``Component.status`` says which (:mod:`certpca.status`) and fewer
    than k that the data do not explain is also a warning.  Unknown options are an
    InputError.  The result is never below :func:`floor` (the best single feature,
    thresholded PC1) unless an explicit option of the method fixes its sparsity or
    ``renormalize_support`` is False.  ``run_options`` (the solver's ``path_options``,
    from :func:`~certpca.paths.fit_path`) change only when its runs stop, so unlike
    ``**options`` they keep the floor.
    """
    solver = check_method(method, nonneg, options)
    k = check_cardinality(k, problem.dim, "k")
    restarts = check_int(restarts, "restarts", low=0)
    rng = check_random_state(rng, "rng")
    if not solver.sparse:
        k = problem.dim
    opts = {**solver.defaults, **(run_options or {}), **options}

    t0 = time.perf_counter()
    iterations, n_starts = 0, 0
    refits: dict = {}  # one eigenproblem per distinct support (renormalize's cache)

    def run_from(start) -> tuple[float, np.ndarray, Run]:
        nonlocal iterations, n_starts
        run = solver.run(problem, k, nonneg, start, **opts)
        n_starts += 1
        iterations += run.iterations
        if not run.converged:
            warnings.warn(
                f"{method} did not converge from start {n_starts}: {run.convergence_reason}"
                if run.convergence_reason
                else f"{method} did not converge from start {n_starts} in {run.iterations} "
                "iterations; raise max_iter or loosen tol",
                ConvergenceWarning,
                stacklevel=3,
            )
        if renormalize_support and solver.sparse and run.weights.any():
            w, value = renormalize(problem, run.weights, run.support, nonneg, cache=refits)
        else:
            w, value = run.weights, problem.variance(run.weights)
        return value, w, run

    cold = starts is None
    if cold:
        starts = solver.starts(problem, nonneg, rng, restarts)
    if not starts:
        raise InputError.bad_argument("starts", "is empty; give at least one start vector or None")
    best = run_from(starts[0])
    for start in starts[1:]:  # a loop, not max() over a generator: the warnings' stacklevel reaches the caller
        result = run_from(start)
        if result[0] > best[0]:
            best = result

    value, w, run = best
    extras = dict(run.extras)
    # an explicit option (e.g. GPower's γ) fixes the sparsity, and renormalize_support=False asks for the
    # algorithm's own weights (the floor is a refitted vector): both are respected
    if solver.sparse and not options and renormalize_support:
        floor_value, floor_w, floor_name = floor(problem, k, nonneg, cache=refits, beat=value)
        if floor_value > value:
            value, w = floor_value, floor_w
            run = Run(floor_w, np.flatnonzero(floor_w))  # the floor's reach is read off its weights
            extras["floor"] = f"{method}'s own best ({best[0]:.6g}) was below the {floor_name}"
        # The floor is also a start of a method that can be warm-started, in a cold fit (a path's warm
        # start carries k − 1's optimum): EM from the refitted thresholded PC1 beat EM from its own starts
        # on 18 of 176 bundled problems, by up to 6.5 % (reports/bench/em.md).
        tried = (s is not None and np.array_equal(floor_w, s) for s in starts)  # e.g. EM's e_j
        if solver.warm_start and (cold or floor_value > best[0]) and not any(tried):
            value2, w2, again = run_from(floor_w)
            if value2 > value:
                value, w, run = value2, w2, again
                if "floor" in extras:
                    extras["floor"] += f", and {method} started from it reached more"
    if solver.polish and solver.sparse and not options and renormalize_support:
        w2, value2, swaps = swap_search(problem, w, k, nonneg, cache=refits)
        if swaps:
            extras["swaps"] = f"{swaps} swap(s) of one feature raised {value:.6g} to {value2:.6g}"
            value, w, run = value2, w2, Run(w2, np.flatnonzero(w2))
    seconds = time.perf_counter() - t0
    w = fix_sign(w, nonneg)
    status = run_status(problem, w, k, nonneg, run, sparse=solver.sparse)
    if status.reach in (Reach.STOPPED_SHORT, Reach.UNREACHABLE):
        warnings.warn(
            f"{method} found only {np.count_nonzero(w)} nonzero loadings for k = {k} "
            f"({status.reach.value}: {status.reach_reason}); try more restarts or another method",
            stacklevel=2,
        )
    return Component(
        loadings=as_loadings(problem, w),
        variance=value,
        method=method,
        k=k,
        nonneg=nonneg,
        options={**opts, "restarts": restarts, "starts": n_starts, "renormalize": renormalize_support},
        iterations=iterations,
        seconds=seconds,
        extras=extras,
        status=status,
    )


def floor(
    problem: Problem, k: int, nonneg: bool, *, cache: dict | None = None, beat: float | None = None
) -> tuple[float, np.ndarray, str]:
    """The obvious answers no solver may fall below: the best single feature and thresholded PC1.

    k = 1 is solved exactly by the largest diagonal entry (a unit vector e_j, feasible
    with or without w ≥ 0); for k ≥ 2 the sign-appropriate k largest entries of PC1
    (Cadima & Jolliffe 1995), refitted on their support, often beat a poor local optimum.
    Returns (value, vector, what it is); ``cache`` and ``beat`` are :func:`renormalize`'s (with
    ``beat`` a thresholded vector that cannot exceed it comes back unrefitted, below ``beat``).
    """
    j = int(np.argmax(problem.diag))
    single = np.zeros(problem.dim)
    single[j] = 1.0
    best = (float(problem.diag[j]), single, "best single feature")
    if k >= 2:
        bounds = problem.memo.setdefault(PC1_BOUNDS, {})
        for key, run, prefix in _thresholded_pc1(problem, k, nonneg):
            if not run.weights.any():
                continue
            # Along a path the support is a prefix of one order and grows: by Weyl's inequality on
            # the Gram F_S F_Sᵀ, each added feature j raises λ1(C_SS) by at most C_jj.
            ub = None
            if prefix is not None and not nonneg and key in bounds and bounds[key][0] <= prefix:
                m0, ub0 = bounds[key]
                ub = ub0 + float(problem.diag[problem.memo[PC1_ORDERS][key][m0:prefix]].sum())
            if ub is not None and beat is not None and ub <= beat:  # the refit (= λ1) cannot beat
                w, value = run.weights, problem.variance(run.weights)
                bounds[key] = (prefix, ub)
            else:
                w, value = renormalize(problem, run.weights, run.support, nonneg, cache=cache, beat=beat)
                if prefix is not None and not nonneg:
                    bounds[key] = (prefix, value * (1 + BOUND_SLACK))  # value = λ1(C_SS) up to rounding
            if value > best[0]:
                best = (value, w, "thresholded first principal component")
    return best


#: relative slack on a computed λ1 used as an upper bound (its rounding is ~1e-15)
BOUND_SLACK = 1e-9

#: Problem.memo key: per start, (m, an upper bound on λ1 of C over the first m features of its order)
PC1_BOUNDS = ("floor", "λ1 bounds of PC1 prefixes")

#: Problem.memo key: per start, the stable descending order of PC1's sign-appropriate magnitudes (None
#: after the first call)
PC1_ORDERS = ("floor", "orders of PC1")


def _thresholded_pc1(problem: Problem, k: int, nonneg: bool):
    """The threshold solver's runs from its starts (±PC1 when nonneg).  From the second call on a
    problem (a path) each support is read off one stable sort, instead of a selection per k (the
    same supports: the k largest, ties to the lower index, as :func:`~.base.top_k`); a single fit
    keeps the selection, which is cheaper than the sort."""
    orders = problem.memo.setdefault(PC1_ORDERS, {})  # yields (key, run, m when the support is order[:m])
    pc = problem.first_pc()
    for i, start in enumerate([pc, -pc] if nonneg else [pc]):  # Threshold.starts (baselines.py)
        key = (nonneg, i)
        mag = np.maximum(start, 0.0) if nonneg else np.abs(start)
        prefix = None
        if key not in orders:
            orders[key] = None
            support, _ = top_k(mag, k)
            support = support[mag[support] > 0]
        else:
            if orders[key] is None:
                orders[key] = np.argsort(-mag, kind="stable")
            support = orders[key][:k]
            support = support[mag[support] > 0]  # the zeros sort last: still a prefix
            prefix = support.size
        w = np.zeros_like(start)
        w[support] = start[support]
        norm = np.linalg.norm(w)
        yield key, Run(w / norm if norm > 0 else w, support, convergence=Convergence.NOT_ITERATIVE), prefix


def run_status(problem: Problem, w: np.ndarray, k: int, nonneg: bool, run: Run, *, sparse: bool = True) -> Status:
    """The Status of final weights w that came from ``run``: the run's own reach when it
    gives one (the method knows e.g. that its parameter map jumps over k), else
    :func:`~certpca.solvers.base.reach_of` of w."""
    if not sparse:
        reach, reason = Reach.NOT_SPARSE, "the method imposes no cardinality"
    elif run.reach is not None:
        reach, reason = run.reach, run.reach_reason
    else:
        reach, reason = reach_of(problem, w, k, nonneg)
    convergence = run.convergence if run.convergence is not None else Convergence.CONVERGED
    conv_reason = run.convergence_reason
    if convergence is Convergence.ITERATION_LIMIT and not conv_reason:
        conv_reason = f"stopped after {run.iterations} iterations; raise max_iter or loosen tol"
    return Status(reach, reason, convergence, conv_reason)


__all__ = [
    "DEFAULT_METHOD",
    "REGISTRY",
    "Run",
    "Solver",
    "check_method",
    "fix_sign",
    "floor",
    "get",
    "run_status",
    "solve",
]
