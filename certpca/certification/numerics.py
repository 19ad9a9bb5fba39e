"""Floating-point safety shared by every bound: margins, shifts, the Bound record.

The margins themselves live in :mod:`certpca.margins` (below the solvers, whose exact
search needs them too) and are re-exported here.

A bound function evaluates an exact inequality  OPT ≤ f(C, parameters)  in
float64 and then adds margins that cover the rounding, so the returned number
is ≥ the exact f and hence ≥ OPT.  The rules (derived in docs/certification.md):

* eigenvalues: LAPACK's symmetric eigensolver is backward stable (λ̂ is an
  exact eigenvalue of M + E, ‖E‖₂ ≤ p(n)·eps·‖M‖₂); Weyl's inequality turns that
  into the margin ``WEYL_FACTOR·n·eps·‖M‖_F`` (:func:`lmax_upper`);
* a matrix formed from a factor F with r rows: Higham's γ_r bound on the
  products (:func:`gamma`);
* last, the scalar arithmetic: ``x + REL_MARGIN·|x|`` (:func:`safe`);
* a possibly indefinite dense C is shifted by s ≥ −λmin(C) (:func:`psd_shift`).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse.linalg

from certpca.clock import FLOP_RATE as FLOP_RATE
from certpca.clock import Deadline, deadline
from certpca.margins import EPS as EPS
from certpca.margins import MARGIN_SLACK as MARGIN_SLACK
from certpca.margins import TINY as TINY
from certpca.margins import gamma as gamma
from certpca.margins import gershgorin_columns as gershgorin_columns
from certpca.margins import lmax_upper as lmax_upper
from certpca.margins import safe as safe
from certpca.margins import shifted_rank2 as shifted_rank2
from certpca.margins import weyl_margin as weyl_margin
from certpca.results import jsonable
from certpca.validation import check_cardinality

#: from this size a search steers by Lanczos estimates of λmax (:func:`lmax_estimate`) and bounds
#: only the points it chooses; below it LAPACK's eigenvalues cost less than forming the matrices
#: (at 500 rows the pattern certificate's search took 3.0 s with estimates, 2.7 s without)
LANCZOS_MIN = 1000

#: above this dimension a factor problem is never expanded to a D × D array
DENSE_LIMIT = 3000


class NotApplicable(Exception):
    """A bound that does not apply to this problem (reason in the message)."""


@dataclass(frozen=True)
class Bound:
    """One upper bound on OPT(k, nonneg) with its provenance.

    ``value`` is already safe under floating point; ``validity`` says how;
    ``name`` is the bound's registry name (:data:`certpca.certification.REGISTRY`).
    """

    value: float
    name: str
    params: dict = field(default_factory=dict)
    seconds: float = 0.0
    validity: str = ""

    def to_dict(self) -> dict:
        return {
            "value": float(self.value),
            "name": self.name,
            "params": jsonable(self.params),
            "seconds": float(self.seconds),
            "validity": self.validity,
        }


def vector_params(w: np.ndarray) -> dict:
    """A feasible vector a bound found, for its params: ``support`` and ``support_weights`` (the values
    there), which :func:`~certpca.certification.certificate.certify_vector` offers as ``Certificate.better``
    when it beats the certified vector."""
    support = np.flatnonzero(w)
    return {"support": support.tolist(), "support_weights": np.asarray(w, dtype=float)[support].tolist()}


def lmax_estimate(M: np.ndarray | scipy.sparse.linalg.LinearOperator) -> float:
    """λmax of M approximately (not a bound: no margin), to steer a search whose chosen point is then
    bounded by :func:`lmax_upper`.  From ``LANCZOS_MIN`` rows Lanczos (ARPACK, from the all-ones vector so
    the result is reproducible) costs a few dozen products instead of LAPACK's O(n³) reduction: 0.03 s
    against 0.42 s at n = 2000; M may then be a LinearOperator, so it need not be formed at all."""
    n = M.shape[0]
    if n >= max(LANCZOS_MIN, 3):  # ARPACK needs n > k + 1
        try:
            top = scipy.sparse.linalg.eigsh(M, k=1, which="LA", v0=np.ones(n), tol=1e-8, return_eigenvectors=False)
            return float(top[0])
        except scipy.sparse.linalg.ArpackError:  # no convergence, or M·v0 = 0 (e.g. M = 0): LAPACK
            pass
    return float(np.linalg.eigvalsh(M if isinstance(M, np.ndarray) else M @ np.eye(n))[-1])


def timed(fn: Callable[..., Bound]) -> Callable[..., Bound]:
    """Decorator: fill in ``seconds`` of the returned Bound."""

    def wrapper(problem, k, nonneg=False, **options):
        t0 = time.perf_counter()
        b = fn(problem, k, nonneg, **options)
        return Bound(b.value, b.name, b.params, time.perf_counter() - t0, b.validity)

    wrapper.__name__ = fn.__name__
    wrapper.__qualname__ = fn.__qualname__
    wrapper.__doc__ = fn.__doc__
    wrapper.__wrapped__ = fn  # type: ignore[attr-defined]
    return wrapper


def check_k(problem, k) -> int:
    """k as an int in [1, D] for this problem; an InputError naming ``k`` otherwise (never clipped)."""
    return check_cardinality(k, problem.dim)


def dense_matrix(problem, limit: int = DENSE_LIMIT) -> tuple[np.ndarray, float]:
    """(C as a D × D array, bound on ‖C_exact − C‖₂ from forming it).

    Raises NotApplicable for factor problems with D > ``limit``.
    """
    if not problem.uses_factor:
        return problem.dense(), 0.0
    if problem.dim > limit:
        raise NotApplicable(f"needs the D × D covariance and D = {problem.dim} > {limit}")
    F = problem.factor()
    return problem.dense(), gamma(F.shape[0]) * problem.trace


def spectrum_margin(problem) -> float:
    """Margin on the eigenvalues from ``problem.eigenvalues()`` (LAPACK on C or on FFᵀ)."""
    if problem.uses_factor:
        r = problem.factor_rows
        # Gram FFᵀ formed with error ≤ γ_D·tr, then eigensolver on an r × r PSD
        # matrix whose Frobenius norm is ≤ its trace ≈ tr C.
        tr = problem.trace
        return gamma(problem.dim) * tr + weyl_margin(r, tr) * (1 + MARGIN_SLACK)
    return weyl_margin(problem.dim, float(np.linalg.norm(problem.dense())))


def psd_shift(problem) -> float:
    """s ≥ 0 with C + sI certainly PSD (0 for factor problems, where C = FᵀF)."""
    if problem.uses_factor:
        return 0.0
    lam_min = float(problem.eigenvalues()[-1])
    s = -(lam_min - spectrum_margin(problem))
    return max(0.0, s * (1 + MARGIN_SLACK))


class _SearchOver(Exception):
    """Raised inside :func:`minimize_1d` when its deadline has passed or its target is met."""


def minimize_1d(
    f: Callable[[float], float],
    lo: float,
    hi: float,
    n_grid: int = 16,
    n_golden: int = 14,
    extra: tuple = (),
    *,
    deadline: Deadline | None = None,
    target: float = -math.inf,
    estimate: Callable[[float], float] | None = None,
) -> tuple[float, float]:
    """Approximately minimise f over [lo, hi]: grid, then golden section around the best.

    Any evaluated point is valid for every bound here, so inexact search only
    costs tightness; hence the search may also stop early, keeping the best point
    so far: when ``deadline`` (:class:`certpca.clock.Deadline`) passes (after at least one
    evaluation; an evaluation is never interrupted) or a value ≤ ``target`` is
    found (nothing below it is needed).  With ``estimate`` (a cheap approximation
    of f, e.g. by :func:`lmax_estimate`) the search runs on it and f, the bound,
    is evaluated only at its ``ESTIMATE_FINALISTS`` best points (at the best one
    when the deadline has passed).  Returns (best value of f, argmin).
    """
    seen: dict[float, float] = {}
    guide = f if estimate is None else estimate

    def g(x: float) -> float:
        if seen and (deadline is not None and deadline.passed() or min(seen.values()) <= target):
            raise _SearchOver
        seen[x] = v = guide(x)
        return v

    try:
        _grid_golden(g, lo, hi, n_grid, n_golden, extra)
    except _SearchOver:
        pass
    if estimate is not None:  # past the deadline only the best point is bounded
        late = deadline is not None and deadline.passed()
        seen = {x: f(x) for x in sorted(seen, key=lambda x: seen[x])[: 1 if late else ESTIMATE_FINALISTS]}
    arg = min(seen, key=lambda x: seen[x])
    return float(seen[arg]), float(arg)


#: points of an estimated search at which the bound itself is evaluated (the best estimates)
ESTIMATE_FINALISTS = 2


def _grid_golden(f: Callable[[float], float], lo: float, hi: float, n_grid: int, n_golden: int, extra: tuple) -> None:
    """Evaluate f on a grid of [lo, hi] (and ``extra``), then by golden section around the best point."""
    pts = list(np.linspace(lo, hi, n_grid)) + [p for p in extra if lo <= p <= hi]
    vals = [f(p) for p in pts]
    order = np.argsort(pts)
    pts_s = np.asarray(pts)[order]
    vals_s = np.asarray(vals)[order]
    j = int(np.argmin(vals_s))
    a = pts_s[max(j - 1, 0)]
    b = pts_s[min(j + 1, len(pts_s) - 1)]
    g = (math.sqrt(5) - 1) / 2
    c, d = b - g * (b - a), a + g * (b - a)
    fc, fd = f(c), f(d)
    for _ in range(n_golden):
        if fc < fd:
            b, d, fd = d, c, fc
            c = b - g * (b - a)
            fc = f(c)
        else:
            a, c, fc = c, d, fd
            d = a + g * (b - a)
            fd = f(d)


def deadline_after(time_limit: Deadline | float | None) -> Deadline:
    """The :class:`~certpca.clock.Deadline` ``time_limit`` seconds from now on the budget clock (None: never;
    a Deadline: itself, so a caller's deadline is passed down as it is)."""
    return deadline(time_limit)


def topk_sum(x: np.ndarray, k: int) -> float:
    """Sum of the k largest entries of x (all of them when k ≥ len(x))."""
    if k >= len(x):
        return float(np.sum(x))
    return float(np.sum(np.partition(x, len(x) - k)[len(x) - k :]))


def sample_space_seconds(problem, k) -> float:
    """Estimated seconds of one r × r sum over D features (a factor problem) or one D × D eigenproblem."""
    if problem.uses_factor:
        r = problem.factor_rows
        return r * r * problem.dim / FLOP_RATE
    return problem.dim**3 / FLOP_RATE


def dense_eigen_seconds(problem, k) -> float:
    """Estimated seconds of C formed and one D × D eigenproblem on it (a dense dual's first point)."""
    return quadratic_seconds(problem, k) + problem.dim**3 / FLOP_RATE


def linear_seconds(problem, k) -> float:
    """Estimated seconds of a pass over the D variances (and the interpreter's fixed cost of a bound)."""
    return BOUND_SECONDS + 10 * problem.dim / FLOP_RATE


#: the fixed seconds of a bound's run (its Python around the arithmetic), in every whole-run estimate
BOUND_SECONDS = 0.002


def whole_run(model: Callable, evaluations: float, fixed: float = 0.0) -> Callable:
    """``work(problem, k)`` of a bound that does not charge its steps (``BoundSpec.work``): ``evaluations``
    times ``model``'s seconds (e.g. the eigenproblems of a 1-D search) + ``fixed`` seconds, the factors
    measured against CPU seconds on the bundled data (bench/bench_work.py, reports/bench/work.md)."""

    def work(problem, k) -> float:
        return evaluations * model(problem, k) + fixed + BOUND_SECONDS

    return work


#: estimated work per entry of C that the Gershgorin bound forms, in flops beside r/2 for its share of the product
#: (BLAS runs above FLOP_RATE): the absolute values and the partition of the k largest; against CPU seconds on one
#: BLAS thread, leukemia 0.088 s estimated for 0.085, khan 0.087 for 0.083, pbmc 0.031 for 0.016 (reports/bench/work.md)
GERSHGORIN_ENTRY_OPS = 175


def gershgorin_block_seconds(rows: int, dim: int, factor_rows: int) -> float:
    """Estimated seconds of ``rows`` rows of C formed (from a factor of ``factor_rows`` rows; 0: dense) and
    their k largest entries found."""
    return rows * dim * (GERSHGORIN_ENTRY_OPS + factor_rows / 2) / FLOP_RATE


def quadratic_seconds(problem, k) -> float:
    """Estimated seconds of forming every entry of C once: O(r·D²) from a factor, O(D²) dense."""
    r = problem.factor_rows if problem.uses_factor else 1
    return r * problem.dim**2 / FLOP_RATE
