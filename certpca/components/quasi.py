"""Quasi-orthogonal nonnegative sparse components by EM (Sigg & Buhmann 2008, Sec. 4, eq. 20).

Nonnegative components that are exactly orthogonal have disjoint supports
(eq. 19).  Sigg & Buhmann relax this to a minimum angle: the M-step of the
l-th component gets the penalty αwᵀVVᵀw (eq. 20), V = [w₁ … w_{l−1}], and α
is tuned until the new component makes the required angle with every earlier
one (85° in their Fig. 3, right).  Each component is fitted on the original C.

The M-step.  With the E-step y = Xw (eq. 10) and C = XᵀX (up to a constant),
s = ‖y‖² = wᵀCw and b = Xᵀy = Cw, so eqs. (12), (14), (17) and (20) give the
convex QP

    minimise  s‖w‖² + α‖Vᵀw‖² − 2bᵀw + λ1ᵀw   subject to  w ≥ 0,

where λ ≥ 0 prices the ℓ1 norm (on w ≥ 0, 1ᵀw = ‖w‖₁) and is set to the
*smallest* value giving at most K nonzeros: the ℓ1 ball of eq. (14) with the
largest radius B whose solution has cardinality K, as Algorithm 2 does.  This is
option (b) of notes §4 without a refit, chosen because (i) it is the paper's own
M-step (eq. 14 with eqs. 17 and 20), and (ii) at α = 0 it *is* Algorithm 2:
w = (b − λ/2)₊/s with λ/2 the (K+1)-th largest b, i.e. :func:`em_step` — an
independent check of the QP that the tests use.  (A support-K projection with
refit, option (a), gives hard thresholding instead and has no such check.)

Solving it.  With t = Vᵀw (m = l − 1 numbers, V thin) the KKT conditions read
w = (c − αVt)₊/s, c = b − λ/2, and t solves the m-dimensional piecewise-linear
equation t = Vᵀ(c − αVt)₊/s (the gradient of a strongly convex function), which
a safeguarded Newton method solves exactly in a few O(Dm) steps.  That locates
λ by bisection cheaply; the QP at that λ is then solved by CVXPY (Clarabel,
falling back to SCS) with O(D) variables, the thin constraint t = Vᵀw and never a
D × D matrix (measured: 0.22 s per solve at D = 12582, m = 3).  The CVXPY solver
and status of the last M-step are recorded, with the largest difference from
the Newton solution.  ``qp="numpy"`` skips CVXPY (same answers, much faster).
"""

from __future__ import annotations

import math
import time

import numpy as np

from ..errors import InputError
from ..problem import Problem
from ..results import Component
from ..solvers.base import as_loadings, reach_of
from ..solvers.em import EM
from ..status import Convergence, Status
from ..validation import (
    check_cardinality,
    check_choice,
    check_float,
    check_int,
    check_random_state,
)

QP_SOLVERS = ("cvxpy", "numpy")
#: the options :func:`quasi_components` passes on
QUASI_OPTIONS = {"qp", "tol", "max_iter", "alpha_ratio"}
#: an angle within this many degrees below min_angle counts as met (rounding of arccos near 90°)
ANGLE_SLACK_DEG = 1e-9
#: the α search starts at λ₁/16, where the penalty is small against the variance it costs
ALPHA_START_FRACTION = 1 / 16
#: α doubles at most up to λ₁·2⁶⁰; beyond that the penalty dwarfs every variance in double precision
ALPHA_MAX_FACTOR = 2.0**60
#: at most this many geometric bisection steps for the smallest α meeting the angle
ALPHA_BISECTIONS = 30
#: below a working α with no failing one known, α/8 is tried next
ALPHA_DOWN_FACTOR = 8


# --------------------------------------------------------------- the M-step
def _qp_newton(
    c: np.ndarray, s: float, V: np.ndarray, alpha: float, t0: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Exact minimiser w of s‖w‖² + α‖Vᵀw‖² − 2cᵀw over w ≥ 0, and t = Vᵀw.

    Minimises ψ(t) = ½‖t‖² + ‖(c − αVt)₊‖²/(2sα), whose gradient is
    t − Vᵀ(c − αVt)₊/s, by Newton steps with Hessian I + (α/s)V_AᵀV_A (A: the
    active entries) and backtracking on ψ.
    """
    m = V.shape[1]
    if m == 0 or alpha == 0.0:
        return np.maximum(c, 0.0) / s, np.zeros(m)
    t = np.zeros(m) if t0 is None else t0.copy()

    def psi(t):
        r = np.maximum(c - alpha * (V @ t), 0.0)
        return 0.5 * t @ t + (r @ r) / (2 * s * alpha), r

    f, r = psi(t)
    scale = max(1.0, np.abs(c).max() / s * math.sqrt(V.shape[0]))
    for _ in range(200):
        grad = t - V.T @ r / s
        if np.linalg.norm(grad) <= 1e-15 * scale:
            break
        act = r > 0
        Va = V[act]
        H = np.eye(m) + (alpha / s) * (Va.T @ Va)
        step = np.linalg.solve(H, -grad)
        h = 1.0
        while True:
            t_new = t + h * step
            f_new, r_new = psi(t_new)
            if f_new <= f + 1e-4 * h * (grad @ step) or h < 1e-12:
                break
            h *= 0.5
        if np.array_equal(t_new, t):
            break
        t, f, r = t_new, f_new, r_new
    return r / s, t


def l1_level(b: np.ndarray, s: float, V: np.ndarray, alpha: float, k: int) -> tuple[float, np.ndarray]:
    """Smallest λ ≥ 0 at which the M-step QP has at most k nonzeros, and its solution w.

    With α = 0 or no V this is λ/2 = the (k+1)-th largest b (Algorithm 2).
    Otherwise bisection on λ ∈ [0, 2 max b] (at λ ≥ 2 max b the solution is 0) to
    relative width 1e-7, then the exact breakpoint: on the active set S of the
    upper end, z = c − αVt is affine in λ, and λ* is the largest λ at which some
    j ∉ S has z_j = 0 (kept only when it lies in the bracket and S stays positive).
    """
    m = V.shape[1]
    if m == 0 or alpha == 0.0:
        pos = np.sort(b[b > 0])[::-1]
        lam = 2.0 * float(pos[k]) if pos.size > k else 0.0
        return lam, np.maximum(b - lam / 2, 0.0) / s
    w, t = _qp_newton(b, s, V, alpha)
    if np.count_nonzero(w) <= k:
        return 0.0, w
    lo, hi = 0.0, 2.0 * float(np.max(b))
    w_hi, _ = _qp_newton(b - hi / 2, s, V, alpha, t)
    while hi - lo > 1e-7 * hi:
        mid = 0.5 * (lo + hi)
        w_mid, t_mid = _qp_newton(b - mid / 2, s, V, alpha, t)
        if np.count_nonzero(w_mid) <= k:
            hi, w_hi = mid, w_mid
        else:
            lo, t = mid, t_mid
    S = w_hi > 0
    if S.any():
        # t(λ) = (sI + αV_SᵀV_S)⁻¹V_Sᵀ(b_S − λ/2·1): z(λ) = z0 + λ·z1
        VS = V[S]
        H = s * np.eye(m) + alpha * (VS.T @ VS)
        t0 = np.linalg.solve(H, VS.T @ b[S])
        t1 = np.linalg.solve(H, -0.5 * VS.sum(axis=0))
        z0, z1 = b - alpha * (V @ t0), -0.5 - alpha * (V @ t1)
        out = ~S & (z1 < 0)
        if out.any():
            lam = float(np.max(-z0[out] / z1[out]))
            zS = z0[S] + lam * z1[S]
            if lo <= lam <= hi and np.all(zS > 0):
                w = np.zeros_like(b)
                w[S] = zS / s
                return lam, w
    return hi, w_hi


def _cvxpy():
    try:
        import cvxpy as cp  # on first use: cvxpy takes about a second to import, and only the QP needs it
    except ImportError:  # pragma: no cover - cvxpy is a dependency of the tests
        raise InputError("quasi-orthogonal components solve a QP with cvxpy: pip install cvxpy") from None
    return cp


class MStepQP:
    """The M-step QP for a fixed V compiled once by CVXPY (parameters α/s and 2c/s).

    Scaled by 1/s: minimise ‖w‖² + (α/s)‖t‖² − (2c/s)ᵀw s.t. t = Vᵀw, w ≥ 0 —
    D + m variables, a D × m constraint block, no D × D matrix.
    """

    def __init__(self, V: np.ndarray):
        cp = _cvxpy()
        self.cp = cp
        D, m = V.shape
        self.w = cp.Variable(D, nonneg=True)
        self.a = cp.Parameter(nonneg=True)
        self.c = cp.Parameter(D)
        obj = cp.sum_squares(self.w) - self.c @ self.w
        cons = []
        if m:
            self.t = cp.Variable(m)
            obj = obj + self.a * cp.sum_squares(self.t)
            cons = [self.t == V.T @ self.w]
        self.problem = cp.Problem(cp.Minimize(obj), cons)

    def solve(self, c: np.ndarray, s: float, alpha: float) -> tuple[np.ndarray | None, str, str]:
        """(w, solver, status); w is None when every solver failed."""
        cp = self.cp
        self.a.value = alpha / s
        self.c.value = 2.0 * c / s
        status = "not run"
        tight = {"tol_gap_abs": 1e-11, "tol_gap_rel": 1e-11, "tol_feas": 1e-11}
        for solver, opts in ((cp.CLARABEL, tight), (cp.SCS, {"eps_abs": 1e-9, "eps_rel": 1e-9, "max_iters": 100_000})):
            try:
                self.problem.solve(solver=solver, **opts)
                status = self.problem.status
            except cp.error.SolverError as err:
                status = f"error: {err}".splitlines()[0][:120]
                continue
            if status in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE) and self.w.value is not None:
                return np.asarray(self.w.value, dtype=float), solver, status
        return None, "none", status


def quasi_mstep(
    problem: Problem, w: np.ndarray, k: int, V: np.ndarray, alpha: float, qp: MStepQP | None = None
) -> tuple[np.ndarray, dict]:
    """One EM iteration with the quasi-orthogonal M-step; returns (unit w, extras).

    ``qp`` None solves the QP by the Newton method alone; an :class:`MStepQP`
    solves it with CVXPY at the λ the Newton bisection located, keeping the
    nonzeros the exact solution has (interior-point solvers return tiny
    positive values for zeros).
    """
    b = problem.matvec(w)
    s = float(w @ b)
    extras: dict = {}
    if s <= 0:
        return np.zeros_like(w), {"solver": "none", "status": "zero variance"}
    lam, w_np = l1_level(b, s, V, alpha, k)
    new = w_np
    if qp is not None:
        w_cp, solver, status = qp.solve(b - lam / 2, s, alpha)
        extras.update(solver=solver, status=status)
        if w_cp is not None:
            nnz = np.count_nonzero(w_np)
            keep = np.argsort(-w_cp, kind="stable")[:nnz]
            new = np.zeros_like(w_cp)
            new[keep] = np.maximum(w_cp[keep], 0.0)
            extras["max_diff_vs_newton"] = float(np.abs(w_cp - w_np).max() / max(np.abs(w_np).max(), 1e-300))
        else:
            extras["fallback"] = "newton"
    else:
        extras.update(solver="newton", status="optimal")
    norm = np.linalg.norm(new)
    extras["lambda"] = lam
    return (new / norm if norm > 0 else new), extras


def angle_deg(w: np.ndarray, v: np.ndarray) -> float:
    """Angle in degrees between two unit vectors."""
    return math.degrees(math.acos(min(1.0, max(-1.0, float(w @ v)))))


def _em(problem, k, V, alpha, start, qp, tol, max_iter):
    w = start / np.linalg.norm(start)
    extras: dict = {}
    for it in range(1, max_iter + 1):
        new, extras = quasi_mstep(problem, w, k, V, alpha, qp)
        if not new.any():
            return new, it, True, extras
        done = abs(new @ w) > 1 - tol
        w = new
        if done:
            return w, it, True, extras
    return w, max_iter, False, extras


def quasi_orthogonal_components(
    problem: Problem,
    k: int,
    n_components: int,
    min_angle_deg: float | None = None,
    alpha: float | None = None,
    rng: np.random.Generator | None = None,
    restarts: int = 3,
    qp: str = "cvxpy",
    tol: float = 1e-6,
    max_iter: int = 200,
    alpha_ratio: float = 1.25,
) -> tuple[list[np.ndarray], list[dict]]:
    """Nonnegative components with at most k nonzeros, quasi-orthogonal by eq. (20).

    Longer than most functions because the α search per component (a doubling
    phase, then a geometric bisection over a cache of attempts shared by both) is
    one piece of state that splitting would only pass around.

    Parameters
    ----------
    min_angle_deg : float, optional
        Required angle between every pair.  α is tuned per component: α = 0
        (or the given ``alpha``) first, then doubled from λ₁/16 until some start
        meets the angle, then bisected (geometrically, until hi/lo ≤
        ``alpha_ratio``; below a working α with no failing one known, α/8 is
        tried) for the smallest α that meets it — more α costs variance.  At
        the final α the best-variance run meeting the angle wins.
    alpha : float, optional
        Fixed penalty when ``min_angle_deg`` is None (default 0: plain EM).
    restarts : int
        Random nonnegative starts besides the positive parts of ±PC1 (the EM
        plugin's starts).
    qp : "cvxpy" or "numpy"
        Who solves each M-step QP (see the module docstring).

    Returns
    -------
    components : list of unit nonnegative D-vectors
    records : list of dicts per component: alpha, angle (smallest to the earlier
        ones, degrees; None for the first), met (angle honoured), variance,
        cardinality, iterations, converged, solver and status of the last
        M-step, alphas_tried, seconds.
    """
    k = check_cardinality(k, problem.dim, "k")
    n_components = check_cardinality(n_components, problem.dim, "n_components")
    if min_angle_deg is not None:  # nonnegative unit vectors make angles of 0 to 90 degrees
        min_angle_deg = check_float(min_angle_deg, "min_angle_deg", low=0.0, high=90.0)
    restarts = check_int(restarts, "restarts", low=0)
    qp = check_choice(qp, QP_SOLVERS, "qp")
    if qp == "cvxpy":
        _cvxpy()
    rng = check_random_state(rng, "rng")
    lam1 = float(problem.eigenvalues()[0]) if problem.eigenvalues().size else 1.0
    components: list[np.ndarray] = []
    records: list[dict] = []
    for _ in range(n_components):
        t0 = time.perf_counter()
        V = np.column_stack(components) if components else np.zeros((problem.dim, 0))
        solver = MStepQP(V) if qp == "cvxpy" else None
        starts = EM().starts(problem, True, rng, restarts)
        tried: dict[float, tuple] = {}

        def attempt(a: float, tried=tried, starts=starts, V=V, solver=solver):  # bound per component
            if a not in tried:
                best_ok, best_any = None, None
                for start in starts:
                    w, its, conv, ex = _em(problem, k, V, a, start, solver, tol, max_iter)
                    if not w.any():
                        continue
                    ang = min((angle_deg(w, v) for v in components), default=None)
                    run = (problem.variance(w), w, its, conv, ex, ang)
                    ok = min_angle_deg is None or ang is None or ang >= min_angle_deg - ANGLE_SLACK_DEG
                    if ok and (best_ok is None or run[0] > best_ok[0]):
                        best_ok = run
                    if best_any is None or (ang or 0) > (best_any[5] or 0):
                        best_any = run
                tried[a] = (best_ok is not None, best_ok or best_any)
            return tried[a]

        a_used = 0.0 if alpha is None else float(alpha)
        ok, run = attempt(a_used)
        if min_angle_deg is not None and components and not ok:
            lo, hi = a_used, max(a_used, lam1 * ALPHA_START_FRACTION)
            while not (ok := attempt(hi)[0]) and hi < lam1 * ALPHA_MAX_FACTOR:
                lo, hi = hi, 2 * hi
            if ok:
                for _ in range(ALPHA_BISECTIONS):  # smallest α meeting the angle, to a factor alpha_ratio
                    if lo > 0 and hi / lo <= alpha_ratio:
                        break
                    mid = math.sqrt(lo * hi) if lo > 0 else hi / ALPHA_DOWN_FACTOR
                    if attempt(mid)[0]:
                        hi = mid
                    else:
                        lo = mid
            a_used = hi
            ok, run = attempt(a_used)
        if run is None:
            raise InputError(
                "every start gave the zero vector; the data have no positive direction left for a nonnegative component"
            )
        value, w, its, conv, ex, ang = run
        components.append(w)
        records.append(
            {
                "alpha": a_used,
                "angle": ang,
                "met": ok,
                "variance": value,
                "cardinality": int(np.count_nonzero(w)),
                "iterations": its,
                "converged": conv,
                "solver": ex.get("solver"),
                "status": ex.get("status"),
                "max_diff_vs_newton": ex.get("max_diff_vs_newton"),
                "alphas_tried": len(tried),
                "seconds": time.perf_counter() - t0,
            }
        )
    return components, records


def quasi_components(
    problem: Problem,
    k: int,
    n_components: int,
    *,
    method: str,
    nonneg: bool,
    min_angle: float,
    rng: np.random.Generator,
    restarts: int,
    **options,
) -> list[Component]:
    """:func:`quasi_orthogonal_components` as Components (method ``em-quasi``), each with its
    status; ``options`` are that function's ``qp``, ``tol``, ``max_iter``, ``alpha_ratio``."""
    if method not in ("em", "auto") or not nonneg:
        raise InputError.bad_argument(
            "deflation",
            "'quasi' needs method='em' and nonneg=True (the default method 'auto' runs EM here): "
            "quasi-orthogonal components are nonnegative EM components",
        )
    unknown = set(options) - QUASI_OPTIONS
    if unknown:
        raise InputError(
            f"deflation 'quasi' has no option {', '.join(sorted(unknown))}; "
            f"its options: {', '.join(sorted(QUASI_OPTIONS))}"
        )
    vectors, records = quasi_orthogonal_components(
        problem, k, n_components, min_angle_deg=min_angle, rng=rng, restarts=restarts, **options
    )
    out = []
    for w, rec in zip(vectors, records):
        reach, reason = reach_of(problem, w, k, True)
        conv = Convergence.CONVERGED if rec["converged"] else Convergence.ITERATION_LIMIT
        conv_reason = "" if rec["converged"] else f"stopped after {rec['iterations']} EM iterations"
        out.append(
            Component(
                loadings=as_loadings(problem, w),
                variance=problem.variance(w),
                method="em-quasi",
                k=k,
                nonneg=True,
                options={"min_angle": min_angle, "restarts": restarts, **options},
                iterations=int(rec["iterations"]),
                seconds=float(rec["seconds"]),
                extras=rec,
                status=Status(reach, reason, conv, conv_reason),
            )
        )
    return out
