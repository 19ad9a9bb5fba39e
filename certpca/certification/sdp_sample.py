"""The d'Aspremont–Bach–El Ghaoui ℓ0 SDP solved in sample space by Frank–Wolfe.

With C = FᵀF (F: r × D, columns a_i) and B_i = a_ia_iᵀ − ρI, d'Aspremont, Bach &
El Ghaoui (JMLR 2008, §4, the dual of their relaxation (8)) give, for every ρ ≥ 0
and every Y_i with Y_i ⪰ B_i, Y_i ⪰ 0,

    OPT ≤ kρ + λmax(Σ_i Y_i).                                             (B)

Features with ‖a_i‖² ≤ ρ have B_i ⪯ 0 and take Y_i = 0: they drop out.  For the
others, any y with δ = yᵀB_iy = (a_iᵀy)² − ρ‖y‖² > 0 gives the dual point

    Y_i = b bᵀ / δ,   b = B_i y = a_i(a_iᵀy) − ρy,

which is ⪰ 0 and ⪰ B_i because B_i has a single positive eigenvalue (the
Aczél / Schur-complement argument of the paper's §6; the same one certifies the
pattern bound in :mod:`certpca.certification.duals`).  y_i = a_i gives (B_i)₊, the
existing ``dabe`` fallback.

The best y_i come from the primal ψ(ρ) = max_{X ⪰ 0, Tr X = 1} Σ_i h_i(X) with
h_i(X) = λmax(X^½ a_ia_iᵀ X^½ − ρX)₊ (concave): with X = Q diag(x) Qᵀ and
c = Qᵀa_i, h_i is the positive root λ of Σ_j x_j c_j² / (λ + ρx_j) = 1 and
y_i = X(λI + ρX)⁻¹a_i is the supergradient's direction.  Frank–Wolfe over the
spectraplex (step to the top eigenvector of G = ΣY_i, geometric line
search) improves X; every iterate's dual point is a valid bound, the smallest
is kept.  The solver only proposes y_i: (B) is evaluated in numpy with margins.
From X = I/r each step adds one direction, so the iterates are kept as
X = αI + BKBᵀ (B: r × m orthonormal, m ≤ steps) and ψ needs an m × m eigh,
not an r × r one.

Floating-point margins (as the pattern certificate, docs/certification.md §3):
a special Y_i is used only when, for unit y, gap = (a_iᵀy)² − ρ ≥ 1e-4·(‖a_i‖² + ρ);
each Y_i is then shifted by τ_i = 16(r + 8)·eps·s_i·(1 + s_i/gap_i), s_i = ‖a_i‖² + ρ
(fallback features: 4(r + 8)·eps·s_i), so Y_i + τ_iI is exactly feasible and Στ_i is
added; the forming error γ·Σ coef_i‖w_i‖² of Σ Y_i = W coef Wᵀ (γ_{r+4} when its
nonzero eigenvalues are taken from the smaller (W√coef)ᵀ(W√coef), fewer active
features than r) and the Weyl margin on the matrix; for a dense C, F is its eigen-factor and ‖C − FᵀF‖₂ is added; then
relative γ_4 and 1e-10.  This bound ignores w ≥ 0 (valid, and weaker, there).
"""

from __future__ import annotations

import math

import numpy as np
import scipy.linalg

from certpca.certification.duals import (
    PATTERN_MIN_GAP,
    PATTERN_TAU_FALLBACK,
    PATTERN_TAU_ROWS,
    PATTERN_TAU_SPECIAL,
    factor_with_error,
)
from certpca.certification.numerics import (
    EPS,
    FLOP_RATE,
    TINY,
    Bound,
    NotApplicable,
    check_k,
    deadline_after,
    gamma,
    lmax_upper,
    safe,
    sample_space_seconds,
    timed,
)
from certpca.certification.relax import MAX_DIM as DENSE_SDP_MAX_DIM  # dense D with the cvxpy SDPs
from certpca.certification.spec import COST_SDP, DABE, BoundSpec
from certpca.clock import Deadline, Stall

#: the key (with k) under which a search leaves its best ρ, its bound and that ρ's primal X in ``Problem.memo``
START_KEY = "dabe_sdp start"

#: the primal is evaluated at (1 − MIX)·X + MIX·I/r so that every active feature has a root
MIX = 1e-3

#: Newton steps for the roots h_i (monotone from λ = 0; converges in a few dozen), and the
#: relative step at which they stop: the roots only propose directions y_i, never a bound
NEWTON_STEPS = 60
NEWTON_RTOL = 1e-9

#: the Frank–Wolfe step is halved at most this many times before the iteration gives up
MAX_HALVINGS = 40

#: default iteration budgets: a coarse pass over the ρ grid, then the best ρ's refinement
COARSE_ITERS = 30
FINE_ITERS = 400

#: operations of a Frank–Wolfe step (:func:`step_seconds`) per active feature and sample (the line
#: search's Newton roots), and a step's fixed share (the interpreter's overhead)
ACT_OPS = 1400
STEP_OPS = 8e6
#: primal evaluations of a step's line search that :func:`step_seconds` stands for: a step with more is
#: charged half a step more per this many more (golub raw k = 50: 693 evaluations in about 100 steps,
#: half charged before; pbmc's, a smaller part of its steps, were overcharged in proportion)
LINE_SEARCH_TRIES = 3
#: per cube of the Gram's order, min(r, active) (CBCL, 334: its steps took 1.4 to 2 times the other terms)
EIGH_OPS = 1
#: and per feature of the problem (the bookkeeping over all D features: leukemia, 12582 features, took
#: 8.7 ms a step against 4.4 ms of the other terms; khan 8.7 (8.1), pbmc 52 (61); reports/bench/work.md)
FEATURE_OPS = 3000

#: Frank–Wolfe stops at this relative primal–dual gap (the dual converges slowly: ~0.3%)
STOP_GAP = 1e-3

#: levels of ρ refinement after the coarse grid (best ρ and the midpoints to its neighbours)
RHO_LEVELS = 3

#: with ``stall`` (a certificate that computes the matrix bound after it, which starts from its best ρ and primal
#: point): the ρ refinement ends once its best bound fell by less than STALL_RTOL (relative) over the last
#: STALL_WINDOW seconds of work.  CBCL raw k = 50, 60 s budget: dabe_sdp falls 1.0314 → 1.0298 × the vector's
#: value in its last 7 s of work, while the matrix bound's Z steps from 1.031 reach 1.0050 in 32 s of work
#: (from the converged 1.0298: 38 s) (reports/bench/certify.md, helper "cbcl50")
STALL_WINDOW = 2.0
STALL_RTOL = 1e-3

#: ρ grid, as multiples of L/k with L a feasible value (the note's optimum lies near 0.6)
RHO_FACTORS = (0.3, 0.45, 0.6, 0.75, 0.9)

#: default-selection limits: the sample dimension r (r × r eigenproblems per step), dense D
MAX_SAMPLES = 1000
MAX_DENSE_DIM = 600


def _roots(x: np.ndarray, c2: np.ndarray, rho: float, start: np.ndarray | None = None) -> np.ndarray:
    """Positive roots λ of g(λ) = Σ_j x_j c2_j/(λ + ρx_j) = 1, one per column of c2 (0 where g(0) ≤ 1).

    Newton's method on 1/g = 1 from ``start`` (≥ 0, e.g. the roots at a nearby X; default 0): 1/g is
    concave on λ ≥ 0 (g·g″ ≥ 2g′² by Cauchy–Schwarz), so a step from above the root lands below it,
    and from below the iterates increase to it without passing it: h_i is approached from below.
    """
    lam = np.zeros(c2.shape[1]) if start is None else start
    xc = x[:, None] * c2
    rx = (rho * x)[:, None]
    for _ in range(NEWTON_STEPS):
        den = lam[None, :] + rx
        den = np.where(den > 0, den, TINY)
        g = np.sum(xc / den, axis=0)
        slope = np.sum(xc / den**2, axis=0)  # −g′
        new = np.maximum(lam + g * (g - 1.0) / np.maximum(slope, TINY), 0.0)
        settled = np.all(np.abs(new - lam) <= NEWTON_RTOL * np.maximum(new, TINY))
        lam = new
        if settled:
            break
    return lam


class _Iterate:
    """A Frank–Wolfe iterate X = αI + BKBᵀ (B: r × m orthonormal, K: m × m symmetric).

    X starts at I/r and each step X ← (1 − t)X + t·uuᵀ adds at most one column to B, so
    after m steps X's eigenpairs come from an m × m eigh: B's span holds the m others, and
    its complement is one eigenvalue α of multiplicity r − m.
    """

    def __init__(self, alpha: float, B: np.ndarray, K: np.ndarray):
        self.alpha, self.B, self.K = alpha, B, K

    @classmethod
    def start(cls, r: int) -> _Iterate:
        return cls(1.0 / r, np.zeros((r, 0)), np.zeros((0, 0)))

    def extend(self, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(B with u's part outside span(B) appended when there is one, u's coordinates in it)."""
        B = self.B
        v = u - B @ (B.T @ u)
        v -= B @ (B.T @ v)  # twice is enough (classical Gram–Schmidt, reorthogonalised)
        nv = float(np.linalg.norm(v))
        if nv > 1e-10 * float(np.linalg.norm(u)):
            B = np.column_stack([B, v / nv])
        return B, B.T @ u

    def toward(self, B: np.ndarray, ub: np.ndarray, t: float) -> _Iterate:
        """(1 − t)X + t·uuᵀ for (B, ub) = ``extend(u)``."""
        m = self.K.shape[0]
        K = np.zeros((B.shape[1], B.shape[1]))
        K[:m, :m] = (1 - t) * self.K
        K += t * np.outer(ub, ub)
        return _Iterate((1 - t) * self.alpha, B, (K + K.T) / 2)


class _Sample:
    """F restricted to the features active at ρ, with the primal/dual maps of the module docstring."""

    def __init__(self, F, asq, rho):
        self.rho = rho
        self.act = np.flatnonzero(asq > rho)
        self.Fa = F[:, self.act]
        self.r = F.shape[0]
        self.lam = None  # the roots of the last primal evaluation: the next one starts from them

    def primal(self, X: _Iterate):
        """(ψ(X'), unit y_i as columns) at X' = (1 − MIX)X + MIX·I/r.

        The complement of span(B) is one eigenvalue of X', so it enters the roots and the y_i
        as one coordinate: the squared norm and the direction of a_i's part outside span(B).
        """
        floor = (1 - MIX) * X.alpha + MIX / self.r  # X' on the complement of span(B)
        kappa, W = np.linalg.eigh(X.K)
        top = np.maximum(floor + (1 - MIX) * kappa, 0.0)
        Q = X.B @ W
        c = Q.T @ self.Fa
        rest = self.Fa - Q @ c
        x = np.append(top, floor)
        lam = self.lam = _roots(x, np.vstack([c * c, np.einsum("ij,ij->j", rest, rest)]), self.rho, self.lam)
        y = Q @ ((top[:, None] / (lam[None, :] + self.rho * top[:, None])) * c) + rest * (
            floor / (lam + self.rho * floor)
        )
        n = np.linalg.norm(y, axis=0)
        y = y / np.where(n > 0, n, 1.0)
        return float(np.sum(lam)), y

    def direction(self, y) -> np.ndarray:
        """The top eigenvector of Σ Y_i = VVᵀ (unsafe, the Frank–Wolfe step) from unit y_i, on the
        smaller side: u ∝ Vv for the top eigenvector v of VᵀV when fewer features than rows count."""
        s = np.sum(self.Fa * y, axis=0)
        gap = s * s - self.rho
        ok = gap > 0
        V = (self.Fa[:, ok] * s[ok] - self.rho * y[:, ok]) / np.sqrt(gap[ok])
        n = V.shape[1]
        if 0 < n < self.r:
            G = V.T @ V
            v = scipy.linalg.eigh((G + G.T) / 2, subset_by_index=[n - 1, n - 1], check_finite=False)[1][:, 0]
            u = V @ v
            return u / np.linalg.norm(u)
        G = V @ V.T
        return scipy.linalg.eigh((G + G.T) / 2, subset_by_index=[self.r - 1, self.r - 1], check_finite=False)[1][:, 0]


def _dual_terms(F, asq, rho, act, y):
    """The dual point of (B) from unit directions y (columns, for the features ``act``): (W, coef, Σ of the
    rounding shifts of the active and of the other features, Σ coef_i‖w_i‖²) with ΣY_i = W diag(coef) Wᵀ;
    margins of the module docstring."""
    r = F.shape[0]
    Fa = F[:, act]
    s = np.sum(Fa * y, axis=0)
    sa = asq[act]
    scale = sa + rho
    gap = s * s - rho
    special = gap >= PATTERN_MIN_GAP * scale
    W = np.empty_like(Fa)
    coef = np.empty(len(act))
    W[:, special] = Fa[:, special] * s[special] - rho * y[:, special]
    coef[special] = 1.0 / gap[special]
    fb = ~special
    an = np.sqrt(sa[fb])
    W[:, fb] = Fa[:, fb] / np.where(an > 0, an, 1.0)
    coef[fb] = np.maximum(sa[fb] - rho, 0.0)
    tau = np.where(
        special,
        PATTERN_TAU_SPECIAL * (r + PATTERN_TAU_ROWS) * EPS * scale * (1 + scale / np.maximum(gap, TINY)),
        PATTERN_TAU_FALLBACK * (r + PATTERN_TAU_ROWS) * EPS * scale,
    )
    # inactive features (‖a_i‖² ≤ ρ in floating point): Y_i = 0, within τ of (B_i)₊
    tau_out = PATTERN_TAU_FALLBACK * (r + PATTERN_TAU_ROWS) * EPS * float(np.sum(np.delete(asq, act) + rho))
    weight = float(np.sum(coef * np.sum(W * W, axis=0)))  # Σ coef_i‖w_i‖²
    return W, coef, float(np.sum(tau)), tau_out, weight


def dual_value(F, asq, rho, k, act, y, ferr) -> float:
    """Safe value of (B) at ρ with unit directions y (columns, for the features ``act``).

    Special Y_i = b bᵀ/gap where the gap is large enough, (B_i)₊ otherwise, 0 for
    ‖a_i‖² ≤ ρ; margins of the module docstring.
    """
    r = F.shape[0]
    W, coef, tau, tau_out, weight = _dual_terms(F, asq, rho, act, y)
    if len(act) < r:
        # the smaller Gram: (W√coef)ᵀ(W√coef) has the nonzero eigenvalues of W coef Wᵀ; entry error:
        # r roundings of the inner product, the square root and the two scalings
        Ws = W * np.sqrt(coef)
        M = Ws.T @ Ws
        form = gamma(r + 4) * weight
    else:
        M = (W * coef) @ W.T
        form = gamma(len(act) + 2) * weight
    lam, _ = lmax_upper((M + M.T) / 2, form)
    v = k * rho + lam + tau + tau_out + ferr
    return safe(v + gamma(4) * abs(v))


def dual_matrix(F, asq, rho, act, y) -> tuple[np.ndarray, float]:
    """(M, e): the r × r matrix M formed for ΣY_i of :func:`dual_value`'s dual point and e with
    Y_i* ⪰ B_i, Y_i* ⪰ 0 exactly for some Y_i* with ΣY_i* ⪯ M + e·I (forming error γ·Σcoef_i‖w_i‖² in
    spectral norm, symmetrisation included, plus the rounding shifts τ_i)."""
    W, coef, tau, tau_out, weight = _dual_terms(F, asq, rho, act, y)
    M = (W * coef) @ W.T
    return (M + M.T) / 2, gamma(len(act) + 3) * weight + tau + tau_out


def _frank_wolfe(
    S: _Sample, X, iters, k, F, asq, ferr, deadline, target=math.inf, only_at_start=False, stall: Stall | None = None
):
    """Frank–Wolfe on ψ at one ρ from X; returns (best safe bound, X, primal value, iterations,
    whether it stopped at ``target``).  Each step is charged to ``deadline`` (:class:`certpca.clock.Work`
    counts it) at :func:`step_seconds`.

    The step t along uuᵀ − X is searched geometrically from the previous one
    (doubled while ψ improves, else halved until it does): the steps shrink by
    orders of magnitude as the iterates approach the optimum.  Every dual point at
    this ρ is at least the relaxation's value kρ + ψ(ρ) ≥ kρ + ψ(X) (weak duality;
    the Newton roots approach h_i from below): once that reaches ``target`` no bound
    below it can come from this ρ, and the search stops (``only_at_start``: only before its first step).
    It stops too once ``stall`` (the whole search's best bound) has stalled.
    """
    deadline = deadline_after(deadline)  # a Deadline, or seconds from now
    step = step_seconds(S.r, len(S.act), len(asq))
    deadline.charge(2 * step)  # the primal at the start and the dual value at the end, about a step each
    best = math.inf
    psi, y = S.primal(X)
    t = 0.5
    it = 0
    for it in range(1, iters + 1):  # noqa: B007 (the count is returned)
        best = min(best, dual_value(F, asq, S.rho, k, S.act, y, ferr))
        if k * S.rho + psi >= target and (it == 1 or not only_at_start):
            return best, X, psi, it, True
        if stall is not None and stall.seen(best):
            break
        B, ub = X.extend(S.direction(y))
        ft = S.primal(X.toward(B, ub, t))
        tries = 1  # evaluations of the primal in this step's line search
        if ft[0] > psi:
            while t < 1.0:
                t2 = min(1.0, 2 * t)
                f2 = S.primal(X.toward(B, ub, t2))
                tries += 1
                if f2[0] <= ft[0]:
                    break
                t, ft = t2, f2
        else:
            for _ in range(MAX_HALVINGS):
                t = t / 2
                ft = S.primal(X.toward(B, ub, t))
                tries += 1
                if ft[0] > psi:
                    break
        if ft[0] > psi:
            X = X.toward(B, ub, t)
            psi, y = ft
        deadline.charge(step * (1 + max(tries - LINE_SEARCH_TRIES, 0) / (2 * LINE_SEARCH_TRIES)))
        # kρ + ψ(X) is the relaxation's value at a primal point: within STOP_GAP, stop
        if best - (k * S.rho + psi) <= STOP_GAP * best or deadline.passed():
            break
    best = min(best, dual_value(F, asq, S.rho, k, S.act, y, ferr))
    return best, X, psi, it, False


#: the steps a search charges before it can first stop: the primal at its start, one step, the dual value
FIRST_STEPS = 3


def step_seconds(rows: int, active: int, features: int = 0) -> float:
    """Estimated seconds of one Frank–Wolfe step with ``rows`` samples and ``active`` features at ρ: the
    r × r sums over them (dual value, direction), a Newton root per feature in up to r directions
    (``ACT_OPS`` per feature and row), the Gram's eigenproblem (``EIGH_OPS``), ``FEATURE_OPS`` per feature
    of the problem and ``STEP_OPS``.
    Measured at one BLAS thread, load 10, against this model without the features' term: noise r = 30,
    120 active, 1.3 ms (1.3); khan r = 63, 789, 8.7 ms (8.4); leukemia r = 72, 353, 8.7 ms (4.4), log2
    2034, 22 ms (22); pbmc r = 700, 409, 52 ms (62); CBCL r = 361, 334, 28 ms (22)."""
    gram = min(rows, active)  # the eigenproblem of the smaller Gram, in each primal evaluation
    ops = rows * rows * active + ACT_OPS * rows * active + EIGH_OPS * gram**3 + FEATURE_OPS * features + STEP_OPS
    return ops / FLOP_RATE


def _feasible_value(problem, F, k) -> float:
    """A feasible value L ≤ OPT: λmax of the submatrix on the top-k loadings of the first PC."""
    v = problem.first_pc()
    S = np.argsort(-np.abs(v))[:k]
    Fs = F[:, S]
    return float(np.linalg.eigvalsh(Fs @ Fs.T if Fs.shape[0] < Fs.shape[1] else Fs.T @ Fs)[-1])


@timed
def dabe_sdp_bound(
    problem,
    k,
    nonneg=False,
    *,
    coarse_iters: int = COARSE_ITERS,
    fine_iters: int = FINE_ITERS,
    time_limit: Deadline | float = 40.0,
    rho_factors=RHO_FACTORS,
    target: float = math.inf,
    stall: bool = False,
) -> Bound:
    """OPT ≤ kρ + λmax(ΣY_i) with Y_i from a Frank–Wolfe solution of the dABE SDP (module docstring).

    ρ runs over ``rho_factors``·L/k (L a feasible value) with ``coarse_iters``
    Frank–Wolfe steps each (warm-started), then, ``RHO_LEVELS`` times, the best ρ
    and the midpoints to its two neighbours get up to ``fine_iters`` more, all
    within ``time_limit`` seconds (of the budget clock, :mod:`certpca.clock`; a :class:`~certpca.clock.Work`
    counts :func:`step_seconds` a step instead, so the steps run do not depend on the machine).  Every
    evaluated dual point is a valid bound; the smallest is kept.
    ``target`` (a certificate's best bound so far) ends a refining search at a ρ as soon as the
    relaxation's value there is seen to reach it (``params["stopped_at_target"]`` counts those
    searches): the bound then returned is weaker, never invalid; with ``stall`` the refinement ends once its
    best bound has stalled (:data:`STALL_WINDOW`; ``params["stalled"]``), for the matrix bound after it to
    continue from there; ``params["time_limit_reached"]``
    says whether ``time_limit`` cut the search short.  The coarse pass's searches start
    each from the last one's iterate, and cutting them short left the later ones worse started
    (leukemia log2 signed k = 50: 1.0279 × the vector's value against 1.0201), so they run in full,
    except that until one has, a ρ already out of reach from the starting point is passed over.
    Validity: margins of the module docstring, then rel 1e-10.
    """
    k = check_k(problem, k)
    if not problem.uses_factor and problem.dim > MAX_DENSE_DIM:
        raise NotApplicable(f"a dense C is factored by its eigendecomposition: D = {problem.dim} > {MAX_DENSE_DIM}")
    F, ferr = factor_with_error(problem)
    r = F.shape[0]
    if r > MAX_SAMPLES:
        raise NotApplicable(f"r × r eigenproblems per step with r = {r} > {MAX_SAMPLES}")
    if r == 0:
        raise NotApplicable("C = 0 has no factor")
    asq = np.einsum("ij,ij->j", F, F)
    deadline = deadline_after(time_limit)
    L = _feasible_value(problem, F, k)
    X = _Iterate.start(r)
    results: dict[float, tuple[float, _Iterate]] = {}
    stopped = iters_total = 0
    reach = target  # the coarse pass's target: none once one of its searches has run
    for fct in rho_factors:
        rho = fct * L / k
        if results and deadline.passed():
            break
        if not np.any(asq > rho):
            continue
        S = _Sample(F, asq, rho)
        first = FIRST_STEPS * step_seconds(S.r, len(S.act), len(asq))
        if not results and deadline.left() < first:  # a search cut after its first step bounds nothing useful
            raise NotApplicable(f"its first Frank–Wolfe step needs about {first:.3g} s of work, more than is left")
        b, X, _, it, at_target = _frank_wolfe(S, X, coarse_iters, k, F, asq, ferr, deadline, reach, only_at_start=True)
        if not at_target:
            reach = math.inf
        stopped += at_target
        iters_total += it
        results[rho] = (b, X)
    if not results:
        raise NotApplicable("no feature has ‖a_i‖² above the ρ grid")
    stalled = Stall(deadline, min(b for b, _ in results.values()), target, STALL_WINDOW, STALL_RTOL) if stall else None
    for _level in range(RHO_LEVELS):
        if stalled is not None and stalled.fired:
            break
        rhos = sorted(results)
        best_rho = min(results, key=lambda p: results[p][0])
        j = rhos.index(best_rho)
        cands = [best_rho] + [(best_rho + rhos[i]) / 2 for i in (j - 1, j + 1) if 0 <= i < len(rhos)]
        X0 = results[best_rho][1]
        for rho in cands:
            if deadline.passed() or (stalled is not None and stalled.fired):
                break
            S = _Sample(F, asq, rho)
            b, Xn, _, it, at_target = _frank_wolfe(S, X0, fine_iters, k, F, asq, ferr, deadline, target, stall=stalled)
            stopped += at_target
            iters_total += it
            if rho not in results or b < results[rho][0]:
                results[rho] = (b, Xn)
    best_rho = min(results, key=lambda p: results[p][0])
    value = results[best_rho][0]
    X = results[best_rho][1]
    # the start of the matrix-multiplier bound after it (sdp_matrix.py): its ρ, bound and primal iterate
    problem.memo[START_KEY, k] = (best_rho, value, X.alpha * np.eye(r) + X.B @ X.K @ X.B.T)
    out_of_time = deadline.passed()  # some search was cut short, or one was never run
    return Bound(
        value,
        "dabe_sdp",
        {
            "rho": best_rho,
            "feasible_value_used": L,
            "iterations": iters_total,
            "active_features": int(np.sum(asq > best_rho)),
            "samples": r,
            "stopped_at_target": stopped,
            "stalled": stalled is not None and stalled.fired,
            "time_limit_reached": out_of_time,
        },
        0.0,
        "kρ + λmax(ΣY_i) for feasible Y_i from the Frank–Wolfe directions (rounding shifts τ_i, "
        "forming error, Weyl margin, ‖C−FᵀF‖) + rel 1e-10",
    )


def _default_when(problem) -> bool:
    """Default only on wide data (a factor) or dense problems beyond the cvxpy SDPs' size limit."""
    return problem.uses_factor or problem.dim > DENSE_SDP_MAX_DIM


DABE_SDP = BoundSpec(
    "dabe_sdp",
    dabe_sdp_bound,
    COST_SDP,
    time_option="time_limit",
    target_option="target",
    stall_option="stall",
    default_when=_default_when,
    estimate=sample_space_seconds,
    charges=True,  # each Frank–Wolfe step
    sign_free=True,
    description="dABE ℓ0 SDP in sample space by Frank–Wolfe: kρ + λmax(ΣY_i), Y_i ⪰ a_ia_iᵀ − ρI, Y_i ⪰ 0",
    reference=DABE + " (§4, the dual of the semidefinite relaxation of the ℓ0-penalised problem, "
    "evaluated at dual points Y_i = B_iyyᵀB_i/(yᵀB_iy) read from a Frank–Wolfe solution of the "
    "primal in sample space; certpca's own solver).",
)

SPECS = [DABE_SDP]
