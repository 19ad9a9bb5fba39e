"""How stable is a sparse component's support?  Stability selection over subsamples of the samples.

Meinshausen & Bühlmann (2010) refit a selection procedure on many random halves of the samples
and keep the features selected in at least a fraction π of them; Shah & Samworth (2013) draw the
halves as complementary pairs (each split gives two disjoint halves).  Here the procedure is a
sparse PCA fit with k nonzeros per component: every half is centred (and scaled) on its own, as
the whole data were, fitted with the same method and seed, and its components are matched to the
components fitted on all samples by the absolute cosine of their loadings (an optimal assignment,
not by position, since components may swap order between halves).  A feature's *selection
frequency* for component l is the fraction of halves whose matched component loads it.

Error control (Meinshausen & Bühlmann 2010, Theorem 1): if the selection is no better than random
on the features that carry no signal (their exchangeability assumption) and q features are
selected per half out of D, the expected number of such features with frequency ≥ π is at most
q² / ((2π − 1) D) for π ∈ (½, 1].  Shah & Samworth (2013, Theorem 1) show that the bound, read
for features of low selection probability, holds with complementary pairs without the
exchangeability assumption.  Here q = k per component.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy.optimize import linear_sum_assignment
from threadpoolctl import threadpool_limits

from certpca.components import fit_components
from certpca.data import Dataset
from certpca.errors import InputError
from certpca.problem import Problem
from certpca.results import Fit
from certpca.validation import check_float, check_int

#: the default frequency threshold π, within Meinshausen & Bühlmann's recommended 0.6–0.9
THRESHOLD = 0.9


@dataclass(frozen=True)
class Stability:
    """Selection frequencies of every feature for every component, over ``n_subsamples`` halves.

    ``frequencies``: features × components (``PC1``, ...) in [0, 1]; ``reference``: the fit on all
    samples the halves' components were matched to; ``expected_false``: the bound on the expected
    number of features of no signal at or above ``threshold``, per component (None unless the
    subsamples are halves).
    """

    frequencies: pd.DataFrame
    reference: Fit
    k: list[int]
    n_subsamples: int
    fraction: float
    complementary: bool
    threshold: float
    seed: int
    expected_false: list[float] | None = field(default=None)

    def ranked(self, component: int = 1) -> pd.DataFrame:
        """The features of one component (1-based) by selection frequency, with the loading on all
        samples and whether that fit selected it: features never selected are left out."""
        name = f"PC{component}"
        if name not in self.frequencies.columns:
            raise InputError.bad_argument(
                "component", f"is {component}; this analysis has 1..{self.frequencies.shape[1]}"
            )
        loading = self.reference.rotation[name].reindex(self.frequencies.index, fill_value=0.0)
        table = pd.DataFrame(
            {"frequency": self.frequencies[name], "loading": loading, "selected": loading != 0},
            index=self.frequencies.index,
        )
        table = table[(table["frequency"] > 0) | table["selected"]]
        order = np.lexsort((-table["loading"].abs().to_numpy(), -table["frequency"].to_numpy()))
        return table.iloc[order]

    def stable(self, component: int = 1) -> list[str]:
        """Features of one component (1-based) selected in at least ``threshold`` of the subsamples."""
        table = self.ranked(component)
        return list(table.index[table["frequency"] >= self.threshold])

    def to_dict(self) -> dict:
        """JSON-ready: settings, the bound, and each component's features ever selected."""
        return {
            "k": self.k,
            "n_subsamples": self.n_subsamples,
            "fraction": self.fraction,
            "complementary": self.complementary,
            "threshold": self.threshold,
            "seed": self.seed,
            "expected_false": self.expected_false,
            "components": {
                name: self.ranked(i + 1).reset_index(names="feature").to_dict(orient="list")
                for i, name in enumerate(self.frequencies.columns)
            },
        }


def stability(
    dataset: Dataset,
    k: int,
    *,
    n_subsamples: int = 100,
    fraction: float = 0.5,
    threshold: float = THRESHOLD,
    seed: int = 0,
    n_jobs: int | None = None,
    **fit_options,
) -> Stability:
    """Selection frequencies of a sparse PCA fit over ``n_subsamples`` subsamples of the samples.

    ``fraction`` = ½ draws complementary pairs of halves (Shah & Samworth 2013; ``n_subsamples`` is
    then rounded up to even); another fraction draws independent subsamples of that size (no error
    bound then).  ``fit_options`` (``n_components``, ``nonneg``, ``method``, ``deflation``,
    ``restarts``) go to every fit, with the same ``seed``.  The subsamples are drawn from
    ``seed`` before any fit runs and fitted on ``n_jobs`` processes (default: every core), so the
    result does not depend on the number of processes or the machine's load.
    """
    (result,) = stabilities(
        dataset,
        [{"k": k, **fit_options}],
        n_subsamples=n_subsamples,
        fraction=fraction,
        threshold=threshold,
        seed=seed,
        n_jobs=n_jobs,
    )
    return result


def stabilities(
    dataset: Dataset,
    fits: Sequence[Mapping],
    *,
    n_subsamples: int = 100,
    fraction: float = 0.5,
    threshold: float = THRESHOLD,
    seed: int = 0,
    n_jobs: int | None = None,
) -> list[Stability]:
    """:func:`stability` of several fits on the same subsamples, one per mapping of ``fits`` (its ``k`` and
    fit options, e.g. the same method with and without ``nonneg``): each subsample's covariance is
    formed and decomposed once for all of them, and each result is the one :func:`stability` gives."""
    if dataset.is_covariance or dataset.n_samples is None:
        raise InputError("stability needs samples × features data: a covariance has no samples to resample")
    n = dataset.n_samples
    n_subsamples = check_int(n_subsamples, "n_subsamples", low=2)
    fraction = check_float(fraction, "fraction", low=0.0, high=1.0)
    threshold = check_float(threshold, "threshold", low=0.5, high=1.0)
    size = int(np.floor(fraction * n))
    if n < 3:
        raise InputError(
            f"stability needs at least 3 samples to draw subsamples of 2 from; the data have {n}, add samples"
        )
    if not 2 <= size <= n - 1:
        raise InputError.bad_argument(
            "fraction", f"gives subsamples of {size} of {n} samples; a fit needs 2 to {n - 1}"
        )
    runs = [(options["k"], {o: v for o, v in options.items() if o != "k"}) for options in fits]
    whole = dataset.problem()
    references = [_fit(whole, k, seed, options) for k, options in runs]
    complementary = bool(np.isclose(fraction, 0.5))
    subsamples = _subsamples(n, size, n_subsamples, complementary, seed)
    supports = _fit_all(dataset, subsamples, references, runs, seed, n_jobs)
    out = []
    for reference, chosen in zip(references, supports):
        ks = [c.k for c in reference.components]
        counts = np.sum(chosen, axis=0)
        columns = list(reference.rotation.columns)
        frequencies = pd.DataFrame(counts / len(subsamples), index=dataset.feature_ids, columns=columns)
        bound = (
            [q * q / ((2 * threshold - 1) * dataset.n_features) for q in ks]
            if complementary and threshold > 0.5
            else None
        )
        out.append(
            Stability(
                frequencies=frequencies,
                reference=reference,
                k=ks,
                n_subsamples=len(subsamples),
                fraction=fraction,
                complementary=complementary,
                threshold=threshold,
                seed=seed,
                expected_false=bound,
            )
        )
    return out


def _subsamples(n: int, size: int, count: int, complementary: bool, seed: int) -> list[np.ndarray]:
    """The row sets, drawn from ``seed`` alone: complementary pairs of halves, or independent draws."""
    rng = np.random.default_rng(np.random.SeedSequence(seed).spawn(1)[0])
    if not complementary:
        return [np.sort(rng.choice(n, size=size, replace=False)) for _ in range(count)]
    out = []
    for _ in range((count + 1) // 2):
        order = rng.permutation(n)
        out += [np.sort(order[:size]), np.sort(order[size : 2 * size])]
    return out


# the data every worker process reads, set before the pool forks (nothing is pickled per task)
_SHARED: dict = {}


def _fit_all(dataset, subsamples, references, runs, seed, n_jobs) -> list[np.ndarray]:
    """Per run, support indicators subsamples × features × components, matched to its reference."""
    values = dataset.matrix if dataset.is_sparse else dataset.columns(np.arange(dataset.n_features))
    _SHARED.update(
        values=values,
        ids=dataset.feature_ids,
        center=bool(dataset.preprocessing.get("center", True)),
        scale=bool(dataset.preprocessing.get("scale", False)),
        references=[np.column_stack([c.weights for c in r.components]) for r in references],
        runs=runs,
        seed=seed,
    )
    jobs = min(os.cpu_count() or 1, len(subsamples)) if n_jobs is None else check_int(n_jobs, "n_jobs", low=1)
    try:
        if jobs == 1 or "fork" not in multiprocessing.get_all_start_methods():
            with threadpool_limits(limits=1):
                chosen = [_support(rows) for rows in subsamples]
        else:
            with ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("fork")) as pool:
                chunk = max(1, len(subsamples) // (4 * jobs))
                chosen = list(pool.map(_support_one_thread, subsamples, chunksize=chunk))
    finally:
        _SHARED.clear()
    return [np.array([c[i] for c in chosen]) for i in range(len(runs))]


def _support_one_thread(rows: np.ndarray) -> list[np.ndarray]:
    """:func:`_support` with one BLAS thread: the processes already use the cores."""
    with threadpool_limits(limits=1):
        return _support(rows)


def _support(rows: np.ndarray) -> list[np.ndarray]:
    """Fit the subsample ``rows`` (centred and scaled on its own) with each run's options, on one covariance
    (its spectrum computed once), and return per run, features ×
    components, whether the component matched to each reference component loads each feature."""
    s = _SHARED
    sub = s["values"][rows]
    if isinstance(sub, np.ndarray):
        mean = sub.mean(axis=0) if s["center"] else None
        spread = _spread(sub, mean) if s["scale"] else None
        problem = Problem.from_data(sub, s["ids"], mean=mean, scale=spread)
    else:
        mean = np.asarray(sub.mean(axis=0)).ravel() if s["center"] else None
        spread = _spread(sub, mean) if s["scale"] else None
        problem = Problem.from_sparse(sub.tocsc(), s["ids"], mean=mean, scale=spread)
    out = []
    for R, (k, options) in zip(s["references"], s["runs"]):
        fit = _fit(problem, k, s["seed"], options)
        W = np.column_stack([c.weights for c in fit.components])
        chosen = np.zeros(R.shape, dtype=bool)
        cos = np.abs(R.T @ W)  # unit columns: |cosine| of every reference and subsample component
        ref, sub_idx = linear_sum_assignment(cos, maximize=True)
        chosen[:, ref] = W[:, sub_idx] != 0
        out.append(chosen)
    return out


def _fit(problem: Problem, k, seed: int, options: Mapping) -> Fit:
    """``fit_components`` as on a covariance of its own: what an earlier fit left in ``problem.memo`` would
    change a fit of the same sign (its floor reads a path's PC1 prefixes there), so the memo is emptied;
    the rest a fit caches (the spectrum) depends on the covariance alone."""
    problem.memo.clear()
    return fit_components(problem, k, seed=seed, **options)


def _spread(sub, mean: np.ndarray | None) -> np.ndarray:
    """R's ``scale()`` divisor of each column of a subsample: sqrt(Σ(x − mean)²/(n − 1)); 1 where it is 0
    (a feature constant in this subsample has no variance to select)."""
    n = sub.shape[0]
    if isinstance(sub, np.ndarray):
        centred = sub if mean is None else sub - mean
        ss = np.einsum("ij,ij->j", centred, centred)
    else:
        ss = np.asarray(sub.multiply(sub).sum(axis=0)).ravel()
        if mean is not None:
            ss = ss - n * mean**2
    sd = np.sqrt(np.maximum(ss, 0.0) / (n - 1))
    return np.where(sd > 0, sd, 1.0)


__all__ = ["THRESHOLD", "Stability", "stabilities", "stability"]
