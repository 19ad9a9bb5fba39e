"""Several components: deflation schemes and variance accounting.

- ``projection``: deflate C to (I − wwᵀ)C(I − wwᵀ) after each component
  (Sigg & Buhmann 2008, eq. 18).
- ``disjoint``: later components may only use features no earlier one used
  (eq. 19), which makes nonnegative components exactly orthogonal.
- ``quasi``: nonnegative EM whose M-step penalises α·wᵀVVᵀw (eq. 20), α tuned
  until every pair of components is at least ``min_angle`` degrees apart.
- ``joint``: methods that fit L components at once — GPower's block ℓ1,m /
  ℓ0,m (k nonzeros per component) and NSPCA (k·L nonzeros over all components,
  its sparsity penalty being shared).
"""
from __future__ import annotations

import time
import warnings

import numpy as np
import pandas as pd

from .errors import InputError
from .problem import Problem
from .results import Component, Fit
from .solvers import REGISTRY, get, solve

DEFLATIONS = ("projection", "disjoint", "quasi", "joint")


def fit_components(problem: Problem, k: int, *, n_components: int = 1, method: str = "em",
                   nonneg: bool = False, deflation: str = "projection", seed: int = 0,
                   restarts: int = 10, renormalize: bool = True, min_angle: float = 85.0,
                   data: dict | None = None, **options) -> Fit:
    """Fit ``n_components`` components with at most ``k`` nonzeros each."""
    if deflation not in DEFLATIONS:
        raise InputError(f"unknown deflation '{deflation}'; choose one of {', '.join(DEFLATIONS)}")
    problem.check_cardinality(k)
    problem.check_cardinality(n_components, "--components")
    rng = np.random.default_rng(seed)
    t0 = time.perf_counter()
    if deflation == "quasi":
        components = _quasi(problem, k, n_components, method, nonneg, min_angle, rng, restarts)
    elif deflation == "joint":
        components = _joint(problem, k, n_components, method, nonneg, rng, options)
    else:
        components = _sequential(problem, k, n_components, method, nonneg, deflation, rng,
                                 restarts, renormalize, options)
    seconds = time.perf_counter() - t0

    W = np.column_stack([c.weights for c in components])
    extra = {"min_angle": min_angle} if deflation == "quasi" else {}
    return Fit(
        components=components,
        additional_variance=additional_variance(problem, W),
        total_variance=problem.trace,
        eigenvalues=problem.eigenvalues()[: max(10, n_components)],
        data=data or {"name": "", "n_samples": None, "n_features": problem.dim},
        options={"method": method, "k": k, "nonneg": nonneg, "n_components": n_components,
                 "deflation": deflation, "seed": seed, "restarts": restarts,
                 "renormalize": renormalize, **extra, **options},
        seconds=seconds,
        problem=problem,
    )


def _sequential(problem, k, n_components, method, nonneg, deflation, rng, restarts, renormalize, options):
    """One component at a time, on the deflated or the remaining-feature problem."""
    components: list[Component] = []
    current = problem
    free = np.arange(problem.dim)          # features still available (disjoint scheme)
    for _ in range(n_components):
        if deflation == "disjoint":
            if free.size == 0:
                warnings.warn(f"all features are used after {len(components)} disjoint components; "
                              "stopping early", stacklevel=3)
                break
            comp = solve(problem.subset(free), min(k, free.size), method=method, nonneg=nonneg, rng=rng,
                         restarts=restarts, renormalize_support=renormalize, **options)
            w = np.zeros(problem.dim)
            w[free] = comp.weights
            free = free[comp.weights == 0]
        else:
            comp = solve(current, k, method=method, nonneg=nonneg, rng=rng, restarts=restarts,
                         renormalize_support=renormalize, **options)
            w = comp.weights
            current = current.deflate(w)
        components.append(_on_full_problem(problem, comp, w))
    return components


def _on_full_problem(problem: Problem, comp: Component, w: np.ndarray) -> Component:
    """The component re-indexed by all features, its variance on the original C."""
    comp.loadings = pd.Series(w, index=problem.feature_ids, name="loading")
    comp.variance = problem.variance(w)
    return comp


def _quasi(problem, k, n_components, method, nonneg, min_angle, rng, restarts):
    from .solvers.quasi import quasi_orthogonal_components
    if method != "em" or not nonneg:
        raise InputError("quasi-orthogonal components are nonnegative EM components: "
                         "use --method em --nonneg with --deflation quasi")
    vectors, records = quasi_orthogonal_components(problem, k, n_components, min_angle_deg=min_angle,
                                                   rng=rng, restarts=restarts)
    out = []
    for w, rec in zip(vectors, records):
        comp = Component(loadings=None, variance=0.0, method="em-quasi", k=k, nonneg=True,
                         options={"min_angle": min_angle, "restarts": restarts},
                         iterations=int(rec["iterations"]), converged=bool(rec["converged"]),
                         seconds=float(rec["seconds"]), extras=rec)
        out.append(_on_full_problem(problem, comp, w))
    return out


def _joint(problem, k, n_components, method, nonneg, rng, options):
    if not get(method).joint:
        joint = [name for name, s in REGISTRY.items() if s.joint]
        raise InputError(f"method '{method}' fits one component at a time; --deflation joint "
                         f"needs one of {', '.join(joint)}")
    t0 = time.perf_counter()
    if method == "nspca":
        from .solvers.nspca import nspca_at_cardinality
        if not nonneg:
            raise InputError("nspca finds nonnegative components only; add --nonneg")
        U, info = nspca_at_cardinality(problem, k * n_components,
                                       n_components, rng=rng, **options)
        W = U / np.where(np.linalg.norm(U, axis=0) > 0, np.linalg.norm(U, axis=0), 1.0)
        if not info.get("reached", True):
            warnings.warn(f"nspca could not reach {k * n_components} nonzeros in all; its sparsity "
                          f"map jumps over it (nearest below: {info.get('nearest_below')})", stacklevel=3)
        extras = {key: info.get(key) for key in ("alpha", "beta", "reached", "cardinality")}
    else:
        from .solvers.gpower import gpower_block
        W, info = gpower_block(problem, k, n_components, penalty=method.split("-")[1], nonneg=nonneg,
                               return_info=True, **options)
        extras = {"gamma": np.asarray(info.get("gamma")).tolist()}
    seconds = time.perf_counter() - t0
    out = []
    order = np.argsort([-problem.variance(W[:, j]) for j in range(W.shape[1])], kind="stable")
    for j in order:  # an unordered set of columns: largest variance first, as principal components
        comp = Component(loadings=None, variance=0.0, method=f"{method}-joint", k=k, nonneg=nonneg,
                         options=dict(options), seconds=seconds, extras=extras)
        out.append(_on_full_problem(problem, comp, W[:, j]))
    return out


def additional_variance(problem: Problem, W: np.ndarray, *, rtol: float = 1e-10) -> np.ndarray:
    """Variance each column of W adds beyond the span of the earlier columns.

    With W = QR (Gram–Schmidt in column order) the span of the first l columns
    carries tr(Q_lᵀCQ_l); the l-th increment is q_lᵀCq_l.  A column that lies in
    the span of the earlier ones (|R_ll| ≤ rtol) adds nothing.
    """
    Q, R = np.linalg.qr(W)
    added = np.array([problem.variance(Q[:, j]) for j in range(W.shape[1])])
    added[np.abs(np.diag(R)) <= rtol] = 0.0
    return added
