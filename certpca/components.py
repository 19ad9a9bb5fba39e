"""Several components: deflation schemes and variance accounting.

- ``projection``: deflate C to (I − wwᵀ)C(I − wwᵀ) after each component
  (Sigg & Buhmann 2008, eq. 18).
- ``disjoint``: later components may only use features no earlier one used
  (eq. 19), which makes nonnegative components exactly orthogonal.
"""
from __future__ import annotations

import time
import warnings

import numpy as np
import pandas as pd

from .errors import InputError
from .problem import Problem
from .results import Component, Fit
from .solvers import solve

DEFLATIONS = ("projection", "disjoint")


def fit_components(problem: Problem, k: int, *, n_components: int = 1, method: str = "em",
                   nonneg: bool = False, deflation: str = "projection", seed: int = 0,
                   restarts: int = 10, renormalize: bool = True, data: dict | None = None,
                   **options) -> Fit:
    """Fit ``n_components`` components with at most ``k`` nonzeros each."""
    if deflation not in DEFLATIONS:
        raise InputError(f"unknown deflation '{deflation}'; choose one of {', '.join(DEFLATIONS)}")
    if not 1 <= k <= problem.dim:
        raise InputError(f"k = {k} is out of range: the data have {problem.dim} features; "
                         f"choose 1 <= k <= {problem.dim}")
    if not 1 <= n_components <= problem.dim:
        raise InputError(f"--components {n_components} is out of range; choose 1 to {problem.dim}")
    rng = np.random.default_rng(seed)
    t0 = time.perf_counter()
    components: list[Component] = []
    current = problem
    free = np.arange(problem.dim)          # features still available (disjoint scheme)
    for _ in range(n_components):
        if deflation == "disjoint":
            if free.size == 0:
                warnings.warn(f"all features are used after {len(components)} disjoint components; "
                              "stopping early", stacklevel=2)
                break
            sub = problem.subset(free)
            comp = solve(sub, min(k, free.size), method=method, nonneg=nonneg, rng=rng,
                         restarts=restarts, renormalize_support=renormalize, **options)
            w = np.zeros(problem.dim)
            w[free] = comp.weights
            free = free[comp.weights == 0]
        else:
            comp = solve(current, k, method=method, nonneg=nonneg, rng=rng, restarts=restarts,
                         renormalize_support=renormalize, **options)
            w = comp.weights
            current = current.deflate(w)
        comp.loadings = pd.Series(w, index=problem.feature_ids, name="loading")
        comp.variance = problem.variance(w)
        components.append(comp)
    seconds = time.perf_counter() - t0

    W = np.column_stack([c.weights for c in components])
    return Fit(
        components=components,
        additional_variance=additional_variance(problem, W),
        total_variance=problem.trace,
        eigenvalues=problem.eigenvalues()[: max(10, n_components)],
        data=data or {"name": "", "n_samples": None, "n_features": problem.dim},
        options={"method": method, "k": k, "nonneg": nonneg, "n_components": n_components,
                 "deflation": deflation, "seed": seed, "restarts": restarts,
                 "renormalize": renormalize, **options},
        seconds=seconds,
        problem=problem,
    )


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
