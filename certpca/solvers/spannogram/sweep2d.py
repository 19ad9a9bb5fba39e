"""Exact rank-2 spannogram: every top-k support of ``c(θ) ↦ Vc(θ)`` by an angular sweep.

[APD14] Sec. 4.1 (nonneg) and [PDK13] (signed): with d = 2 the candidate
supports are the top-k sets on the cells between consecutive critical angles;
this module finds all of them without sorting all ~n² angles (see
:func:`sweep_supports_2d`).
"""

from __future__ import annotations

import numpy as np

from ...clock import Deadline
from .topk import REL_TOL, relevant_curves, subsets, top_k_supports

#: default number of curves a leaf interval may leave undecided before its crossings are sorted
SWEEP_LEAF = 48

#: default number of first-level intervals over [0, π) (doubled over [0, 2π) for nonneg)
SWEEP_INTERVALS = 32

#: intervals narrower than this × the period are not halved further (their crossings are sorted)
MIN_WIDTH = 1e-9

#: the first level is vectorised in chunks of about this many curve-interval pairs
CHUNK_ENTRIES = 4_000_000

#: estimated CPU seconds of one interval step of the sweep, what it charges to a work allotment
#: (:class:`certpca.clock.Work`): leukemia's second nonnegative component at k = 50 (``--log2 20``) took
#: 531,792 steps in 122 CPU s on one BLAS thread, the first took 6,329
STEP_SECONDS = 2.3e-4


class _AboveTarget(Exception):
    """A cell's value exceeded the sweep's ``target``: the rest of the enumeration is not needed."""


def _interval_bounds(V1, V2, r, ta, tb, nonneg: bool) -> tuple[np.ndarray, np.ndarray]:
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


def _critical_angles(VR: np.ndarray, nonneg: bool, period: float) -> np.ndarray:
    """Angles in [0, period) of the hyperplanes among the rows VR ([APD14] Sec. 4.1)."""
    pairs = subsets(len(VR), 2)
    iu, ju = pairs[:, 0], pairs[:, 1]
    W = np.vstack([VR[iu] - VR[ju], VR if nonneg else VR[iu] + VR[ju]])
    # wᵀc(θ) = w1 cos θ + w2 sin θ = 0  ⇔  θ = atan2(−w1, w2)  (mod π)
    th = np.mod(np.arctan2(-W[:, 0], W[:, 1]), np.pi)
    if nonneg:
        th = np.concatenate([th, th + np.pi])
    return np.mod(th, period)


def sweep_supports_2d(
    V: np.ndarray,
    k: int,
    nonneg: bool,
    *,
    leaf: int | None = None,
    n_intervals: int | None = None,
    deadline: Deadline | None = None,
    target: float | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """All top-k supports of the d = 2 spannogram ([APD14] Sec. 4.1; [PDK13] signed).

    Parametrise ``c(θ) = (cos θ, sin θ)``; each feature is a curve
    ``a_i(θ) = V_i1 cos θ + V_i2 sin θ`` and the candidate supports are the top-k
    sets of ``|a(θ)|`` over θ ∈ [0, π) (sparse) or of ``a(θ)₊`` over [0, 2π)
    (nonneg) on the cells between consecutive critical angles (eq. (14)).

    Instead of sorting all ~n² critical angles the sweep works interval by
    interval.  On an interval, the k-th largest *minimum* of the curves is a
    level L that k curves stay above throughout, so only curves whose *maximum*
    reaches L can ever be in the top-k there (:func:`~.topk.relevant_curves`).  Intervals whose
    relevant set is still large are halved (the children's sets are subsets, so
    the cost shrinks geometrically).  In a leaf only the O(|R|²) crossings among
    the relevant curves are materialised, sorted, and the top-k set is read off
    at the midpoint of every cell.  Every cell of the full arrangement meets some
    leaf cell with the same top-k set, so the collection equals the one of
    Alg. 2 (tested against the all-pairs reference).  The function is long
    because the interval recursion and the leaf step share the curves and the
    output lists through two closures; split apart they would pass ten arguments.

    ``deadline`` (:class:`certpca.clock.Deadline`), checked once per interval, raises
    :class:`certpca.clock.TimeUp` when it passes: a part of the collection proves nothing.  Each
    interval charges it :data:`STEP_SECONDS`, so a :class:`certpca.clock.Work` allotment stops the
    sweep after a number of steps fixed by its inputs.

    ``target`` (None: none): the sweep stops at the first leaf where some cell has ``f > target`` and
    returns the supports found so far, that one among them.  Each ``f`` is the value of a feasible
    vector on the surrogate (``f(c)`` at a point c of the cell, [APD14] eq. (13)), so then
    ``OPT_2 ≥ max f > target``: for a caller that needs ``OPT_2`` only when it is at most ``target``
    (a bound that cannot help above it), the rest of the enumeration is work that cannot change its
    result.  First f is taken at the middle of each first-level interval: one above ``target`` ends
    the sweep at once; else the intervals are swept in decreasing order of that value, where the stop
    comes soonest.  With ``target`` the collection is complete only when ``max f ≤ target``.

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
    slack = REL_TOL * scale
    if leaf is None:
        leaf = SWEEP_LEAF
    if n_intervals is None:
        n_intervals = SWEEP_INTERVALS
    if nonneg:
        n_intervals *= 2
    Vp = np.vstack([V, np.zeros((1, 2))])
    edges = np.linspace(0.0, period, n_intervals + 1)
    min_width = period * MIN_WIDTH

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
            Bm = np.append(B, n)  # local sentinel len(B) -> global n
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
        if target is not None and out_f[-1].max() > target:
            raise _AboveTarget

    def process(ta, tb, R, lo, hi):
        stack = [(ta, tb, R, lo, hi)]
        while stack:
            ta, tb, R, lo, hi = stack.pop()
            if deadline is not None:
                deadline.charge(STEP_SECONDS)
                deadline.check()
            if lo is None:
                lo, hi = _interval_bounds(V1[R], V2[R], r[R], ta, tb, nonneg)
            keep = relevant_curves(lo, hi, k, nonneg, slack)
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

    order = np.arange(n_intervals)
    if target is not None:
        # f at the middle of each first-level interval: feasible values, so one above target ends the sweep
        # at once; otherwise the intervals are swept from the best middle down, where the stop comes sooner
        mids = (edges[:-1] + edges[1:]) / 2
        S_mid, f_mid = top_k_supports(np.cos(mids)[:, None] * V1 + np.sin(mids)[:, None] * V2, k, nonneg)
        if f_mid.max() > target:
            out_S.append(S_mid)
            out_f.append(f_mid)
            order = order[:0]
        else:
            order = np.argsort(-f_mid, kind="stable")
    # first level vectorised over intervals in chunks
    all_idx = np.arange(n)
    chunk = max(1, int(CHUNK_ENTRIES // max(n, 1)))
    try:
        for s in range(0, len(order), chunk):
            at = order[s : s + chunk]
            ta = edges[at][:, None]
            tb = edges[at + 1][:, None]
            lo, hi = _interval_bounds(V1, V2, r, ta, tb, nonneg)
            keep = relevant_curves(lo, hi, k, nonneg, slack)
            for j in range(keep.shape[0]):
                R = all_idx[keep[j]]
                process(float(ta[j, 0]), float(tb[j, 0]), R, lo[j, keep[j]], hi[j, keep[j]])
    except _AboveTarget:
        pass

    S = np.vstack(out_S)
    f = np.concatenate(out_f)
    S, inv = np.unique(S, axis=0, return_inverse=True)
    fb = np.full(len(S), -np.inf)
    np.maximum.at(fb, inv.ravel(), f)
    return S, fb
