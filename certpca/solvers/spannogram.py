"""Spannogram solvers for sparse and nonnegative sparse PCA on a rank-d surrogate.

References
----------
[APD14] M. Asteris, D. Papailiopoulos, A. Dimakis.  *Nonnegative Sparse PCA with
        Provable Guarantees.*  ICML 2014.  (Alg. 1-3, Prop. 3.1, eqs. (8)-(16), Sec. 4-6.)
[PDK13] D. Papailiopoulos, A. Dimakis, S. Korokythakis.  *Sparse PCA through
        Low-rank Approximations.*  ICML 2013.  (The signed variant.)

The problem is ``OPT = max wᵀCw`` over unit ``w`` with ``‖w‖₀ ≤ k`` (and ``w ≥ 0``
when ``nonneg``).  With the top-d eigenpairs of C put into the feature matrix
``V = [√λ₁v₁ … √λ_d v_d]`` (n × d, [APD14] eq. (7)) the rank-d surrogate is
``A_d = VVᵀ`` and ``OPT_d`` is the same problem on ``A_d``.  Two facts make the
surrogate useful ([APD14] Thm. 1 and its proof; certification notes §1):

* ``OPT_d ≤ OPT ≤ OPT_d + λ_{d+1}``, because ``A_d ⪯ C ⪯ A_d + λ_{d+1}I``;
* by Cauchy-Schwarz ([APD14] eqs. (11)-(13)) ``OPT_d = max_{‖c‖=1} f(c)`` with
  ``f(c) = ‖top_k(|Vc|)‖²`` (sparse) or ``‖top_k((Vc)₊)‖²`` (nonneg): for a fixed
  direction c the inner problem is the rank-1 problem of [APD14] Prop. 3.1.

So ``OPT_d`` is attained on one of the supports ``top_k(Vc)`` as c runs over the
sphere, and these change only where two "curves" ``[Vc]_i`` meet: on the
hyperplanes ``(V_i ∓ V_j)ᵀc = 0`` (sparse) or ``(V_i − V_j)ᵀc = 0`` and
``V_iᵀc = 0`` (nonneg; the zero row of [APD14] Alg. 2).  This module enumerates
those supports exactly (d = 2 by an angular sweep, d ≥ 3 by Alg. 2's vertices),
or samples directions c on an ε-net ([APD14] Alg. 3).  Per support, the sparse
value is ``λmax(V_IᵀV_I)`` ([PDK13]); the nonnegative value is the cone-constrained
quadratic maximum of [APD14] Sec. 5 (:func:`max_quad_on_cone`).

What is exact and what is not
-----------------------------
* ``d = 1``: exact for ``OPT_1`` in O(n) ([APD14] Prop. 3.1).
* ``net=None``, ``d = 2``: exact ``OPT_2`` via the sweep (:func:`sweep_supports_2d`).
* ``net=None``, ``d ≥ 3``: exact ``OPT_d`` via Alg. 2 (:func:`vertex_supports`),
  O(n^{d+1}) time: for n up to a few hundred.
* ``net="grid"`` / ``net="random"``: ``opt_d`` is ``max_{c∈net} f(c) ≤ OPT_d``, and
  with the covering radius ε of the net (returned) the Lipschitz bound of
  [APD14] Sec. 6 gives ``OPT_d ≤ opt_d/(1−ε)²`` — hence the certificate
  ``OPT ≤ opt_d/(1−ε)² + λ_{d+1}``.  The grid's ε is proven (see
  :func:`grid_net`); a random net's ε is the *realised* covering radius of the
  sample, computed exactly (:func:`covering_radius`), not a probabilistic one.

Exactness is up to floating point: supports found at nearly coincident critical
angles are evaluated at the midpoint of each cell, and the sweep's pruning uses a
relative slack of 1e-10.  A certifier should add its own rounding margin.

The returned ``weights`` are a feasible point for C itself: the best few
candidates (by surrogate value) are renormalised on their supports against the
full C and the best is kept (:func:`certpca.solvers.renormalize.renormalize`).
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass
from itertools import combinations

import numpy as np

from ..errors import InputError
from ..problem import Problem
from .base import Run, Solver
from .renormalize import renormalize

__all__ = [
    "SpannogramResult",
    "spannogram",
    "surrogate_factor",
    "rank1_supports",
    "top_k_supports",
    "sweep_supports_2d",
    "vertex_supports",
    "max_quad_on_cone",
    "support_values",
    "grid_net",
    "random_net",
    "covering_radius",
]

_REL_TOL = 1e-10


@dataclass
class SpannogramResult:
    """Output of :func:`spannogram`.

    Attributes
    ----------
    weights : (n,) array
        Unit, at most k nonzeros (exactly k whenever the data allow it; for
        nonneg fewer can be optimal), ``≥ 0`` when nonneg.  The best candidate
        re-evaluated on the full C after renormalisation on its support.
    value : float
        ``weightsᵀ C weights`` on the full C (a lower bound on OPT).
    opt_d : float
        Exact methods: ``OPT_d`` of the rank-d surrogate ``A_d`` (the best
        candidate's ``xᵀA_d x``, a feasible value, so never above ``OPT_d``).
        Nets: ``max_{c ∈ net} f(c)``, with ``OPT_d ≤ opt_d/(1−ε)²``.
    lambda_next : float
        ``λ_{d+1}`` of C (clipped at 0; 0 beyond the rank).
    d : int
        Rank of the surrogate actually used (``min(d, rank C)``).
    method : str
        ``"exact"``, ``"net-random"`` or ``"net-grid"``.
    epsilon : float or None
        Covering radius (chordal, on the unit sphere of R^d) of the net; None
        for exact methods.
    n_candidates : int
        Number of distinct candidate supports considered.
    seconds : float
        Wall time.
    """

    weights: np.ndarray
    value: float
    opt_d: float
    lambda_next: float
    d: int
    method: str
    epsilon: float | None
    n_candidates: int
    seconds: float

    @property
    def upper_bound(self) -> float:
        """The data-dependent bound on OPT ([APD14] Sec. 2.1; notes §1).

        ``opt_d + λ_{d+1}`` (exact) or ``opt_d/(1−ε)² + λ_{d+1}`` (nets);
        ``inf`` when ``ε ≥ 1``.  No floating-point margin is added here.
        """
        if self.epsilon is None:
            return self.opt_d + self.lambda_next
        if self.epsilon >= 1:
            return math.inf
        return self.opt_d / (1 - self.epsilon) ** 2 + self.lambda_next


# --------------------------------------------------------------------- driver
def spannogram(problem: Problem, k: int, *, nonneg: bool = False, d: int = 2,
               net: str | None = None, epsilon: float = 0.1, samples: int | None = None,
               rng=None, n_refine: int = 16) -> SpannogramResult:
    """Spannogram (nonnegative) sparse PCA on the rank-d surrogate ([APD14] Alg. 1).

    Parameters
    ----------
    problem : Problem
        The covariance operator C (only ``eigh``, ``eigenvalues``, ``submatrix``
        and ``variance`` are used: no D × D array is formed).
    k : int
        Cardinality: at most k nonzeros.
    nonneg : bool
        Also require ``w ≥ 0``.
    d : int
        Rank of the surrogate ``A_d``.
    net : None, "grid" or "random"
        None: exact enumeration of candidate supports ([APD14] Alg. 1-2; d = 2 by
        the angular sweep).  "grid": a deterministic net of proven covering
        radius ≤ epsilon (:func:`grid_net`).  "random": [APD14] Alg. 3 with
        seeded uniform directions c and both signs ±c; the returned epsilon is
        the realised covering radius (:func:`covering_radius`).
    epsilon : float
        Target covering radius of a net (chordal distance on the unit sphere).
    samples : int, optional
        Net size: number of directions (random) or an upper limit on the number
        of grid points (the grid is then as fine as that allows, and its ε is
        reported).
    rng : numpy.random.Generator or int, optional
        Randomness for ``net="random"`` only.
    n_refine : int
        How many of the best candidates (by surrogate value) are renormalised on
        the full C before the best is returned.

    Returns
    -------
    SpannogramResult
    """
    t0 = time.perf_counter()
    k, d = _check(problem, k, d, net, epsilon, samples, n_refine)
    n = problem.dim
    k = min(k, n)
    V, lam_next = surrogate_factor(problem, d)
    d_eff = V.shape[1]
    eps_out = None
    method = "exact"
    if d_eff == 0:  # C = 0: every feasible vector is optimal
        w = np.zeros(n)
        w[:k] = 1 / math.sqrt(k)
        return SpannogramResult(w, problem.variance(w), 0.0, lam_next, 0, method, None, 1,
                                time.perf_counter() - t0)

    if d_eff == 1:
        supports, f_lb = top_k_supports(V[:, 0][None, :] * np.array([[1.0], [-1.0]]), k, nonneg)
        supports, first = np.unique(supports, axis=0, return_index=True)
        f_lb = f_lb[first]
        opt_net = None
    elif net is None:
        if d_eff == 2:
            supports, f_lb = sweep_supports_2d(V, k, nonneg)
        else:
            supports, f_lb = vertex_supports(V, k, nonneg)
        opt_net = None
    else:
        method = "net-" + net
        if net == "grid":
            C, eps_out = grid_net(d_eff, epsilon, nonneg, samples)
        else:
            C, eps_out = random_net(d_eff, epsilon, nonneg, samples, rng)
        supports, f_lb, opt_net = _net_supports(V, C, k, nonneg)

    # Per-support values on the surrogate ([PDK13]; [APD14] Sec. 5), then refine on C.
    exact = method == "exact"
    vals, xs, sups = support_values(V, supports, nonneg, f_lb=f_lb,
                                    keep=n_refine, exhaustive=exact)
    opt_d = float(vals[0]) if exact else float(opt_net)
    best_w, best_val = None, -np.inf
    for x in xs:
        w = renormalize(problem, x, np.flatnonzero(x), nonneg)
        val = problem.variance(w)
        if val > best_val:
            best_w, best_val = w, val
    return SpannogramResult(best_w, float(best_val), opt_d, lam_next, d_eff, method,
                            eps_out, int(len(supports)), time.perf_counter() - t0)


def _check(problem, k, d, net, epsilon, samples, n_refine):
    if not isinstance(problem, Problem):
        raise InputError("spannogram needs a certpca.problem.Problem; build one with "
                         "Problem.from_data(X) or Problem.from_covariance(C)")
    if int(k) != k or k < 1:
        raise InputError(f"k must be a positive integer, got {k!r}")
    if int(d) != d or d < 1:
        raise InputError(f"d must be a positive integer, got {d!r}")
    if net not in (None, "grid", "random"):
        raise InputError(f"net must be None (exact), 'grid' or 'random', got {net!r}")
    if net is not None and not (0 < epsilon < 2):
        raise InputError(f"epsilon must lie in (0, 2) (useful bounds need < 1), got {epsilon!r}")
    if samples is not None and (int(samples) != samples or samples < 1):
        raise InputError(f"samples must be a positive integer, got {samples!r}")
    if n_refine < 1:
        raise InputError(f"n_refine must be ≥ 1, got {n_refine!r}")
    return int(k), int(d)


def surrogate_factor(problem: Problem, d: int) -> tuple[np.ndarray, float]:
    """``V = [√λ₁v₁ … √λ_d v_d]`` ([APD14] eq. (7)) and ``λ_{d+1}`` (clipped at 0).

    Only eigenvalues above 1e-12·λ₁ enter V, so fewer than d columns come back
    when rank C < d (and then λ_{d+1} is the first one left out, ≈ 0).  Dropping nonpositive ones keeps ``xᵀCx ≤ xᵀA_d x + max(λ_{d+1}, 0)``
    valid even for an indefinite input.
    """
    vals, vecs = problem.eigh(d)
    # numerically zero eigenvalues (rank-deficient C) are left out of A_d; the
    # first one left out becomes λ_{d+1}, so OPT ≤ OPT_d + λ_{d+1} still holds
    keep = vals > (vals[0] * 1e-12 if len(vals) and vals[0] > 0 else 0.0)
    d_eff = int(np.argmin(keep)) if not keep.all() else len(vals)
    V = vecs[:, :d_eff] * np.sqrt(vals[:d_eff])
    ev = problem.eigenvalues()
    lam_next = float(max(ev[d_eff], 0.0)) if len(ev) > d_eff else 0.0
    return np.ascontiguousarray(V), lam_next


# ------------------------------------------------------------------- rank 1
def rank1_supports(v: np.ndarray, k: int, nonneg: bool) -> list[np.ndarray]:
    """The candidate supports of the rank-1 problem ``max (vᵀx)²`` ([APD14] Prop. 3.1).

    Sparse: the k largest ``|v_i|``.  Nonneg: ``I⁺_k(v)`` and ``I⁺_k(−v)``, the (at
    most) k largest positive entries of ``v`` and of ``−v`` (Def. 1); the optimum
    is ``x_I = ±v_I/‖v_I‖`` on the better one (eq. (9)).  O(n) by selection.
    """
    v = np.asarray(v, dtype=float)
    sets, _ = top_k_supports(np.vstack([v, -v]) if nonneg else v[None, :], k, nonneg)
    n = len(v)
    return [s[s < n] for s in sets]


def top_k_supports(Y: np.ndarray, k: int, nonneg: bool) -> tuple[np.ndarray, np.ndarray]:
    """Rank-1 supports for each row y of Y and ``f = ‖top_k‖²`` ([APD14] Prop. 3.1).

    Returns ``(S, f)``: S is (m, k) integer, each row sorted, padded with the
    sentinel n (= number of columns) when fewer than k entries qualify (nonneg:
    only positive entries count, Def. 1).
    """
    Y = np.atleast_2d(Y)
    m, n = Y.shape
    G = Y if nonneg else np.abs(Y)
    if k < n:
        idx = np.argpartition(-G, k - 1, axis=1)[:, :k]
    else:
        idx = np.broadcast_to(np.arange(n), (m, n)).copy()
    g = np.take_along_axis(G, idx, axis=1)
    if nonneg:
        pos = g > 0
        idx = np.where(pos, idx, n)
        g = np.where(pos, g, 0.0)
    f = np.einsum("ij,ij->i", g, g)
    idx = np.sort(idx, axis=1)
    if idx.shape[1] < k:
        idx = np.hstack([idx, np.full((m, k - idx.shape[1]), n)])
    return idx.astype(np.int64), f


# --------------------------------------------------------------- d = 2 sweep
def _interval_bounds(V1, V2, r, ta, tb, nonneg):
    """Min and max of the curves ``g_i(θ)`` over ``[ta, tb]`` (width < π).

    ``a_i(θ) = V_i1 cos θ + V_i2 sin θ = r_i cos(θ − φ_i)``; g = |a| (sparse) or
    a₊ (nonneg).  A peak ``r_i`` lies inside iff the derivative changes sign from
    + to −, a trough ``−r_i`` iff − to +, a zero iff a changes sign (at most one of
    each in an interval shorter than π).  Broadcasts over ``ta``/``tb``.
    """
    ca, sa, cb, sb = np.cos(ta), np.sin(ta), np.cos(tb), np.sin(tb)
    e0 = V1 * ca + V2 * sa
    e1 = V1 * cb + V2 * sb
    d0 = V2 * ca - V1 * sa
    d1 = V2 * cb - V1 * sb
    amax = np.where((d0 > 0) & (d1 < 0), r, np.maximum(e0, e1))
    if nonneg:
        return np.maximum(np.minimum(e0, e1), 0.0), np.maximum(amax, 0.0)
    amin = np.where((d0 < 0) & (d1 > 0), -r, np.minimum(e0, e1))
    lo = np.where(e0 * e1 <= 0, 0.0, np.minimum(np.abs(e0), np.abs(e1)))
    return lo, np.maximum(amax, -amin)


def _relevant(lo, hi, k, nonneg, slack):
    """Mask of curves that can be in the top-k somewhere in the interval.

    With ``L`` the k-th largest lower bound, at every θ of the interval at least
    k curves are ``≥ L``; a curve whose maximum is below L never enters.
    """
    m = lo.shape[-1]
    if m > k:
        L = -np.partition(-lo, k - 1, axis=-1)[..., k - 1:k]
        keep = hi >= L - slack
    else:
        keep = np.ones(hi.shape, bool)
    if nonneg:
        keep &= hi > 0
    return keep


def _critical_angles(VR, nonneg, period):
    """Angles in [0, period) of the hyperplanes among the rows VR ([APD14] Sec. 4.1)."""
    m = len(VR)
    iu, ju = np.triu_indices(m, 1)
    W = [VR[iu] - VR[ju]]
    W.append(VR if nonneg else VR[iu] + VR[ju])
    W = np.vstack(W)
    # wᵀc(θ) = w1 cos θ + w2 sin θ = 0  ⇔  θ = atan2(−w1, w2)  (mod π)
    th = np.mod(np.arctan2(-W[:, 0], W[:, 1]), np.pi)
    if nonneg:
        th = np.concatenate([th, th + np.pi])
    return np.mod(th, period)


def sweep_supports_2d(V: np.ndarray, k: int, nonneg: bool, *, leaf: int | None = None,
                      n_intervals: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """All top-k supports of the d = 2 spannogram ([APD14] Sec. 4.1; [PDK13] signed).

    Parametrise ``c(θ) = (cos θ, sin θ)``; each feature is a curve
    ``a_i(θ) = V_i1 cos θ + V_i2 sin θ`` and the candidate supports are the top-k
    sets of ``|a(θ)|`` over θ ∈ [0, π) (sparse) or of ``a(θ)₊`` over [0, 2π)
    (nonneg) on the cells between consecutive critical angles (eq. (14)).

    Instead of sorting all ~n² critical angles the sweep works interval by
    interval.  On an interval, the k-th largest *minimum* of the curves is a
    level L that k curves stay above throughout, so only curves whose *maximum*
    reaches L can ever be in the top-k there (:func:`_relevant`).  Intervals whose
    relevant set is still large are halved (the children's sets are subsets, so
    the cost shrinks geometrically).  In a leaf only the O(|R|²) crossings among
    the relevant curves are materialised, sorted, and the top-k set is read off
    at the midpoint of every cell.  Every cell of the full arrangement meets some
    leaf cell with the same top-k set, so the collection equals the one of
    Alg. 2 (tested against the all-pairs reference).

    Returns
    -------
    S : (m, k) int array
        Distinct supports, rows sorted, padded with n (nonneg, < k positives).
    f : (m,) array
        ``f(c) = ‖top_k‖²`` at a point of one cell with that support (a lower
        bound on the support's value).
    """
    V = np.asarray(V, dtype=float)
    n = V.shape[0]
    period = 2 * np.pi if nonneg else np.pi
    V1, V2 = V[:, 0].copy(), V[:, 1].copy()
    r = np.hypot(V1, V2)
    scale = float(r.max()) if n else 0.0
    if scale == 0:
        return top_k_supports(np.zeros((1, n)), k, nonneg)
    slack = _REL_TOL * scale
    if leaf is None:
        leaf = 48
    if n_intervals is None:
        n_intervals = 32
    if nonneg:
        n_intervals *= 2
    Vp = np.vstack([V, np.zeros((1, 2))])
    edges = np.linspace(0.0, period, n_intervals + 1)
    min_width = period * 1e-9

    out_S, out_f = [], []

    def leaf_cells(ta, tb, A, B):
        kb = k - len(A)
        VB = V[B]
        if kb > 0 and len(B) > kb or (nonneg and kb > 0 and len(B) > 0):
            th = _critical_angles(VB, nonneg, period) if len(B) > 1 else np.empty(0)
            if nonneg and len(B) == 1:
                th = np.mod(np.arctan2(-VB[:, 0], VB[:, 1]) + np.array([0, np.pi]), period)
            th = th[(th > ta) & (th < tb)]
            bnd = np.concatenate([[ta], np.sort(th), [tb]])
            mids = (bnd[:-1] + bnd[1:])[np.diff(bnd) > 0] / 2
            if mids.size == 0:
                mids = np.array([(ta + tb) / 2])
        else:
            mids = np.array([(ta + tb) / 2])
        if kb > 0 and len(B):
            Y = np.cos(mids)[:, None] * VB[:, 0] + np.sin(mids)[:, None] * VB[:, 1]
            SB, _ = top_k_supports(Y, kb, nonneg)
            Bm = np.append(B, n)                 # local sentinel len(B) -> global n
            SB = Bm[SB]
        else:
            SB = np.full((len(mids), max(kb, 0)), n)
        S = np.sort(np.hstack([np.broadcast_to(A, (len(SB), len(A))), SB]), axis=1)
        S = np.hstack([S, np.full((len(S), k - S.shape[1]), n)]) if S.shape[1] < k else S
        # consecutive cells mostly repeat a support: drop repeats early
        if len(S) > 1:
            new = np.ones(len(S), bool)
            new[1:] = np.any(S[1:] != S[:-1], axis=1)
            S, mids = S[new], mids[new]
        G = np.cos(mids)[:, None] * Vp[S, 0] + np.sin(mids)[:, None] * Vp[S, 1]
        G = np.maximum(G, 0.0) if nonneg else G
        out_S.append(S)
        out_f.append(np.einsum("ij,ij->i", G, G))

    def process(ta, tb, R, lo, hi):
        stack = [(ta, tb, R, lo, hi)]
        while stack:
            ta, tb, R, lo, hi = stack.pop()
            if lo is None:
                lo, hi = _interval_bounds(V1[R], V2[R], r[R], ta, tb, nonneg)
            keep = _relevant(lo, hi, k, nonneg, slack)
            R, lo, hi = R[keep], lo[keep], hi[keep]
            # sure-in: fewer than k others can ever exceed it on the interval
            hs = np.sort(hi)
            above = len(hs) - np.searchsorted(hs, lo - slack, side="left")
            sure = above <= k
            if nonneg:
                sure &= lo > slack
            A, B = R[sure], R[~sure]
            if len(B) <= leaf or tb - ta < min_width:
                leaf_cells(ta, tb, A, B)
            else:
                mid = (ta + tb) / 2
                stack.append((mid, tb, R, None, None))
                stack.append((ta, mid, R, None, None))

    # first level vectorised over intervals in chunks
    all_idx = np.arange(n)
    chunk = max(1, int(4e6 // max(n, 1)))
    for s in range(0, n_intervals, chunk):
        e = min(s + chunk, n_intervals)
        ta = edges[s:e][:, None]
        tb = edges[s + 1:e + 1][:, None]
        lo, hi = _interval_bounds(V1, V2, r, ta, tb, nonneg)
        keep = _relevant(lo, hi, k, nonneg, slack)
        for j in range(keep.shape[0]):
            R = all_idx[keep[j]]
            process(float(ta[j, 0]), float(tb[j, 0]), R, lo[j, keep[j]], hi[j, keep[j]])

    S = np.vstack(out_S)
    f = np.concatenate(out_f)
    S, inv = np.unique(S, axis=0, return_inverse=True)
    fb = np.full(len(S), -np.inf)
    np.maximum.at(fb, inv.ravel(), f)
    return S, fb


# ----------------------------------------------------- general d: Alg. 2
def _null_vectors(W: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Unit null vectors of each (d−1) × d block of W (m, d−1, d) and a mask of
    the non-degenerate blocks (rank d−1); degenerate rows are returned as 0."""
    c = _null_vectors_all(W)
    d = W.shape[2]
    nrm = np.linalg.norm(c, axis=1)
    ok = nrm > 1e-12 * max(float(np.abs(W).max()), 1e-300) ** (d - 1)
    c = np.where(ok[:, None], c / np.where(ok, nrm, 1.0)[:, None], 0.0)
    return c, ok


def _mask_to_supports(mask: np.ndarray, k: int) -> np.ndarray:
    """Rows of a boolean (m, n) mask with ≤ k Trues to sorted index rows padded with n."""
    m, n = mask.shape
    cnt = mask.sum(1)
    order = np.argsort(~mask, axis=1, kind="stable")[:, :k]
    if order.shape[1] < k:
        order = np.hstack([order, np.full((m, k - order.shape[1]), n)])
    order = np.where(np.arange(k)[None, :] < cnt[:, None], order, n)
    return np.sort(order, axis=1)


def vertex_supports(V: np.ndarray, k: int, nonneg: bool, *, leaf: int = 40,
                    max_work: float = 2e10) -> tuple[np.ndarray, np.ndarray]:
    """Candidate supports by [APD14] Alg. 2 (any d).

    Each vertex is a direction c where d curves tie: ``[Vc]_{i1} = ±[Vc]_{i2} = … ``
    (sparse, all sign patterns, [PDK13]) or ``[V̂c]_{i1} = … = [V̂c]_{id}`` over V
    with a zero row appended (nonneg; both c and −c).  When the tied group
    straddles the k-th/(k+1)-th boundary (the "ambiguous" case of Alg. 2, lines
    9-17) every way to complete the strictly larger entries from the tie is a
    candidate: these are the supports of the cells around the vertex.  For
    nonneg ties at level 0 any number of tied entries up to the free slots may
    join.  Probe directions (the axes of R^d) are added for arrangements with a
    region that has no such vertex (e.g. one support everywhere).

    Plain Alg. 2 costs O(n^{d+1}).  For d = 3 and n > 64 the sphere is cut
    into cube-sphere patches, refined (until ≤ ``leaf`` curves stay
    undecided) like the d = 2 sweep: on a patch (inside
    a cap of chordal radius ρ around c₀) every curve satisfies
    ``|[Vc]_i − [Vc₀]_i| ≤ ‖V_i‖ρ``; curves that cannot reach the k-th largest
    lower bound are dropped, curves that fewer than k others can ever exceed are
    always in, and only the vertices among the remaining "boundary" curves that
    fall in the patch are enumerated.  Every vertex lies in some patch, where
    its rank is decided exactly, so the collection is that of Alg. 2.

    Returns ``(S, f)`` as :func:`sweep_supports_2d` (f is −inf where unknown).
    """
    V = np.asarray(V, dtype=float)
    n, d = V.shape
    scale = float(np.abs(V).max()) if n else 0.0
    tol = 1e-9 * scale * math.sqrt(d)
    probes = np.vstack([np.eye(d), -np.eye(d)])
    out = [top_k_supports(probes @ V.T, k, nonneg)[0]]
    if d == 3 and n > 64:
        _patch_vertices_3d(V, k, nonneg, tol, leaf, out)
    else:
        rows = n + 1 if nonneg else n
        n_vert = math.comb(rows, d) * (2 if nonneg else 2 ** (d - 1))
        if n_vert * n > max_work:
            raise InputError(f"exact spannogram with d={d} on n={n} features needs "
                             f"~{n_vert * n:.1e} operations; use net='grid' (or d ≤ 3)")
        _enumerate_vertices(V, k, nonneg, tol, out)
    S = np.unique(np.vstack(out), axis=0)
    # f is known only for the probes; the cone solver does not need it
    return S, np.full(len(S), -np.inf)


def _enumerate_vertices(V, k, nonneg, tol, out, accept=None):
    """Alg. 2 over all d-subsets of rows of V, appending supports (rows of V, sentinel
    n) to ``out``; ``accept(C)`` keeps only some vertex directions (then ±c are
    both tried)."""
    n, d = V.shape
    rows = n + 1 if nonneg else n
    Vh = np.vstack([V, np.zeros((1, d))]) if nonneg else V
    signs = [np.ones(d - 1)] if nonneg else [np.array(s) for s in _sign_patterns(d - 1)]
    budget_rows = max(1, int(2e6 // max(n, 1)))
    for i1 in range(min(n, rows - d + 1)):
        tails = np.array(list(combinations(range(i1 + 1, rows), d - 1)),
                         dtype=np.int64).reshape(-1, d - 1)
        if len(tails) == 0:
            continue
        Cs, combos = [], []
        for s in signs:
            W = Vh[i1][None, None, :] - s[None, :, None] * Vh[tails]
            c, ok = _null_vectors(W)
            c = c[ok]
            combo = np.hstack([np.full((ok.sum(), 1), i1), tails[ok]])
            for sg in ((1.0, -1.0) if nonneg or accept is not None else (1.0,)):
                cc = sg * c
                if accept is not None:
                    m = accept(cc)
                    Cs.append(cc[m])
                    combos.append(combo[m])
                else:
                    Cs.append(cc)
                    combos.append(combo)
        Cm = np.vstack(Cs)
        Km = np.vstack(combos)
        for s0 in range(0, len(Cm), budget_rows):
            _vertex_batch(V, Cm[s0:s0 + budget_rows], Km[s0:s0 + budget_rows], k, nonneg,
                          tol, out)


def _patch_vertices_3d(V, k, nonneg, tol, leaf, out):
    """The patch-pruned Alg. 2 for d = 3 (see :func:`vertex_supports`)."""
    n = V.shape[0]
    r = np.linalg.norm(V, axis=1)
    slack = _REL_TOL * float(r.max())
    faces = [(ax, sg) for ax in range(3) for sg in ((1.0, -1.0) if nonneg else (1.0,))]
    split0 = 4
    stack = []
    for ax, sg in faces:
        g = np.linspace(-1, 1, split0 + 1)
        for a in range(split0):
            for b in range(split0):
                stack.append((ax, sg, g[a], g[a + 1], g[b], g[b + 1], np.arange(n)))

    def face_point(ax, sg, u, v):
        p = np.empty(np.broadcast(u, v).shape + (3,))
        others = [i for i in range(3) if i != ax]
        p[..., ax] = sg
        p[..., others[0]] = u
        p[..., others[1]] = v
        return p / np.linalg.norm(p, axis=-1, keepdims=True)

    while stack:
        ax, sg, u0, u1, v0, v1, R = stack.pop()
        c0 = face_point(ax, sg, (u0 + u1) / 2, (v0 + v1) / 2)
        corners = face_point(ax, sg, np.array([u0, u0, u1, u1]), np.array([v0, v1, v0, v1]))
        # the spherical quad is geodesically convex: its farthest point from c0 is a corner
        rho = float(np.max(np.linalg.norm(corners - c0, axis=1))) * (1 + 1e-12)
        y0 = V[R] @ c0
        spread = r[R] * rho
        if nonneg:
            lo, hi = np.maximum(y0 - spread, 0.0), np.maximum(y0 + spread, 0.0)
        else:
            lo, hi = np.maximum(np.abs(y0) - spread, 0.0), np.abs(y0) + spread
        keep = _relevant(lo, hi, k, nonneg, slack)
        R, lo, hi = R[keep], lo[keep], hi[keep]
        hs = np.sort(hi)
        sure = len(hs) - np.searchsorted(hs, lo - slack, side="left") <= k
        if nonneg:
            sure &= lo > slack
        A, B = R[sure], R[~sure]
        if len(B) > leaf and u1 - u0 > 1e-7:
            um, vm = (u0 + u1) / 2, (v0 + v1) / 2
            for a0, a1 in ((u0, um), (um, u1)):
                for b0, b1 in ((v0, vm), (vm, v1)):
                    stack.append((ax, sg, a0, a1, b0, b1, R))
            continue
        kb = k - len(A)
        # probes inside the patch (centre, corners) + Alg. 2 on the boundary curves
        P = np.vstack([c0, corners])
        local = []
        if kb > 0 and len(B):
            local.append(top_k_supports(P @ V[B].T, kb, nonneg)[0])
            others = [i for i in range(3) if i != ax]

            def accept(C, ax=ax, sg=sg, u0=u0, u1=u1, v0=v0, v1=v1, others=others):
                # c (or −c for sparse) on this patch of face (ax, sg), closed with slack
                t = C[:, ax] * sg
                e = 1e-9
                ok = t > 0
                ok &= np.all(np.abs(C) <= t[:, None] * (1 + e) + 1e-300, axis=1)
                u = C[:, others[0]] / np.where(ok, t, 1)
                v = C[:, others[1]] / np.where(ok, t, 1)
                return ok & (u >= u0 - e) & (u <= u1 + e) & (v >= v0 - e) & (v <= v1 + e)

            if len(B) + (1 if nonneg else 0) >= 3:
                _enumerate_vertices(V[B], kb, nonneg, tol, local, accept=accept)
            Bm = np.append(B, n)
            SB = np.vstack([Bm[s] for s in local])
        else:
            SB = np.full((1, max(kb, 0)), n, dtype=np.int64)
        S = np.hstack([np.broadcast_to(A, (len(SB), len(A))), SB])
        if S.shape[1] < k:
            S = np.hstack([S, np.full((len(S), k - S.shape[1]), n)])
        out.append(np.sort(S, axis=1))


def _sign_patterns(m):
    if m == 0:
        yield ()
        return
    for rest in _sign_patterns(m - 1):
        yield rest + (1.0,)
        yield rest + (-1.0,)


def _vertex_batch(V, C, K, k, nonneg, tol, out):
    """Supports of the cells around the vertices c (rows of C) tied on combos K."""
    n, d = V.shape
    Y = C @ V.T
    G = Y if nonneg else np.abs(Y)
    t = G[np.arange(len(C)), K[:, 0]]
    gt = (G > t[:, None] + tol)
    eq = np.abs(G - t[:, None]) <= tol
    n_gt = gt.sum(1)
    n_eq = eq.sum(1)
    zero_level = np.abs(t) <= tol
    if nonneg:
        valid = t >= -tol
        amb = valid & (n_gt < k) & (n_eq > 0) & (zero_level | (n_gt + n_eq > k))
    else:
        amb = (n_gt < k) & (n_gt + n_eq > k)
    for b in np.flatnonzero(amb):
        free = k - n_gt[b]
        E = np.flatnonzero(eq[b])
        base = gt[b]
        if nonneg and zero_level[b]:
            sizes = range(0, min(free, len(E)) + 1)
        else:
            sizes = [free]
        rows = []
        for sz in sizes:
            for j, sub in enumerate(combinations(E, sz)):
                if j >= 512:
                    break
                mrow = base.copy()
                mrow[list(sub)] = True
                rows.append(mrow)
        if rows:
            out.append(_mask_to_supports(np.array(rows), k))


# ------------------------------------------------------- per-support solvers
def max_quad_on_cone(R: np.ndarray) -> tuple[float, np.ndarray]:
    """``max ‖Rc‖²`` over unit c with ``Rc ≥ 0`` or ``Rc ≤ 0`` ([APD14] Sec. 5, (P_d)).

    ``R = V_I`` (|I| × d), ``Q = RᵀR``.  At a maximiser some set J of constraints
    is active (``R_J c = 0``) and, by the KKT conditions on the sphere restricted
    to ``null(R_J)``, c is an eigenvector of ``N_Jᵀ Q N_J`` lifted by an orthonormal
    null basis N_J; in general position |J| ≤ d − 1.  All such stationary points
    (both signs) are enumerated — O(|I|^{d−1}) faces × d eigenvectors, the active
    set recursion of Sec. 5 flattened — and the best feasible one is returned.

    Returns ``(value, c)``; value ``−inf`` and c = None if the cone is {0}.
    """
    R = np.asarray(R, dtype=float)
    R = R[np.any(R != 0, axis=1)]
    d = R.shape[1]
    if len(R) == 0:
        return 0.0, np.eye(d)[0]
    Q = R.T @ R
    cands = [np.linalg.eigh(Q)[1].T]
    m = len(R)
    for s in range(1, min(d, m + 1)):
        J = np.array(list(combinations(range(m), s)), dtype=np.int64)
        RJ = R[J]                                   # (nJ, s, d)
        if s == d - 1:
            N = _null_vectors_all(RJ)[:, :, None]   # (nJ, d, 1)
            cands.append(N[:, :, 0])
            continue
        _, sv, Vt = np.linalg.svd(RJ, full_matrices=True)
        N = np.transpose(Vt[:, s:, :], (0, 2, 1))   # (nJ, d, d-s)
        Qp = np.transpose(N, (0, 2, 1)) @ Q @ N
        _, Yv = np.linalg.eigh(Qp)
        Cc = N @ Yv                                 # (nJ, d, d-s)
        cands.append(np.transpose(Cc, (0, 2, 1)).reshape(-1, d))
    Cm = np.vstack(cands)
    nrm = np.linalg.norm(Cm, axis=1)
    Cm = Cm[nrm > 0] / nrm[nrm > 0, None]
    Y = R @ Cm.T                                    # (m, ncand)
    tol = 1e-10 * float(np.abs(R).max())
    pos = np.all(Y >= -tol, axis=0)
    neg = np.all(Y <= tol, axis=0)
    feas = pos | neg
    if not feas.any():
        return -np.inf, None
    vals = np.einsum("ij,ij->j", Y, Y)
    vals[~feas] = -np.inf
    j = int(np.argmax(vals))
    c = Cm[j] if pos[j] else -Cm[j]
    return float(vals[j]), c


def _null_vectors_all(W):
    """Null vectors for each (d−1) × d block, zero where degenerate."""
    m, s, d = W.shape
    if d == 2:
        return np.stack([-W[:, 0, 1], W[:, 0, 0]], axis=1)
    if d == 3:
        return np.cross(W[:, 0], W[:, 1])
    return np.linalg.svd(W, full_matrices=True)[2][:, -1, :]


def support_values(V: np.ndarray, S: np.ndarray, nonneg: bool, *, f_lb=None,
                   keep: int = 16, exhaustive: bool = True):
    """Best surrogate vectors on candidate supports, best first.

    Sparse ([PDK13]): on support I the best unit x is the top eigenvector of
    ``V_I V_Iᵀ`` with value ``λmax(V_IᵀV_I)`` (a d × d eigenproblem).
    Nonneg ([APD14] eq. (16), Sec. 5): ``x_I = V_I c/‖V_I c‖`` with c from
    :func:`max_quad_on_cone`.  Supports are visited by decreasing upper bound
    ``λmax(V_IᵀV_I)`` and skipped once it cannot beat the ``keep``-th best value
    found (branch and bound — still exact for the maximum).  With
    ``exhaustive=False`` (nets) only the ``4·keep`` supports with the largest
    ``f_lb`` are solved.

    Returns ``(values, xs, supports)`` for the best ≤ ``keep`` candidates, values
    being ``xᵀA_d x = ‖Vᵀx‖²`` of the returned feasible x.
    """
    V = np.asarray(V, dtype=float)
    n, d = V.shape
    S = np.atleast_2d(S)
    Vp = np.vstack([V, np.zeros((1, d))])
    VI = Vp[S]                                        # (m, k, d)
    G = np.einsum("mki,mkj->mij", VI, VI)
    ev, U = np.linalg.eigh(G)
    ub = ev[:, -1]
    if not nonneg:
        order = np.argsort(-ub)[:keep]
        xs, vals = [], []
        for j in order:
            y = VI[j] @ U[j, :, -1]
            x = np.zeros(n + 1)
            np.add.at(x, S[j], y)
            x = x[:n]
            nrm = np.linalg.norm(x)
            x = x / nrm if nrm > 0 else x
            vals.append(float(np.sum((V.T @ x) ** 2)))
            xs.append(x)
        o = np.argsort(-np.array(vals))
        return np.array(vals)[o], [xs[i] for i in o], S[order][o]
    if exhaustive:
        order = np.argsort(-ub)
    else:
        f = np.full(len(S), -np.inf) if f_lb is None else np.asarray(f_lb)
        order = np.argsort(-f)[:4 * keep]
    best = []   # (value, x, support)
    for j in order:
        # exact for the maximum once ub ≤ the best value; a few more fill `keep`
        if exhaustive and best and ub[j] <= best[0][0] and (len(best) >= keep
                                                             or ub[j] <= best[-1][0]):
            break
        valc, c = max_quad_on_cone(VI[j])
        if c is None:
            continue
        y = np.maximum(VI[j] @ c, 0.0)
        x = np.zeros(n + 1)
        np.add.at(x, S[j], y)
        x = x[:n]
        nrm = np.linalg.norm(x)
        if nrm == 0:
            continue
        x /= nrm
        val = float(np.sum((V.T @ x) ** 2))
        best.append((val, x, S[j]))
        best.sort(key=lambda t: -t[0])
        del best[keep:]
    if not best:
        x = np.zeros(n)
        x[0] = 1.0
        best = [(float(np.sum(V[0] ** 2)), x, np.array([0]))]
    return (np.array([b[0] for b in best]), [b[1] for b in best],
            [b[2] for b in best])


# ------------------------------------------------------------------- nets
def grid_net(d: int, epsilon: float, nonneg: bool, samples: int | None = None
             ) -> tuple[np.ndarray, float]:
    """A deterministic net on the unit sphere of R^d with proven covering radius.

    ``f`` is even in c for sparse PCA, so there the net need only cover the
    sphere up to sign: every u has ``min_{c∈C} min(‖u−c‖, ‖u+c‖) ≤ ε``; for
    nonneg it must cover the whole sphere.

    * d = 2: m equispaced angles, over [0, π) (sparse; ε = 2 sin(π/(4m))) or
      [0, 2π) (nonneg; ε = 2 sin(π/(2m))): a point is within half a spacing of
      a net angle and the chord of angle α is 2 sin(α/2).
    * d ≥ 3: the "cube-sphere" grid.  Each face {x : x_i = ±1} of the cube
      [−1, 1]^d is cut into m^{d−1} cells of side 2/m and their centres are
      projected radially onto the sphere (faces +e_i only for sparse, all 2d for
      nonneg).  Proof of ``ε = √(d−1)/m``: for unit u let i maximise |u_i| and
      ``p = u/|u_i|`` (the cube point on face ±e_i; replace u by −u for sparse
      if u_i < 0).  p lies in a cell whose centre q satisfies
      ``‖p − q‖ ≤ (1/m)√(d−1)`` (half the cell diagonal).  Both have norm ≥ 1,
      and the radial map ``x ↦ x/‖x‖`` on ``{‖x‖ ≥ 1}`` is the metric projection
      onto the unit ball, which is 1-Lipschitz, so
      ``‖u − q/‖q‖‖ ≤ ‖p − q‖ ≤ √(d−1)/m``.

    ``samples`` caps the number of points (the grid is coarsened to fit and its
    larger ε returned).  Returns ``(C, ε)`` with C of shape (m_points, d).
    """
    if d == 1:
        return np.array([[1.0], [-1.0]]) if nonneg else np.array([[1.0]]), 0.0
    if d == 2:
        span = 2 * np.pi if nonneg else np.pi
        div = 2 if nonneg else 4
        m = int(math.ceil(np.pi / (div * math.asin(min(epsilon, 2.0) / 2))))
        if samples is not None:
            m = min(m, int(samples))
        m = max(m, 1)
        th = np.arange(m) * (span / m)
        return np.column_stack([np.cos(th), np.sin(th)]), 2 * math.sin(np.pi / (div * m))
    faces = 2 * d if nonneg else d
    m = int(math.ceil(math.sqrt(d - 1) / epsilon))
    if samples is not None:
        m = min(m, int(math.floor((samples / faces) ** (1 / (d - 1)))))
    m = max(m, 1)
    ticks = -1 + (2 * np.arange(m) + 1) / m
    face_grid = np.stack(np.meshgrid(*([ticks] * (d - 1)), indexing="ij"), -1).reshape(-1, d - 1)
    pts = []
    for i in range(d):
        for sgn in ((1.0, -1.0) if nonneg else (1.0,)):
            P = np.insert(face_grid, i, sgn, axis=1)
            pts.append(P / np.linalg.norm(P, axis=1, keepdims=True))
    return np.vstack(pts), math.sqrt(d - 1) / m


def _cap_measure(alpha: float, d: int) -> float:
    """Normalised surface measure of a spherical cap of angular radius alpha ≤ π/2 in S^{d−1}."""
    from scipy.special import betainc
    if d == 2:
        return alpha / np.pi
    return 0.5 * float(betainc((d - 1) / 2, 0.5, math.sin(alpha) ** 2))


def random_net(d: int, epsilon: float, nonneg: bool, samples: int | None = None, rng=None,
               delta: float = 1e-3) -> tuple[np.ndarray, float]:
    """Seeded uniform directions c with their negatives ([APD14] Alg. 3, lines 4-7).

    Default size: ``M = ⌈ln(N/δ)/p⌉`` with ``N = (1 + 4/ε)^d`` (a volumetric bound
    on an ε/2-net; the count in the authors' code) and p the measure of a cap of
    chordal radius ε/2: then every cap of the ε/2-net holds a sample with
    probability ≥ 1 − δ, so the sample is an ε-net (notes §1, the rigorous
    version of the paper's O(ε^{−d} log n)).  The returned ε is not that
    probabilistic target but the realised covering radius of ``±C``, computed
    exactly by :func:`covering_radius`, so the bound built on it is
    deterministic.  Returns ``(C, ε)``; C holds both c and −c when nonneg.
    """
    gen = np.random.default_rng(rng)
    if samples is None:
        alpha = 2 * math.asin(min(epsilon / 4, 1.0))
        p = _cap_measure(alpha, d)
        N = (1 + 4 / epsilon) ** d
        samples = int(math.ceil(math.log(N / delta) / p))
    Z = gen.standard_normal((int(samples), d))
    Z /= np.linalg.norm(Z, axis=1, keepdims=True)
    eps = covering_radius(np.vstack([Z, -Z]))
    return (np.vstack([Z, -Z]) if nonneg else Z), eps


def covering_radius(P: np.ndarray) -> float:
    """Exact chordal covering radius ``max_{‖u‖=1} min_{p∈P} ‖u − p‖`` of unit vectors P.

    ``min_p ‖u−p‖² = 2 − 2 h(u)`` with h the support function of ``K = conv P``,
    and ``min_{‖u‖=1} h(u)`` is the distance from 0 to the boundary of K, i.e.
    the smallest facet offset of the hull (0 interior).  d = 2: half the largest
    angular gap.  Returns 2.0 if 0 is not interior (a hemisphere is uncovered).
    """
    P = np.asarray(P, dtype=float)
    d = P.shape[1]
    if d == 1:
        return 0.0 if (P > 0).any() and (P < 0).any() else 2.0
    if d == 2:
        th = np.sort(np.mod(np.arctan2(P[:, 1], P[:, 0]), 2 * np.pi))
        gaps = np.diff(np.concatenate([th, [th[0] + 2 * np.pi]]))
        g = float(gaps.max())
        return 2.0 if g >= np.pi else 2 * math.sin(g / 4)
    from scipy.spatial import ConvexHull
    hull = ConvexHull(P)
    r = float(np.min(-hull.equations[:, -1]))
    if r <= 0:
        return 2.0
    return math.sqrt(max(2 - 2 * r, 0.0))


def _net_supports(V, C, k, nonneg):
    """Rank-1 supports ``top_k(Vc)`` over the net and ``max_C f`` ([APD14] Alg. 3)."""
    n = V.shape[0]
    out_S, out_f = [], []
    step = max(1, int(4e6 // max(n, 1)))
    for s in range(0, len(C), step):
        Y = C[s:s + step] @ V.T
        S, f = top_k_supports(Y, k, nonneg)
        out_S.append(S)
        out_f.append(f)
    S = np.vstack(out_S)
    f = np.concatenate(out_f)
    opt = float(f.max())
    S, inv = np.unique(S, axis=0, return_inverse=True)
    fb = np.full(len(S), -np.inf)
    np.maximum.at(fb, inv.ravel(), f)
    return S, fb, opt


# ------------------------------------------------------------- refinement


# ------------------------------------------------------------------ plugin
class Spannogram(Solver):
    """The spannogram as a registry solver: the best vector found on the rank-d surrogate.

    Its by-products (OPT_d, λ_{d+1}, the net's ε) go to ``extras``, where the
    certification layer's bounds read them.
    """

    name = "spannogram"
    defaults = {"d": 2, "net": None, "epsilon": 0.1, "samples": None, "n_refine": 16}
    reference = ("Asteris, M., Papailiopoulos, D. S. & Dimakis, A. G. (2014). Nonnegative sparse PCA "
                 "with provable guarantees. Proceedings of the 31st International Conference on Machine "
                 "Learning; Papailiopoulos, D. S., Dimakis, A. G. & Korokythakis, S. (2013). Sparse PCA "
                 "through low-rank approximations. ICML.")

    def starts(self, problem, nonneg, rng, restarts):
        return [rng]  # the random net is the only random choice: seeded by the driver's rng

    def run(self, problem, k, nonneg, start, d=2, net=None, epsilon=0.1, samples=None, n_refine=16):
        res = spannogram(problem, k, nonneg=nonneg, d=d, net=net, epsilon=epsilon, samples=samples,
                         rng=start, n_refine=n_refine)
        extras = {"opt_d": res.opt_d, "lambda_next": res.lambda_next, "d": res.d, "net": res.method,
                  "epsilon": res.epsilon, "candidates": res.n_candidates}
        return Run(res.weights, np.flatnonzero(res.weights), res.n_candidates, True, extras)
