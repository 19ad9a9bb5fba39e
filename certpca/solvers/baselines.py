"""Baselines users compare against: plain PCA and simple thresholding."""

from __future__ import annotations

import numpy as np

from ..status import Convergence
from .base import Run, Solver, top_k


class PCA(Solver):
    """The dominant eigenvector: no sparsity, no sign constraint."""

    name = "pca"
    sparse = False
    nonneg = False
    reference = (
        "Pearson, K. (1901). On lines and planes of closest fit to systems of points in space. "
        "Philosophical Magazine, 2(11), 559-572."
    )

    def run(self, problem, k, nonneg, start):
        w = problem.first_pc()
        return Run(w, np.arange(problem.dim), convergence=Convergence.NOT_ITERATIVE)


class Threshold(Solver):
    """Keep the K largest |entries| of the first PC (Cadima & Jolliffe 1995).

    For nonnegative PCA the K largest entries of the positive part of +PC1 and of −PC1
    are both tried.  The driver renormalises on the support.
    """

    name = "threshold"
    reference = (
        "Cadima, J. & Jolliffe, I. T. (1995). Loadings and correlations in the "
        "interpretation of principal components. Journal of Applied Statistics, 22, 203-214."
    )

    def starts(self, problem, nonneg, rng, restarts):
        pc = problem.first_pc()
        return [pc, -pc] if nonneg else [pc]

    def run(self, problem, k, nonneg, start):
        mag = np.maximum(start, 0.0) if nonneg else np.abs(start)
        support, _ = top_k(mag, k)
        support = support[mag[support] > 0]
        w = np.zeros_like(start)
        w[support] = start[support]
        norm = np.linalg.norm(w)
        return Run(w / norm if norm > 0 else w, support, convergence=Convergence.NOT_ITERATIVE)
