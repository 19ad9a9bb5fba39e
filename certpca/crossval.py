"""Choosing k by cross-validation on held-out entries (Witten, Tibshirani & Hastie 2009, §3.2 / PMA's
``SPC.cv``).

Each of ``n_folds`` folds holds out a random 1/n_folds of the entries of X (every entry belongs to
one fold).  The held-out entries are replaced by their column's mean over the observed entries; the
first sparse component w is fitted at each k on that matrix; each sample's score is the least-squares
fit of its *observed* entries to w, tᵢ = Σⱼ∈obs xᵢⱼwⱼ / Σⱼ∈obs wⱼ²; and the held-out entries are
predicted by tᵢwⱼ.  The CV error of k is the mean squared prediction error over the held-out entries,
averaged over the folds.  Too small a k leaves out features that carry the component; too large a k
adds noise to the predictions; the error is smallest in between.

The choice: the smallest k whose CV error is within one standard error of the minimum (the
one-standard-error rule, Hastie, Tibshirani & Friedman 2009, §7.10).  Every k is evaluated on the
same folds, so the standard error is that of the paired difference to the minimising k across folds;
the fold-to-fold variation the k share cancels there (on a planted spike of 20 features the unpaired
rule picked 17, the paired one 20).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from certpca.data import Dataset
from certpca.errors import InputError
from certpca.problem import Problem
from certpca.solvers import DEFAULT_METHOD, solve
from certpca.validation import check_cardinality, check_int


@dataclass(frozen=True)
class KChoice:
    """The CV curve (``curve``: one row per k with ``error``, ``se`` of the mean over folds and
    ``se_difference`` to the minimum) and the chosen ``k`` (``k_min`` minimises the error)."""

    curve: pd.DataFrame
    k: int
    k_min: int
    n_folds: int
    seed: int
    criterion: str = "cross-validated reconstruction of held-out entries, one-standard-error rule"


def choose_k(
    dataset: Dataset,
    ks,
    *,
    n_folds: int = 5,
    seed: int = 0,
    nonneg: bool = False,
    method: str = DEFAULT_METHOD,
    restarts: int = 10,
) -> KChoice:
    """Cross-validated choice of the first component's cardinality among ``ks`` (see the module)."""
    if dataset.is_covariance or dataset.n_samples is None:
        raise InputError("choosing k by cross-validation needs samples × features data, not a covariance")
    n_folds = check_int(n_folds, "n_folds", low=2)
    ks = sorted({check_cardinality(k, dataset.n_features, "ks") for k in ks})
    X = dataset.columns(np.arange(dataset.n_features))  # dense: the held-out entries are single cells
    fold = np.random.default_rng(np.random.SeedSequence(seed).spawn(1)[0]).integers(n_folds, size=X.shape)
    errors = np.empty((n_folds, len(ks)))
    for f in range(n_folds):
        held = fold == f
        observed = ~held
        counts = observed.sum(axis=0)
        mean = np.where(observed, X, 0.0).sum(axis=0) / np.maximum(counts, 1)
        filled = np.where(held, 0.0, X - mean)  # held-out entries at their column's observed mean
        problem = Problem.from_data(filled, dataset.feature_ids)
        for i, k in enumerate(ks):
            w = solve(problem, k, method=method, nonneg=nonneg, rng=seed, restarts=restarts).weights
            denominator = observed @ (w * w)
            scores = (filled @ w) / np.where(denominator > 0, denominator, 1.0)
            residual = (X - mean - np.outer(scores, w))[held]
            errors[f, i] = float(np.mean(residual**2))
    mean_error = errors.mean(axis=0)
    best = int(np.argmin(mean_error))
    difference = errors - errors[:, [best]]
    se_difference = difference.std(axis=0, ddof=1) / np.sqrt(n_folds)
    within = mean_error - mean_error[best] <= se_difference
    chosen = ks[int(np.flatnonzero(within)[0])]
    curve = pd.DataFrame(
        {
            "k": ks,
            "error": mean_error,
            "se": errors.std(axis=0, ddof=1) / np.sqrt(n_folds),
            "se_difference": se_difference,
        }
    )
    return KChoice(curve=curve, k=chosen, k_min=ks[best], n_folds=n_folds, seed=seed)


__all__ = ["KChoice", "choose_k"]
