"""Upper bounds on OPT(k, nonneg) = max wᵀCw, ‖w‖₂ = 1, ‖w‖₀ ≤ k (, w ≥ 0).

Every function here has the signature ``(problem, k, nonneg=False, **options)
-> Bound`` and returns a number that is ≥ the *exact* bound formula it
implements, hence ≥ OPT, under floating point.  The recipe (notes:
/work/shared/notes/certification-theory.md) is always the same:

1. an exact formula  OPT ≤ f(C, parameters)  valid for *every* value of its
   free parameters (ρ, U, N, μ, ...) — so a parameter search never needs to
   converge, it only makes the bound tighter;
2. f evaluated in float64;
3. an explicit margin covering the rounding of step 2:

   * eigenvalues: λ̂max from LAPACK (backward stable: λ̂ is an exact eigenvalue
     of M + E with ‖E‖₂ ≤ p(n)·eps·‖M‖₂) plus the Weyl bound
     ``8·n·eps·‖M‖_F`` (‖M‖_F ≥ ‖M‖₂, and 8n is a generous p(n));
   * forming M itself (products of a factor F with r rows): the Higham bound
     |ΔM| ≤ γ_r·|F|ᵀ|F| entrywise, whose Frobenius norm is ≤ γ_r·tr(FᵀF);
   * finally ``x + 1e-10·|x|`` for the scalar arithmetic (sums, kρ, ...).

Bounds that need a positive semidefinite C (trace, dABE) shift a dense C by
s = max(0, −(λ̂min − margin)) ≥ −λmin(C): OPT(C + sI) = OPT(C) + s.

References: d'Aspremont, Bach & El Ghaoui, JMLR 9 (2008) §§4–6 (dABE);
d'Aspremont et al., SIAM Review 49 (2007) (DSPCA); Li & Xie (2020) eq. (13);
Asteris, Papailiopoulos & Dimakis, ICML 2014 (spannogram bound).
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import scipy.linalg

from certpca.results import jsonable

EPS = float(np.finfo(float).eps)
REL_MARGIN = 1e-10
TINY = 1e-300

#: above this dimension a factor problem is never expanded to a D × D array
DENSE_LIMIT = 3000


class NotApplicable(Exception):
    """A bound that does not apply to this problem (reason in the message)."""


@dataclass(frozen=True)
class Bound:
    """One upper bound on OPT(k, nonneg) with its provenance.

    ``value`` is already safe under floating point; ``validity`` says how.
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


# --------------------------------------------------------------- numerics
def gamma(n: int) -> float:
    """Higham's γ_n = n·eps/(1 − n·eps), inflated a little for safety."""
    ne = (n + 2) * EPS
    return ne / (1.0 - ne)


def safe(x: float) -> float:
    """Round a computed bound up by the relative margin (and a tiny absolute one)."""
    x = float(x)
    return x + REL_MARGIN * abs(x) + TINY


def lmax_upper(M: np.ndarray, form_err: float = 0.0) -> tuple[float, float]:
    """Upper bound on λmax of an exact matrix M* with ‖M* − M‖₂ ≤ ``form_err``.

    Returns ``(λ̂max + margin, margin)`` with margin = 8·n·eps·‖M‖_F + form_err
    (Weyl: |λ(M*) − λ̂(M)| ≤ ‖M* − M‖₂ + ‖E‖₂ with E the backward error of the
    symmetric eigensolver).
    """
    M = np.asarray(M, dtype=float)
    n = M.shape[0]
    if n == 0:
        return 0.0, 0.0
    if n <= 64:
        lam = float(np.linalg.eigvalsh(M)[-1])
    else:
        lam = float(scipy.linalg.eigvalsh(M, subset_by_index=[n - 1, n - 1], check_finite=False)[0])
    margin = 8.0 * n * EPS * float(np.linalg.norm(M)) + form_err * (1.0 + 1e-6)
    return lam + margin, margin


def _timed(fn: Callable) -> Callable:
    """Fill in ``seconds`` of the returned Bound."""

    def wrapper(problem, k, nonneg=False, **options):
        t0 = time.perf_counter()
        b = fn(problem, k, nonneg, **options)
        return Bound(b.value, b.name, b.params, time.perf_counter() - t0, b.validity)

    wrapper.__name__ = fn.__name__
    wrapper.__qualname__ = fn.__qualname__
    wrapper.__doc__ = fn.__doc__
    wrapper.__wrapped__ = fn
    return wrapper


def _check_k(problem, k) -> int:
    k = int(k)
    if k < 1:
        raise ValueError(f"k must be ≥ 1, got {k}")
    return min(k, problem.dim)


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
        F = problem.factor()
        r = F.shape[0]
        # Gram FFᵀ formed with error ≤ γ_D·tr, then eigensolver on an r × r PSD
        # matrix whose Frobenius norm is ≤ its trace ≈ tr C.
        tr = problem.trace
        return gamma(problem.dim) * tr + 8.0 * r * EPS * tr * (1 + 1e-6)
    C = problem._C if hasattr(problem, "_C") and problem._C is not None else problem.dense()
    return 8.0 * problem.dim * EPS * float(np.linalg.norm(C))


def psd_shift(problem) -> float:
    """s ≥ 0 with C + sI certainly PSD (0 for factor problems, where C = FᵀF)."""
    if problem.uses_factor:
        return 0.0
    lam_min = float(problem.eigenvalues()[-1])
    s = -(lam_min - spectrum_margin(problem))
    return max(0.0, s * (1 + 1e-6))


def minimize_1d(f: Callable[[float], float], lo: float, hi: float, n_grid: int = 16,
                n_golden: int = 14, extra: tuple = ()) -> tuple[float, float]:
    """Approximately minimise f over [lo, hi]: grid, then golden section around the best.

    Any evaluated point is valid for every bound here, so inexact search only
    costs tightness.  Returns (best value, argmin).
    """
    pts = list(np.linspace(lo, hi, n_grid)) + [p for p in extra if lo <= p <= hi]
    vals = [f(p) for p in pts]
    order = np.argsort(pts)
    pts_s = np.asarray(pts)[order]
    vals_s = np.asarray(vals)[order]
    j = int(np.argmin(vals_s))
    best, arg = float(vals_s[j]), float(pts_s[j])
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
    for p, v in ((c, fc), (d, fd)):
        if v < best:
            best, arg = float(v), float(p)
    return best, arg


def _topk_sum(x: np.ndarray, k: int) -> float:
    if k >= len(x):
        return float(np.sum(x))
    return float(np.sum(np.partition(x, len(x) - k)[len(x) - k:]))


# ------------------------------------------------------------------ bounds
@_timed
def lambda1_bound(problem, k, nonneg=False) -> Bound:
    """OPT ≤ λmax(C): dropping the sparsity (and sign) constraint.

    Validity: λ̂max of C (or of the r × r Gram FFᵀ when C = FᵀF) plus
    margin 8·n·eps·‖M‖_F (+ γ_D·tr C for forming FFᵀ); then relative 1e-10.
    """
    k = _check_k(problem, k)
    lam = float(problem.eigenvalues()[0])
    m = spectrum_margin(problem)
    return Bound(safe(lam + m), "lambda1", {"lambda_max": lam, "margin": m}, 0.0,
                 "λmax from LAPACK eigh (on FFᵀ if factored) + Weyl margin 8·n·eps·‖M‖_F "
                 "(+γ_D·tr C forming FFᵀ) + rel 1e-10")


@_timed
def trace_bound(problem, k, nonneg=False) -> Bound:
    """OPT ≤ sum of the k largest C_ii  (λmax(C_SS) ≤ tr C_SS for PSD C).

    For a dense C that may be slightly indefinite the exact statement used is
    λmax(C_SS) ≤ tr C_SS + (k − 1)·s with s ≥ −λmin(C) certified.
    Validity: a sum of k floats (relative error ≤ γ_k) + rel 1e-10.
    """
    k = _check_k(problem, k)
    s = psd_shift(problem)
    v = _topk_sum(problem.diag, k) + (k - 1) * s
    v = v + gamma(k) * abs(v)
    return Bound(safe(v), "trace", {"shift": s}, 0.0,
                 "sum of k largest diagonal entries (exact floats) with γ_k summation margin + rel 1e-10")


@_timed
def gershgorin_bound(problem, k, nonneg=False, *, max_dim: int = 60000,
                     block_bytes: int = 32 * 2**20) -> Bound:
    """OPT ≤ max_i [C_ii + sum of the k−1 largest |C_ij|, j ≠ i]  (nonneg: (C_ij)₊).

    Gershgorin on C_SS for the optimal support S (|S| ≤ k); for w ≥ 0,
    wᵀCw ≤ wᵀC₊w ≤ λmax((C₊)_SS) ≤ its largest row sum (Perron–Frobenius).
    This is ≤ "the k largest |C_ij| of row i, diagonal included".
    For a factor C = FᵀF the rows are formed a block at a time (never D × D).
    Validity: each formed entry has error ≤ γ_r·√(C_ii C_jj) ≤ γ_r·max C_jj, so
    the margin is k·γ_r·max_j C_jj plus γ_k·value for the sums, plus rel 1e-10.
    """
    k = _check_k(problem, k)
    D = problem.dim
    diag = problem.diag
    kk = k - 1
    if problem.uses_factor:
        if D > max_dim:
            raise NotApplicable(f"O(D²·r) row blocks and D = {D} > max_dim = {max_dim}")
        F = problem.factor()
        r = F.shape[0]
        b = max(1, min(D, block_bytes // (8 * D)))
        best = -np.inf
        for i0 in range(0, D, b):
            i1 = min(D, i0 + b)
            G = F[:, i0:i1].T @ F
            G[np.arange(i1 - i0), np.arange(i0, i1)] = 0.0
            G = np.maximum(G, 0.0) if nonneg else np.abs(G)
            if kk == 0:
                rows = np.zeros(i1 - i0)
            elif kk >= D - 1:
                rows = G.sum(axis=1)
            else:
                rows = np.partition(G, D - kk, axis=1)[:, D - kk:].sum(axis=1)
            d = diag[i0:i1]
            best = max(best, float(np.max((np.maximum(d, 0) if nonneg else d) + rows)))
        err = k * gamma(r) * float(np.max(diag))
        how = f"row blocks of {b}"
    else:
        C = problem.dense()
        G = np.maximum(C, 0.0) if nonneg else np.abs(C)
        np.fill_diagonal(G, 0.0)
        if kk == 0:
            rows = np.zeros(D)
        elif kk >= D - 1:
            rows = G.sum(axis=1)
        else:
            rows = np.partition(G, D - kk, axis=1)[:, D - kk:].sum(axis=1)
        d = np.maximum(diag, 0) if nonneg else diag
        best = float(np.max(d + rows))
        err = 0.0
        how = "dense"
    v = best + err + gamma(k) * abs(best)
    return Bound(safe(v), "gershgorin", {"positive_part": bool(nonneg), "how": how, "margin": err}, 0.0,
                 "max row sum of k largest entries (exact floats; factor rows with error ≤ γ_r·max C_jj "
                 "each) + γ_k summation + rel 1e-10")


@_timed
def perron_bound(problem, k, nonneg=True, *, limit: int = DENSE_LIMIT) -> Bound:
    """Nonnegative only: OPT⁺ ≤ λmax(C₊) with C₊ = max(C, 0) entrywise.

    For w ≥ 0: wᵀCw ≤ wᵀC₊w ≤ λmax(C₊).  Dense D only.
    Validity: C₊ is exact (or formed from F with error ≤ γ_r·tr C); λ̂max
    + Weyl margin 8·D·eps·‖C₊‖_F + rel 1e-10.
    """
    k = _check_k(problem, k)
    if not nonneg:
        raise NotApplicable("the Perron bound λmax(C₊) holds only for nonnegative w")
    C, err = dense_matrix(problem, limit)
    v, m = lmax_upper(np.maximum(C, 0.0), err)
    return Bound(safe(v), "perron", {"margin": m}, 0.0,
                 "λmax(max(C,0)) by LAPACK + Weyl margin 8·D·eps·‖C₊‖_F (+forming) + rel 1e-10")


def _shrunk_gram(problem, rho: float, s: float, C=None, err_C: float = 0.0) -> tuple[float, float]:
    """λmax upper bound of D^½(C+sI)D^½ with D = diag((1 − ρ/(C_ii+s))₊), and its margin.

    In sample space (F D Fᵀ, r × r) for factor problems.
    """
    dg = problem.diag + s
    with np.errstate(divide="ignore", invalid="ignore"):
        dvec = np.where(dg > 0, np.maximum(1.0 - rho / dg, 0.0), 0.0)
    if problem.uses_factor and C is None:
        F = problem.factor()
        keep = dvec > 0
        if not np.any(keep):
            return 0.0, 0.0
        Fk = F[:, keep]
        M = (Fk * dvec[keep]) @ Fk.T
        form = gamma(int(keep.sum()) + 2) * float(np.sum(dvec[keep] * problem.diag[keep]))
        return lmax_upper(M, form)
    keep = dvec > 0
    if not np.any(keep):
        return 0.0, 0.0
    sq = np.sqrt(dvec[keep])
    A = C[np.ix_(keep, keep)] + s * np.eye(int(keep.sum()))
    M = sq[:, None] * A * sq[None, :]
    # entry error: 4 roundings (sqrt, two products, shift) plus C's own forming error
    form = 4 * EPS * float(np.linalg.norm(M)) + err_C + 2 * EPS * s
    return lmax_upper(M, form)


@_timed
def dabe_bound(problem, k, nonneg=False, *, n_grid: int = 16, n_golden: int = 14,
               limit: int = DENSE_LIMIT) -> Bound:
    """d'Aspremont–Bach–El Ghaoui fallback, tightened by the Li–Xie form.

    With a_i the columns of F (C = FᵀF) and unit u in sample space,
    OPT = max_u top_k (a_iᵀu)²  and  (a_iᵀu)² ≤ (1−μ_i)(a_iᵀu)² + μ_i C_ii, so for
    every μ ∈ [0,1]^D (Li & Xie 2020, eq. 13)

        OPT ≤ λmax(F diag(1−μ) Fᵀ) + top_k(μ_i C_ii).

    μ_i = min(1, ρ/C_ii) gives λmax(D^½CD^½) + top_k(min(C_ii, ρ)) with
    D = diag((1 − ρ/C_ii)₊): never above dABE's  kρ + λmax(D^½CD^½)
    (JMLR 2008, Y_i = (B_i)₊), equal when ≥ k features have C_ii ≥ ρ.
    Features with C_ii ≤ ρ drop out.  ρ is searched on [0, max C_ii]
    (grid + golden section); every ρ gives a valid bound.
    Computed in sample space (r × r) when C is factored, else on the dense C
    (shifted by s ≥ −λmin to be PSD).
    Validity: λ̂max + Weyl margin 8·n·eps·‖M‖_F + forming error
    (γ·Σ d_i C_ii for F D Fᵀ; 4·eps·‖M‖_F dense) + rel 1e-10.
    """
    k = _check_k(problem, k)
    s = psd_shift(problem)
    C, err_C = (None, 0.0) if problem.uses_factor else dense_matrix(problem, limit)
    dg = problem.diag + s

    def f(rho):
        lam, _ = _shrunk_gram(problem, rho, s, C, err_C)
        v = lam + _topk_sum(np.minimum(dg, rho), k) - s
        return safe(v + gamma(k + 2) * (abs(lam) + k * rho + s))

    hi = float(np.max(dg))
    best, rho = minimize_1d(f, 0.0, hi, n_grid, n_golden)
    n_active = int(np.sum(dg > rho))
    return Bound(best, "dabe", {"rho": rho, "active_features": n_active, "shift": s,
                                "space": "sample" if problem.uses_factor else "feature"}, 0.0,
                 "Li–Xie/dABE diagonal-shrink bound at the best searched ρ; λ̂max + Weyl margin "
                 "8·n·eps·‖M‖_F + forming error + rel 1e-10")


@_timed
def dspca_dual_bound(problem, k, nonneg=False, *, U=None, n_grid: int = 16, n_golden: int = 12,
                     limit: int = 2000) -> Bound:
    """DSPCA dual: for any symmetric U, OPT ≤ λmax(C + U) + k·max|U_ij|.

    (Tr(CX) = Tr((C+U)X) − Tr(UX) ≤ λmax(C+U) + max|U|·Σ|X_ij| and Σ|X_ij| =
    ‖w‖₁² ≤ k for X = wwᵀ.)  Cheap choice U = −clip(C, ±ρ), i.e. C + U is C
    soft-thresholded at ρ, with ρ searched on [0, max|C_ij|].  A given ``U``
    (e.g. the repaired dual of the SDP) is evaluated as is.
    Validity: U is defined from the formed Ĉ, so λmax(C+U) ≤ λmax(Ĉ+U) + ‖C−Ĉ‖₂;
    soft-thresholding rounds each entry once (≤ eps·‖M‖_F); λ̂max + Weyl margin
    8·D·eps·‖M‖_F; rel 1e-10.
    """
    k = _check_k(problem, k)
    C, err = dense_matrix(problem, limit)

    def value(Um):
        M = C + Um
        lam, _ = lmax_upper(M, err + EPS * float(np.linalg.norm(M)))
        return safe(lam + k * float(np.max(np.abs(Um))) * (1 + 2 * EPS))

    if U is not None:
        U = np.asarray(U, dtype=float)
        U = (U + U.T) / 2
        return Bound(value(U), "dspca_dual", {"U": "given"}, 0.0,
                     "λmax(C+U)+k·max|U| for a symmetric U; λ̂max + Weyl margin + rel 1e-10")

    def f(rho):
        return value(-np.clip(C, -rho, rho))

    hi = float(np.max(np.abs(C)))
    best, rho = minimize_1d(f, 0.0, hi, n_grid, n_golden)
    return Bound(best, "dspca_dual", {"rho": rho}, 0.0,
                 "λmax(soft-threshold(C,ρ)) + kρ at the best searched ρ; λ̂max + Weyl margin "
                 "8·D·eps·‖M‖_F (+forming) + rel 1e-10")


def dnn_value(C: np.ndarray, k: int, rho: float, N: np.ndarray, err: float = 0.0) -> float:
    """Safe value of the DNN dual  kρ + λmax(C − ρ11ᵀ + N)  for ρ ≥ 0, N ≥ 0 (repaired here)."""
    rho = max(float(rho), 0.0)
    N = np.maximum((N + N.T) / 2, 0.0)
    M = C - rho + N
    lam, _ = lmax_upper(M, err + 2 * EPS * float(np.linalg.norm(M)) + EPS * rho * C.shape[0])
    return safe(lam + k * rho)


@_timed
def dnn_dual_bound(problem, k, nonneg=True, *, n_grid: int = 16, n_golden: int = 12,
                   limit: int = 2000) -> Bound:
    """Nonnegative only: for ρ ≥ 0 and N ≥ 0,  OPT⁺ ≤ kρ + λmax(C − ρ11ᵀ + N).

    (For w ≥ 0 unit with ‖w‖₀ ≤ k: ρ(1ᵀw)² ≤ ρk and wᵀNw ≥ 0.)  Dual of the
    doubly nonnegative relaxation.  Cheap choices, each ρ searched on
    [0, max C_ij]: N = 0;  N = (−C)₊ (C₊ − ρ11ᵀ);  N = (ρ − C)₊ ((C − ρ)₊).
    Validity: λ̂max + Weyl margin 8·D·eps·‖M‖_F, forming error 2·eps·‖M‖_F
    (+ γ_r·tr C from F) + rel 1e-10.
    """
    k = _check_k(problem, k)
    if not nonneg:
        raise NotApplicable("the DNN dual bound holds only for nonnegative w")
    C, err = dense_matrix(problem, limit)
    Z = np.zeros_like(C)
    negC = np.maximum(-C, 0.0)
    results = {}
    for name, Nf in (("zero", lambda r: Z), ("neg_part", lambda r: negC),
                     ("shifted_neg_part", lambda r: np.maximum(r - C, 0.0))):
        results[name] = minimize_1d(lambda r: dnn_value(C, k, r, Nf(r), err), 0.0,
                                    max(float(np.max(C)), 0.0), n_grid, n_golden)
    name = min(results, key=lambda n: results[n][0])
    best, rho = results[name]
    return Bound(best, "dnn_dual", {"rho": rho, "N": name}, 0.0,
                 "kρ + λmax(C − ρ11ᵀ + N), ρ ≥ 0, N ≥ 0; λ̂max + Weyl margin 8·D·eps·‖M‖_F "
                 "(+forming) + rel 1e-10")


# ------------------------------------------------------- pattern certificate
def _factor_with_error(problem) -> tuple[np.ndarray, float]:
    """A factor F and ε ≥ ‖C − FᵀF‖₂ (0 up to forming for a genuinely factored problem)."""
    F = problem.factor()
    if problem.uses_factor:
        return F, 0.0
    C = problem.dense()
    R = C - F.T @ F
    # ‖R_exact‖ ≤ ‖R̂‖_F + forming error of FᵀF (γ_r·tr) + subtraction rounding
    err = float(np.linalg.norm(R)) * (1 + 1e-6) + gamma(F.shape[0]) * float(np.sum(F * F)) \
        + EPS * float(np.linalg.norm(C))
    return F, err


def greedy_support(problem, k: int, nonneg: bool = False) -> np.ndarray:
    """Forward greedy support of size k (λmax of C_SS; nonneg: on C₊-ordered features).

    Only a helper to choose a pattern to certify: any support gives a valid bound.
    """
    D = problem.dim
    k = min(k, D)
    if D > 400:  # thresholding of the first PC: cheap and strong (peers-measured notes)
        v = problem.first_pc()
        score = np.maximum(v, 0) if nonneg else np.abs(v)
        return np.sort(np.argsort(-score)[:k])
    C = problem.dense()
    S = [int(np.argmax(problem.diag))]
    while len(S) < k:
        best, bj = -np.inf, -1
        for j in range(D):
            if j in S:
                continue
            T = S + [j]
            lam = np.linalg.eigvalsh(C[np.ix_(T, T)])[-1]
            if lam > best:
                best, bj = lam, j
        S.append(bj)
    return np.sort(np.asarray(S))


@_timed
def pattern_bound(problem, k, nonneg=False, *, support=None, n_grid: int = 12,
                  n_golden: int = 16) -> Bound:
    """dABE pattern certificate (JMLR 2008, §6): a dual point built around a support I.

    Let x = top left singular vector of F_I, s_i = a_iᵀx, B_i = a_ia_iᵀ − ρI, P = I − xxᵀ:
      i ∈ I, s_i² > ρ:   Y_i = B_i x xᵀ B_i / (s_i² − ρ)      (Aczél: ⪰ B_i for any x with xᵀB_ix>0)
      i ∉ I, ρ > s_i²:   Y_i = max{0, ρ(‖a_i‖²−ρ)/(ρ−s_i²)}·Pa_ia_iᵀP/‖Pa_i‖²   (2×2 Schur check)
      otherwise:         Y_i = (B_i)₊
    and OPT ≤ kρ + λmax(Σ Y_i) for every ρ ≥ 0 (any k; best when |I| = k).  When
    the bound meets λmax(C_II) the support I is *proved* globally optimal.
    ρ is searched on [0, max C_ii] and inside [max_{i∉I} s_i², min_{i∈I} s_i²].
    Sparse bound, valid for nonneg too (OPT⁺ ≤ OPT).
    Validity: the special formulas are used only with a relative gap
    |s_i² − ρ| ≥ 1e-4·(‖a_i‖² + ρ); each Y_i is then shifted by
    τ_i = 16(r+8)·eps·(‖a_i‖²+ρ)·(1 + (‖a_i‖²+ρ)/gap_i) ≥ its rounding error, making
    Y_i + τ_iI exactly feasible, so Στ_i is added; λ̂max + Weyl margin on the
    r × r matrix; for a dense C, F = eigen-factor and ‖C − FᵀF‖ is added; rel 1e-10.
    """
    k = _check_k(problem, k)
    if support is None:
        support = greedy_support(problem, k, nonneg)
    I = np.unique(np.asarray(support, dtype=np.intp))
    F, ferr = _factor_with_error(problem)
    r, D = F.shape
    FI = F[:, I]
    U, sv, _ = np.linalg.svd(FI, full_matrices=False)
    x = U[:, 0]
    x = x / np.linalg.norm(x)
    s = F.T @ x
    s2 = s * s
    asq = problem.diag if problem.uses_factor else np.einsum("ij,ij->j", F, F)
    inI = np.zeros(D, bool)
    inI[I] = True
    value_I = float(sv[0] ** 2)
    P_a = F - np.outer(x, s)  # columns P a_i
    pnorm = np.linalg.norm(P_a, axis=0)
    anorm = np.sqrt(asq)

    def total(rho):
        scale = asq + rho
        gap = np.abs(s2 - rho)
        ok_gap = gap >= 1e-4 * scale
        use_in = inI & (s2 > rho) & ok_gap
        use_out = (~inI) & (rho > s2) & ok_gap & (pnorm > 1e-8 * np.maximum(anorm, TINY))
        fb = ~(use_in | use_out)
        W = np.empty_like(F)
        coef = np.zeros(D)
        # I-case: b_i = B_i x = s_i a_i − ρ x, coefficient 1/(s_i² − ρ)
        if np.any(use_in):
            W[:, use_in] = F[:, use_in] * s[use_in] - rho * x[:, None]
            coef[use_in] = 1.0 / (s2[use_in] - rho)
        if np.any(use_out):
            c = rho * (asq[use_out] - rho) / (rho - s2[use_out])
            W[:, use_out] = P_a[:, use_out] / pnorm[use_out]
            coef[use_out] = np.maximum(c, 0.0)
        if np.any(fb):
            with np.errstate(divide="ignore", invalid="ignore"):
                W[:, fb] = np.where(anorm[fb] > 0, F[:, fb] / np.where(anorm[fb] > 0, anorm[fb], 1), 0.0)
            coef[fb] = np.maximum(asq[fb] - rho, 0.0)
        tau = np.where(fb, 4 * (r + 8) * EPS * scale,
                       16 * (r + 8) * EPS * scale * (1 + scale / np.maximum(gap, TINY)))
        nz = coef > 0
        M = (W[:, nz] * coef[nz]) @ W[:, nz].T
        form = gamma(int(nz.sum()) + 2) * float(np.sum(coef[nz] * np.sum(W[:, nz] ** 2, axis=0)))
        lam, _ = lmax_upper(M, form)
        v = k * rho + lam + float(np.sum(tau)) + ferr
        return safe(v + gamma(4) * abs(v)), int(use_in.sum()), int(use_out.sum())

    lo_in = float(np.max(s2[~inI])) if np.any(~inI) else 0.0
    hi_in = float(np.min(s2[inI]))
    extra = tuple(np.linspace(lo_in, hi_in, 9)[1:-1]) if lo_in < hi_in else ()
    best, rho = minimize_1d(lambda p: total(p)[0], 0.0, float(np.max(asq)), n_grid, 4, extra)
    if lo_in < hi_in:
        b2, r2 = minimize_1d(lambda p: total(p)[0], lo_in, hi_in, 5, n_golden)
        if b2 < best:
            best, rho = b2, r2
    _, n_in, n_out = total(rho)
    proved = len(I) == k and best <= value_I * (1 + 1e-6)
    return Bound(best, "pattern", {"rho": rho, "support": I.tolist(), "support_value": value_I,
                                   "feasible_value": value_I if not nonneg else None,
                                   "interval": [lo_in, hi_in], "n_special_in": n_in,
                                   "n_special_out": n_out, "proves_support_optimal": bool(proved)},
                 0.0,
                 "kρ + λmax(ΣY_i) for feasible Y_i (rounding shifts τ_i added) + ‖C−FᵀF‖ + Weyl "
                 "margin + rel 1e-10")


# --------------------------------------------------------------- spannogram
@_timed
def spannogram_bound(problem, k, nonneg=False, *, d: int = 2, net: str | None = None,
                     epsilon: float = 0.1, rng=None) -> Bound:
    """Asteris et al. (ICML 2014): OPT ≤ OPT_d + λ_{d+1}, OPT_d on the rank-d part A_d.

    Uses certpca.solvers.spannogram (exact enumeration for d, or a deterministic
    ε-net, in which case OPT_d ≤ max_net f/(1−ε)²).  The solver's OPT_d is a
    value of A_d at its (exactly searched) maximiser: we recompute x ᵀA_d x for
    the returned weights and add margins for the eigen-decomposition.
    Validity: C = Â_d + R for the computed Â_d, so OPT ≤ OPT(Â_d) + λmax(R); λmax(R)
    is recomputed here (not the solver's λ_{d+1}) with its Weyl margin; OPT(Â_d)
    is the solver's exact enumeration value (× (1+1e-9)); + rel 1e-10.
    """
    k = _check_k(problem, k)
    try:
        from certpca.solvers.spannogram import spannogram
    except ImportError as exc:  # pragma: no cover - depends on a sibling module
        raise NotApplicable(f"certpca.solvers.spannogram not available ({exc})") from exc
    kw = {"d": d, "rng": rng, "net": net}
    if net is not None:
        kw["epsilon"] = epsilon
    res = spannogram(problem, k, nonneg=nonneg, **kw)
    optd = float(res.opt_d)
    eps_net = getattr(res, "epsilon", None)
    if eps_net is not None:
        if eps_net >= 1:
            raise NotApplicable(f"net covering radius ε = {eps_net} ≥ 1 gives no bound")
        optd = optd / (1.0 - float(eps_net)) ** 2
    lam_next = _residual_lmax(problem, int(res.d))
    # OPT ≤ OPT(Â_d) + λmax(C − Â_d) for the *computed* rank-d part Â_d (both exact
    # statements for any symmetric split); λmax(C − Â_d) is computed here, not trusted.
    v = optd * (1 + 1e-9) + max(lam_next, 0.0)
    return Bound(safe(v), "spannogram", {"d": int(res.d), "opt_d": float(res.opt_d),
                                         "lambda_next": lam_next, "method": str(res.method),
                                         "epsilon": eps_net, "feasible_value": float(res.value)}, 0.0,
                 "OPT_d (/(1−ε)² for a net) + λmax(C − Â_d) (recomputed, Weyl margin) + rel 1e-10")


def _residual_lmax(problem, d: int) -> float:
    """Safe upper bound on λmax(C − Â_d), Â_d = Σ_{j≤d} λ̂_j v̂_j v̂_jᵀ from ``problem.eigh(d)``."""
    vals, vecs = problem.eigh(d)
    keep = vals > 0  # as the spannogram's surrogate: only positive eigenvalues enter Â_d
    vals, vecs = vals[keep], vecs[:, keep]
    if problem.uses_factor:
        F = problem.factor()
        G = F @ F.T
        w, Q = np.linalg.eigh(G)
        Gh = (Q * np.sqrt(np.maximum(w, 0))) @ Q.T  # G^½
        U = (F @ vecs) / np.sqrt(np.maximum(vals, TINY))  # u_j with λ_j v_j v_jᵀ = Fᵀu_ju_jᵀF
        M = np.eye(F.shape[0]) - U @ U.T
        R = Gh @ M @ Gh  # same nonzero spectrum as Fᵀ M F
        tr = problem.trace
        lam, _ = lmax_upper((R + R.T) / 2, (gamma(problem.dim) + 16 * F.shape[0] * EPS) * tr * (1 + float(np.linalg.norm(M))))
        return lam
    C = problem.dense()
    R = C - (vecs * vals) @ vecs.T
    lam, _ = lmax_upper((R + R.T) / 2, gamma(d + 2) * float(np.sum(np.abs(vals))) + EPS * float(np.linalg.norm(C)))
    return lam


# ------------------------------------------------------------ rank-d split
def _split_factors(problem, d: int) -> tuple[np.ndarray, np.ndarray, float, float]:
    """Factors G_d (d × D), G_⊥ with ‖Fw‖² ≈ ‖G_d w‖² + ‖G_⊥ w‖², and the error terms.

    G = QᵀF for the eigenvectors Q of the Gram FFᵀ (top d rows first).  Returns
    (G_d, G_⊥, δ, e): for every unit w,  wᵀCw ≤ (‖Ĝw‖ + e)² + δ·‖F‖₂², with
    δ ≥ ‖QQᵀ − I‖₂ and e ≥ ‖ĜᵀΔ‖ the rounding of the product QᵀF.
    """
    F = problem.factor()
    r = F.shape[0]
    _, Q = np.linalg.eigh(F @ F.T)
    Q = Q[:, ::-1]
    G = Q.T @ F
    I = np.eye(r)
    delta = float(np.linalg.norm(Q @ Q.T - I)) * (1 + 1e-6) + 4 * r * EPS
    e = gamma(r) * math.sqrt(r) * math.sqrt(problem.trace) * (1 + 1e-6)
    return G[:d], G[d:], delta, e


@_timed
def split_bound(problem, k, nonneg=False, *, d: int = 2, inner: tuple = ("dabe", "gershgorin")) -> Bound:
    """Rank-d split: OPT ≤ OPT(A_d) + OPT_k(R) with C = A_d + R, both PSD.

    The spannogram bound of Asteris et al. (ICML 2014, Thm. 1) bounds the second
    term by λmax(R) = λ_{d+1}; but R is itself a sparse PCA problem, and any valid
    bound on OPT_k(R) may replace λ_{d+1}: wᵀCw = wᵀA_dw + wᵀRw ≤ OPT(A_d) + OPT_k(R).
    OPT(A_d) is the exact spannogram value (d ≤ 2 by the angular sweep; d = 3 by
    Alg. 2 when D is small); OPT_k(R) is the smallest of the ``inner`` bounds on R.
    Both parts are taken in sample space: A_d = G_dᵀG_d and R = G_⊥ᵀG_⊥ with
    G = QᵀF, Q the eigenvectors of FFᵀ (a dense C is first factored exactly as far
    as its rounding allows, see below), so no D × D array is formed.
    Validity: for unit w, wᵀCw ≤ (√(OPT(Ĝ_d) + UB(R̂)) + e)² + δ·λ̂1 with e the
    product rounding and δ ≥ ‖QQᵀ − I‖₂; OPT(Ĝ_d) × (1 + 1e-9) for the sweep's
    rounding; the inner bounds carry their own margins; then rel 1e-10.  A dense
    C is used through C + sI = FᵀF with F from its eigendecomposition and the
    eigen-residual ‖C + sI − FᵀF‖₂ added.
    """
    from certpca.problem import Problem as _Problem
    from certpca.solvers.spannogram import spannogram

    k = _check_k(problem, k)
    extra, shift = 0.0, 0.0
    base = problem
    if not problem.uses_factor:
        C, _ = dense_matrix(problem)
        shift = psd_shift(problem)
        vals, vecs = np.linalg.eigh(C + shift * np.eye(problem.dim))
        Fd = (vecs * np.sqrt(np.maximum(vals, 0.0))).T
        extra = float(np.linalg.norm(C + shift * np.eye(problem.dim) - Fd.T @ Fd)) * (1 + 1e-6) \
            + gamma(problem.dim) * (problem.trace + problem.dim * shift)
        base = _Problem(factor=Fd, feature_ids=problem.feature_ids)
    d = min(d, base.factor().shape[0])
    Gd, Gr, delta, e = _split_factors(base, d)
    top = spannogram(_Problem(factor=Gd), k, nonneg=nonneg, d=d)
    opt_d = float(top.opt_d) * (1 + 1e-9)
    rest = _Problem(factor=Gr)
    inner_bounds = {}
    for name in inner:
        fn = {"dabe": dabe_bound, "gershgorin": gershgorin_bound, "lambda1": lambda1_bound}[name]
        try:
            inner_bounds[name] = fn(rest, k, nonneg).value
        except NotApplicable:
            continue
    if not inner_bounds:
        raise NotApplicable("no inner bound applies to the residual")
    ub_rest = min(inner_bounds.values())
    lam1 = float(base.eigenvalues()[0]) + spectrum_margin(base)
    v = (math.sqrt(opt_d + ub_rest) + e) ** 2 + delta * lam1 + extra - shift
    return Bound(safe(v), "split", {"d": d, "opt_d": float(top.opt_d), "residual_bounds": inner_bounds,
                                    "feasible_value": float(problem.variance(top.weights)),
                                    "delta": delta, "e": e, "shift": shift}, 0.0,
                 "OPT_d (exact spannogram, ×(1+1e-9)) + min of inner bounds on the residual "
                 "(their own margins), product rounding e and orthogonality δ·λ1 added, + rel 1e-10")
