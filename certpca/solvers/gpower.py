"""Generalized power method for sparse PCA (Journée, Nesterov, Richtárik & Sepulchre).

Notation of the paper: the data matrix is ``A = [a_1 … a_n]`` (p × n) with
``C = AᵀA``; here ``A`` is the factor ``F`` of the covariance operator (r × D,
:meth:`Problem.factor`), so everything below iterates on ``x ∈ R^r`` — the
sample dimension when D ≫ N — and never forms a D × D array.  One iteration
costs one product ``Aᵀx`` (O(rD)) and one product ``A_S z_S`` over the current
support only.

Single unit (JMLR 2010, Sec. 2; slides eqs. (1)–(4))
----------------------------------------------------
ℓ1:  ``φ²(γ) = max_{‖x‖=1} Σ_i [|a_iᵀx| − γ]₊²``   (2),
     loadings ``z_i = sign(a_iᵀx)[|a_iᵀx| − γ]₊``, ``z* = z/‖z‖``;  γ ∈ [0, max_i ‖a_i‖).
ℓ0:  ``φ(γ) = max_{‖x‖=1} Σ_i [(a_iᵀx)² − γ]₊``     (4),
     loadings ``z_i = [sign((a_iᵀx)² − γ)]₊ a_iᵀx``, ``z* = z/‖z‖``;  γ ∈ [0, max_i ‖a_i‖²).

Both objectives f are convex, and in both cases ∇f(x) = 2Az(x), so the
generalized power step (slides §8) ``x ← argmax_{‖y‖=1} ⟨∇f(x), y⟩`` is
``x ← Az/‖Az‖``: the ordinary power method with a thresholding in between.
f(x_k) increases monotonically (slides §9, Theorem); we stop when the paper's
first-order measure ``Δ(x) = max_{‖y‖=1}⟨∇f(x), y − x⟩ = ‖∇f‖ − ⟨∇f, x⟩`` is
at most ``tol·‖∇f(x)‖`` (i.e. 1 − cos∠(x, Az) ≤ tol).

Nonnegativity (single unit): sound, by the same reformulation
-------------------------------------------------------------
Add ``z ≥ 0`` to (1) and (3).  Since ‖Az‖ = max_{‖x‖≤1} xᵀAz for *any* z, the
interchange of maxima in the paper's derivation still holds, and the inner
problem separates with z_i ≥ 0:

* ℓ1: ``max_{z≥0,‖z‖≤1} Σ_i z_i(a_iᵀx − γ)`` gives ``z_i = [a_iᵀx − γ]₊`` and
  ``φ₊²(γ) = max_{‖x‖=1} Σ_i [[a_iᵀx]₊ − γ]₊²`` — only the *positive parts* of
  Aᵀx enter.
* ℓ0: for a fixed support S, ``max_{z≥0,‖z‖≤1} (Σ_S z_i c_i)²`` (c = Aᵀx) is
  Σ_S [c_i]₊² or Σ_S [c_i]₋²; the second is the first at −x, and the outer max
  runs over ±x, so ``φ₊(γ) = max_{‖x‖=1} Σ_i [[a_iᵀx]₊² − γ]₊`` with
  ``z_i = a_iᵀx`` where ``a_iᵀx > √γ`` and 0 elsewhere.

Both are maxima of convex functions (``t ↦ [[t]₊ − γ]₊²`` and
``t ↦ max(0, [t]₊² − γ)`` are convex and nondecreasing, composed with a linear
map), with gradient 2Az again, so GPower and its monotonicity theorem apply
unchanged: the nonnegative variants are exact reformulations, not heuristics.
Hence ``nonneg = True`` for both single-unit plugins.  The same holds column by
column for the block variants (:func:`gpower_block` with ``nonneg=True``): the
inner problems separate per column, and flipping the sign of one column x_j keeps
X on the Stiefel manifold, so the ℓ0,m argument goes through as well.

Cardinality k instead of γ
--------------------------
The plugins take the target k and search γ (option ``gamma`` skips the search):
a bracket [lo, hi] ⊂ [0, γmax] with card(lo) > k > card(hi) is shrunk.  The next
γ is the *order-statistics proposal* — for the current fixed point x the
cardinality of z(x; γ) is the number of scores s_i = |a_iᵀx| (or [a_iᵀx]₊) above
the threshold, so the γ midway between the k-th and (k+1)-th scores gives exactly
k at this x — when it lies inside the bracket, else the bracket midpoint
(plain bisection); after ``proposals`` proposals only bisection is used.  Each
run is warm-started from the previous fixed point.  Every step is recorded in
``Run.extras["bisection"]`` as (γ, cardinality).

Exact k: when some γ reaches cardinality k its loadings are returned as they
are.  Cardinality as a function of γ can jump over k (fixed points change
discontinuously, and ties).  Then we take, among all γ tried, the solution with
the *smallest cardinality ≥ k* (largest γ on ties) and keep its k largest
|entries| — for a fixed x these are the k largest scores s_i, i.e. exactly the
support z(x; γ') would have for a γ' between the k-th and (k+1)-th score, so the
result is still GPower's thresholding at its own fixed point, just cut to k.
``extras["truncated"]`` records the cardinality that was cut.  A jump is declared
when the bracket has shrunk below 1e-6·hi without reaching k (or after
``bisection`` γ values).  We chose "above
and truncate" over "nearest below" because the design contract is *exactly k
when the data allow it*; the driver re-fits the weights on the support
(variational renormalisation) afterwards in either case.  Only if no γ, not even
γ = 0, gives ≥ k nonzeros (nonnegative case: fewer than k positive scores at the
fixed point) fewer than k come back, and ``extras["short"]`` says so; the driver's
status (:mod:`certpca.status`) then says whether the data favour fewer.  A given
``gamma`` fixes the sparsity instead of k: fewer than k is then ``unreachable``.

Block (JMLR 2010, Sec. 3; ℓ1,m and ℓ0,m)
----------------------------------------
``max_{X ∈ St(p, m)} Σ_j Σ_i [μ_j|a_iᵀx_j| − γ_j]₊²`` and
``Σ_j Σ_i [(μ_j a_iᵀx_j)² − γ_j]₊``: the gradient step on the Stiefel manifold
is the polar factor ``X ← Polar(G)`` of the column-wise gradients G.  See
:func:`gpower_block`.
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError
from ..problem import Problem, factor_product
from ..status import Reach
from ..validation import check_cardinality, check_choice
from .base import Run, Solver, top_k
from .gpower_block import PENALTIES, gamma_max, gpower_block, scores

#: the γ search declares a jump in card(γ) once its bracket is narrower than this fraction of hi
BRACKET_RTOL = 1e-6

REFERENCE = (
    "Journée, M., Nesterov, Yu., Richtárik, P. & Sepulchre, R. (2010). Generalized power "
    "method for sparse principal component analysis. Journal of Machine Learning Research, "
    "11, 517-553."
)


# ---------------------------------------------------------------- single unit
def closed_form(c: np.ndarray, gamma: float, penalty: str, nonneg: bool) -> np.ndarray:
    """Unnormalised loadings z(x) of the inner maximisation, from c = Aᵀx.

    ℓ1: z_i = sign(c_i)[s_i − γ]₊;  ℓ0: z_i = c_i where s_i² > γ, else 0
    (JMLR 2010 eqs. (7) and (11); s_i as in :func:`scores`).
    """
    s = scores(c, nonneg)
    if penalty == "l1":
        return np.sign(c) * np.maximum(s - gamma, 0.0)
    return np.where(s * s > gamma, c, 0.0)


def objective(c: np.ndarray, gamma: float, penalty: str, nonneg: bool) -> float:
    """f(x) of the reformulations (2) / (4) (or their nonnegative forms) from c = Aᵀx."""
    s = scores(c, nonneg)
    if penalty == "l1":
        return float(np.sum(np.maximum(s - gamma, 0.0) ** 2))
    return float(np.sum(np.maximum(s * s - gamma, 0.0)))


def iterate(
    A: np.ndarray, x: np.ndarray, gamma: float, penalty: str, nonneg: bool, tol: float, max_iter: int
) -> tuple[np.ndarray, np.ndarray, int, bool]:
    """GPower iterations x ← Az(x)/‖Az(x)‖ from a unit x (JMLR 2010 Algorithms 2 and 3).

    Returns (x, c = Aᵀx, iterations, converged); the loadings are z(x) = closed_form(c).
    Stops when Δ(x) = ‖Az‖ − xᵀAz ≤ tol·‖Az‖ (the first-order measure of the
    slides, §9) or when z(x) = 0 (γ too large: the origin is the answer).

    Active-set speed-up, keeping f(x_k) monotone and the stopping test exact: after
    a full product c = Aᵀx (O(rD)) with active columns S, GPower runs on the column
    subset A_S alone (O(r|S|) per step) until *its* Δ ≤ tol; then one full product
    checks the result.  GPower on A_S ascends f_S(x) = Σ_{i∈S} [s_i − t]₊² (the same
    convex form), and f ≥ f_S everywhere with equality at the starting x (no column
    outside S was active there), so f never decreases.  If no column outside S became
    active, z(x) = z_S(x), so x passes the full test Δ(x) ≤ tol·‖∇f‖ and is returned;
    otherwise the loop continues from x with the larger active set.
    """
    it = 0
    while it < max_iter:
        c = A.T @ x
        it += 1
        z = closed_form(c, gamma, penalty, nonneg)
        S = np.flatnonzero(z)
        if S.size == 0:
            return x, c, it, True
        g = A[:, S] @ z[S]
        norm = np.linalg.norm(g)
        if norm == 0 or norm - x @ g <= tol * norm:
            return x, c, it, True
        x = g / norm
        AS = A[:, S] if 2 * S.size < A.shape[1] else A  # small active set: iterate on A_S
        if AS is A:
            continue
        while it < max_iter:
            it += 1
            zS = closed_form(AS.T @ x, gamma, penalty, nonneg)
            g = AS @ zS
            norm = np.linalg.norm(g)
            if norm == 0 or norm - x @ g <= tol * norm:
                break
            x = g / norm
    return x, A.T @ x, max_iter, False


def _start_x(A: np.ndarray, start: np.ndarray | None) -> np.ndarray:
    """x for a loading vector w: x = Aw/‖Aw‖ (the maximiser of xᵀAw); the paper's start
    a_{i*}/‖a_{i*}‖ (largest-norm column) is w = e_{i*}."""
    if start is not None:
        x = factor_product(A, np.asarray(start, dtype=float))
        norm = np.linalg.norm(x)
        if norm > 0:
            return x / norm
    norms = np.einsum("ij,ij->j", A, A)
    i = int(np.argmax(norms))
    return A[:, i] / np.sqrt(norms[i]) if norms[i] > 0 else np.r_[1.0, np.zeros(A.shape[0] - 1)]


def _proposal(c: np.ndarray, k: int, penalty: str, nonneg: bool) -> float | None:
    """The γ midway between the k-th and (k+1)-th largest scores at this x (ℓ0: squared)."""
    s = scores(c, nonneg)
    if k >= s.size:
        return 0.0
    part = np.partition(s, s.size - k - 1)
    upper, lower = part[s.size - k :].min(), part[s.size - k - 1]
    if upper <= lower:  # tie at the k-th score: no γ gives k here
        return None
    if penalty == "l0":
        upper, lower = upper * upper, lower * lower
    return 0.5 * (upper + lower)


def gpower_single(
    problem: Problem,
    k: int | None,
    *,
    penalty: str = "l1",
    nonneg: bool = False,
    gamma: float | None = None,
    start: np.ndarray | None = None,
    tol: float = 1e-10,
    max_iter: int = 1000,
    bisection: int = 40,
    proposals: int = 8,
) -> Run:
    """Single-unit GPower (ℓ1 or ℓ0) at a given γ or at the γ found for cardinality k.

    Long because the γ search, its warm starts and the exact-k fallback (module notes)
    share one bracket and one record of steps; split up they would pass all of it around.

    Parameters
    ----------
    k : target cardinality (the result has at most k nonzeros when given; exactly k
        when any γ reaches it, else see the module notes).  With ``gamma`` given and
        ``k`` not None, a solution denser than k is cut to its k largest entries.
    penalty : "l1" (reformulation (2)) or "l0" (reformulation (4)).
    gamma : the penalty parameter in the paper's scale; None searches it for k.
    start : a loading vector w (D,) mapped to x = Aw/‖Aw‖; None is the paper's start.
    bisection : the largest number of γ values tried for k.
    proposals : how many of them may use the order-statistics proposal before plain bisection.

    Returns a :class:`Run` with unit weights z*(x) (zero vector if γ kills everything);
    extras: ``gamma``, ``x`` (the final x ∈ R^r), ``bisection`` [(γ, card), …],
    ``truncated`` (the cardinality cut to k, or None), ``short`` (True when < k came back);
    reach ``unreachable`` when a given γ leaves fewer than k nonzeros.
    """
    check_choice(penalty, PENALTIES, "penalty")
    A = problem.factor()
    D = A.shape[1]
    if k is not None:
        k = check_cardinality(k, D, "k")
    x = _start_x(A, start)
    gmax = gamma_max(A, penalty)
    total_it, converged = 0, True
    steps: list[tuple[float, int]] = []

    def solve_at(g: float, x0: np.ndarray):
        nonlocal total_it, converged
        xg, c, it, ok = iterate(A, x0, g, penalty, nonneg, tol, max_iter)
        total_it += it
        converged &= ok
        z = closed_form(c, g, penalty, nonneg)
        return xg, c, z, int(np.count_nonzero(z))

    truncated, short = None, False
    if gamma is not None:
        g = float(gamma)
        x, c, z, card = solve_at(g, x)
        steps.append((g, card))
        if k is not None and card > k:
            truncated, z = card, _truncate(z, c, k, nonneg)
    elif k is None:
        raise InputError.bad_argument("k", "is needed when gamma is None: give k or gamma")
    else:
        lo, hi = 0.0, gmax
        best_above = None  # (card, -γ, x, c, z) with the smallest card >= k
        found = None
        c = A.T @ x
        for step in range(bisection):
            proposal = _proposal(c, k, penalty, nonneg) if step < proposals else None
            if step == 0 and proposal == 0.0:  # k = D: the unpenalised problem
                g = 0.0
            elif proposal is None or not (lo < proposal < hi):
                g = 0.5 * (lo + hi)
            else:
                g = float(proposal)
            x_new, c_new, z, card = solve_at(g, x)
            steps.append((g, card))
            if card >= k and (best_above is None or (card, -g) < best_above[:2]):
                best_above = (card, -g, x_new, c_new, z)
            if card == k:
                found = (g, x_new, c_new, z)
                break
            if card > k:
                lo = g
            else:
                hi = g
            if card > 0:  # warm start from a nonzero fixed point only
                x, c = x_new, c_new
            if hi - lo <= BRACKET_RTOL * hi:  # a jump in card(γ): stop, truncate below
                break
        if found is not None:
            g, x, c, z = found
        else:
            if best_above is None:  # even the densest γ tried gave < k: try γ = 0
                x0, c0, z0, card0 = solve_at(0.0, x)
                steps.append((0.0, card0))
                best_above = (card0, 0.0, x0, c0, z0)
            card, neg_g, x, c, z = best_above
            g = -neg_g
            if card > k:
                truncated, z = card, _truncate(z, c, k, nonneg)
            short = card < k
    norm = np.linalg.norm(z)
    w = z / norm if norm > 0 else z
    support = np.flatnonzero(w)
    extras = {
        "penalty": penalty,
        "gamma": g,
        "gamma_max": gmax,
        "x": x,
        "bisection": steps,
        "truncated": truncated,
        "short": short,
    }
    if gamma is not None and k is not None and support.size < k:
        return Run(
            w,
            support,
            total_it,
            converged,
            extras,
            reach=Reach.UNREACHABLE,
            reach_reason=f"gamma = {g:.6g} is given: it fixes the sparsity, not k",
        )
    return Run(w, support, total_it, converged, extras)


def _truncate(z: np.ndarray, c: np.ndarray, k: int, nonneg: bool) -> np.ndarray:
    """Keep the k entries of z with the largest scores (= largest |z_i|; ties to lower index)."""
    keep, _ = top_k(np.where(z != 0, scores(c, nonneg), -1.0), k)
    out = np.zeros_like(z)
    out[keep] = z[keep]
    return out


class _GPower(Solver):
    joint = True
    warm_start = True
    penalty: str = "l1"
    defaults = {"tol": 1e-10, "max_iter": 1000, "gamma": None, "bisection": 40, "proposals": 8}
    reference = REFERENCE

    def starts(self, problem, nonneg, rng, restarts):
        """The paper's start x0 = a_{i*}/‖a_{i*}‖ (largest-norm column of A = F), given as the
        loading vector e_{i*} (``run`` maps a loading w to x = Aw/‖Aw‖), then PC1 — for
        nonnegative PCA the positive parts of +PC1 and −PC1, as EM does.

        GPower is a local method and its fixed point depends on the start.  Measured on 80
        brute-force problems (D = 5..10, tests/solvers/test_gpower.py families): the paper's
        start alone reached mean/min OPT ratios 0.997/0.87 (ℓ1) and 0.998/0.90 (ℓ0) for sparse
        PCA but only 0.988/0.57 for nonnegative PCA; adding the PC1 starts gave 0.999/0.96 and
        0.9995/0.98 (nonneg ℓ1/ℓ0).  ``restarts`` is not used (no random starts)."""
        e = np.zeros(problem.dim)
        e[int(np.argmax(problem.diag))] = 1.0  # ‖a_i‖² = C_ii
        pc = problem.first_pc()
        if not nonneg:
            return [e, pc]
        out = [e]
        for s in (pc, -pc):
            s = np.maximum(s, 0.0)
            if s.any():
                out.append(s / np.linalg.norm(s))
        return out

    def run(self, problem, k, nonneg, start, tol=1e-10, max_iter=1000, gamma=None, bisection=40, proposals=8):
        return gpower_single(
            problem,
            k,
            penalty=self.penalty,
            nonneg=nonneg,
            gamma=gamma,
            start=start,
            tol=tol,
            max_iter=max_iter,
            bisection=bisection,
            proposals=proposals,
        )

    def fit_joint(
        self, problem, k, n_components, nonneg, rng, tol=1e-10, max_iter=1000, gamma=None, bisection=40, proposals=8
    ):
        """Block GPower ℓ1,m / ℓ0,m (JMLR 2010, Sec. 3) with k nonzeros per column.

        Deterministic (``rng`` unused); ``proposals`` applies to the single-unit γ search only.
        """
        W, info = gpower_block(
            problem,
            k,
            n_components,
            penalty=self.penalty,
            gamma=gamma,
            nonneg=nonneg,
            tol=tol,
            max_iter=max_iter,
            bisection=bisection,
            return_info=True,
        )
        runs = []
        for j in range(W.shape[1]):
            w = W[:, j]
            run = Run(w, np.flatnonzero(w), info["iterations"], info["converged"], {"gamma": info["gamma"]})
            if gamma is not None and run.support.size < k:
                run.reach = Reach.UNREACHABLE
                run.reach_reason = f"gamma = {info['gamma'][j]:.6g} is given: it fixes the sparsity, not k"
            runs.append(run)
        return runs


class GPowerL1(_GPower):
    """GPower with the ℓ1 penalty (JMLR 2010, Algorithm 2; reformulation (2) of the slides).

    Nonnegative PCA is exact through the positive-part reformulation (module notes).
    Options: ``gamma`` (paper's scale, γ < max‖a_i‖; None searches γ for cardinality k),
    ``tol`` (first-order measure Δ(x) ≤ tol·‖∇f‖), ``max_iter`` (per γ), ``bisection``
    (γ values tried), ``proposals`` (of which order-statistics proposals).
    """

    name = "gpower-l1"
    penalty = "l1"


class GPowerL0(_GPower):
    """GPower with the ℓ0 penalty (JMLR 2010, Algorithm 3; reformulation (4) of the slides).

    As :class:`GPowerL1`, with γ < max‖a_i‖² and the hard-thresholded loadings.
    """

    name = "gpower-l0"
    penalty = "l0"


__all__ = [
    "REFERENCE",
    "GPowerL0",
    "GPowerL1",
    "closed_form",
    "gamma_max",
    "gpower_single",
    "iterate",
    "objective",
]
