"""Bounds through a rank-d part of C: the spannogram bound and the rank-d split.

Both rest on C = A_d + R with A_d the top-d eigen-part: OPT ≤ OPT(A_d) + OPT_k(R),
with OPT(A_d) computed exactly by the spannogram (Asteris et al., ICML 2014) in
:mod:`certpca.solvers.spannogram` — the solver proposes OPT_d, this module adds
every floating-point margin (docs/certification.md §4).
"""

from __future__ import annotations

import math

import numpy as np

from certpca.certification.duals import dabe_bound
from certpca.certification.numerics import (
    EPS,
    MARGIN_SLACK,
    TINY,
    Bound,
    NotApplicable,
    check_k,
    deadline_after,
    dense_matrix,
    gamma,
    lmax_upper,
    psd_shift,
    quadratic_seconds,
    safe,
    sample_space_seconds,
    spectrum_margin,
    timed,
    vector_params,
    whole_run,
)
from certpca.certification.spec import ASTERIS, COST_SEARCH, PDK, BoundSpec
from certpca.certification.spectral import gershgorin_bound, lambda1_bound
from certpca.clock import Deadline, TimeUp
from certpca.problem import Problem
from certpca.solvers.spannogram import spannogram
from certpca.validation import check_choice

#: relative slack on the spannogram's OPT_d: it is xᵀÂ_d x of a computed x, rounded in
#: the d × d eigenproblems and products of the enumeration (a few ulps of d-term sums)
OPT_D_SLACK = 1e-9

#: roundings per entry when forming the residual Gh·(I − UUᵀ)·Gh in sample space
RESIDUAL_ROUNDINGS = 16

#: bounds that may bound the residual of the split (all cheap, all valid for a factor problem)
INNER_BOUNDS = {"dabe": dabe_bound, "gershgorin": gershgorin_bound, "lambda1": lambda1_bound}

#: the default-selection limit of the spannogram bound (it recomputes λmax(C − Â_d) densely)
SPANNOGRAM_MAX_DIM = 2000

#: the split works in sample space; its inner Gershgorin bound has no time limit, so D is capped
SPLIT_MAX_DIM = 60000


@timed
def spannogram_bound(
    problem,
    k,
    nonneg=False,
    *,
    d: int = 2,
    net: str | None = None,
    epsilon: float = 0.1,
    rng=None,
    time_limit: Deadline | float | None = None,
) -> Bound:
    """Asteris et al. (ICML 2014): OPT ≤ OPT_d + λ_{d+1}, OPT_d on the rank-d part A_d.

    Uses certpca.solvers.spannogram (exact enumeration for d, or a deterministic
    ε-net, in which case OPT_d ≤ max_net f/(1−ε)²).  The solver's OPT_d is a
    value of A_d at its (exactly searched) maximiser: we recompute x ᵀA_d x for
    the returned weights and add margins for the eigen-decomposition.
    Validity: C = Â_d + R for the computed Â_d, so OPT ≤ OPT(Â_d) + λmax(R); λmax(R)
    is recomputed here (not the solver's λ_{d+1}) with its Weyl margin; OPT(Â_d)
    is the solver's exact enumeration value (× (1+1e-9)); + rel 1e-10.  An exact
    enumeration the solver had to truncate (Alg. 2 at degenerate ties) proves
    nothing: the bound is then skipped (NotApplicable with the solver's reason), and so is one that
    ``time_limit`` (seconds of the budget clock, :mod:`certpca.clock`) stops during a d = 2 enumeration.
    """
    k = check_k(problem, k)
    kw: dict = {"d": d, "rng": rng, "net": net}
    if net is not None:
        kw["epsilon"] = epsilon
    try:
        res = spannogram(problem, k, nonneg=nonneg, deadline=deadline_after(time_limit), **kw)
    except TimeUp:
        raise NotApplicable("its time limit ended the enumeration, which proves nothing unfinished") from None
    if res.truncated is not None:
        raise NotApplicable(f"the rank-{res.d} enumeration is not exhaustive ({res.truncated})")
    optd = float(res.opt_d)
    eps_net = res.epsilon
    if eps_net is not None:
        if eps_net >= 1:
            raise NotApplicable(f"net covering radius ε = {eps_net} ≥ 1 gives no bound")
        optd = optd / (1.0 - float(eps_net)) ** 2
    lam_next = residual_lmax(problem, int(res.d))
    # OPT ≤ OPT(Â_d) + λmax(C − Â_d) for the *computed* rank-d part Â_d (both exact
    # statements for any symmetric split); λmax(C − Â_d) is computed here, not trusted.
    v = optd * (1 + OPT_D_SLACK) + max(lam_next, 0.0)
    return Bound(
        safe(v),
        "spannogram",
        {
            "d": int(res.d),
            "opt_d": float(res.opt_d),
            "lambda_next": lam_next,
            "method": str(res.method),
            "epsilon": eps_net,
            "feasible_value": float(res.value),
            **vector_params(res.weights),
        },
        0.0,
        "OPT_d (/(1−ε)² for a net) + λmax(C − Â_d) (recomputed, Weyl margin) + rel 1e-10",
    )


def residual_lmax(problem, d: int) -> float:
    """Safe upper bound on λmax(C − Â_d), Â_d = Σ_{j≤d} λ̂_j v̂_j v̂_jᵀ from ``problem.eigh(d)``."""
    vals, vecs = problem.eigh(d)
    keep = vals > 0  # as the spannogram's surrogate: only positive eigenvalues enter Â_d
    vals, vecs = vals[keep], vecs[:, keep]
    if problem.uses_factor:
        F = problem.factor()
        G = F @ F.T
        w, Q = np.linalg.eigh(G)
        Gh = (Q * np.sqrt(np.maximum(w, 0))) @ Q.T  # G^½
        U = (F @ vecs) / np.sqrt(np.maximum(vals, TINY))  # u_j with λ_j v_j v_jᵀ = Fᵀu_ju_jᵀF
        M = np.eye(F.shape[0]) - U @ U.T
        R = Gh @ M @ Gh  # same nonzero spectrum as Fᵀ M F
        tr = problem.trace
        form = (gamma(problem.dim) + RESIDUAL_ROUNDINGS * F.shape[0] * EPS) * tr * (1 + float(np.linalg.norm(M)))
        lam, _ = lmax_upper((R + R.T) / 2, form)
        return lam
    C = problem.dense()
    R = C - (vecs * vals) @ vecs.T
    form = gamma(d + 2) * float(np.sum(np.abs(vals))) + EPS * float(np.linalg.norm(C))
    lam, _ = lmax_upper((R + R.T) / 2, form)
    return lam


# ------------------------------------------------------------ rank-d split
def split_factors(problem, d: int) -> tuple[np.ndarray, np.ndarray, float, float]:
    """Factors G_d (d × D), G_⊥ with ‖Fw‖² ≈ ‖G_d w‖² + ‖G_⊥ w‖², and the error terms.

    G = QᵀF for the eigenvectors Q of the Gram FFᵀ (top d rows first).  Returns
    (G_d, G_⊥, δ, e): for every unit w,  wᵀCw ≤ (‖Ĝw‖ + e)² + δ·‖F‖₂², with
    δ ≥ ‖QQᵀ − I‖₂ and e ≥ ‖ĜᵀΔ‖ the rounding of the product QᵀF.
    """
    F = problem.factor()
    r = F.shape[0]
    _, Q = np.linalg.eigh(F @ F.T)
    Q = Q[:, ::-1]
    G = Q.T @ F
    I = np.eye(r)
    delta = float(np.linalg.norm(Q @ Q.T - I)) * (1 + MARGIN_SLACK) + 4 * r * EPS
    e = gamma(r) * math.sqrt(r) * math.sqrt(problem.trace) * (1 + MARGIN_SLACK)
    return G[:d], G[d:], delta, e


@timed
def split_bound(problem, k, nonneg=False, *, d: int = 2, inner: tuple = ("dabe", "gershgorin")) -> Bound:
    """Rank-d split: OPT ≤ OPT(A_d) + OPT_k(R) with C = A_d + R, both PSD.

    The spannogram bound of Asteris et al. (ICML 2014, Thm. 1) bounds the second
    term by λmax(R) = λ_{d+1}; but R is itself a sparse PCA problem, and any valid
    bound on OPT_k(R) may replace λ_{d+1}: wᵀCw = wᵀA_dw + wᵀRw ≤ OPT(A_d) + OPT_k(R).
    OPT(A_d) is the exact spannogram value (d ≤ 2 by the angular sweep; d = 3 by
    Alg. 2 when D is small); OPT_k(R) is the smallest of the ``inner`` bounds on R.
    Both parts are taken in sample space: A_d = G_dᵀG_d and R = G_⊥ᵀG_⊥ with
    G = QᵀF, Q the eigenvectors of FFᵀ (a dense C is first factored exactly as far
    as its rounding allows, see below), so no D × D array is formed.
    Validity: for unit w, wᵀCw ≤ (√(OPT(Ĝ_d) + UB(R̂)) + e)² + δ·λ̂1 with e the
    product rounding and δ ≥ ‖QQᵀ − I‖₂; OPT(Ĝ_d) × (1 + 1e-9) for the sweep's
    rounding; the inner bounds carry their own margins; then rel 1e-10.  A dense
    C is used through C + sI = FᵀF with F from its eigendecomposition and the
    eigen-residual ‖C + sI − FᵀF‖₂ added.
    """
    k = check_k(problem, k)
    inner = tuple(check_choice(name, INNER_BOUNDS, "inner") for name in inner)
    extra, shift = 0.0, 0.0
    base = problem
    if not problem.uses_factor:
        C, _ = dense_matrix(problem)
        shift = psd_shift(problem)
        vals, vecs = np.linalg.eigh(C + shift * np.eye(problem.dim))
        Fd = (vecs * np.sqrt(np.maximum(vals, 0.0))).T
        extra = float(np.linalg.norm(C + shift * np.eye(problem.dim) - Fd.T @ Fd)) * (1 + MARGIN_SLACK) + gamma(
            problem.dim
        ) * (problem.trace + problem.dim * shift)
        base = Problem(factor=Fd, feature_ids=problem.feature_ids)
    d = min(d, base.factor().shape[0])
    Gd, Gr, delta, e = split_factors(base, d)
    top = spannogram(Problem(factor=Gd), k, nonneg=nonneg, d=d)
    if top.truncated is not None:
        raise NotApplicable(f"the rank-{top.d} enumeration is not exhaustive ({top.truncated})")
    opt_d = float(top.opt_d) * (1 + OPT_D_SLACK)
    rest = Problem(factor=Gr)
    inner_bounds = {}
    for name in inner:
        try:
            inner_bounds[name] = INNER_BOUNDS[name](rest, k, nonneg).value
        except NotApplicable:
            continue
    if not inner_bounds:
        raise NotApplicable("no inner bound applies to the residual")
    ub_rest = min(inner_bounds.values())
    lam1 = float(base.eigenvalues()[0]) + spectrum_margin(base)
    v = (math.sqrt(opt_d + ub_rest) + e) ** 2 + delta * lam1 + extra - shift
    return Bound(
        safe(v),
        "split",
        {
            "d": d,
            "opt_d": float(top.opt_d),
            "residual_bounds": inner_bounds,
            "feasible_value": float(problem.variance(top.weights)),
            **vector_params(top.weights),
            "delta": delta,
            "e": e,
            "shift": shift,
        },
        0.0,
        "OPT_d (exact spannogram, ×(1+1e-9)) + min of inner bounds on the residual "
        "(their own margins), product rounding e and orthogonality δ·λ1 added, + rel 1e-10",
    )


SPANNOGRAM = BoundSpec(
    "spannogram",
    spannogram_bound,
    COST_SEARCH,
    max_dim=SPANNOGRAM_MAX_DIM,
    time_option="time_limit",
    estimate=sample_space_seconds,  # the top-2 eigenvectors, before the sweep
    charges=True,  # each step of the sweep
    description="OPT_d + λmax(C − A_d), d = 2: the exact rank-2 optimum plus the residual's top eigenvalue",
    reference=ASTERIS + " (Thm. 1 and the data-dependent bound of §2.1); signed case: " + PDK,
)

SPLIT = BoundSpec(
    "split",
    split_bound,
    COST_SEARCH,
    max_dim=SPLIT_MAX_DIM,
    estimate=quadratic_seconds,
    work=lambda problem, k: quadratic_seconds(problem, k) + whole_run(sample_space_seconds, 20, 0.1)(problem, k),
    description="OPT_d + a sparse bound on the residual C − A_d, d = 2 (sample space)",
    reference="certpca's own refinement of the spannogram bound of " + ASTERIS + " With C = A_d + R "
    "(A_d the top-d eigen-part, both PSD), wᵀCw = wᵀA_dw + wᵀRw ≤ OPT(A_d) + OPT_k(R); "
    "the residual is itself a sparse PCA problem, so its λ_{d+1} is replaced by the smallest "
    "of the dABE, Gershgorin and λ1 bounds on R, all computed in sample space.",
)

SPECS = [SPANNOGRAM, SPLIT]
