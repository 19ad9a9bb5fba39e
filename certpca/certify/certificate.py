"""Certificates: a feasible vector's value together with valid upper bounds on OPT.

    cert = certify_vector(problem, w, k=10, nonneg=False, bounds=["lambda1", "dabe"])
    cert.upper_bound, cert.winner, cert.certified_fraction, cert.optimal

Bounds are computed cheapest first (see :data:`certpca.certify.REGISTRY`) within
an optional time budget; the upper bound is the minimum over all of them.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from certpca.certify.numerics import Bound, NotApplicable
from certpca.certify.registry import REGISTRY, default_bounds, parse_bounds
from certpca.errors import InputError
from certpca.validation import check_cardinality, check_float


@dataclass
class Certificate:
    """A feasible value and the best valid upper bound on OPT(k, nonneg).

    ``winner``, the names in ``bounds`` and the keys of ``skipped`` are registry
    names (:data:`certpca.certify.REGISTRY`).
    """

    value: float
    lower_bound: float
    upper_bound: float
    winner: str
    bounds: list
    k: int
    nonneg: bool
    tol: float = 1e-6
    skipped: dict = field(default_factory=dict)

    @property
    def certified_fraction(self) -> float:
        """value / upper bound: the vector achieves at least this fraction of OPT."""
        return self.value / self.upper_bound if self.upper_bound > 0 else float("nan")

    @property
    def gap(self) -> float:
        """upper bound − value (≥ OPT − value)."""
        return self.upper_bound - self.value

    @property
    def relative_gap(self) -> float:
        return self.gap / self.upper_bound if self.upper_bound > 0 else float("nan")

    @property
    def optimal(self) -> bool:
        """True when gap / upper bound ≤ tol: the vector is optimal to that tolerance."""
        return bool(self.upper_bound > 0 and self.gap <= self.tol * self.upper_bound) or \
            bool(self.upper_bound == 0 and self.value == 0)

    def to_dict(self) -> dict:
        return {
            "value": float(self.value),
            "lower_bound": float(self.lower_bound),
            "upper_bound": float(self.upper_bound),
            "winner": self.winner,
            "certified_fraction": float(self.certified_fraction),
            "gap": float(self.gap),
            "relative_gap": float(self.relative_gap),
            "optimal": self.optimal,
            "tol": float(self.tol),
            "k": int(self.k),
            "nonneg": bool(self.nonneg),
            "bounds": [b.to_dict() for b in self.bounds],
            "skipped": dict(self.skipped),
        }

    def __str__(self) -> str:
        kind = "nonnegative " if self.nonneg else ""
        head = (f"Certificate ({kind}k={self.k}): value {self.value:.6g} ≤ OPT ≤ {self.upper_bound:.6g} "
                f"[{self.winner}]; certified {100 * self.certified_fraction:.2f}%, "
                f"gap {self.gap:.3g}{' — optimal' if self.optimal else ''}")
        lines = [head]
        for b in sorted(self.bounds, key=lambda b: b.value):
            lines.append(f"  {b.name:<11} {b.value:.6g}  ({b.seconds:.2g} s)")
        for name, why in self.skipped.items():
            lines.append(f"  {name:<11} skipped: {why}")
        return "\n".join(lines)


def _validate(problem, w, k, nonneg) -> tuple[np.ndarray, int]:
    """(w normalised, k) or an InputError naming the parameter at fault."""
    k = check_cardinality(k, problem.dim)
    w = np.asarray(w, dtype=float)
    if w.ndim != 1 or w.shape[0] != problem.dim:
        raise InputError.bad_argument("w", f"must be a vector of length {problem.dim}, got shape {w.shape}")
    if not np.all(np.isfinite(w)):
        raise InputError.bad_argument("w", "has non-finite entries; pass a finite loading vector")
    nnz = int(np.count_nonzero(w))
    if nnz == 0:
        raise InputError.bad_argument("w", "is the zero vector; pass a nonzero loading vector")
    if nnz > k:
        raise InputError.bad_argument("w", f"has {nnz} nonzeros but k = {k}; truncate w or raise k")
    if nonneg and np.any(w < 0):
        raise InputError.bad_argument("w", f"has {int(np.sum(w < 0))} negative entries but nonneg=True; "
                                           "flip/clip w or use nonneg=False")
    return w / np.linalg.norm(w), k


def certify_vector(problem, w, k, nonneg=False, *, bounds=None, budget: float | None = None,
                   tol: float = 1e-6, stop_when_optimal: bool | None = None) -> Certificate:
    """Certify a feasible vector w: its value, the best upper bound on OPT, the gap.

    Parameters
    ----------
    problem : Problem
    w : (D,) array — at most k nonzeros (and ≥ 0 when ``nonneg``); normalised here.
    k : int
    nonneg : bool
    bounds : list of names or "a,b,c", optional — default: every applicable bound
        (:func:`default_bounds`), computed cheapest first.
    budget : float, optional — seconds; no new bound starts after it is spent (the
        cheapest requested bound always runs, so there is always an upper bound).
    tol : float — ``optimal`` when (upper − value)/upper ≤ tol.
    stop_when_optimal : bool — stop computing once optimal (default: only for the
        default bound list).

    Raises InputError for an invalid w, k or bound name.
    """
    w, k = _validate(problem, w, k, nonneg)
    if budget is not None:
        budget = check_float(budget, "budget", low=0.0)
    tol = check_float(tol, "tol", low=0.0)
    explicit = bounds is not None
    names = parse_bounds(bounds) if explicit else default_bounds(problem, nonneg)
    if stop_when_optimal is None:
        stop_when_optimal = not explicit
    names = sorted(names, key=lambda n: REGISTRY[n].cost)
    value = problem.variance(w)
    lower = value
    support = np.flatnonzero(w)
    t0 = time.perf_counter()
    done: list[Bound] = []
    skipped: dict[str, str] = {}
    upper = np.inf
    for name in names:
        spec = REGISTRY[name]
        if spec.nonneg_only and not nonneg:
            skipped[name] = "applies to nonnegative problems only"
            continue
        if budget is not None and done and time.perf_counter() - t0 > budget:
            skipped[name] = f"time budget of {budget:g} s spent"
            continue
        if stop_when_optimal and upper < np.inf and upper - value <= tol * upper:
            skipped[name] = "already certified optimal"
            continue
        kw = {"support": support} if name == "pattern" else {}
        try:
            b = spec.func(problem, k, nonneg, **kw)
        except NotApplicable as exc:
            skipped[name] = str(exc)
            continue
        done.append(b)
        upper = min(upper, b.value)
        fv = b.params.get("feasible_value") if isinstance(b.params, dict) else None
        if fv is not None and np.isfinite(fv) and not (name == "pattern" and nonneg):
            lower = max(lower, float(fv))
    if not done:
        raise InputError("no bound could be computed: " + "; ".join(f"{n}: {r}" for n, r in skipped.items()))
    win = min(done, key=lambda b: b.value)
    return Certificate(value=value, lower_bound=lower, upper_bound=win.value, winner=win.name,
                       bounds=done, k=k, nonneg=bool(nonneg), tol=tol, skipped=skipped)
