"""The variance–cardinality path: one component for every k of a grid.

Iterative methods (EM, GPower, NSPCA: ``Solver.warm_start``) start from the
previous k's solution, which is how the path stays cheap, and on a geometric
grid of k also from their deterministic starts (PC1 for EM, whose eigenvector is
computed once: Sigg & Buhmann 2008, §3.1); ``cold_starts`` runs all their
starts, random restarts included, at every k.  Warm starts alone lost up to
25 % of the variance at small k on a random 20 × 80 problem.  Runs along the
path stop by the solver's ``path_options`` (EM: after one settled support, see
:class:`~certpca.solvers.em.EM`), which keep the driver's floor.  Other methods
(thresholding, the spannogram) use their own starts at every k.
"""

from __future__ import annotations

import pandas as pd

from .certification import certify_vector
from .certification.components import adopted_component
from .problem import Problem
from .results import Component
from .solvers import get, solve
from .validation import check_cardinality, check_random_state


def fit_path(
    problem: Problem,
    ks,
    *,
    method: str = "auto",
    nonneg: bool = False,
    seed: int = 0,
    restarts: int = 10,
    cold_starts: bool = False,
    refresh: float = 1.25,
    **options,
) -> list[Component]:
    """Best component for each k in ``ks`` (increasing), warm-started along the path.

    The deterministic starts are re-run only where k has grown by the factor
    ``refresh`` since they last ran (k = 1, 2, 3, 4, 5, 7, 9, 11, 14, ... for 1.25),
    so a warm start that drifted into a poor basin is caught within a few steps.
    """
    ks = [check_cardinality(k, problem.dim, "ks") for k in sorted(set(ks))]
    rng = check_random_state(seed)
    solver = get(method)
    own = solver.starts(problem, nonneg, rng, restarts)
    deterministic = solver.starts(problem, nonneg, rng, 0)
    out: list[Component] = []
    fresh_at = 0
    for k in ks:
        warm = solver.warm_start and out and out[-1].weights.any()
        renew = k >= fresh_at * refresh
        fresh_at = k if renew else fresh_at
        starts = list(own) if (cold_starts or not warm) else list(deterministic) if renew else []
        if warm:
            starts.append(out[-1].weights)
        out.append(
            solve(
                problem,
                k,
                method=method,
                nonneg=nonneg,
                rng=rng,
                restarts=restarts,
                starts=starts if starts and starts[0] is not None else None,
                run_options=solver.path_options,
                **options,
            )
        )
    return out


def path_table(
    problem: Problem, components: list[Component], *, bounds=None, budget: float | None = None, tol: float = 1e-6
) -> pd.DataFrame:
    """One row per path point: k, variance, its share of λ1 and of the trace, cardinality,
    and with ``bounds`` the certificate (upper bound, winning bound, certified fraction).

    A better vector a bound's search found while certifying (``Certificate.better``) replaces the
    point's component in ``components`` and in the row, and ``adopted`` says what found it."""
    lam1, trace = float(problem.eigenvalues()[0]), problem.trace
    rows = []
    for i, c in enumerate(components):
        cert = None
        if bounds is not None and c.weights.any():
            cert = certify_vector(problem, c.weights, c.k, c.nonneg, bounds=bounds, budget=budget, tol=tol)
            if cert.better is not None:
                c = components[i] = adopted_component(problem, c, cert.better)
                cert = cert.adopt()
        row: dict[str, object] = {
            "k": c.k,
            "variance": c.variance,
            "of_lambda1": c.variance / lam1,
            "pev": c.variance / trace,
            "cardinality": c.cardinality,
            "iterations": c.iterations,
        }
        if cert is not None:
            row.update(
                upper_bound=cert.upper_bound,
                winner=cert.winner,
                certified=cert.certified_fraction,
                optimal=cert.optimal,
                adopted=c.extras.get("adopted", ""),
            )
        rows.append(row)
    return pd.DataFrame(rows)
