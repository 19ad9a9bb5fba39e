"""Exact rank-d spannogram for d ≥ 3: the candidate supports of [APD14] Alg. 2.

Every vertex of the hyperplane arrangement (a direction c where d curves tie)
yields the supports of the cells around it (:func:`vertex_supports`).  For
d = 3 and many features the sphere is cut into patches so that only the
vertices among undecided curves are enumerated (:func:`_patch_vertices_3d`).

At a degenerate tie (many curves equal at one vertex) the ways to complete a
support from the tie are capped at :data:`MAX_TIE_COMPLETIONS`; a capped
enumeration is reported as truncated, never as exact.
"""

from __future__ import annotations

import math
from itertools import combinations, product

import numpy as np

from ...errors import InputError
from .topk import REL_TOL, relevant_curves, subsets, top_k_supports
from .values import null_vectors

#: at one vertex, at most this many ways to complete a support from a tie (per size);
#: more only happens at degenerate ties, and the enumeration is then marked truncated
MAX_TIE_COMPLETIONS = 512

#: ties of at most this many curves are completed all at once (their 2^e subsets), larger ones one by one
SMALL_TIE = 4

#: a (d−1) × d block counts as rank d−1 when its null vector's norm exceeds this × max|W|^{d−1}
RANK_TOL = 1e-12

#: curves within this × max|V_i|·√d of the vertex level count as tied
TIE_TOL = 1e-9

#: a patch's vertex acceptance test is closed with this relative slack (no vertex on a
#: patch border is lost between two patches)
PATCH_SLACK = 1e-9

#: a patch's radius is inflated by this relative slack to cover its rounding
RADIUS_SLACK = 1e-12

#: a hyperplane wᵀc = 0 counts as reaching a patch when a corner is within this × ‖w‖ of it
PLANE_SLACK = 1e-9

#: patches narrower than this (in face coordinates) are not split further
MIN_PATCH = 1e-7

#: first-level split of every cube face into SPLIT0 × SPLIT0 patches
SPLIT0 = 4

#: vertex directions are processed in batches of about this many entries (rows × n)
BATCH_ENTRIES = 2_000_000

#: d-subsets are enumerated in one block up to this many (else one block per first index)
COMBINATION_BLOCK = 200_000

#: plain Alg. 2 on n features is refused above this many operations (use a net instead)
MAX_WORK = 2e10

#: a patch is split until at most this many curves stay undecided (leukemia k = 50, with the
#: triples drawn from the hyperplane table: 80 beat 40 by 1.5x and 160 by 4x)
PATCH_LEAF = 80

#: above this many features d = 3 uses the patch-pruned enumeration
PATCH_MIN_N = 64


def _null_vectors(W: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Unit null vectors of each (d−1) × d block of W (m, d−1, d) and a mask of
    the non-degenerate blocks (rank d−1); degenerate rows are returned as 0."""
    c = null_vectors(W)
    d = W.shape[2]
    nrm = np.linalg.norm(c, axis=1)
    ok = nrm > RANK_TOL * max(float(np.abs(W).max()), 1e-300) ** (d - 1)
    c = np.where(ok[:, None], c / np.where(ok, nrm, 1.0)[:, None], 0.0)
    return c, ok


def _mask_to_supports(mask: np.ndarray, k: int) -> np.ndarray:
    """Rows of a boolean (m, n) mask with ≤ k Trues to sorted index rows padded with n."""
    m, n = mask.shape
    cnt = mask.sum(1)
    order = np.argsort(~mask, axis=1, kind="stable")[:, :k]
    if order.shape[1] < k:
        order = np.hstack([order, np.full((m, k - order.shape[1]), n)])
    order = np.where(np.arange(k)[None, :] < cnt[:, None], order, n)
    return np.sort(order, axis=1)


def vertex_supports(
    V: np.ndarray, k: int, nonneg: bool, *, leaf: int = PATCH_LEAF, max_work: float = MAX_WORK
) -> tuple[np.ndarray, np.ndarray, str | None]:
    """Candidate supports by [APD14] Alg. 2 (any d).

    Each vertex is a direction c where d curves tie: ``[Vc]_{i1} = ±[Vc]_{i2} = … ``
    (sparse, all sign patterns, [PDK13]) or ``[V̂c]_{i1} = … = [V̂c]_{id}`` over V
    with a zero row appended (nonneg; both c and −c).  When the tied group
    straddles the k-th/(k+1)-th boundary (the "ambiguous" case of Alg. 2, lines
    9-17) every way to complete the strictly larger entries from the tie is a
    candidate: these are the supports of the cells around the vertex.  For
    nonneg ties at level 0 any number of tied entries up to the free slots may
    join.  Probe directions (the axes of R^d) are added for arrangements with a
    region that has no such vertex (e.g. one support everywhere).

    Plain Alg. 2 costs O(n^{d+1}).  For d = 3 and n > PATCH_MIN_N the sphere is cut
    into cube-sphere patches, refined (until ≤ ``leaf`` curves stay
    undecided) like the d = 2 sweep: on a patch (inside
    a cap of chordal radius ρ around c₀) every curve satisfies
    ``|[Vc]_i − [Vc₀]_i| ≤ ‖V_i‖ρ``; curves that cannot reach the k-th largest
    lower bound are dropped, curves that fewer than k others can ever exceed are
    always in, and only the vertices among the remaining "boundary" curves that
    fall in the patch are enumerated.  Every vertex lies in some patch, where
    its rank is decided exactly, so the collection is that of Alg. 2.

    Returns ``(S, f, truncated)``: S and f as :func:`~.sweep2d.sweep_supports_2d`
    (f is −inf where unknown); ``truncated`` is None when every candidate was
    enumerated, else the reason some were not (a tie with more than
    MAX_TIE_COMPLETIONS completions): the collection is then incomplete.
    """
    V = np.asarray(V, dtype=float)
    n, d = V.shape
    scale = float(np.abs(V).max()) if n else 0.0
    tol = TIE_TOL * scale * math.sqrt(d)
    probes = np.vstack([np.eye(d), -np.eye(d)])
    out = [top_k_supports(probes @ V.T, k, nonneg)[0]]
    truncated: list[str] = []
    if d == 3 and n > PATCH_MIN_N:
        _patch_vertices_3d(V, k, nonneg, tol, leaf, out, truncated)
    else:
        rows = n + 1 if nonneg else n
        n_vert = math.comb(rows, d) * (2 if nonneg else 2 ** (d - 1))
        if n_vert * n > max_work:
            raise InputError.bad_argument(
                "d",
                f"= {d} with an exact enumeration on n = {n} features needs ~{n_vert * n:.1e} "
                "operations; use net='grid' (or d ≤ 3)",
            )
        enumerate_vertices(V, k, nonneg, tol, out, truncated=truncated)
    S = np.unique(np.vstack(out), axis=0)
    reason = None
    if truncated:
        reason = (
            f"{len(truncated)} degenerate tie(s) with more than {MAX_TIE_COMPLETIONS} ways to "
            f"complete a support, e.g. {truncated[0]}"
        )
    # f is known only for the probes; the cone solver does not need it
    return S, np.full(len(S), -np.inf), reason


def enumerate_vertices(
    V: np.ndarray,
    k: int,
    nonneg: bool,
    tol: float,
    out: list,
    accept=None,
    truncated: list | None = None,
    planes=None,
) -> None:
    """Alg. 2 over all d-subsets of rows of V, appending supports (rows of V, sentinel n) to ``out``.

    ``accept(C)`` keeps only some vertex directions (then ±c are both tried);
    ``planes(s)`` (d = 3 only) is a boolean table over rows of V (and the zero row
    when nonneg) saying whether the hyperplane ``(V_i − s V_j)ᵀc = 0`` can reach the
    accepted region at all: a vertex lies on the hyperplane of every pair of its
    tied curves, so only the triples whose three pairs reach it are enumerated
    (:func:`_tied_triples`).  A description of every capped tie is appended to
    ``truncated`` (if given).
    """
    if truncated is None:
        truncated = []
    n, d = V.shape
    rows = n + 1 if nonneg else n
    Vh = np.vstack([V, np.zeros((1, d))]) if nonneg else V
    signs = [np.ones(d - 1)] if nonneg else [np.array(s) for s in _sign_patterns(d - 1)]
    budget_rows = max(1, int(BATCH_ENTRIES // max(n, 1)))
    if planes is not None and d != 3:
        raise ValueError("planes= is for d = 3")
    blocks = [np.empty((0, d), np.int64)] if planes is not None else _combination_blocks(rows, d)
    for block in blocks:
        Cs, combos = [], []
        for s in signs:
            K: np.ndarray = block if planes is None else _tied_triples(planes, s)
            if len(K) == 0:
                continue
            W = Vh[K[:, 0]][:, None, :] - s[None, :, None] * Vh[K[:, 1:]]
            c, ok = _null_vectors(W)
            c, K = c[ok], K[ok]
            for sg in (1.0, -1.0) if nonneg or accept is not None else (1.0,):
                cc = sg * c
                if accept is not None:
                    m = accept(cc)
                    cc, Kc = cc[m], K[m]
                else:
                    Kc = K
                Cs.append(cc)
                combos.append(Kc)
        if not Cs:
            continue
        Cm = np.vstack(Cs)
        Km = np.vstack(combos)
        for s0 in range(0, len(Cm), budget_rows):
            _vertex_batch(V, Cm[s0 : s0 + budget_rows], Km[s0 : s0 + budget_rows], k, nonneg, tol, out, truncated)


def _combination_blocks(rows: int, d: int):
    """All d-subsets of range(rows) (ascending rows) in blocks: one block while they are few
    (a patch's boundary curves), else one block per first index (plain Alg. 2 on many rows)."""
    if math.comb(rows, d) <= COMBINATION_BLOCK:
        yield subsets(rows, d)
        return
    for i1 in range(rows - d + 1):
        tails = np.array(list(combinations(range(i1 + 1, rows), d - 1)), dtype=np.int64).reshape(-1, d - 1)
        yield np.hstack([np.full((len(tails), 1), i1), tails])


def _tied_triples(planes, s: np.ndarray) -> np.ndarray:
    """Triples i < j < l whose three hyperplanes reach the region, for the sign pattern s of
    ``[Vc]_i = s_1 [Vc]_j = s_2 [Vc]_l``: pairs (i, j) from the table, then every l > j
    on both other hyperplanes, without forming all d-subsets."""
    Tij, Til, Tjl = planes(s[0]), planes(s[1]), planes(s[0] * s[1])
    I, J = np.nonzero(np.triu(Tij, 1))
    if I.size == 0:
        return np.empty((0, 3), np.int64)
    M = Til[I] & Tjl[J]
    M &= np.arange(Tij.shape[0])[None, :] > J[:, None]
    p, L = np.nonzero(M)
    return np.column_stack([I[p], J[p], L]).astype(np.int64, copy=False)


def _patch_vertices_3d(V, k, nonneg, tol, leaf, out, truncated):
    """The patch-pruned Alg. 2 for d = 3 (see :func:`vertex_supports`).

    Long because the patch geometry (face points, corners, the acceptance test
    of a vertex) is shared by closures over one patch's state; capped ties are
    recorded in ``truncated``.
    """
    n = V.shape[0]
    r = np.linalg.norm(V, axis=1)
    slack = REL_TOL * float(r.max())
    faces = [(ax, sg) for ax in range(3) for sg in ((1.0, -1.0) if nonneg else (1.0,))]
    stack = []
    for ax, sg in faces:
        g = np.linspace(-1, 1, SPLIT0 + 1)
        for a in range(SPLIT0):
            for b in range(SPLIT0):
                stack.append((ax, sg, g[a], g[a + 1], g[b], g[b + 1], np.arange(n)))

    def face_point(ax, sg, u, v):
        p = np.empty(np.broadcast(u, v).shape + (3,))
        others = [i for i in range(3) if i != ax]
        p[..., ax] = sg
        p[..., others[0]] = u
        p[..., others[1]] = v
        return p / np.linalg.norm(p, axis=-1, keepdims=True)

    while stack:
        ax, sg, u0, u1, v0, v1, R = stack.pop()
        c0 = face_point(ax, sg, (u0 + u1) / 2, (v0 + v1) / 2)
        corners = face_point(ax, sg, np.array([u0, u0, u1, u1]), np.array([v0, v1, v0, v1]))
        # the spherical quad is geodesically convex: its farthest point from c0 is a corner
        rho = float(np.max(np.linalg.norm(corners - c0, axis=1))) * (1 + RADIUS_SLACK)
        y0 = V[R] @ c0
        spread = r[R] * rho
        if nonneg:
            lo, hi = np.maximum(y0 - spread, 0.0), np.maximum(y0 + spread, 0.0)
        else:
            lo, hi = np.maximum(np.abs(y0) - spread, 0.0), np.abs(y0) + spread
        keep = relevant_curves(lo, hi, k, nonneg, slack)
        R, lo, hi = R[keep], lo[keep], hi[keep]
        hs = np.sort(hi)
        sure = len(hs) - np.searchsorted(hs, lo - slack, side="left") <= k
        if nonneg:
            sure &= lo > slack
        A, B = R[sure], R[~sure]
        if len(B) > leaf and u1 - u0 > MIN_PATCH:
            um, vm = (u0 + u1) / 2, (v0 + v1) / 2
            for a0, a1 in ((u0, um), (um, u1)):
                for b0, b1 in ((v0, vm), (vm, v1)):
                    stack.append((ax, sg, a0, a1, b0, b1, R))
            continue
        kb = k - len(A)
        # probes inside the patch (centre, corners) + Alg. 2 on the boundary curves
        P = np.vstack([c0, corners])
        local = []
        if kb > 0 and len(B):
            local.append(top_k_supports(P @ V[B].T, kb, nonneg)[0])
            others = [i for i in range(3) if i != ax]

            def accept(C, ax=ax, sg=sg, u0=u0, u1=u1, v0=v0, v1=v1, others=others):
                # c (or −c for sparse) on this patch of face (ax, sg), closed with slack
                t = C[:, ax] * sg
                e = PATCH_SLACK
                ok = t > 0
                ok &= np.all(np.abs(C) <= t[:, None] * (1 + e) + 1e-300, axis=1)
                u = C[:, others[0]] / np.where(ok, t, 1)
                v = C[:, others[1]] / np.where(ok, t, 1)
                return ok & (u >= u0 - e) & (u <= u1 + e) & (v >= v0 - e) & (v <= v1 + e)

            if len(B) + (1 if nonneg else 0) >= 3:
                planes = _plane_test(V[B], nonneg, face_point(ax, sg, *_widened(u0, u1, v0, v1)))
                enumerate_vertices(V[B], kb, nonneg, tol, local, accept=accept, truncated=truncated, planes=planes)
            Bm = np.append(B, n)
            SB = np.vstack([Bm[s] for s in local])
        else:
            SB = np.full((1, max(kb, 0)), n, dtype=np.int64)
        S = np.hstack([np.broadcast_to(A, (len(SB), len(A))), SB])
        if S.shape[1] < k:
            S = np.hstack([S, np.full((len(S), k - S.shape[1]), n)])
        out.append(np.sort(S, axis=1))


def _widened(u0, u1, v0, v1):
    """Face coordinates of the corners of a patch widened by PATCH_SLACK (what ``accept`` admits)."""
    e = PATCH_SLACK
    return np.array([u0 - e, u0 - e, u1 + e, u1 + e]), np.array([v0 - e, v1 + e, v0 - e, v1 + e])


def _plane_test(VB: np.ndarray, nonneg: bool, corners: np.ndarray):
    """``planes(s)``: the table of whether the hyperplane ``(V_i − s V_j)ᵀc = 0`` reaches the cone
    over a patch (rows of V_B, and the zero row len(V_B) when nonneg; s = ±1).

    The patch is the radial image of a square on a cube face, so the cone over it is
    generated by its four corners, and a hyperplane through 0 meets that cone iff the
    corners do not all lie strictly on one side; the test keeps a relative slack so
    rounding can only let more hyperplanes through.
    """
    Vh = np.vstack([VB, np.zeros((1, VB.shape[1]))]) if nonneg else VB
    signs = (1.0,) if nonneg else (1.0, -1.0)
    table = np.empty((len(Vh), len(Vh), len(signs)), bool)
    for t, sgn in enumerate(signs):
        W = Vh[:, None, :] - sgn * Vh[None, :, :]
        vals = W @ corners.T
        slack = PLANE_SLACK * np.linalg.norm(W, axis=2)
        table[:, :, t] = (vals.min(axis=2) <= slack) & (vals.max(axis=2) >= -slack)

    def planes(s):
        return table[:, :, 0 if nonneg or s > 0 else 1]

    return planes


def _sign_patterns(m):
    if m == 0:
        yield ()
        return
    for rest in _sign_patterns(m - 1):
        yield rest + (1.0,)
        yield rest + (-1.0,)


def _vertex_batch(V, C, K, k, nonneg, tol, out, truncated):
    """Supports of the cells around the vertices c (rows of C) tied on combos K.

    A tie with more than MAX_TIE_COMPLETIONS completions is cut there and
    described in ``truncated``.
    """
    Y = C @ V.T
    G = Y if nonneg else np.abs(Y)
    t = G[np.arange(len(C)), K[:, 0]]
    gt = G > t[:, None] + tol
    eq = np.abs(G - t[:, None]) <= tol
    n_gt = gt.sum(1)
    n_eq = eq.sum(1)
    zero_level = np.abs(t) <= tol
    if nonneg:
        valid = t >= -tol
        amb = valid & (n_gt < k) & (n_eq > 0) & (zero_level | (n_gt + n_eq > k))
    else:
        amb = (n_gt < k) & (n_gt + n_eq > k)
    small = amb & (n_eq <= SMALL_TIE)
    for e in np.flatnonzero(np.bincount(n_eq[small], minlength=1)):  # the usual ties: all at once
        sel = np.flatnonzero(small & (n_eq == e))
        _small_ties(eq[sel], gt[sel], k - n_gt[sel], nonneg & zero_level[sel], int(e), k, out)
    for b in np.flatnonzero(amb & ~small):
        free = k - n_gt[b]
        E = np.flatnonzero(eq[b])
        base = gt[b]
        if nonneg and zero_level[b]:
            sizes = range(min(free, len(E)) + 1)
        else:
            sizes = [free]
        rows = []
        for sz in sizes:
            if math.comb(len(E), sz) > MAX_TIE_COMPLETIONS:
                truncated.append(f"{len(E)} curves tied for {sz} free slot(s) at c = {np.round(C[b], 6).tolist()}")
            for j, sub in enumerate(combinations(E, sz)):
                if j >= MAX_TIE_COMPLETIONS:
                    break
                mrow = base.copy()
                mrow[list(sub)] = True
                rows.append(mrow)
        if rows:
            out.append(_mask_to_supports(np.array(rows), k))


def _small_ties(eq, gt, free, up_to, e, k, out):
    """Every completion at vertices whose tie has e ≤ SMALL_TIE curves (rows of the masks):
    ``free`` of the tied curves join the strictly larger ones, or any number up to ``free``
    where ``up_to`` (nonneg ties at level 0), as in Alg. 2's ambiguous case."""
    tied = np.nonzero(eq)[1].reshape(-1, e)
    subsets = np.array(list(product((False, True), repeat=e)), bool).reshape(-1, e)
    size = subsets.sum(1)
    allowed = (size[None, :] == free[:, None]) | (up_to[:, None] & (size[None, :] <= free[:, None]))
    vi, si = np.nonzero(allowed)
    if vi.size == 0:
        return
    rows = gt[vi].copy()
    r = np.arange(len(vi))
    for p in range(e):
        rows[r, tied[vi, p]] |= subsets[si, p]
    out.append(_mask_to_supports(rows, k))
