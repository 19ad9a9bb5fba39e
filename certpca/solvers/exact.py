"""Exact OPT(k, nonneg) for small D by best-first branch and bound over supports (the solver ``exact``
screens features first and then runs it: certpca/solvers/search.py).

Sparse (Moghaddam, Weiss & Avidan 2006): OPT = max_{|S| = k} λmax(C_SS).
Nonnegative: the maximiser lies in the relative interior of a face S of the
orthant (|S| ≤ k), where stationarity of wᵀCw − λ(wᵀw − 1) restricted to the
face makes it a strictly positive eigenvector of C_SS; so
OPT⁺ = max over |S| ≤ k of the eigenvalues of C_SS with a positive eigenvector.

A node (I, R) stands for the supports S with I ⊆ S ⊆ T = I ∪ R; it branches on
the feature j of R with the largest top-eigenvector entry of C_TT (include j /
exclude j).  Nodes are expanded best bound first, and
a node is pruned when a valid upper bound over its supports is ≤ the
incumbent·(1 + rtol) + eigen margin.  Node bounds, cheapest first, each with its
floating-point margin included (certpca/margins.py; docs/certification.md §1, §6), stopping at the
first that prunes:

* λmax(C_TT) (interlacing) + Weyl margin 8·n·eps·‖C_TT‖_F, and the k-sparse
  Gershgorin row bound (+ 4·n·eps relative); for w ≥ 0 also both on (C₊)_TT (Perron);
* the shifted rank-2 split of C_TT (as in threshold.py's refinement; Asteris
  et al. 2014, Thm. 1): OPT(Â) + λmax(C_TT − Â) with Â = Σ_{j≤2}(λ_j − λ_3)v_jv_jᵀ,
  OPT(Â) over the supports that contain I (:func:`rank2_node_bound`); for w ≥ 0 also
  the same split of (C₊)_TT;
* at the incumbent level L, the Schur complement of C_II: a (k − |I|)-sparse bound
  on M = C_RR + C_RI(L·I − C_II)⁻¹C_IR that is ≤ L proves λmax(C_SS) ≤ L for every
  support of the node (:func:`schur_prunes`).

Proof: every support is evaluated, in a pruned subtree, or in a node still
queued, so OPT ≤ max(evaluated λ̂ + margin, pruned and queued node bounds): the
``upper_bound`` returned (after :func:`safe`), also when a node or time limit
stops the search.  ``value`` is wᵀCw of a feasible w; the incumbent starts from
the best of greedy forward selection, the rank-2 spannogram and EM (:func:`incumbents`),
or of the vectors a caller passes.  With ``features`` F the root is F instead of every feature:
the proof then covers the supports inside F (what screening leaves, certification/screening.py).  For nonneg
the proof assumes eigenvectors are computed with the right signs for entries of
size > 1e-9 (true unless an eigenvalue of some C_SS is nearly repeated).
"""

from __future__ import annotations

import heapq
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import scipy.linalg

from ..clock import FLOP_RATE, Deadline, Stall, deadline
from ..errors import InputError
from ..margins import EPS, MARGIN_SLACK, gamma, gershgorin_columns, lmax_upper, safe, shifted_rank2, weyl_margin
from ..problem import Problem
from ..validation import check_cardinality
from .em import EM
from .renormalize import renormalize
from .spannogram import spannogram

#: operations of a quick pass (:func:`quick_pass_seconds`) per entry of C_FF (gather, partitions) and per
#: feature of F (its loop: a partition and a few vector operations each, Python's overhead most of it)
QUICK_OPS = 320
QUICK_FEATURE_OPS = 130_000

#: hard limit on the features the search starts from (its nodes form dense |T| × |T| eigenproblems)
MAX_DIM = 400

#: operations of a node bound (:func:`node_seconds`) per entry of each block it bounds (C_TT; for w ≥ 0 also
#: (C₊)_TT), and of its calls whatever the size (the rank-2 split's arcs, the Schur test's eigenproblems)
NODE_OPS = 1800
NODE_FIXED_OPS = 15_000_000

#: operations of evaluating one support S (|S| ≤ k: its eigenproblem and the incumbent's update)
SUPPORT_OPS = 2_500_000

#: operations of one candidate of the greedy start (:func:`greedy_step_seconds`) per squared size of its
#: eigenproblem, and per candidate whatever its size
GREEDY_OPS = 480
GREEDY_CALL_OPS = 200_000

#: an eigenvector entry ≥ −this counts as nonnegative (the sign assumption in the proof above)
SIGN_TOL = 1e-9

#: roundings per row sum of the node Gershgorin bound, per term
GERSH_ROUNDINGS = 4

#: relative slack on the rank-2 value (cosines of rounded angles), as threshold.OPT_D_SLACK
RANK2_SLACK = 1e-9

#: the rank-2 bound's arcs: initial number on the circle, halvings, most arcs kept per level
ARCS = 64
ARC_LEVELS = 16
ARC_MAX = 4096

#: arcs whose bound is within this relative tolerance of the best midpoint value are not refined
ARC_RTOL = 1e-4


@dataclass
class ExactResult:
    """Outcome of :func:`exact`: the optimum found and a safe upper bound proving it."""

    value: float  # wᵀCw of ``weights`` (feasible)
    weights: np.ndarray  # optimal unit vector (D,)
    support: list
    upper_bound: float  # safe upper bound on OPT from the search
    proven: bool  # search finished (upper_bound valid for OPT and ≈ value)
    nodes: int
    seconds: float
    k: int
    nonneg: bool
    info: dict = field(default_factory=dict)


def sparse_gershgorin(A: np.ndarray, k: int, positive: bool) -> float:
    """The k-sparse Gershgorin bound of the square block A, with GERSH_ROUNDINGS roundings per term."""
    n = A.shape[0]
    v = float(np.max(gershgorin_columns(A, np.arange(n), np.diag(A).copy(), k, positive)))
    return v + GERSH_ROUNDINGS * n * EPS * abs(v)


def top_eigs(A: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The top three eigenpairs of A (values ascending), all a node needs: λmax, the branching
    eigenvector and the rank-2 split (LAPACK's subset driver, backward stable as the full one)."""
    n = A.shape[0]
    if n <= 3:
        return np.linalg.eigh(A)
    return scipy.linalg.eigh(A, subset_by_index=[n - 3, n - 1], check_finite=False)


def lmax_bound(A: np.ndarray, lam: np.ndarray) -> float:
    """λ̂max(A) + Weyl margin, from A's computed eigenvalues ``lam`` (ascending)."""
    return float(lam[-1]) + weyl_margin(A.shape[0], float(np.linalg.norm(A))) * (1 + MARGIN_SLACK)


def rank2_node_bound(
    A: np.ndarray, m: int, k: int, nonneg: bool, target: float, eig: tuple[np.ndarray, np.ndarray]
) -> float:
    """Shifted rank-2 split over supports S with I ⊆ S, |S| ≤ k, of a block A = C_TT whose first m features are I;
    ``eig`` is A's top eigenpairs (:func:`_top_eig`: a node decomposes each block once).

    A = Â + (A − Â), Â = GᵀG = Σ_{j≤2}(λ_j − λ_3)v_jv_jᵀ ⪰ 0, so λmax(A_SS) ≤ λmax(Â_SS) + λmax(A − Â)
    (Asteris et al. 2014, Thm. 1, with λ_3 taken out of Â as in threshold.py).  With g_i the columns of G
    and c(θ) = (cos θ, sin θ), λmax(Â_SS) = max_θ Σ_{i∈S}(g_iᵀc)² (Cauchy–Schwarz, [APD14] eqs. 11–13;
    (g_iᵀc)₊² for w ≥ 0), and on an arc of half-width δ around θ₀, with p_i = g_iᵀc(θ₀) and q_i the
    component of g_i orthogonal to c(θ₀), |g_iᵀc(θ)| ≤ |p_i| + |q_i|δ, so (g_iᵀc)² ≤ h_i =
    min(‖g_i‖², (|p_i| + |q_i|δ)²) (p_i₊ for w ≥ 0) and the max over the arc is
    ≤ Σ_{i∈I} h_i + top_{k−m}(h_i, i ∈ R).  Arcs are halved while their
    bound exceeds both ``target`` − λmax(A − Â) and the best arc midpoint's value (a lower bound)
    by more than ARC_RTOL.  Validity: the max over arcs × (1 + 1e-9) + 16·eps·Σ‖g_i‖² (rounded angles and cosines);
    λmax(A − Â) with its Weyl and forming margins (:func:`~certpca.certification.numerics.shifted_rank2`).
    """
    n = A.shape[0]
    if n < 4:
        return np.inf
    G, R, form = shifted_rank2(A, *eig)
    lam_r = lmax_upper(R, form)[0]
    goal = target - lam_r
    norm2 = np.sum(G * G, axis=0)
    g2 = float(np.sum(norm2))
    period = 2 * np.pi if nonneg else np.pi
    kk = min(k - m, n - m)

    def arc_values(mid: np.ndarray, half: float) -> tuple[np.ndarray, np.ndarray]:
        """(upper bound on each arc, value at its midpoint)."""
        cos, sin = np.cos(mid), np.sin(mid)
        p = G[0][:, None] * cos + G[1][:, None] * sin  # g_iᵀc(θ₀)
        q = np.abs(G[1][:, None] * cos - G[0][:, None] * sin)  # |g_i × c(θ₀)|
        if nonneg:
            p = np.maximum(p, 0.0)
            near = np.maximum(p + q * half, 0.0)
        else:
            p = np.abs(p)
            near = p + q * half
        out = []
        for h in (np.minimum(near * near, norm2[:, None]), p * p):
            top = np.partition(h[m:], n - m - kk, axis=0)[n - m - kk :].sum(axis=0) if kk > 0 else 0.0
            out.append(h[:m].sum(axis=0) + top)
        return out[0], out[1]

    half = period / (2 * ARCS)
    mid = (np.arange(ARCS) + 0.5) * 2 * half
    done, low_best = -np.inf, -np.inf
    for level in range(ARC_LEVELS):
        ub, low = arc_values(mid, half)
        low_best = max(low_best, float(np.max(low)))
        open_ = ub > max(goal, low_best * (1 + ARC_RTOL))  # the others need no refining
        done = max(done, float(np.max(ub[~open_], initial=-np.inf)))
        if not open_.any():
            break
        if level == ARC_LEVELS - 1 or 2 * open_.sum() > ARC_MAX:
            done = max(done, float(np.max(ub[open_])))
            break
        half /= 2
        mid = np.concatenate([mid[open_] - half, mid[open_] + half])
    return done * (1 + RANK2_SLACK) + 16 * EPS * g2 + lam_r


def schur_matrix(A: np.ndarray, m: int, level: float) -> tuple[np.ndarray, float] | None:
    """M̂ ≈ M = C_RR + C_RI(L·I − C_II)⁻¹C_IR for a block A = C_TT whose first m features are I, L = ``level``,
    and τ, twice a bound on ‖M − M̂‖₂ (:func:`schur_prunes` derives it); None when L is not safely
    above λmax(C_II).  With m = 0, M = C_RR exactly and τ = 0."""
    if m == 0:
        return A, 0.0
    CII, CIR = A[:m, :m], A[:m, m:]
    alpha, U = np.linalg.eigh(CII)
    e = weyl_margin(m, float(np.linalg.norm(CII)))
    gap = level - float(alpha[-1])
    if gap <= 3 * e:
        return None
    Z = (U.T @ CIR) / np.sqrt(level - alpha)[:, None]
    CRR = A[m:, m:]
    M = CRR + Z.T @ Z
    z2, c2, gm = float(np.sum(Z * Z)), float(np.sum(CIR * CIR)), gamma(m + 8)
    err = c2 * (e / ((gap - e) * (gap - 2 * e)) + 2 * gm / (gap - e)) + 2 * gm * z2
    return M, 2 * (err + EPS * (float(np.linalg.norm(CRR)) + z2))


def schur_prunes(
    A: np.ndarray,
    m: int,
    t: int,
    level: float,
    nonneg: bool,
    *,
    cheap_only: bool = False,
    extra: Callable[[np.ndarray, int, bool, float], bool] | None = None,
) -> bool:
    """True when wᵀAw ≤ ``level`` for every unit w supported in some S = I ∪ J (J ⊆ R, |J| ≤ t; w ≥ 0
    when ``nonneg``) of a block A = C_TT whose first m features are I.

    Schur complement: with L = level > λmax(C_II), min over w_I of wᵀ(L·I − C)w = w_Jᵀ(L·I − M_JJ)w_J
    for M = C_RR + C_RI(L·I − C_II)⁻¹C_IR, so it suffices that a t-sparse bound on M (λmax, Gershgorin,
    the rank-2 split; for w ≥ 0 their nonnegative forms, w_J ≥ 0) is ≤ L.  M is formed as C_RR + ZᵀZ,
    Z = diag(L − α)^{-½}UᵀC_IR from C_II = UΛUᵀ (:func:`schur_matrix`).  Validity: the eigensolver's
    backward error e = 8·m·eps·‖C_II‖_F (Weyl) moves the inverse by ≤ e/((g − e)(g − 2e)), g = L − λ̂max(C_II)
    (so the true gap is ≥ g − e), and U's loss of orthogonality and the products by ≤ 2γ_{m+8}/(g − e), each
    times ‖C_IR‖_F²; forming ZᵀZ adds 2γ_{m+8}·‖Z‖_F², the sum eps·(‖C_RR‖_F + ‖Z‖_F²); twice the total,
    τ, is required between the bound on M̂ (with its own margins) and L, since |wᵀ(M − M̂)w| ≤ ‖M − M̂‖₂.
    The Gershgorin bound (no eigenproblem) is tried first; ``cheap_only`` stops there.  ``extra(M̂, t,
    nonneg, goal)``, tried last, is a further test that must hold only when a valid t-sparse bound on M̂
    (with its own margins) is ≤ goal (screening passes the threshold family, certification/screening.py).
    """
    formed = schur_matrix(A, m, level)
    if formed is None:
        return False
    M, tau = formed
    goal = level - tau
    n = M.shape[0]
    if n > t and sparse_gershgorin(M, t, nonneg) <= goal:
        return True
    if cheap_only:
        return False
    eig = top_eigs(M)
    ub = lmax_bound(M, eig[0])
    if nonneg:
        Mp = np.maximum(M, 0.0)
        ub = min(ub, lmax_bound(Mp, top_eigs(Mp)[0]))
    if n <= t or ub <= goal:
        return ub <= goal
    return rank2_node_bound(M, 0, t, nonneg, goal, eig) <= goal or (extra is not None and extra(M, t, nonneg, goal))


def quick_pass(C: np.ndarray, F: list, k: int, level: float) -> list:
    """The features of F the screening lemma (certpca/solvers/search.py) keeps at ``level`` for supports of at
    most k features inside F, by one pass of an O(|F|) test per feature, M never formed: by
    |M_aj| ≤ |C_aj| + |c_a||c_j|/g, the (k − 1)-sparse Gershgorin bound of M is ≤ max_{j≠i} [C_jj + c_j²/g
    + T_j + |c_j|·S/g], with T_j = top_{k−2}(|C_aj|, a ≠ j) and S = top_{k−2}(|c_a|) taken over all of F
    (more terms only raise it; valid for w ≥ 0 too), plus γ_{k+7}·(|C_jj| + the nonnegative rest) for the
    roundings of its sums, products and the division by the rounded g.  On pbmc ``--scale`` k = 10 it
    removes 737 of the 745 features the Gershgorin test on the formed M removes, in 0.06 s instead of 46 s."""
    idx = np.asarray(F, dtype=np.intp)
    A = np.abs(C[np.ix_(idx, idx)])
    np.fill_diagonal(A, 0.0)
    d = np.diag(C)[idx]
    t, n = k - 1, len(idx)
    r = min(t - 1, n - 1)
    T = np.partition(A, n - r, axis=0)[n - r :].sum(axis=0) if r > 0 else np.zeros(n)
    g_margin = gamma(k + 7)
    keep = []
    for p, i in enumerate(F):
        g = level - d[p]
        if not g > 0 or n == 1:
            keep.append(i)
            continue
        c = A[:, p]
        S = float(np.partition(c, n - r)[n - r :].sum()) if r > 0 else 0.0
        rest = c * c / g + T + c * (S / g)
        b = d + rest + g_margin * (np.abs(d) + rest)
        b[p] = -np.inf
        if not float(np.max(b)) <= level:
            keep.append(i)
    return keep


def node_screen(A: np.ndarray, m: int, k: int, level: float, work: Deadline | None = None) -> list[int] | None:
    """Positions (in R, 0-based) of the candidates a node (I, R) keeps, A = C_TT with I first (m = |I|): the
    screening lemma (certpca/solvers/search.py) on the node's Schur matrix M of C_II at ``level``.

    Eliminating w_I (over the reals: for w ≥ 0 no lower) leaves L‖w‖² − wᵀCw ≥ w_Rᵀ(L·I − M)w_R, and
    ‖M − M̂‖₂ ≤ τ/2 (:func:`schur_matrix`), so w_Rᵀ(L·I − M)w_R ≥ w_Rᵀ((L − τ)·I − M̂)w_R; the lemma on M̂ at
    level L − τ with supports of at most k − m features of R (:func:`quick_pass`, margins its own; passes
    repeated while one removes a candidate) then removes every j of R that no support S with I ∪ {j} ⊆ S ⊆ T,
    |S| ≤ k, and λmax(C_SS) > L contains.  None when L is not safely above λmax(C_II).

    ``work`` is charged what it does: forming M, 2m operations per entry of C_RR, and each pass at its size
    (:func:`quick_pass_seconds`; :func:`~certpca.solvers.search.screen` charges its passes alike)."""
    n = A.shape[0] - m
    if work is not None:
        work.charge(2 * m * n**2 / FLOP_RATE)
    formed = schur_matrix(A, m, level)
    if formed is None:
        return None
    M, tau = formed
    keep = list(range(n))
    while len(keep) > 1:
        if work is not None:
            work.charge(quick_pass_seconds(len(keep)))
        left = quick_pass(M, keep, k - m, level - tau)
        if len(left) == len(keep):
            break
        keep = left
    return keep


def quick_pass_seconds(features: int) -> float:
    """Estimated seconds of one :func:`quick_pass` over ``features`` features: ``QUICK_OPS`` per entry of their
    block and ``QUICK_FEATURE_OPS`` per feature.  Calibrated at one BLAS thread, load average 1.6 on the 2-core
    bench machine: 0.12 / 0.40 / 1.7 / 6.9 / 44 CPU ms at 10 / 30 / 100 / 300 / 1000 features, model 0.14 / 0.42
    / 1.6 / 6.8 / 45 ms (at 2308, khan, 0.39 s against 0.20 s: the block no longer fits the cache)."""
    return (QUICK_OPS * features**2 + QUICK_FEATURE_OPS * features) / FLOP_RATE


def greedy_step_seconds(candidates: int, size: int) -> float:
    """Estimated seconds of one step of the search's greedy start: ``candidates`` eigenvalue problems of
    ``size`` × ``size`` (``GREEDY_OPS`` per squared size, ``GREEDY_CALL_OPS`` each).  Calibrated at one BLAS
    thread, load average 0.6, on CBCL (361 features): k = 60 / 120 / 180 took 1.8 / 9.4 / 22.3 CPU s before the
    first node (the incumbents and the root's bound included), the model's greedy 1.5 / 8.3 / 22.3 s."""
    return candidates * (GREEDY_OPS * size**2 + GREEDY_CALL_OPS) / FLOP_RATE


def node_seconds(features: int, nonneg: bool = False) -> float:
    """Estimated seconds of one node bound (:func:`exact`'s ``node_bound``) on a block of ``features`` features,
    the node's own size after node screening (a :class:`certpca.clock.Work` counts it): ``NODE_OPS`` per entry
    of each block it bounds (C_TT, and for w ≥ 0 also (C₊)_TT) and ``NODE_FIXED_OPS`` per call.

    Calibrated against the CPU seconds of 2,330 node bounds (one BLAS thread, load average 1.4–2.1 on the
    2-core bench machine; the searches after the solver's screening on CBCL k = 10, 20 signed and w ≥ 0, CBCL
    ``--scale`` k = 10, LRS k = 20, 40, LRS ``--scale`` k = 10, 20, LRS k = 10 w ≥ 0): signed 0.92 / 1.8 / 4.1 /
    9.5 / 21 ms at a mean |T| of 30 / 58 / 98 / 200 / 326, model 1.7 / 2.1 / 3.2 / 8.7 / 20 ms; w ≥ 0 1.1 /
    2.9 / 7.4 / 16 / 38 ms at 30 / 59 / 113 / 200 / 326, model 1.8 / 2.8 / 6.1 / 16 / 40 ms.  Before, every
    node was charged 5000·|root|², whatever node screening left of it: 2.4× the CPU seconds of CBCL k = 20."""
    return (NODE_OPS * (2 if nonneg else 1) * features**2 + NODE_FIXED_OPS) / FLOP_RATE


def exact(
    problem,
    k: int,
    nonneg: bool = False,
    *,
    features=None,
    starts: list[np.ndarray] | None = None,
    max_dim: int = MAX_DIM,
    node_limit: int = 5_000_000,
    time_limit: Deadline | float | None = None,
    rtol: float = 1e-12,
    screen_nodes: bool = True,
    stall: tuple[float, float] | None = None,
) -> ExactResult:
    """Exact OPT by best-first branch and bound (at most ``max_dim`` features at the root, dense C).

    ``features``: the root's features (default all): the proof covers supports inside them.
    ``starts``: feasible vectors (length D) for the incumbent instead of :func:`incumbents`.
    Returns an :class:`ExactResult`; ``proven`` is False when a node or time
    limit (seconds, or a Deadline, on the budget clock :mod:`certpca.clock`; a :class:`~certpca.clock.Work`
    is charged what each node does at its own size: :func:`node_seconds` for each child it bounds, ``SUPPORT_OPS``
    for each support it evaluates, and its node screening) stopped the search
    (``upper_bound`` is then still valid: the largest
    bound of the nodes left).  The incumbent, the node bounds and the proof's
    running maximum are shared by closures over one search; the proof (module
    docstring) reads best in one place.  An InputError when the root has more than ``max_dim`` features.
    ``screen_nodes``: screen each child's candidates first (:func:`node_screen`; off only to measure what it saves).
    ``stall``: (window, rtol): stop, as at the time limit, once the bound (the largest of the nodes left) has
    fallen by less than rtol (relative) over the last window seconds of the time limit's work
    (:class:`~certpca.clock.Stall`; for a caller that needs a bound, not the proof).
    """
    t0 = time.perf_counter()
    stop_at = deadline(time_limit)
    D = problem.dim
    root: list[int] = list(range(D)) if features is None else sorted(int(i) for i in features)
    if len(root) > max_dim:
        raise InputError.bad_argument(
            "features", f"are {len(root)}, more than the exact search's limit of {max_dim}; use another method"
        )
    k = check_cardinality(k, D)
    C = problem.dense()
    Cp = np.maximum(C, 0.0)
    normC = float(np.linalg.norm(C))
    margin = (weyl_margin(D, normC) + EPS * normC) * (1 + MARGIN_SLACK)

    best_val, best_w = -np.inf, np.zeros(D)
    ub_seen = -np.inf  # max of evaluated λ̂ + margin and pruned node bounds
    screened_out = 0  # candidates node screening removed

    def take(w: np.ndarray) -> None:
        nonlocal best_val, best_w
        if not np.any(w):
            return
        w = w / np.linalg.norm(w)
        val = float(w @ C @ w)
        if val > best_val:
            best_val, best_w = val, w

    def consider(S: list) -> None:
        """Evaluate the support S exactly: its top (for nonneg: top positive) eigenpair."""
        nonlocal ub_seen
        vals, vecs = np.linalg.eigh(C[np.ix_(S, S)])
        for j in range(len(S) - 1, -1, -1):
            vec = vecs[:, j] if vecs[:, j].sum() >= 0 else -vecs[:, j]
            if not nonneg or np.min(vec) >= -SIGN_TOL:
                ub_seen = max(ub_seen, vals[j] + margin)
                w = np.zeros(D)
                w[S] = np.maximum(vec, 0.0) if nonneg else vec
                take(w)
                return  # eigenvalues descending: the first (positive) one is the best

    def target() -> float:
        return best_val * (1 + rtol) + margin

    def node_bound(I: list, R: list, parent: float) -> tuple[float, int]:
        """(valid bound over the supports of node (I, R), the feature of R to branch on)."""
        T = I + R
        A = C[np.ix_(T, T)]
        eig_A = top_eigs(A)
        b = min(parent, lmax_bound(A, eig_A[0]), sparse_gershgorin(A, k, nonneg))
        v = eig_A[1][:, -1]
        if nonneg:  # wᵀCw ≤ wᵀC₊w for w ≥ 0: the same bounds on C₊, whose eigenvector branches
            P = Cp[np.ix_(T, T)]
            eig_P = top_eigs(P)
            b = min(b, lmax_bound(P, eig_P[0]), sparse_gershgorin(P, k, True))
            v = eig_P[1][:, -1]
        j = R[int(np.argmax(np.abs(v[len(I) :])))]
        if b > target() and (len(T) > k or nonneg):
            b = min(b, rank2_node_bound(A, len(I), k, nonneg, target(), eig_A))
        if b > target() and nonneg:
            b = min(b, rank2_node_bound(P, len(I), k, True, target(), eig_P))
        if b > target() and I and schur_prunes(A, len(I), k - len(I), target(), nonneg):
            b = target()
        return b, j

    def screened(I: list, R: list) -> list:
        """R without the candidates :func:`node_screen` removes at the node (I, R) at target(): the supports
        it leaves out are ≤ target(), which joins the proof's running maximum."""
        nonlocal ub_seen, screened_out
        level = target()
        keep = node_screen(C[np.ix_(I + R, I + R)], len(I), k, level, stop_at)
        if keep is None or len(keep) == len(R):
            return R
        ub_seen = max(ub_seen, level)
        screened_out += len(R) - len(keep)
        return [R[p] for p in keep]

    # incumbent: greedy forward selection over the root, charged step by step and stopped with the search's
    # time (its O(k·D) eigenproblems took 22 s at CBCL k = 180: any S it reached is feasible), and the starts
    S: list[int] = []
    for _ in range(min(k, len(root))):
        if stop_at.passed():
            break
        cand = [j for j in root if j not in S]
        stop_at.charge(greedy_step_seconds(len(cand), len(S) + 1))
        vals = [np.linalg.eigvalsh((Cp if nonneg else C)[np.ix_(S + [j], S + [j])])[-1] for j in cand]
        S.append(cand[int(np.argmax(vals))])
        if nonneg:
            consider(sorted(S))
    if S:
        consider(sorted(S))
    for w in incumbents(problem, k, nonneg) if starts is None else starts:
        take(np.asarray(w, dtype=float))
    consider(np.flatnonzero(best_w).tolist())

    nodes, count = 0, 0
    stopped = False
    heap: list[tuple[float, int, list[int], list[int], int]] = []  # (−bound, tie-break, I, R, branch feature)
    if len(root) <= k and not nonneg:
        consider(root)
    else:
        b0, j0 = node_bound([], root, np.inf)
        heap.append((-b0, 0, [], root, j0))
    stalled = None if stall is None else Stall(stop_at, np.inf, np.inf, *stall)
    while heap:
        negb, _, I, R, j = heapq.heappop(heap)
        if -negb <= target():
            ub_seen = max(ub_seen, -negb)
            continue
        if nodes >= node_limit or stop_at.passed() or (stalled is not None and stalled.seen(max(-negb, ub_seen))):
            stopped = True
            ub_seen = max(ub_seen, -negb)  # the largest bound of the nodes left
            break
        nodes += 1
        for I2 in (I + [j], I):
            R2 = [i for i in R if i != j]
            if nonneg and len(I2) > len(I):
                stop_at.charge(SUPPORT_OPS / FLOP_RATE)
                consider(I2)
            if screen_nodes and R2 and len(I2) < k and (nonneg or len(I2) + len(R2) > k):
                R2 = screened(I2, R2)
            T2 = I2 + R2
            if not nonneg and (len(I2) == k or len(T2) <= k):
                stop_at.charge(SUPPORT_OPS / FLOP_RATE)
                consider(I2 if len(I2) == k else T2)
                continue
            if nonneg and (len(I2) == k or not R2):
                continue  # its only support, I2, is evaluated (or, R2 screened empty, a pruned one)
            stop_at.charge(node_seconds(len(T2), nonneg))
            b, j2 = node_bound(I2, R2, -negb)
            if b <= target():
                ub_seen = max(ub_seen, b)
                continue
            count += 1
            heapq.heappush(heap, (-b, count, I2, R2, j2))

    upper = safe(max(ub_seen, best_val))
    return ExactResult(
        value=best_val,
        weights=best_w,
        support=np.flatnonzero(best_w).tolist(),
        upper_bound=upper,
        proven=(not stopped),
        nodes=nodes,
        seconds=time.perf_counter() - t0,
        k=k,
        nonneg=nonneg,
        info={"rtol": rtol, "open_nodes": len(heap), "features": len(root), "screened": screened_out},
    )


def incumbents(problem: Problem, k: int, nonneg: bool) -> list[np.ndarray]:
    """Feasible starting vectors for the search: the rank-2 spannogram's and EM's from its own starts
    (each refitted on its support), as the registry solvers find them; for w ≥ 0 also the signed
    spannogram's vector when it is one-signed (on pbmc ``--scale`` k = 10 it is the optimum, which the
    nonnegative solvers miss by 9%)."""
    found = [spannogram(problem, k, nonneg=nonneg, d=min(2, problem.dim)).weights]
    if nonneg:
        signed = spannogram(problem, k, nonneg=False, d=min(2, problem.dim)).weights
        if np.all(signed >= 0) or np.all(signed <= 0):
            found.append(np.abs(signed))
    em = EM()
    rng = np.random.default_rng(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for start in em.starts(problem, nonneg, rng, 10 if nonneg else 0):
            run = em.run(problem, k, nonneg, start, **em.defaults)
            if run.weights.any():
                found.append(renormalize(problem, run.weights, run.support, nonneg)[0])
    return found
