"""Nonnegative sparse PCA by coordinate ascent (Zass & Shashua, NIPS 2006).

NSPCA maximises, over U ≥ 0 (D × L, the L components as columns), eq. (3):

    F(U) = ½‖UᵀX‖²_F − (α/4)‖I − UᵀU‖²_F − β 1ᵀU1
         = ½ tr(UᵀAU) − (α/4)‖I − UᵀU‖²_F − β ΣU,      A = XXᵀ.

Here A is the covariance C of the :class:`~certpca.problem.Problem`.  The paper
takes A = XXᵀ unaveraged (X of d × n); since F scales as F(U; nA, nα, nβ) =
n·F(U; A, α, β), the paper's (α, β) correspond to (α/n, β/n) on C = XXᵀ/n.

As a function of one entry u = U[s, r] (eq. 4)

    f(u) = −(α/4)u⁴ + (c₂/2)u² + c₁u + const,
    c₁ = Σ_{i≠s} A_si U[i,r] − α Σ_{q≠r} U[s,q] Σ_{i≠s} U[i,r]U[i,q] − β,
    c₂ = A_ss + α − α Σ_{i≠s} U[i,r]² − α Σ_{q≠r} U[s,q]²,

re-derived here (and equal to the printed eq. 4): the ‖I − UᵀU‖² term gives
(1 − m − u²)² with m = Σ_{i≠s}U[i,r]², and 2(uU[s,q] + p_q)² for each q ≠ r with
p_q = Σ_{i≠s}U[i,r]U[i,q].  Every update sets u to the global maximiser of f on
[0, ∞): the candidates are 0 and the nonnegative roots of the cubic f'(u) =
−αu³ + c₂u + c₁ = 0 (eq. 5), compared by the value of f (Algorithm 1).  The
current value is a candidate too, so no update ever lowers F (monotone ascent).

What one update needs is kept up to date instead of recomputed: the Gram
matrix G = UᵀU (L × L) and either AU (D × L, dense A) or FU (r × L, A = FᵀF held
as a factor when D > N).  Changing U[s, r] by δ is a rank-one update of the
caches (δ·A[s] into AU, δ·F[:, s] into FU): one update costs O(D + L) or
O(r + L) and no D × D array is formed when the problem holds a factor.  The
sweep runs compiled (numba, :mod:`certpca.solvers._nspca_kernel`).

Sweeps alternate between all D·L entries and, until they stall, the nonzero
entries only (the active set, as in coordinate descent for the lasso): the
fixed points are those of full sweeps, since a fit stops only after a full
sweep that raises F by at most ``tol``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from types import ModuleType

import numpy as np

from ..errors import InputError
from ..problem import Problem
from ..status import Reach
from .base import Run, Solver


def _kernel() -> ModuleType:
    """The compiled sweep (:mod:`certpca.solvers._nspca_kernel`).

    Imported here, not at the top: numba loads in ~0.2 s, paid only by NSPCA fits.
    """
    from . import _nspca_kernel  # late: numba loads only for NSPCA fits (see docstring)

    return _nspca_kernel


# --------------------------------------------------------------- one entry
def quartic(u, alpha: float, c2: float, c1: float):
    """f(u) = −(α/4)u⁴ + (c₂/2)u² + c₁u, Zass & Shashua eq. (4) without its constant (u may be an array)."""
    u2 = u * u
    return -0.25 * alpha * u2 * u2 + 0.5 * c2 * u2 + c1 * u


def best_nonneg(alpha: float, c2: float, c1: float, current: float = 0.0) -> float:
    """Global maximiser of f(u) = −(α/4)u⁴ + (c₂/2)u² + c₁u over u ≥ 0 (Algorithm 1).

    Candidates: 0, the nonnegative real roots of eq. (5), and ``current`` (kept
    on ties, so a coordinate never moves to a point that rounding makes worse).
    This is the compiled function every sweep calls.
    """
    return float(_kernel().best_nonneg(float(alpha), float(c2), float(c1), float(current)))


# ------------------------------------------------------------ the objective
def objective(problem: Problem, U: np.ndarray, alpha: float, beta: float) -> float:
    """Zass & Shashua eq. (3) with A = C: ½tr(UᵀCU) − (α/4)‖I − UᵀU‖²_F − β1ᵀU1."""
    U = np.asarray(U, dtype=float).reshape(problem.dim, -1)
    var = sum(problem.variance(U[:, r]) for r in range(U.shape[1]))
    G = U.T @ U
    return 0.5 * var - 0.25 * alpha * float(np.sum((np.eye(U.shape[1]) - G) ** 2)) - beta * float(U.sum())


class _State:
    """U with its cached Gram matrix G = UᵀU and products AU (dense) or FU (factor)."""

    def __init__(self, problem: Problem, U: np.ndarray):
        self.problem = problem
        self.U = np.array(U, dtype=float, order="C")  # D × L
        self.diag = np.ascontiguousarray(problem.diag, dtype=float)
        self.factor = problem.uses_factor
        if self.factor:
            self.M = np.ascontiguousarray(problem.factor().T)  # D × r: row s is F[:, s]
        else:
            self.M = problem.dense()  # D × D: only when D ≤ N
        D, L = self.U.shape
        self.all_entries = np.ascontiguousarray(np.column_stack([np.tile(np.arange(D), L), np.repeat(np.arange(L), D)]))
        self.refresh()

    def refresh(self) -> None:
        """Recompute the caches exactly (undoes drift from incremental updates)."""
        U = self.U
        self.G = np.ascontiguousarray(U.T @ U)
        if self.factor:
            self.P = np.ascontiguousarray(U.T @ self.M)  # L × r: rows (FU)[:, r]ᵀ
        else:
            self.P = np.ascontiguousarray((self.M @ U).T)  # L × D: rows (AU)[:, r]ᵀ

    def support(self) -> np.ndarray:
        """The nonzero entries (s, r), column by column, as the sweep takes them."""
        r, s = np.nonzero(self.U.T)
        return np.ascontiguousarray(np.column_stack([s, r]))

    def variance_sum(self) -> float:
        if self.factor:
            return float(np.sum(self.P * self.P))
        return float(np.sum(self.P * self.U.T))

    def objective(self, alpha: float, beta: float) -> float:
        L = self.U.shape[1]
        return (
            0.5 * self.variance_sum()
            - 0.25 * alpha * float(np.sum((np.eye(L) - self.G) ** 2))
            - beta * float(self.U.sum())
        )

    def sweep(self, alpha: float, beta: float, entries: np.ndarray | None = None) -> tuple[int, float]:
        """One pass of Algorithm 1 over ``entries`` (default all, column by column).

        Returns the number of entries changed and the rise of eq. (3).
        """
        entries = self.all_entries if entries is None else entries
        changed, gain = _kernel().sweep(
            self.U, self.G, self.P, self.diag, self.M, self.factor, float(alpha), float(beta), entries
        )
        return int(changed), float(gain)


# ------------------------------------------------------------- public API
def _validate(problem: Problem, n_components: int, alpha: float, beta: float) -> None:
    if not isinstance(problem, Problem):
        raise InputError("nspca needs a certpca Problem; build one with Problem.from_data or from_covariance")
    if not 1 <= n_components <= problem.dim:
        raise InputError(f"n_components = {n_components} is out of range; choose 1 to {problem.dim}")
    if not (np.isfinite(alpha) and alpha > 0):
        raise InputError(f"alpha = {alpha} must be positive and finite: with α = 0 eq. (3) is unbounded")
    if not (np.isfinite(beta) and beta >= 0):
        raise InputError(f"beta = {beta} must be nonnegative and finite")


def default_alpha(problem: Problem) -> float:
    """α = λ₁(C): the unit-norm penalty on the scale of the data (‖u‖² = 2 at β = 0, L = 1)."""
    lam = problem.eigenvalues()
    return float(lam[0]) if lam.size and lam[0] > 0 else 1.0


def random_start(problem: Problem, n_components: int, rng: np.random.Generator) -> np.ndarray:
    """|N(0, 1)| entries, columns scaled to unit norm (Sigg & Buhmann's random nonnegative starts)."""
    U = np.abs(rng.standard_normal((problem.dim, n_components)))
    return U / np.linalg.norm(U, axis=0)


def nspca(
    problem: Problem,
    n_components: int = 1,
    alpha: float | None = None,
    beta: float = 0.0,
    rng: np.random.Generator | None = None,
    max_iter: int = 1000,
    tol: float = 1e-9,
    init: np.ndarray | None = None,
    trace: bool = False,
    active: bool = True,
) -> tuple[np.ndarray, dict]:
    """Zass & Shashua's Algorithm 1: coordinate ascent on eq. (3) for L = ``n_components`` jointly.

    Over 80 lines because the full/active-set sweep alternation and its stopping
    rule are one loop that reads best in one place.

    Parameters
    ----------
    problem : Problem
        The covariance operator; A = C in eq. (3).
    n_components : int
        L, the number of columns of U.
    alpha : float, optional
        Orthonormality penalty α > 0 of eq. (2)/(3); default :func:`default_alpha`.
    beta : float
        ℓ1 sparsity penalty β ≥ 0 of eq. (3).
    rng : numpy.random.Generator, optional
        Used only for the random nonnegative start when ``init`` is None.
    max_iter : int
        Largest number of sweeps (full and active-set sweeps together).
    tol : float
        Stop when a sweep raises F by at most ``tol``·max(1, |F|), or changes nothing.
    init : array (D,) or (D, L), optional
        Start; negative entries are clipped to 0.
    trace : bool
        Record the objective after every sweep in ``info["objectives"]``.
    active : bool
        Between full sweeps, sweep the nonzero entries only until they stall
        (same fixed points, far fewer entry updates when U is sparse).

    Returns
    -------
    U : ndarray (D, L)
        Nonnegative, *not* normalised (the penalty lets ‖u_r‖ drift from 1).
    info : dict
        objective, sweeps (all), full_sweeps, converged, cardinality (nnz of U), alpha,
        beta, seconds (and objectives when ``trace``).
    """
    alpha = default_alpha(problem) if alpha is None else float(alpha)
    _validate(problem, n_components, alpha, float(beta))
    if init is None:
        rng = np.random.default_rng(0) if rng is None else rng
        init = random_start(problem, n_components, rng)
    U0 = np.maximum(np.asarray(init, dtype=float).reshape(problem.dim, -1), 0.0)
    if U0.shape[1] != n_components:
        raise InputError(f"init has {U0.shape[1]} columns for n_components = {n_components}")
    t0 = time.perf_counter()
    st = _State(problem, U0)
    f_old = st.objective(alpha, beta)
    history = [f_old]
    converged = False
    sweeps = full_sweeps = 0
    while sweeps < max_iter:
        changed, _ = st.sweep(alpha, beta)
        sweeps += 1
        full_sweeps += 1
        st.refresh()
        f_new = st.objective(alpha, beta)
        if trace:
            history.append(f_new)
        if changed == 0 or f_new - f_old <= tol * max(1.0, abs(f_new)):
            converged = True
            f_old = f_new
            break
        f_old = f_new
        support = st.support()
        if not active or len(support) == len(st.all_entries):
            continue
        while sweeps < max_iter:  # the active set: the nonzero entries until they stall
            changed, gain = st.sweep(alpha, beta, support)
            sweeps += 1
            f_old += gain
            if trace:
                history.append(st.objective(alpha, beta))
            if changed == 0 or gain <= tol * max(1.0, abs(f_old)):
                break
    info: dict = {
        "objective": f_old,
        "sweeps": sweeps,
        "full_sweeps": full_sweeps,
        "converged": converged,
        "cardinality": int(np.count_nonzero(st.U)),
        "alpha": alpha,
        "beta": float(beta),
        "seconds": time.perf_counter() - t0,
    }
    if trace:
        info["objectives"] = history
    return st.U, info


@dataclass
class CardinalitySearch:
    """Bisection on β for target cardinalities (Sigg & Buhmann 2008, Sec. 5.2).

    Every evaluation of the map β ↦ nnz(U(β)) runs NSPCA from the same start, so
    the map is well defined; it is decreasing only on the whole and may jump over
    a cardinality, which is then reported as not reached.  Evaluations are cached
    and shared between targets.
    """

    problem: Problem
    n_components: int = 1
    alpha: float | None = None
    init: np.ndarray | None = None
    rng: np.random.Generator | None = None
    max_iter: int = 1000
    tol: float = 1e-9
    rel_length: float = 1e-5  # stop when (hi − lo)/hi < rel_length
    warm: bool = True  # start each β from the U at the bracket's dense end
    evaluations: dict = field(default_factory=dict)  # β -> (cardinality, U, info)

    def __post_init__(self):
        if self.alpha is None:
            self.alpha = default_alpha(self.problem)
        if self.init is None:
            rng = np.random.default_rng(0) if self.rng is None else self.rng
            self.init = random_start(self.problem, self.n_components, rng)

    def at(self, beta: float, start: float | None = None):
        """Cardinality, U and info at β (from the common start, or warm from the U at β = ``start``)."""
        beta = float(beta)
        if beta not in self.evaluations:
            init = self.init
            if self.warm and start is not None and start in self.evaluations:
                init = self.evaluations[start][1]
            U, info = nspca(
                self.problem, self.n_components, self.alpha, beta, max_iter=self.max_iter, tol=self.tol, init=init
            )
            self.evaluations[beta] = (info["cardinality"], U, info)
        return self.evaluations[beta]

    def _guess(self, k: int, lo: float) -> float:
        """β above which all but about k entries of the U at β = ``lo`` would be zero.

        At u = 0 the update of eq. (4)/(5) keeps an entry at zero when c₁ ≤ 0 (and
        c₂ is not large), and c₁ + β = g − α·cross does not depend on β: the
        (k+1)-th largest of these over all entries is a first β for k nonzeros.
        U shrinks as β grows, so the guess is high, typically by a factor 2–3.
        """
        U = self.evaluations[lo][1]
        G = U.T @ U
        g = self.problem.matvec(U) - self.problem.diag[:, None] * U
        rowsq = np.sum(U * U, axis=1, keepdims=True)
        cross = U @ G - U * np.diag(G) - U * (rowsq - U * U)
        strength = np.sort((g - self.alpha * cross).ravel())[::-1]
        return float(strength[k]) if k < strength.size else 0.0

    def _bracket(self, k: int) -> tuple[float, float]:
        """lo with nnz > k (or β = 0) and hi with nnz < k, the tightest among the cached evaluations.

        Without a cached hi: probe :meth:`_guess`, then halve (or double) it until
        the cardinality crosses k; every probe starts warm from the U at lo.
        """
        lo = max((b for b, (c, _, _) in self.evaluations.items() if c > k), default=0.0)
        above = [b for b, (c, _, _) in self.evaluations.items() if c < k and b > lo]
        if above:
            return lo, min(above)
        hi = self._guess(k, lo)
        if hi > lo:
            c = self.at(hi, lo)[0]
            if c == k:
                return hi, hi
            while c < k:  # the guess overshot: halve towards lo
                probe = 0.5 * hi
                if probe <= lo * (1.0 + self.rel_length):
                    return lo, hi
                c = self.at(probe, lo)[0]
                if c == k:
                    return probe, probe
                if c > k:
                    return probe, hi
                hi = probe
            lo, hi = hi, 2.0 * hi
        else:
            hi = max(lo, float(np.max(self.problem.diag)) * 1e-3, 1e-300)
        while self.at(hi, lo)[0] >= k:
            if self.at(hi, lo)[0] == k:
                return hi, hi
            lo, hi = hi, 2.0 * hi
            if hi > 1e300:
                break
        return lo, hi

    def solve(self, k: int) -> tuple[np.ndarray, dict]:
        """U with nnz = k if the bisection finds one, else the densest evaluated U with nnz < k."""
        t0 = time.perf_counter()
        n0 = len(self.evaluations)
        exact = [b for b, (c, _, _) in self.evaluations.items() if c == k]
        if not exact and self.at(0.0)[0] > k:
            lo, hi = self._bracket(k)
            if lo == hi:
                exact = [lo]
            while not exact and hi - lo >= self.rel_length * hi:
                mid = 0.5 * (lo + hi)
                c = self.at(mid, lo)[0]
                if c == k:
                    exact = [mid]
                elif c > k:
                    lo = mid
                else:
                    hi = mid
        elif not exact and self.at(0.0)[0] == k:
            exact = [0.0]
        if exact:
            beta = min(exact)
            reached = True
        else:  # densest feasible (nnz ≤ k) evaluation, preferring the smaller β on ties
            feas = [(c, -b) for b, (c, _, _) in self.evaluations.items() if c <= k]
            c, nb = max(feas) if feas else (0, 0.0)
            beta = -nb
            reached = False
        _, U, info = self.evaluations[beta] if beta in self.evaluations else self.at(beta)
        near_below = max((c for c, _, _ in self.evaluations.values() if c < k), default=None)
        near_above = min((c for c, _, _ in self.evaluations.values() if c > k), default=None)
        return U, {
            **info,
            "target": k,
            "reached": reached,
            "beta": beta,
            "evaluations": len(self.evaluations) - n0,
            "nearest_below": near_below,
            "nearest_above": near_above,
            "search_seconds": time.perf_counter() - t0,
        }


def nspca_at_cardinality(
    problem: Problem,
    k_total,
    n_components: int = 1,
    alpha: float | None = None,
    rng: np.random.Generator | None = None,
    init: np.ndarray | None = None,
    max_iter: int = 1000,
    tol: float = 1e-9,
    rel_length: float = 1e-5,
    warm: bool = True,
):
    """NSPCA with β bisected until U has ``k_total`` nonzeros (over all L columns).

    ``k_total`` may be an int (returns ``(U, info)``) or a sequence of targets
    (returns ``(results, unreached)``: results maps each k to ``(U, info)``, and
    ``unreached`` lists the k whose cardinality the bisection could not hit —
    the map β ↦ nnz jumps over them; their U is the densest found with nnz < k).
    ``info["reached"]`` says which; ``info["beta"]`` is the β used.

    ``warm=False`` runs every β from the same start (Sigg & Buhmann's protocol);
    ``warm=True`` (default) starts each β from the U of the bracket's dense end, a
    continuation that lets entries leave one at a time.  On CBCL faces (PC1
    projected out, α = λ₁, targets 10..300) cold starts reached 9 of 30 targets in
    9.7 s, warm starts 17 in 4.0 s (the other 13 lie above the 193 nonzeros of
    the β = 0 solution, which β ≥ 0 can only shrink).
    """
    search = CardinalitySearch(problem, n_components, alpha, init, rng, max_iter, tol, rel_length, warm)
    if np.ndim(k_total) == 0:
        k = int(k_total)
        if not 1 <= k <= problem.dim * n_components:
            raise InputError(f"k_total = {k} is out of range; choose 1 to {problem.dim * n_components}")
        return search.solve(k)
    results = {}
    for k in sorted({int(x) for x in k_total}, reverse=True):
        if not 1 <= k <= problem.dim * n_components:
            raise InputError(f"k_total = {k} is out of range; choose 1 to {problem.dim * n_components}")
        results[k] = search.solve(k)
    unreached = sorted(k for k, (_, info) in results.items() if not info["reached"])
    return dict(sorted(results.items())), unreached


# ------------------------------------------------------------- the plugin
class NSPCA(Solver):
    """NSPCA (Zass & Shashua 2006) for one component at cardinality k, or several jointly.

    β is bisected from each random nonnegative start until nnz(u) = k (Sigg &
    Buhmann 2008, Sec. 5.2, interval relative length 1e-5).  When the map
    β ↦ nnz jumps over k the run returns the densest u with fewer than k
    nonzeros and reports reach ``unreachable`` (and ``reached`` False in
    ``extras``).  α defaults to λ₁(C).  NSPCA has no deterministic start, so
    ``restarts`` = 0 still runs one random start.
    """

    name = "nspca"
    sparse = True
    nonneg = True
    signed = False
    joint = True
    warm_start = True
    defaults = {"alpha": None, "max_iter": 1000, "tol": 1e-9, "rel_length": 1e-5, "warm": True}
    reference = (
        "Zass, R. & Shashua, A. (2006). Nonnegative sparse PCA. Advances in Neural Information Processing Systems 19."
    )

    def starts(self, problem, nonneg, rng, restarts):
        return [random_start(problem, 1, rng)[:, 0] for _ in range(max(1, restarts))]

    def run(self, problem, k, nonneg, start, alpha=None, max_iter=1000, tol=1e-9, rel_length=1e-5, warm=True):
        if start is None:
            start = random_start(problem, 1, np.random.default_rng(0))[:, 0]
        U, info = nspca_at_cardinality(
            problem,
            int(k),
            1,
            alpha,
            init=np.asarray(start, float),
            max_iter=max_iter,
            tol=tol,
            rel_length=rel_length,
            warm=warm,
        )
        u = U[:, 0]
        norm = np.linalg.norm(u)
        w = u / norm if norm > 0 else u
        extras = {
            key: info[key]
            for key in (
                "alpha",
                "beta",
                "reached",
                "cardinality",
                "evaluations",
                "nearest_below",
                "nearest_above",
                "objective",
            )
        }
        extras["norm"] = float(norm)
        return Run(w, np.flatnonzero(w), info["sweeps"], bool(info["converged"]), extras, **_reach(info, k))

    def fit_joint(
        self, problem, k, n_components, nonneg, rng, alpha=None, max_iter=1000, tol=1e-9, rel_length=1e-5, warm=True
    ):
        """L = ``n_components`` columns of eq. (3) at once, with k·L nonzeros over all of them:
        the sparsity penalty β is shared, so single columns may hold more or fewer than k."""
        U, info = nspca_at_cardinality(
            problem,
            k * n_components,
            n_components,
            alpha,
            rng=rng,
            max_iter=max_iter,
            tol=tol,
            rel_length=rel_length,
            warm=warm,
        )
        norms = np.linalg.norm(U, axis=0)
        W = U / np.where(norms > 0, norms, 1.0)
        extras = {key: info.get(key) for key in ("alpha", "beta", "reached", "cardinality")}
        return [
            Run(
                W[:, j],
                np.flatnonzero(W[:, j]),
                info["sweeps"],
                bool(info["converged"]),
                dict(extras),
                **_reach(info, k * n_components),
            )
            for j in range(n_components)
        ]


def _reach(info: dict, k_total: int) -> dict:
    """Run's reach fields from the β search's ``info``: the total cardinality k_total reached or not."""
    if info["reached"]:
        return {"reach": Reach.REACHED}
    return {
        "reach": Reach.UNREACHABLE,
        "reach_reason": f"the map beta -> nonzeros jumps over {k_total} (nearest below: "
        f"{info.get('nearest_below')}, above: {info.get('nearest_above')})",
    }
