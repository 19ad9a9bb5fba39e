"""Compiled row operations of the threshold-and-split bound (:mod:`certpca.certification.threshold`).

The weighted k-sparse Gershgorin bound needs, per row of a component's off-diagonal entries, the sum
of its k − 1 largest values; a full sort of every long row (``np.lexsort`` over all the entries) was
half of the bound's time at large k (leukemia, k = 300: reports/bench/report.md).  Here rows are
grouped by a counting sort, O(entries), and only the rows longer than k − 1 are partially sorted
(``np.partition``); the sums add the same values in the same order as the full sort did (a short row
in the given order, a long row's k − 1 largest in decreasing order), so they are the same floats.

Kept apart so that numba (about 0.2 s to import) loads only when the bound runs; compiled functions
are cached on disk (``cache=True``).
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def grouped(rows, n):
    """(order, start): ``order`` lists the entries row by row (0..n−1), each row's in their given order
    (a stable counting sort); row r's entries are ``order[start[r]:start[r + 1]]``."""
    start = np.zeros(n + 1, dtype=np.int64)
    for r in rows:
        start[r + 1] += 1
    for r in range(n):
        start[r + 1] += start[r]
    fill = start[:-1].copy()
    order = np.empty(rows.size, dtype=np.int64)
    for e in range(rows.size):
        r = rows[e]
        order[fill[r]] = e
        fill[r] += 1
    return order, start


@njit(cache=True)
def row_top_sums(rows, vals, n, kk):
    """Per row (0..n−1), the sum of its ``kk`` largest values (``vals`` ≥ 0): a row of at most kk
    entries added whole in the given order, a longer one's kk largest in decreasing order."""
    out = np.zeros(n)
    if kk <= 0 or rows.size == 0:
        return out
    order, start = grouped(rows, n)
    for r in range(n):
        a, b = start[r], start[r + 1]
        s = 0.0
        if b - a <= kk:
            for e in range(a, b):
                s += vals[order[e]]
        else:
            seg = np.empty(b - a)
            for e in range(a, b):
                seg[e - a] = vals[order[e]]
            top = np.sort(np.partition(seg, b - a - kk)[b - a - kk :])
            for e in range(kk - 1, -1, -1):
                s += top[e]
        out[r] = s
    return out


@njit(cache=True)
def canonical(rows, cols, n):
    """(order, start): the entries by row, then by column (scipy's canonical CSR order, what
    ``csr_matrix((data, (rows, cols)))`` sorts them into when no (row, column) repeats), by two stable
    counting sorts; row r's entries are ``order[start[r]:start[r + 1]]``."""
    by_col, _ = grouped(cols, n)
    order, start = grouped(rows[by_col], n)
    return by_col[order], start
