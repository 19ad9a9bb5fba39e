"""ε-nets on the unit sphere of R^d ([APD14] Alg. 3) and their exact covering radius.

With the covering radius ε of a net, max_net f ≤ OPT_d ≤ max_net f/(1−ε)²
([APD14] Sec. 6); the certify layer turns that into a bound.  The grid's ε is
proven (:func:`grid_net`); a random net's ε is the realised covering radius of
the sample, computed exactly (:func:`covering_radius`).
"""

from __future__ import annotations

import math

import numpy as np
from scipy.spatial import ConvexHull
from scipy.special import betainc

from ...validation import check_random_state
from .topk import top_k_supports

#: failure probability the default random-net size is chosen for (the returned ε is exact anyway)
RANDOM_NET_DELTA = 1e-3

#: net directions are evaluated in blocks of about this many entries (directions × n)
CHUNK_ENTRIES = 4_000_000


def grid_net(d: int, epsilon: float, nonneg: bool, samples: int | None = None) -> tuple[np.ndarray, float]:
    """A deterministic net on the unit sphere of R^d with proven covering radius.

    ``f`` is even in c for sparse PCA, so there the net need only cover the
    sphere up to sign: every u has ``min_{c∈C} min(‖u−c‖, ‖u+c‖) ≤ ε``; for
    nonneg it must cover the whole sphere.

    * d = 2: m equispaced angles, over [0, π) (sparse; ε = 2 sin(π/(4m))) or
      [0, 2π) (nonneg; ε = 2 sin(π/(2m))): a point is within half a spacing of
      a net angle and the chord of angle α is 2 sin(α/2).
    * d ≥ 3: the "cube-sphere" grid.  Each face {x : x_i = ±1} of the cube
      [−1, 1]^d is cut into m^{d−1} cells of side 2/m and their centres are
      projected radially onto the sphere (faces +e_i only for sparse, all 2d for
      nonneg).  Proof of ``ε = √(d−1)/m``: for unit u let i maximise |u_i| and
      ``p = u/|u_i|`` (the cube point on face ±e_i; replace u by −u for sparse
      if u_i < 0).  p lies in a cell whose centre q satisfies
      ``‖p − q‖ ≤ (1/m)√(d−1)`` (half the cell diagonal).  Both have norm ≥ 1,
      and the radial map ``x ↦ x/‖x‖`` on ``{‖x‖ ≥ 1}`` is the metric projection
      onto the unit ball, which is 1-Lipschitz, so
      ``‖u − q/‖q‖‖ ≤ ‖p − q‖ ≤ √(d−1)/m``.

    ``samples`` caps the number of points (the grid is coarsened to fit and its
    larger ε returned).  Returns ``(C, ε)`` with C of shape (m_points, d).
    """
    if d == 1:
        return np.array([[1.0], [-1.0]]) if nonneg else np.array([[1.0]]), 0.0
    if d == 2:
        span = 2 * np.pi if nonneg else np.pi
        div = 2 if nonneg else 4
        m = math.ceil(np.pi / (div * math.asin(min(epsilon, 2.0) / 2)))
        if samples is not None:
            m = min(m, int(samples))
        m = max(m, 1)
        th = np.arange(m) * (span / m)
        return np.column_stack([np.cos(th), np.sin(th)]), 2 * math.sin(np.pi / (div * m))
    faces = 2 * d if nonneg else d
    m = math.ceil(math.sqrt(d - 1) / epsilon)
    if samples is not None:
        m = min(m, math.floor((samples / faces) ** (1 / (d - 1))))
    m = max(m, 1)
    ticks = -1 + (2 * np.arange(m) + 1) / m
    face_grid = np.stack(np.meshgrid(*([ticks] * (d - 1)), indexing="ij"), -1).reshape(-1, d - 1)
    pts = []
    for i in range(d):
        for sgn in (1.0, -1.0) if nonneg else (1.0,):
            P = np.insert(face_grid, i, sgn, axis=1)
            pts.append(P / np.linalg.norm(P, axis=1, keepdims=True))
    return np.vstack(pts), math.sqrt(d - 1) / m


def _cap_measure(alpha: float, d: int) -> float:
    """Normalised surface measure of a spherical cap of angular radius alpha ≤ π/2 in S^{d−1}."""
    if d == 2:
        return alpha / np.pi
    return 0.5 * float(betainc((d - 1) / 2, 0.5, math.sin(alpha) ** 2))


def random_net(
    d: int, epsilon: float, nonneg: bool, samples: int | None = None, rng=None, delta: float = RANDOM_NET_DELTA
) -> tuple[np.ndarray, float]:
    """Seeded uniform directions c with their negatives ([APD14] Alg. 3, lines 4-7).

    Default size: ``M = ⌈ln(N/δ)/p⌉`` with ``N = (1 + 4/ε)^d`` (a volumetric bound
    on an ε/2-net; the count in the authors' code) and p the measure of a cap of
    chordal radius ε/2: then every cap of the ε/2-net holds a sample with
    probability ≥ 1 − δ, so the sample is an ε-net (docs/certification.md §4, the rigorous
    version of the paper's O(ε^{−d} log n)).  The returned ε is not that
    probabilistic target but the realised covering radius of ``±C``, computed
    exactly by :func:`covering_radius`, so the bound built on it is
    deterministic.  Returns ``(C, ε)``; C holds both c and −c when nonneg.
    """
    gen = check_random_state(rng, "rng")
    if samples is None:
        alpha = 2 * math.asin(min(epsilon / 4, 1.0))
        p = _cap_measure(alpha, d)
        N = (1 + 4 / epsilon) ** d
        samples = math.ceil(math.log(N / delta) / p)
    Z = gen.standard_normal((int(samples), d))
    Z /= np.linalg.norm(Z, axis=1, keepdims=True)
    eps = covering_radius(np.vstack([Z, -Z]))
    return (np.vstack([Z, -Z]) if nonneg else Z), eps


def covering_radius(P: np.ndarray) -> float:
    """Exact chordal covering radius ``max_{‖u‖=1} min_{p∈P} ‖u − p‖`` of unit vectors P.

    ``min_p ‖u−p‖² = 2 − 2 h(u)`` with h the support function of ``K = conv P``,
    and ``min_{‖u‖=1} h(u)`` is the distance from 0 to the boundary of K, i.e.
    the smallest facet offset of the hull (0 interior).  d = 2: half the largest
    angular gap.  Returns 2.0 if 0 is not interior (a hemisphere is uncovered).
    """
    P = np.asarray(P, dtype=float)
    d = P.shape[1]
    if d == 1:
        return 0.0 if (P > 0).any() and (P < 0).any() else 2.0
    if d == 2:
        th = np.sort(np.mod(np.arctan2(P[:, 1], P[:, 0]), 2 * np.pi))
        gaps = np.diff(np.concatenate([th, [th[0] + 2 * np.pi]]))
        g = float(gaps.max())
        return 2.0 if g >= np.pi else 2 * math.sin(g / 4)
    hull = ConvexHull(P)
    r = float(np.min(-hull.equations[:, -1]))
    if r <= 0:
        return 2.0
    return math.sqrt(max(2 - 2 * r, 0.0))


def net_supports(V: np.ndarray, C: np.ndarray, k: int, nonneg: bool) -> tuple[np.ndarray, np.ndarray, float]:
    """Rank-1 supports ``top_k(Vc)`` over the net and ``max_C f`` ([APD14] Alg. 3)."""
    n = V.shape[0]
    out_S, out_f = [], []
    step = max(1, int(CHUNK_ENTRIES // max(n, 1)))
    for s in range(0, len(C), step):
        Y = C[s : s + step] @ V.T
        S, f = top_k_supports(Y, k, nonneg)
        out_S.append(S)
        out_f.append(f)
    S = np.vstack(out_S)
    f = np.concatenate(out_f)
    opt = float(f.max())
    S, inv = np.unique(S, axis=0, return_inverse=True)
    fb = np.full(len(S), -np.inf)
    np.maximum.at(fb, inv.ravel(), f)
    return S, fb, opt
