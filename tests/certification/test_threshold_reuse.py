"""The threshold bound's faster row operations and its reuse across k, against what they replace.

* the per-row sums of the k − 1 largest entries (radix sort, partial sorts of the long rows) against a
  full sort of every row (the implementation they replaced): the same floats;
* the component matrix built by radix sorts against scipy's own CSR from (row, column) pairs: the
  same arrays, so the same products;
* a bound computed after others at other k on the same problem (its per-ρ parts reused from
  ``Problem.memo``) against the same bound on a fresh problem: equal, and above brute force; cut by an
  allotment, equal too, with the same work charged.
"""

import numpy as np
import pytest
import scipy.sparse as sp

from certpca.certification.threshold import threshold_bound
from certpca.certification.threshold_pairs import canonical_csr, row_topk
from certpca.clock import Work
from certpca.problem import Problem
from tests.brute import brute_force, random_psd


def full_sort_topk(rows, vals, n, kk):
    """Per row, its kk largest values summed: short rows in the given order, long rows sorted
    (decreasing) by one lexsort of all their entries."""
    out = np.zeros(n)
    if kk <= 0 or len(rows) == 0:
        return out
    if kk == 1:
        np.maximum.at(out, rows, vals)
        return out
    short = np.bincount(rows, minlength=n)[rows] <= kk
    np.add.at(out, rows[short], vals[short])
    rows, vals = rows[~short], vals[~short]
    order = np.lexsort((-vals, rows))
    r, v = rows[order], vals[order]
    start = np.r_[0, np.flatnonzero(np.diff(r)) + 1]
    rank = np.arange(len(r)) - np.repeat(start, np.diff(np.r_[start, len(r)]))
    keep = rank < kk
    np.add.at(out, r[keep], v[keep])
    return out


@pytest.mark.parametrize("seed", range(4))
def test_row_top_sums_equal_the_full_sort(seed):
    rng = np.random.default_rng(seed)
    n = 40
    lengths = rng.integers(0, 60, n)  # rows shorter and longer than kk, and empty ones
    rows = rng.permutation(np.repeat(np.arange(n), lengths))
    vals = rng.exponential(size=len(rows)) * 10.0 ** rng.integers(-8, 8, len(rows))
    vals[rng.random(len(rows)) < 0.2] = 0.5  # ties
    for kk in (0, 1, 2, 7, 30, 59, 100):
        fast = row_topk(rows, vals, n, kk)
        assert np.array_equal(fast, full_sort_topk(rows, vals, n, kk)), kk
        naive = [np.sort(vals[rows == r])[::-1][:kk].sum() for r in range(n)]
        np.testing.assert_allclose(fast, naive, rtol=1e-13)


def test_component_matrix_is_scipys_csr():
    rng = np.random.default_rng(5)
    n = 300
    dense = np.triu(rng.random((n, n)) < 0.1, 1)
    i, j = np.nonzero(dense)
    perm = rng.permutation(2 * len(i))
    r, c = np.r_[i, j][perm], np.r_[j, i][perm]
    a = rng.random(len(r))
    mine, theirs = canonical_csr(r, c, a, n), sp.csr_matrix((a, (r, c)), shape=(n, n))
    assert np.array_equal(mine.indptr, theirs.indptr)
    assert np.array_equal(mine.indices, theirs.indices)
    assert np.array_equal(mine.data, theirs.data)
    v = rng.random(n)
    assert np.array_equal(mine @ v, theirs @ v)


def _builder(rng, t):
    """A function returning a fresh Problem (no memo) of one random small problem, factor or dense."""
    D = int(rng.integers(8, 13))
    if t % 2:
        X = rng.standard_normal((int(rng.integers(3, D)), D)) + rng.uniform(0, 2, D)
        return lambda: Problem.from_data(X - X.mean(axis=0))
    C = random_psd(rng, D, ["wishart", "posfactor"][t % 4 // 2])
    return lambda: Problem.from_covariance(C)


def test_bounds_reusing_other_ks_parts_are_those_of_a_fresh_problem():
    rng = np.random.default_rng(0)
    for t in range(6):
        build = _builder(rng, t)
        P = build()
        C = P.dense()
        ks = [int(k) for k in rng.permutation(np.arange(1, P.dim))[:3]]
        for nonneg in (False, True):
            for k in ks:  # the later k reuse the earlier ones' parts on P
                shared = threshold_bound(P, k, nonneg, n_grid=12, n_refine=4)
                fresh = threshold_bound(build(), k, nonneg, n_grid=12, n_refine=4)
                assert shared.value == fresh.value, (t, k, nonneg)
                assert shared.value >= brute_force(C, k, nonneg)[0]


def test_a_cut_bound_does_not_depend_on_what_the_memo_holds():
    """Under an allotment the bound charges its work whether computed or reused, so the same call stops at
    the same step after other k filled the memo as on a fresh problem: the report's band runs its k on a pool
    whose workers each hold the memo of the tasks they happened to get."""
    rng = np.random.default_rng(1)
    for t in range(6):
        build = _builder(rng, t)
        P = build()
        ks = [int(k) for k in rng.permutation(np.arange(2, P.dim))[:3]]
        for nonneg in (False, True):
            for k in ks:
                full = Work()
                threshold_bound(P, k, nonneg, n_grid=12, n_refine=4, time_limit=full)
                for share in (0.2, 0.5, 0.8):
                    cut = [Work(share * full.used()) for _ in range(2)]
                    shared = threshold_bound(P, k, nonneg, n_grid=12, n_refine=4, time_limit=cut[0])
                    fresh = threshold_bound(build(), k, nonneg, n_grid=12, n_refine=4, time_limit=cut[1])
                    assert (shared.value, cut[0].used()) == (fresh.value, cut[1].used()), (t, k, nonneg, share)
