"""The rank-d surrogate and the rank-1 building block shared by every enumeration.

``surrogate_factor`` builds V = [√λ₁v₁ … √λ_d v_d] ([APD14] eq. (7)); for a fixed
direction c the best support is ``top_k(|Vc|)`` (sparse) or ``top_k((Vc)₊)``
(nonneg), the rank-1 problem of [APD14] Prop. 3.1 (:func:`top_k_supports`).
:func:`relevant_curves` is the pruning test both exact sweeps use on a region.
"""

from __future__ import annotations

import functools
from itertools import combinations

import numpy as np

from ...problem import Problem

#: relative slack of the pruning tests (× the largest ‖V_i‖): curves this close to the
#: k-th level are kept, so rounding can only add candidates, never lose one
REL_TOL = 1e-10

#: eigenvalues below this × λ₁ count as zero and are left out of the surrogate
RANK_RTOL = 1e-12


def surrogate_factor(problem: Problem, d: int) -> tuple[np.ndarray, float]:
    """``V = [√λ₁v₁ … √λ_d v_d]`` ([APD14] eq. (7)) and ``λ_{d+1}`` (clipped at 0).

    Only eigenvalues above RANK_RTOL·λ₁ enter V, so fewer than d columns come
    back when rank C < d (and then λ_{d+1} is the first one left out, ≈ 0).
    Dropping nonpositive ones keeps ``xᵀCx ≤ xᵀA_d x + max(λ_{d+1}, 0)`` valid
    even for an indefinite input.
    """
    vals, vecs = problem.eigh(d)
    # numerically zero eigenvalues (rank-deficient C) are left out of A_d; the
    # first one left out becomes λ_{d+1}, so OPT ≤ OPT_d + λ_{d+1} still holds
    keep = vals > (vals[0] * RANK_RTOL if len(vals) and vals[0] > 0 else 0.0)
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


@functools.lru_cache(maxsize=256)
def subsets(rows: int, d: int) -> np.ndarray:
    """The d-subsets of range(rows) as an (m, d) array, in lexicographic order (for d = 2 the pairs of
    ``np.triu_indices(rows, 1)``); cached, read-only: the sweeps' leaves and patches repeat their sizes."""
    out = np.array(list(combinations(range(rows), d)), dtype=np.int64).reshape(-1, d)
    out.flags.writeable = False
    return out


def relevant_curves(lo, hi, k: int, nonneg: bool, slack: float) -> np.ndarray:
    """Mask of curves that can be in the top-k somewhere in the interval.

    With ``L`` the k-th largest lower bound, at every θ of the interval at least
    k curves are ``≥ L``; a curve whose maximum is below L never enters.
    """
    m = lo.shape[-1]
    if m > k:
        L = -np.partition(-lo, k - 1, axis=-1)[..., k - 1 : k]
        keep = hi >= L - slack
    else:
        keep = np.ones(hi.shape, bool)
    if nonneg:
        keep &= hi > 0
    return keep
