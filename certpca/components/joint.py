"""Several components fitted at once by a solver with the ``joint`` capability.

GPower's block ℓ1,m / ℓ0,m (Journée et al. 2010, Sec. 3: k nonzeros per
component) and NSPCA (Zass & Shashua 2006, eq. 3: k·L nonzeros over all L
components, its sparsity penalty being shared) implement
:meth:`~certpca.solvers.base.Solver.fit_joint`; this module orders, signs and
packages what they return.
"""

from __future__ import annotations

import time
import warnings

import numpy as np

from ..errors import InputError
from ..problem import Problem
from ..results import Component
from ..solvers import REGISTRY, run_status
from ..solvers.base import Solver, as_loadings, fix_sign
from ..status import Reach


def joint_components(
    problem: Problem, k: int, n_components: int, solver: Solver, nonneg: bool, rng: np.random.Generator, options: dict
) -> list[Component]:
    """``solver.fit_joint`` as Components, largest variance first (the columns of a joint fit
    are an unordered set), each with the one deterministic sign and its status."""
    if not solver.joint:
        joint = [name for name, s in REGISTRY.items() if s.joint]
        raise InputError.bad_argument(
            "method", f"'{solver.name}' fits one component at a time; deflation='joint' needs one of {', '.join(joint)}"
        )
    t0 = time.perf_counter()
    runs = solver.fit_joint(problem, k, n_components, nonneg, rng, **{**solver.defaults, **options})
    seconds = time.perf_counter() - t0
    weights = [fix_sign(run.weights, nonneg) for run in runs]
    order = np.argsort([-problem.variance(w) for w in weights], kind="stable")
    out, told = [], set()
    for j in order:
        w, run = weights[j], runs[j]
        status = run_status(problem, w, k, nonneg, run, sparse=solver.sparse)
        if status.reach in (Reach.STOPPED_SHORT, Reach.UNREACHABLE) and status.reach_reason not in told:
            told.add(status.reach_reason)
            warnings.warn(
                f"{solver.name} joint fit did not reach k = {k} per component "
                f"({status.reach.value}: {status.reach_reason})",
                stacklevel=3,
            )
        out.append(
            Component(
                loadings=as_loadings(problem, w),
                variance=problem.variance(w),
                method=f"{solver.name}-joint",
                k=k,
                nonneg=nonneg,
                options=dict(options),
                iterations=run.iterations,
                seconds=seconds,
                extras=run.extras,
                status=status,
            )
        )
    return out
