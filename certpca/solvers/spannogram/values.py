"""Per-support values on the surrogate: the best unit vector on a given support.

Sparse ([PDK13]): on support I the best value is λmax(V_IᵀV_I).  Nonneg
([APD14] Sec. 5, eq. (16)): the maximum of ‖V_I c‖² over unit c in the cone
V_I c ≥ 0 (or ≤ 0), found by enumerating KKT points (:func:`max_quad_on_cone`).
"""

from __future__ import annotations

from itertools import combinations

import numpy as np

#: a cone constraint r_jᵀc ≥ 0 is met up to this × max|R| (rounding of the KKT points)
CONE_TOL = 1e-10

#: nets solve only this many × ``keep`` of their best-scoring supports
NET_CANDIDATES_PER_KEEP = 4


def max_quad_on_cone(R: np.ndarray) -> tuple[float, np.ndarray | None]:
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
        RJ = R[J]  # (nJ, s, d)
        if s == d - 1:
            N = null_vectors(RJ)[:, :, None]  # (nJ, d, 1)
            cands.append(N[:, :, 0])
            continue
        _, _, Vt = np.linalg.svd(RJ, full_matrices=True)
        N = np.transpose(Vt[:, s:, :], (0, 2, 1))  # (nJ, d, d-s)
        Qp = np.transpose(N, (0, 2, 1)) @ Q @ N
        _, Yv = np.linalg.eigh(Qp)
        Cc = N @ Yv  # (nJ, d, d-s)
        cands.append(np.transpose(Cc, (0, 2, 1)).reshape(-1, d))
    Cm = np.vstack(cands)
    nrm = np.linalg.norm(Cm, axis=1)
    Cm = Cm[nrm > 0] / nrm[nrm > 0, None]
    Y = R @ Cm.T  # (m, ncand)
    tol = CONE_TOL * float(np.abs(R).max())
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


def null_vectors(W: np.ndarray) -> np.ndarray:
    """A null vector (not normalised) of each (d−1) × d block of W (m, d−1, d); zero where degenerate."""
    d = W.shape[2]
    if d == 2:
        return np.stack([-W[:, 0, 1], W[:, 0, 0]], axis=1)
    if d == 3:
        return np.cross(W[:, 0], W[:, 1])
    return np.linalg.svd(W, full_matrices=True)[2][:, -1, :]


def support_values(V: np.ndarray, S: np.ndarray, nonneg: bool, *, f_lb=None, keep: int = 16, exhaustive: bool = True):
    """Best surrogate vectors on candidate supports, best first.

    Sparse ([PDK13]): on support I the best unit x is the top eigenvector of
    ``V_I V_Iᵀ`` with value ``λmax(V_IᵀV_I)`` (a d × d eigenproblem).
    Nonneg ([APD14] eq. (16), Sec. 5): ``x_I = V_I c/‖V_I c‖`` with c from
    :func:`max_quad_on_cone`.  Supports are visited by decreasing upper bound
    ``λmax(V_IᵀV_I)`` and skipped once it cannot beat the ``keep``-th best value
    found (branch and bound — still exact for the maximum).  With
    ``exhaustive=False`` (nets) only the
    ``NET_CANDIDATES_PER_KEEP·keep`` supports with the largest
    ``f_lb`` are solved.

    Returns ``(values, xs, supports)`` for the best ≤ ``keep`` candidates, values
    being ``xᵀA_d x = ‖Vᵀx‖²`` of the returned feasible x.
    """
    V = np.asarray(V, dtype=float)
    n, d = V.shape
    S = np.atleast_2d(S)
    Vp = np.vstack([V, np.zeros((1, d))])
    VI = Vp[S]  # (m, k, d)
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
        order = np.argsort(-f)[: NET_CANDIDATES_PER_KEEP * keep]
    best: list[tuple[float, np.ndarray, np.ndarray]] = []  # (value, x, support)
    for j in order:
        # exact for the maximum once ub ≤ the best value; a few more fill `keep`
        if exhaustive and best and ub[j] <= best[0][0] and (len(best) >= keep or ub[j] <= best[-1][0]):
            break
        _, c = max_quad_on_cone(VI[j])
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
    return (np.array([b[0] for b in best]), [b[1] for b in best], [b[2] for b in best])
