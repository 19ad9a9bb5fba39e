"""Certificates: a feasible vector's value together with valid upper bounds on OPT.

    cert = certify_vector(problem, w, k=10, nonneg=False, bounds=["lambda1", "dabe"])
    cert.upper_bound, cert.winner, cert.certified_fraction, cert.optimal

Bounds are computed cheapest first (see :data:`REGISTRY`) within an optional
time budget; the upper bound is the minimum over all of them.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from certpca.certify import bounds as B
from certpca.certify import exact as E
from certpca.certify import relax as R
from certpca.errors import InputError


@dataclass(frozen=True)
class BoundSpec:
    """A registered bound: its function, a cost class (0 = O(D) … 5 = exponential)."""

    name: str
    func: Callable
    cost: int
    nonneg_only: bool = False
    max_dim: int | None = None   # default-selection limit (explicit requests may go beyond)
    description: str = ""

    def cite(self) -> str:
        """The full reference of the bound (temporary in the report branch; the certify branch owns this)."""
        return _REFERENCES[self.name]


_DABE = ("d'Aspremont, A., Bach, F. & El Ghaoui, L. (2008). Optimal solutions for sparse principal component "
         "analysis. Journal of Machine Learning Research, 9, 1269-1294.")
_DSPCA = ("d'Aspremont, A., El Ghaoui, L., Jordan, M. I. & Lanckriet, G. R. G. (2007). A direct formulation "
          "for sparse PCA using semidefinite programming. SIAM Review, 49(3), 434-448.")
_ASTERIS = ("Asteris, M., Papailiopoulos, D. S. & Dimakis, A. G. (2014). Nonnegative sparse PCA with provable "
            "guarantees. Proceedings of the 31st International Conference on Machine Learning.")
_HORN = "Horn, R. A. & Johnson, C. R. (2013). Matrix Analysis, 2nd ed. Cambridge University Press."
_MOGHADDAM = ("Moghaddam, B., Weiss, Y. & Avidan, S. (2006). Spectral bounds for sparse PCA: exact and greedy "
              "algorithms. Advances in Neural Information Processing Systems 18.")
_REFERENCES = {"trace": _MOGHADDAM, "lambda1": _MOGHADDAM, "gershgorin": _HORN, "perron": _HORN, "dabe": _DABE,
               "pattern": _DABE, "dspca": _DSPCA, "dnn": _DSPCA, "spannogram": _ASTERIS, "split": _ASTERIS,
               "dspca_sdp": _DSPCA, "dnn_sdp": _DSPCA, "exact": _MOGHADDAM}


REGISTRY: dict[str, BoundSpec] = {s.name: s for s in [
    BoundSpec("trace", B.trace_bound, 0, description="sum of the k largest variances"),
    BoundSpec("lambda1", B.lambda1_bound, 1, description="largest eigenvalue"),
    BoundSpec("gershgorin", B.gershgorin_bound, 2, max_dim=60000,
              description="largest row sum of the k largest |C_ij| (nonneg: positive parts)"),
    BoundSpec("perron", B.perron_bound, 2, nonneg_only=True, max_dim=B.DENSE_LIMIT,
              description="λmax(max(C,0))"),
    BoundSpec("dabe", B.dabe_bound, 3, description="d'Aspremont–Bach–El Ghaoui / Li–Xie diagonal shrink"),
    BoundSpec("pattern", B.pattern_bound, 3, description="dABE certificate for the vector's support"),
    BoundSpec("dspca", B.dspca_dual_bound, 3, max_dim=2000, description="DSPCA dual, soft threshold"),
    BoundSpec("dnn", B.dnn_dual_bound, 3, nonneg_only=True, max_dim=2000,
              description="doubly nonnegative dual, cheap choices"),
    BoundSpec("spannogram", B.spannogram_bound, 3, max_dim=2000,
              description="OPT_d + λmax(C − A_d), d = 2"),
    BoundSpec("split", B.split_bound, 3, max_dim=60000,
              description="OPT_d + a sparse bound on the residual C − A_d, d = 2 (sample space)"),
    BoundSpec("dspca_sdp", R.dspca_sdp_bound, 4, max_dim=R.MAX_DIM, description="DSPCA SDP (cvxpy)"),
    BoundSpec("dnn_sdp", R.dnn_sdp_bound, 4, nonneg_only=True, max_dim=R.MAX_DIM,
              description="doubly nonnegative SDP (cvxpy)"),
    BoundSpec("exact", E.exact_bound, 5, max_dim=20, description="branch and bound over supports"),
]}


@dataclass
class Certificate:
    """A feasible value and the best valid upper bound on OPT(k, nonneg)."""

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


def parse_bounds(spec) -> list[str]:
    """'lambda1,gershgorin,dspca' (or a list) → validated names."""
    names = [s.strip() for s in spec.split(",")] if isinstance(spec, str) else list(spec)
    names = [n for n in names if n]
    unknown = [n for n in names if n not in REGISTRY]
    if unknown:
        raise InputError(f"unknown bound(s) {', '.join(unknown)}; choose from {', '.join(REGISTRY)}")
    return names


def default_bounds(problem, nonneg: bool) -> list[str]:
    """Every registered bound that applies and whose default size limit the problem meets."""
    return [s.name for s in REGISTRY.values()
            if (nonneg or not s.nonneg_only) and (s.max_dim is None or problem.dim <= s.max_dim)]


def _validate(problem, w, k, nonneg) -> tuple[np.ndarray, int]:
    try:
        k = int(k)
    except (TypeError, ValueError):
        raise InputError(f"k must be a positive integer, got {k!r}") from None
    if k < 1:
        raise InputError(f"k must be ≥ 1, got {k}")
    w = np.asarray(w, dtype=float)
    if w.ndim != 1 or w.shape[0] != problem.dim:
        raise InputError(f"w must be a vector of length {problem.dim}, got shape {w.shape}")
    if not np.all(np.isfinite(w)):
        raise InputError("w has non-finite entries; pass a finite loading vector")
    nnz = int(np.count_nonzero(w))
    if nnz == 0:
        raise InputError("w is the zero vector; pass a nonzero loading vector")
    if nnz > k:
        raise InputError(f"w has {nnz} nonzeros but k = {k}; truncate w or raise k")
    if nonneg and np.any(w < 0):
        raise InputError(f"w has {int(np.sum(w < 0))} negative entries but nonneg=True; "
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
    explicit = bounds is not None
    names = parse_bounds(bounds) if explicit else default_bounds(problem, nonneg)
    if stop_when_optimal is None:
        stop_when_optimal = not explicit
    names = sorted(names, key=lambda n: REGISTRY[n].cost)
    value = problem.variance(w)
    lower = value
    support = np.flatnonzero(w)
    t0 = time.perf_counter()
    done, skipped = [], {}
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
        except B.NotApplicable as exc:
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
