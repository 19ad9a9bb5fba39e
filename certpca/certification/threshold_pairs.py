"""The threshold bound's pairs (certpca/certification/threshold.py): the entries of C above a cut, kept sparse.

The threshold bound needs, at every ρ of its search, the off-diagonal entries of C above ρ (a prefix of
the pairs sorted by decreasing key), each row's sum of its k − 1 largest, and the CSR matrix of a
component's entries.  This module collects the pairs once per problem (:func:`collect_pairs`, row block
by row block of FᵀF for a factor problem: never a D × D array), keeps them with their entries row by row
(:class:`Pairs`, memoised on the problem by :func:`sorted_pairs`), and holds the two row operations the
bound repeats (:func:`row_topk`, :func:`canonical_csr`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from certpca.certification.numerics import EPS, gamma

#: about this many off-diagonal pairs per feature are kept (sparse, never D × D)
PAIR_BUDGET_PER_FEATURE = 40

#: memory for one block of rows of FᵀF while collecting pairs
BLOCK_BYTES = 32 * 2**20


def collect_pairs(problem, nonneg: bool, budget: int | None = None, block_bytes: int = BLOCK_BYTES):
    """Off-diagonal pairs (i < j) of Ĉ above a cut τ, sorted by decreasing key.

    ``key`` is Ĉ_ij (nonneg) or |Ĉ_ij| (signed).  Returns (i, j, val, tau, err)
    where every pair with key > τ is present and ``err`` bounds |C_ij − Ĉ_ij|
    plus the rounding of Ĉ_ij − ρ (the margins of :mod:`certpca.certification.threshold`).
    """
    D = problem.dim
    diag = problem.diag
    if budget is None:
        budget = PAIR_BUDGET_PER_FEATURE * D
    if problem.uses_factor:
        F = problem.factor()
        r = F.shape[0]
        cmax = float(np.max(diag)) if D else 0.0
        err = (gamma(r) + 2 * EPS) * cmax
        b = max(1, min(D, block_bytes // (8 * D)))

        def blocks():
            for i0 in range(0, D, b):
                i1 = min(D, i0 + b)
                yield i0, F[:, i0:i1].T @ F
    else:
        C = problem.dense()
        err = 2 * EPS * float(np.max(np.abs(C))) if D else 0.0

        def blocks():
            yield 0, C

    # τ from a sample of rows: the (1 − budget/#pairs) quantile of the keys
    n_pairs = D * (D - 1) // 2
    tau = 0.0 if nonneg else -1.0
    if n_pairs > budget:
        rng = np.random.default_rng(0)
        rows = rng.choice(D, size=min(D, 200), replace=False)
        if problem.uses_factor:
            S = F[:, rows].T @ F
        else:
            S = C[rows]
        S[np.arange(len(rows)), rows] = np.nan
        keys = S if nonneg else np.abs(S)
        keys = keys[np.isfinite(keys)]
        q = 1.0 - budget / n_pairs
        tau = max(tau, float(np.quantile(keys, q)))
    I, J, V = [], [], []
    for i0, G in blocks():
        nb = G.shape[0]
        key = G if nonneg else np.abs(G)
        ii, jj = np.nonzero(key > tau)
        sel = jj > ii + i0
        ii, jj = ii[sel], jj[sel]
        I.append(ii + i0)
        J.append(jj)
        V.append(G[ii, jj])
        del nb
    i = np.concatenate(I).astype(np.int64) if I else np.zeros(0, np.int64)
    j = np.concatenate(J).astype(np.int64) if J else np.zeros(0, np.int64)
    v = np.concatenate(V) if V else np.zeros(0)
    key = v if nonneg else np.abs(v)
    order = np.argsort(-key, kind="stable")
    return i[order], j[order], v[order], max(tau, 0.0), err


@dataclass(frozen=True)
class Pairs:
    """The pairs of :func:`collect_pairs` (sorted by decreasing key) with their entries row by row: each
    pair (i, j) is an entry of row i and of row j, and the entries are ordered by row, then by pair.

    At every ρ the pairs kept are a prefix (key > ρ) and the entries of a row kept are a prefix of its
    entries, so each entry's place in its row (``rank``) is the same for every ρ and k: the sum of a row's
    k − 1 largest entries needs no sort (:meth:`row_top`).  Memoised per problem (:func:`sorted_pairs`)."""

    i: np.ndarray
    j: np.ndarray
    v: np.ndarray
    tau: float
    err: float
    key: np.ndarray  # v (nonnegative problem) or |v|
    row: np.ndarray  # each entry's row
    pair: np.ndarray  # each entry's pair
    rank: np.ndarray  # each entry's place in its row, 0 for the largest key

    def row_top(self, n_kept: int, rho: float, kk: int, D: int) -> np.ndarray:
        """Per row, the sum of its kk largest (key − ρ) over the first ``n_kept`` pairs: what
        :func:`row_topk` gives for those entries, added in the same order (the same floats)."""
        out = np.zeros(D)
        if kk <= 0 or n_kept == 0:
            return out
        keep = (self.pair < n_kept) & (self.rank < kk)
        np.add.at(out, self.row[keep], self.key[self.pair[keep]] - rho)
        return out


def sorted_pairs(problem, nonneg: bool, budget: int | None = None) -> Pairs:
    """:func:`collect_pairs` and its entries row by row (:class:`Pairs`), once per problem, sign and
    budget: the same for every k, so a path's threshold bounds share them (``Problem.memo``)."""
    memo = problem.memo.setdefault("threshold_pairs", {})
    if (nonneg, budget) not in memo:
        i, j, v, tau, err = collect_pairs(problem, nonneg, budget)
        n = len(v)
        idx = np.int32 if problem.dim < 2**31 and n < 2**31 else np.int64
        rows = np.r_[i, j].astype(idx)
        pairs = np.r_[np.arange(n), np.arange(n)].astype(idx)
        order = np.lexsort((pairs, rows))
        rows, pairs = rows[order], pairs[order]
        start = np.r_[0, np.flatnonzero(np.diff(rows)) + 1] if len(rows) else np.zeros(0, np.int64)
        rank = np.arange(len(rows)) - np.repeat(start, np.diff(np.r_[start, len(rows)]))
        key = v if nonneg else np.abs(v)
        memo[nonneg, budget] = Pairs(i, j, v, tau, err, key, rows, pairs, rank.astype(idx))
    return memo[nonneg, budget]


def _by_row(rows: np.ndarray, n: int) -> np.ndarray:
    """The stable order of the entries by row (0..n−1): a radix sort (numpy's stable sort of 16-bit
    integers) when n < 2¹⁶, O(entries), else a merge sort."""
    return np.argsort(rows.astype(np.uint16) if n < 2**16 else rows, kind="stable")


def row_topk(rows: np.ndarray, vals: np.ndarray, n: int, kk: int) -> np.ndarray:
    """Per row (0..n−1), the sum of its kk largest values (vals ≥ 0): a row of at most kk entries is
    summed whole in the given order, a longer one's kk largest (``np.partition`` of the long rows, padded
    with zeros to a power-of-two length) in decreasing order — the floats a full sort of every row gives."""
    counts = np.bincount(rows, minlength=n)
    if kk <= 0 or len(rows) == 0:
        return np.zeros(n)
    short = counts[rows] <= kk
    out = np.bincount(rows[short], weights=vals[short], minlength=n).astype(float)  # in order, from 0.0
    long_rows = np.flatnonzero(counts > kk)
    if not len(long_rows):
        return out
    r, v = rows[~short], vals[~short]
    v = v[_by_row(r, n)]  # the long rows' entries, row by row
    lengths = counts[long_rows]
    starts = np.r_[0, np.cumsum(lengths)[:-1]]
    widths = 1 << np.ceil(np.log2(lengths)).astype(np.int64)
    for width in np.unique(widths):
        members = np.flatnonzero(widths == width)
        cols = np.arange(width)
        inside = cols < lengths[members, None]
        block = np.zeros((len(members), width))
        block[inside] = v[(starts[members, None] + cols)[inside]]
        top = np.sort(np.partition(block, width - kk, axis=1)[:, width - kk :], axis=1)[:, ::-1]
        out[long_rows[members]] = np.cumsum(top, axis=1)[:, -1]  # added one by one, largest first
    return out


def canonical_csr(r_l: np.ndarray, c_l: np.ndarray, a_l: np.ndarray, n: int) -> sp.csr_matrix:
    """The n × n CSR matrix of the entries (r_l, c_l, a_l), no (row, column) twice, in scipy's canonical
    order (what ``csr_matrix((a_l, (r_l, c_l)))`` gives, so the same products to the last bit) by two
    stable radix sorts (column, then row) instead of scipy's per-row sort of the column indices."""
    by_col = _by_row(c_l, n)
    order = by_col[_by_row(r_l[by_col], n)]
    start = np.r_[0, np.cumsum(np.bincount(r_l, minlength=n))]
    return sp.csr_matrix((a_l[order], c_l[order], start), shape=(n, n))
