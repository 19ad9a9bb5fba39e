"""Independent truth for small problems: the exact optimum by enumerating supports.

Sparse:      OPT = max over |S| = k of λmax(C_SS)            (Moghaddam et al. 2006).
Nonnegative: the maximiser lies in the relative interior of a face S' (|S'| ≤ k) of
the orthant, where stationarity makes it a positive eigenvector of C_S'S'; so
OPT⁺ = max over |S| ≤ k of the eigenvalues of C_SS whose eigenvector is strictly
positive (up to sign).  Costs O(2^D) eigen-decompositions: D ≤ 12 only.
"""

from itertools import combinations, islice

import numpy as np

#: supports whose eigenproblems are solved in one batched call of ``np.linalg.eigh`` (which runs the same LAPACK
#: routine on each matrix of the stack, so the values are those of one call per support)
BATCH = 4096


def brute_force(C, k, nonneg=False):
    """Return (OPT, maximiser w) of max wᵀCw, ‖w‖=1, ‖w‖₀ ≤ k (, w ≥ 0).

    Supports are visited in ``itertools.combinations`` order, size by size, and the first strictly largest
    candidate wins, as in a loop over the supports one by one."""
    C = np.asarray(C, dtype=float)
    D = C.shape[0]
    best, best_w = -np.inf, None
    sizes = range(1, k + 1) if nonneg else [k]
    for size in sizes:
        supports = combinations(range(D), size)
        while len(S := np.array(list(islice(supports, BATCH)), dtype=np.intp).reshape(-1, size)):
            vals, vecs = np.linalg.eigh(C[S[:, :, None], S[:, None, :]])
            if not nonneg:
                lam, vec = vals[:, -1], vecs[:, :, -1]
            else:
                # each eigenvector (a column) with its sum made ≥ 0; a candidate only if strictly positive
                signed = np.where(vecs.sum(axis=1, keepdims=True) >= 0, vecs, -vecs)
                positive = np.all(signed > 0, axis=1)
                lam = np.where(positive, vals, -np.inf).ravel()  # (support, eigenvalue) in loop order
                vec = signed.transpose(0, 2, 1).reshape(-1, size)
            at = int(np.argmax(lam))
            if lam[at] > best:
                best_w = np.zeros(D)
                best_w[S[at // (len(lam) // len(S))]] = vec[at]
                best = lam[at]
    return float(best), best_w


def random_psd(rng, D, family="wishart"):
    """Random PSD test matrices of the families used in the certification notes, and two hard cases: "tied"
    (a block repeated: every optimal support has a twin of equal value) and "negative" (a factor of
    alternating signs: correlations near −1 between halves)."""
    if family == "tied":
        h = D // 2
        B = random_psd(rng, h, "spiked")
        C = np.zeros((D, D))
        C[:h, :h] = B
        C[h : 2 * h, h : 2 * h] = B
        if D % 2:
            C[-1, -1] = 0.1
        return C
    if family == "negative":
        u = np.where(np.arange(D) % 2 == 0, 1.0, -1.0) * (1 + 0.1 * rng.random(D))
        A = 0.3 * rng.standard_normal((D, D))
        return np.outer(u, u) * 4 + A @ A.T / D
    if family == "wishart":
        A = rng.standard_normal((D, D))
        return A @ A.T / D
    if family == "spiked":
        u = np.zeros(D)
        u[: max(2, D // 3)] = 1
        u = rng.permutation(u) * rng.choice([-1, 1], D)
        u /= np.linalg.norm(u)
        A = rng.standard_normal((2 * D, D))
        return 3 * np.outer(u, u) + A.T @ A / (2 * D)
    if family == "lowrank":
        A = rng.standard_normal((D, 3))
        return A @ A.T
    if family == "posfactor":
        A = np.abs(rng.standard_normal((D, 4)))
        return A @ A.T + 0.1 * np.eye(D)
    raise ValueError(family)


def small_problems(n, seed):
    """n covariance problems of 6 to 11 features, k from 2 to D − 2, the four basic families in turn, signed and
    nonnegative alternately, each with its brute-force optimum: (Problem, k, nonneg, OPT, optimal w)."""
    from certpca.problem import Problem

    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        D = int(rng.integers(6, 12))
        k = int(rng.integers(2, D - 1))
        C = random_psd(rng, D, ["wishart", "spiked", "lowrank", "posfactor"][i % 4])
        nonneg = bool(i % 2)
        opt, w = brute_force(C, k, nonneg)
        out.append((Problem.from_covariance(C), k, nonneg, opt, w))
    return out
