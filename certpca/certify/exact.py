"""Exact OPT(k, nonneg) for small D by branch and bound over supports.

Sparse (Moghaddam, Weiss & Avidan 2006): OPT = max_{|S| = k} λmax(C_SS).
Nonnegative: the maximiser lies in the relative interior of a face S of the
orthant (|S| ≤ k), where stationarity of wᵀCw − λ(wᵀw − 1) restricted to the
face makes it a strictly positive eigenvector of C_SS; so
OPT⁺ = max over |S| ≤ k of the eigenvalues of C_SS with a positive eigenvector.

The search tree enumerates subsets I in a fixed feature order (node (I, p):
all sets I ∪ J with J ⊆ order[p:]); a subtree is pruned when a valid upper
bound over T = I ∪ order[p:] — min of λmax(C_TT), the Gershgorin row bound with
k terms and, for nonneg, λmax((C₊)_TT) — is ≤ the incumbent·(1 + rtol).

Proof: every subset is either evaluated or in a pruned subtree, so
OPT ≤ max(evaluated λ̂, pruned bounds) + eigen margin, which is returned as
``upper_bound``; ``value`` is wᵀCw of a feasible w.  For nonneg the proof
assumes eigenvectors are computed with the right signs for entries of size
> 1e-9 (true unless an eigenvalue of some C_SS is nearly repeated).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from certpca.certify.numerics import (
    EPS,
    Bound,
    NotApplicable,
    check_k,
    gershgorin_columns,
    safe,
    weyl_margin,
)
from certpca.certify.spec import COST_EXPONENTIAL, MOGHADDAM, BoundSpec

#: hard limit on D for the search (an explicit request); the registry's default is lower
MAX_DIM = 120

#: default-selection limit: the search is exponential in D, but with its time cap it proves
#: LRS (D = 93) k = 5 and 10, signed and nonnegative, in under 10 s (reports/bench/certify.md)
DEFAULT_MAX_DIM = 100

#: the bound's time cap (an unproven search still returns a valid, weaker bound)
BOUND_MAX_SECONDS = 20.0

#: an eigenvector entry ≥ −this counts as nonnegative (the sign assumption in the proof above)
SIGN_TOL = 1e-9

#: weight of the variances in the feature order (a tie-breaker for the first PC's loadings)
ORDER_DIAG_WEIGHT = 1e-3

#: roundings per row sum of the node Gershgorin bound, per term
GERSH_ROUNDINGS = 4


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


def _gersh(A: np.ndarray, k: int, positive: bool) -> float:
    """The k-sparse Gershgorin bound of the square block A, with GERSH_ROUNDINGS roundings per term."""
    n = A.shape[0]
    v = float(np.max(gershgorin_columns(A, np.arange(n), np.diag(A).copy(), k, positive)))
    return v + GERSH_ROUNDINGS * n * EPS * abs(v)


def exact(
    problem,
    k: int,
    nonneg: bool = False,
    *,
    max_dim: int = MAX_DIM,
    node_limit: int = 5_000_000,
    time_limit: float | None = None,
    rtol: float = 1e-12,
) -> ExactResult:
    """Exact OPT by branch and bound (D ≤ ``max_dim``, dense C).

    Returns an :class:`ExactResult`; ``proven`` is False when a node or time
    limit stopped the search (``upper_bound`` is then still valid).  The function
    is long because the incumbent, the node bounds and the proof's running
    maximum are shared by closures over one search; the proof (module docstring)
    reads best in one place.
    """
    t0 = time.perf_counter()
    D = problem.dim
    if D > max_dim:
        raise NotApplicable(f"exact search limited to D ≤ {max_dim}, got D = {D}")
    k = check_k(problem, k)
    C = problem.dense()
    Cp = np.maximum(C, 0.0)
    normC = float(np.linalg.norm(C))
    margin = weyl_margin(D, normC) + EPS * normC

    # feature order: strong features first so that good incumbents come early
    v = np.linalg.eigh(Cp if nonneg else C)[1][:, -1]
    score = np.abs(v) + ORDER_DIAG_WEIGHT * np.diag(C) / max(np.max(np.abs(np.diag(C))), 1e-300)
    order = np.argsort(-score)

    best_val, best_w = -np.inf, None
    ub_seen = -np.inf  # max of evaluated λ̂ and pruned bounds

    def consider(S: list) -> None:
        nonlocal best_val, best_w, ub_seen
        sub = C[np.ix_(S, S)]
        vals, vecs = np.linalg.eigh(sub)
        if not nonneg:
            lam, vec = vals[-1], vecs[:, -1]
            ub_seen = max(ub_seen, lam)
            cands = [vec]
        else:
            cands = []
            for j in range(len(S) - 1, -1, -1):
                vec = vecs[:, j]
                vec = vec if vec.sum() >= 0 else -vec
                if np.min(vec) >= -SIGN_TOL:
                    ub_seen = max(ub_seen, vals[j])
                    cands.append(vec)
                    break  # eigenvalues descending: the first positive one is the best
        for vec in cands:
            w = np.zeros(D)
            w[S] = np.maximum(vec, 0.0) if nonneg else vec
            w /= np.linalg.norm(w)
            val = float(w @ C @ w)
            if val > best_val:
                best_val, best_w = val, w

    def node_bound(T: list) -> float:
        A = C[np.ix_(T, T)]
        b = min(float(np.linalg.eigvalsh(A)[-1]), _gersh(A, k, nonneg))
        if nonneg:
            Ap = Cp[np.ix_(T, T)]
            b = min(b, float(np.linalg.eigvalsh(Ap)[-1]), _gersh(Ap, k, True))
        return b

    # incumbent: greedy forward selection in the chosen order
    S: list[int] = []
    for _ in range(k):
        cand = [j for j in range(D) if j not in S]
        vals = [np.linalg.eigvalsh((Cp if nonneg else C)[np.ix_(S + [j], S + [j])])[-1] for j in cand]
        S.append(cand[int(np.argmax(vals))])
        if nonneg:
            consider(sorted(S))
    consider(sorted(S))

    nodes = 0
    stopped = False
    stack: list[tuple[tuple[int, ...], int]] = [((), 0)]
    while stack:
        node, p = stack.pop()
        nodes += 1
        if nodes > node_limit or (time_limit is not None and time.perf_counter() - t0 > time_limit):
            stopped = True
            # remaining subtrees count as unexplored: bound them all by their node bounds
            rest = [(node, p), *stack]
            for I2, p2 in rest:
                T = list(I2) + [int(order[j]) for j in range(p2, D)]
                if T:
                    ub_seen = max(ub_seen, node_bound(T))
            break
        I = list(node)
        if nonneg and I:
            consider(sorted(I))
        if not nonneg and len(I) == k:
            consider(sorted(I))
            continue
        if nonneg and len(I) == k:
            continue
        T = I + [int(order[j]) for j in range(p, D)]
        if not nonneg and len(T) < k:
            continue
        if len(T) == len(I):
            continue
        if not nonneg and len(T) == k:
            consider(sorted(T))
            continue
        b = node_bound(T)
        if b <= best_val * (1 + rtol) + margin and I:
            ub_seen = max(ub_seen, b)
            continue
        children = []
        for j in range(p, D):
            if not nonneg and len(I) + 1 + (D - j - 1) < k:
                break
            children.append((tuple(I + [int(order[j])]), j + 1))
        stack.extend(reversed(children))

    assert best_w is not None  # consider() always accepts the greedy support's top eigenvector
    upper = safe(max(ub_seen, best_val) + margin)
    support = np.flatnonzero(best_w).tolist()
    return ExactResult(
        value=best_val,
        weights=best_w,
        support=support,
        upper_bound=upper,
        proven=(not stopped),
        nodes=nodes,
        seconds=time.perf_counter() - t0,
        k=k,
        nonneg=nonneg,
        info={"order": order.tolist(), "rtol": rtol},
    )


def exact_bound(
    problem,
    k,
    nonneg=False,
    *,
    max_dim: int = MAX_DIM,
    node_limit: int = 5_000_000,
    time_limit: float | None = None,
    max_seconds: float = BOUND_MAX_SECONDS,
) -> Bound:
    """The exact search as a Bound: value = its safe upper bound, params carry the optimum.

    The search stops after min(time_limit, max_seconds) seconds; its bound is valid then too.
    """
    t0 = time.perf_counter()
    limit = max_seconds if time_limit is None else min(time_limit, max_seconds)
    res = exact(problem, k, nonneg, max_dim=max_dim, node_limit=node_limit, time_limit=limit)
    return Bound(
        res.upper_bound,
        "exact",
        {
            "proven": res.proven,
            "nodes": res.nodes,
            "feasible_value": res.value,
            "support": res.support,
            "weights": res.weights.tolist(),
        },
        time.perf_counter() - t0,
        "branch and bound over supports: max of evaluated λ̂ and pruned node bounds "
        "(λmax / Gershgorin / Perron on C_TT) + Weyl margin 9·D·eps·‖C‖_F + rel 1e-10",
    )


EXACT = BoundSpec(
    "exact",
    exact_bound,
    COST_EXPONENTIAL,
    max_dim=DEFAULT_MAX_DIM,
    time_option="time_limit",
    description="branch and bound over supports: OPT = max over |S| = k of λmax(C_SS)",
    reference="Branch and bound over supports (exhaustive up to pruning by valid node bounds); "
    "OPT = max_{|S|=k} λmax(C_SS) as in " + MOGHADDAM,
)

SPECS = [EXACT]
