"""Compiled Lloyd iterations for :func:`certpca.evaluate.kmeans` (Lloyd 1982).

The gene-selection evaluation runs k-means thousands of times on small
matrices (pbmc: 2500 runs of 700 samples, ~20 iterations each), where numpy's
and the dispatcher's per-call overheads were a third of each iteration: the whole
loop runs here.  Each step: the products with the centroids (``np.dot``, one BLAS
product: the numbers numpy's ``X @ centroids.T`` gives), the centroids' squared norms
summed as numpy's ``einsum('ij,ij->i')`` sums them (:func:`squared_norms`), squared
distances by the expansion (‖x‖² − 2xᵀc) + ‖c‖², ties to the lowest cluster, empty
clusters refilled by ``fill_empty``, centroids as sums of their points in sample order
divided by the count (numpy's ``X[labels == j].mean(axis=0)`` adds the rows in the same
order).  So the labels are those of the former loop in numpy, bit for bit.

Kept apart so that numba (about 0.2 s to import) loads only when it is used;
compiled functions are cached on disk (``cache=True``).

Reference: Lloyd, S. P. (1982). Least squares quantization in PCM. IEEE
Transactions on Information Theory 28(2), 129–137.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def fill_empty(labels, d2, counts):
    """Give each empty cluster, lowest first, the point farthest from its own centroid among the
    points of clusters with more than one (ties to the lowest index); ``counts`` updated in place."""
    n = labels.size
    own = np.empty(n)
    for i in range(n):
        own[i] = d2[i, labels[i]]
    for j in range(counts.size):
        if counts[j] > 0:
            continue
        best = -1
        far = -np.inf
        for i in range(n):
            if counts[labels[i]] > 1 and own[i] > far:
                far = own[i]
                best = i
        counts[labels[best]] -= 1
        labels[best] = j
        counts[j] = 1
        own[best] = -np.inf


@njit(cache=True)
def squared_norms(C, out):
    """``out[j]`` = ‖C_j‖², summed as numpy's ``einsum('ij,ij->i', C, C)`` sums a row (its baseline SIMD
    loop: two lanes, four pairs of entries a step added last first, then the rest, then the two lanes)."""
    k, d = C.shape
    for j in range(k):
        a0 = 0.0
        a1 = 0.0
        p = 0
        while p + 8 <= d:
            for u in range(3, -1, -1):
                x0 = C[j, p + 2 * u]
                x1 = C[j, p + 2 * u + 1]
                a0 = x0 * x0 + a0
                a1 = x1 * x1 + a1
            p += 8
        while p < d:
            a0 = C[j, p] * C[j, p] + a0
            if p + 1 < d:
                a1 = C[j, p + 1] * C[j, p + 1] + a1
            p += 2
        out[j] = a0 + a1


@njit(cache=True, error_model="numpy")
def step(xx, G, cc, X, labels, centroids, first):
    """One Lloyd step from the products ``G`` = X·centroidsᵀ (n × k) and the squared norms ``xx``
    of the rows and ``cc`` of the centroids: squared distances (xx_i − 2G_ij) + cc_j, nearest
    centroids (ties to the lowest), empty clusters refilled; True when the labels did not change
    (``first``: no labels yet), else the new labels and the centroids of their points written in place."""
    n, k = G.shape
    d = X.shape[1]
    d2 = np.empty((n, k))
    counts = np.zeros(k, dtype=np.int64)
    new = np.empty(n, dtype=np.int64)
    for i in range(n):
        best = 0
        for j in range(k):
            d2[i, j] = (xx[i] - 2.0 * G[i, j]) + cc[j]
            if d2[i, j] < d2[i, best]:
                best = j
        new[i] = best
        counts[best] += 1
    fill_empty(new, d2, counts)
    if not first:
        same = True
        for i in range(n):
            if new[i] != labels[i]:
                same = False
                break
        if same:
            return True
    labels[:] = new
    centroids[:] = 0.0
    for i in range(n):
        j = labels[i]
        for c in range(d):
            centroids[j, c] += X[i, c]
    for j in range(k):
        for c in range(d):
            centroids[j, c] /= counts[j]
    return False


@njit(cache=True)
def lloyd(X, rows, xx, labels, centroids, max_iter):
    """Lloyd's iterations on ``X`` (squared row norms ``xx``) from ``centroids`` until no label changes:
    the labels and centroids written in place; the number of iterations, or 0 when ``max_iter`` ran out.

    ``rows`` is ``X`` in C order, which the centroids' sums read row by row; the product reads ``X`` in its own
    order (the same numbers; the gene evaluation's columns of a wider matrix, in Fortran order, multiply
    faster so)."""
    cc = np.empty(centroids.shape[0])
    for n_iter in range(1, max_iter + 1):
        squared_norms(centroids, cc)
        if step(xx, np.dot(X, centroids.T), cc, rows, labels, centroids, n_iter == 1):
            return n_iter
    return 0
