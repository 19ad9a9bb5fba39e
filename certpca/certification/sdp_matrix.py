"""The dABE sample-space bound with a matrix multiplier Z in place of ρI (docs/certification.md §8a).

With C = FᵀF (columns a_i), any Z ⪰ 0 and any Y_i ⪰ a_ia_iᵀ − Z, Y_i ⪰ 0,

    OPT ≤ λmax(kZ + Σ_i Y_i).                                                    (Z)

Why: for an optimal support S (|S| ≤ k) and the top eigenvector x of C_SS,
OPT = Σ_{i∈S}(a_iᵀx)² = Σ_{i∈S}[xᵀZx + xᵀ(a_ia_iᵀ − Z)x] ≤ k·xᵀZx + Σ_i xᵀY_ix.  Z = ρI is
d'Aspremont, Bach & El Ghaoui's bound (JMLR 2008, §4; :mod:`~certpca.certification.sdp_sample`); a
general Z is the multiplier of the constraint Σ_i P_i ⪯ kX, which rank-one points (P_i = u_i·xxᵀ,
Σu_i ≤ k) satisfy and the relaxation's optimum need not: on khan k = 20 its X has a direction with
Σ P_i = 27 X (certpca's own strengthening).  a_ia_iᵀ − Z has at most one positive eigenvalue, so
Y_i = b bᵀ/δ with b = (a_ia_iᵀ − Z)y, δ = yᵀ(a_ia_iᵀ − Z)y > 0 is such a point (as in (B)).

Search: from dABE's best ρ (:func:`~certpca.certification.sdp_sample.dabe_sdp_bound`), Frank–Wolfe on
max_X k⟨Z, X⟩ + Σ_i λmax(X^½(a_ia_iᵀ − Z)X^½)₊ over the spectraplex (the roots of the secular equation
1 = Σ_j c_j²/(λ + w_j) in the eigenbasis of X^½ZX^½), then a projected subgradient step on Z along
kX − Σ_i P_i; every dual point is certified, the smallest kept (with dABE's own bound).

Certification (floating point): with R = Z^½ as stored (any symmetric R; Z := R² exactly), F̃ = R⁻¹F
(stored) and ã_i its columns, (Z) is the bound (B) at ρ = 1 for F̃ read through R: OPT(F'ᵀF') ≤
λmax(R(kI + ΣỸ_i)R) for F' = RF̃, with Ỹ_i from :func:`~certpca.certification.sdp_sample.dual_matrix`
(ΣỸ_i* ⪯ M + e·I, its margins).  Added: e·‖R‖_F², the forming error γ_{2r+2}‖|R||H||R|‖_F of
R H R and the rounding of kI + M, the Weyl margin, ‖FᵀF − F'ᵀF'‖₂ ≤ ‖E‖(2‖F‖_F + ‖E‖) with
E = F − RF̃ bounded by its computed value plus γ_{r+2}‖|R||F̃| + |F|‖_F, ‖C − FᵀF‖, then relative γ_4
and 1e-10.  It ignores w ≥ 0 (valid, weaker there).
"""

from __future__ import annotations

import math

import numpy as np

from certpca.certification.duals import factor_with_error
from certpca.certification.numerics import (
    EPS,
    FLOP_RATE,
    TINY,
    Bound,
    NotApplicable,
    check_k,
    deadline_after,
    gamma,
    safe,
    timed,
)
from certpca.certification.sdp_sample import (
    DABE_SDP,
    MAX_SAMPLES,
    MIX,
    START_KEY,
    _roots,
    dabe_sdp_bound,
    dual_matrix,
    sample_space_seconds,
    step_seconds,
)
from certpca.certification.spec import COST_SDP, DABE, BoundSpec
from certpca.margins import lmax_upper

#: share of the time limit given to dABE's own search (its ρ is the starting Z = ρI)
DABE_SHARE = 0.4

#: Frank–Wolfe steps per Z, Z steps, and the first step on Z (× ρ, along the unit subgradient), halved whenever a
#: step's certified bound is worse than the one before and grown by ``GROW`` after the second in a row that is not,
#: up to ``GROW_CAP`` × the first (:func:`_next_step`).
#: Few Frank–Wolfe steps per Z and many Z steps descend faster: khan raw k = 20 from dABE's 1.0827 with 5 s of
#: work, 150 × 3 Z steps 1.0778, 40 × 6 1.0764, 15 × 12 1.0727, 8 × 22 1.0715, 5 × 34 1.0719 (× the vector's
#: value; step 0.2, halved only).  On CBCL (r = 361) 3 steps per Z and the grown step beat 8 and the halved
#: 0.2: k = 50, 39 s of work from dABE's 1.0317, 1.0030 against 1.0051; k = 30, 8 s from 1.0097 and 1.0112,
#: 1.0038 / 1.0038 against 1.0063 / 1.0084; khan raw k = 20 (5.9 s) 1.0692 against 1.0710.  Without the growth
#: (3 steps, 0.1) the halving, set off by the inexact inner problem's noise, left khan k = 20 at 1.0731
#: (reports/bench/certify.md, helper "cbclstep").  Grown after every step not worse, the step stayed at 0.01–0.15 ρ
#: on that noise where the matrix bound has a few seconds: golub ``--log2 20`` k = 10 1.0189 against 1.0128 now
#: (docs/certification.md §8a, helper "zrule")
STEPS = 3
OUTER = 400
ETA = 0.1
GROW = 1.5
GROW_CAP = 2.0

#: the Z steps end once this many in a row have not lowered the best bound by a relative ``PATIENCE_RTOL``: the
#: step has by then shrunk to nothing (measured with the step halved only: khan raw k = 50 with 60 s, 164 Z steps
#: instead of 400, the same bound; 1e-6 stopped too soon: alon raw k = 50 at 15 s 99.977% → 99.966%;
#: docs/certification.md §8a).  With the grown step 80 gave alon raw k = 50 the same bound, 143 Z steps for 103
PATIENCE = 40
PATIENCE_RTOL = 1e-8

#: Z's eigenvalues are kept at least this × ρ (R = Z^½ invertible)
Z_FLOOR = 1e-3

#: Frank–Wolfe at one Z stops at this relative gap between the (unsafe) dual and the primal value
STOP_GAP = 1e-3

#: a step's r × r eigenproblems (X^½, X^½ZX^½ in each of ~3–6 line-search points, Z⁻¹ and the direction),
#: operations per r³, charged beside dABE's step model.  Measured at one BLAS thread, CPU time of
#: :func:`_frank_wolfe` per step, load average 4.7 on the 2-core bench machine: CBCL k = 30 (r = 361) 0.225 s
#: a step (dABE's model alone 0.029 s; the model with this 0.226 s), khan raw k = 20 (r = 63) 0.0227 s (0.0228;
#: 0.0239).  It was 340, ten times the 0.18 s a step it was calibrated on at CBCL: 1.63 s charged a step,
#: so a 60 s budget left the bound about 20 of its steps there
CUBE_OPS = 42

#: a Z step's own work, in Frank–Wolfe steps (:data:`CUBE_OPS`' step model): its first primal point and direction
#: (computed also when the Frank–Wolfe steps stop at once), its certified value, Z's square roots and the
#: subgradient.  Measured as CUBE_OPS (CPU seconds, load average 4.7): CBCL k = 30 0.106 s (a step 0.226 s),
#: khan raw k = 20 0.016 s (0.024 s), alon raw k = 20 0.011 s (0.021 s).  Uncharged before: on CBCL k = 30 the
#: later Z steps make no Frank–Wolfe step, so the bound ran its 400 Z steps, 104 s on a 60 s budget, and on alon
#: raw k = 20 it took 7.3 CPU s for 3.9 s charged
Z_STEP_SHARE = 0.6


def _sqrt_psd(A: np.ndarray, floor: float = 0.0) -> np.ndarray:
    a, Q = np.linalg.eigh((A + A.T) / 2)
    return (Q * np.sqrt(np.maximum(a, floor))) @ Q.T


def _primal(F: np.ndarray, X: np.ndarray, Z: np.ndarray, k: int):
    """(k⟨Z, X'⟩ + Σ_i h_i(X'), p with P_i = p_ip_iᵀ (0 where h_i = 0), unit y_i) at X' = (1 − MIX)X + MIX·I/r."""
    r = F.shape[0]
    Xm = (1 - MIX) * X + MIX * np.eye(r) / r
    Xh = _sqrt_psd(Xm)
    w, U = np.linalg.eigh(Xh @ Z @ Xh)
    w = np.maximum(w, TINY)
    c = U.T @ (Xh @ F)
    c2 = c * c
    act = np.sum(c2 / w[:, None], axis=0) > 1  # λmax(ccᵀ − W) > 0
    lam = np.zeros(F.shape[1])
    if act.any():  # Σ_j c_j²/(λ + w_j) = 1 is _roots' equation with x = w, ρ = 1 and c² / w
        lam[act] = _roots(w, c2[:, act] / w[:, None], 1.0)
    v = c / (lam[None, :] + w[:, None])
    v = v / np.maximum(np.linalg.norm(v, axis=0), TINY)
    p = Xh @ (U @ v)
    p[:, ~act] = 0.0
    y = p / np.maximum(np.linalg.norm(p, axis=0), TINY)
    return float(np.sum(lam)) + k * float(np.sum(Z * Xm)), p, y


def _direction(F: np.ndarray, Z: np.ndarray, y: np.ndarray, k: int) -> tuple[float, np.ndarray]:
    """(λmax, top eigenvector) of kZ + ΣY_i from unit y_i (unsafe: the Frank–Wolfe step only); a feature
    with no usable y_i takes y_i ∝ Z⁻¹a_i (δ > 0 exactly when a_iᵀZ⁻¹a_i > 1)."""
    Zi = np.linalg.inv(Z)
    ZiF = Zi @ F
    on = np.sum(F * ZiF, axis=0) > 1
    A, Y = F[:, on], y[:, on]
    s = np.sum(A * Y, axis=0)
    d = s * s - np.sum(Y * (Z @ Y), axis=0)
    bad = d <= 1e-6 * np.sum(A * A, axis=0)
    Y[:, bad] = ZiF[:, on][:, bad] / np.linalg.norm(ZiF[:, on][:, bad], axis=0)
    s = np.sum(A * Y, axis=0)
    d = s * s - np.sum(Y * (Z @ Y), axis=0)
    B = A * s - Z @ Y
    with np.errstate(all="ignore"):
        G = k * Z + (B / d) @ B.T
    if not np.all(np.isfinite(G)):
        raise np.linalg.LinAlgError("a feature's δ is too small for a finite step")
    vals, vecs = np.linalg.eigh((G + G.T) / 2)
    return float(vals[-1]), vecs[:, -1]


def certified_value(F: np.ndarray, ferr: float, R: np.ndarray, y: np.ndarray, k: int) -> float:
    """Safe value of (Z) for Z = R² (R symmetric, invertible) with directions y (r × D, unit or 0 columns)."""
    r = F.shape[0]
    Ft = np.linalg.solve(R, F)
    asq = np.einsum("ij,ij->j", Ft, Ft)
    act = np.flatnonzero(asq > 1.0)
    yt = R @ y[:, act]
    n = np.linalg.norm(yt, axis=0)
    yt = np.where(n > 0, yt / np.where(n > 0, n, 1.0), Ft[:, act] / np.sqrt(asq[act]))
    M, e = dual_matrix(Ft, asq, 1.0, act, yt)
    H = M + k * np.eye(r)
    e = e + 2 * EPS * (k + float(np.max(np.abs(np.diag(M)), initial=0.0)))  # the diagonal's rounding
    T = R @ H @ R
    aR = np.abs(R)
    t_form = gamma(2 * r + 2) * float(np.linalg.norm(aR @ np.abs(H) @ aR))
    lam, _ = lmax_upper((T + T.T) / 2, t_form + EPS * float(np.linalg.norm(T)))
    E = F - R @ Ft
    e_norm = float(np.linalg.norm(E)) + gamma(r + 2) * float(np.linalg.norm(aR @ np.abs(Ft) + np.abs(F)))
    f_norm = float(np.linalg.norm(F))
    v = lam + e * float(np.linalg.norm(R)) ** 2 * (1 + gamma(r + 2)) + e_norm * (2 * f_norm + e_norm) + ferr
    return safe(v + gamma(4) * abs(v))


def _frank_wolfe(F, X, Z, k, steps, deadline, step, t=0.5):
    """Frank–Wolfe at fixed Z from X (geometric line search as in sdp_sample, from step ``t``): (X, p, y, primal
    value, the last step t)."""
    f, p, y = _primal(F, X, Z, k)
    for _ in range(steps):
        ub, u = _direction(F, Z, y, k)
        if ub - f <= STOP_GAP * ub or deadline.passed():
            break
        D = np.outer(u, u) - X
        f2, p2, y2 = _primal(F, X + t * D, Z, k)
        if f2 > f:
            while t < 1.0:
                t2 = min(1.0, 2 * t)
                f3, p3, y3 = _primal(F, X + t2 * D, Z, k)
                if f3 <= f2:
                    break
                t, f2, p2, y2 = t2, f3, p3, y3
        else:
            for _ in range(40):
                t = t / 2
                f2, p2, y2 = _primal(F, X + t * D, Z, k)
                if f2 > f:
                    break
        if f2 > f:
            X, f, p, y = X + t * D, f2, p2, y2
        deadline.charge(step)
    return X, p, y, f, t


def _next_step(eta: float, eta0: float, worse: bool, steady: bool) -> tuple[float, bool]:
    """(the step on Z after a Z step, whether that Z step was not worse): halved after a worse Z step, grown by
    ``GROW`` (up to ``GROW_CAP`` × the first step ``eta0``) after the second in a row that was not worse.  A single
    better value may be the inexact inner problem's noise (docs/certification.md §8a)."""
    if worse:
        return eta / 2, False
    return (min(GROW * eta, GROW_CAP * eta0) if steady else eta), True


@timed
def matrix_dabe_bound(
    problem,
    k,
    nonneg=False,
    *,
    time_limit=60.0,
    target: float = math.inf,
    steps: int = STEPS,
    outer: int = OUTER,
    eta: float = ETA,
    warm: bool = True,
    patience: int | None = PATIENCE,
) -> Bound:
    """OPT ≤ λmax(kZ + ΣY_i) (module docstring, (Z)), Z from projected subgradient steps started at dABE's
    best ρI; the minimum of dABE's bound and every certified (Z) point.  Each Frank–Wolfe step is charged
    to ``time_limit`` (:mod:`certpca.clock`) at :func:`~certpca.certification.sdp_sample.step_seconds`.

    It starts where a dabe_sdp search on this problem and k left off (``Problem.memo``: its ρ, bound and
    primal X; a certificate computes dabe_sdp just before), else, or with ``warm`` false, runs one with
    ``DABE_SHARE`` of its time (the report's band: its pool's workers hold the searches of the tasks they
    happened to get, so a start from their memo would make the band depend on the scheduling).
    NotApplicable when that start's bound is above ``target`` (a certificate's best bound so far): another
    bound leads, and the Z steps from dABE's ρ rarely overtake it (alon ``--log2 20`` k = 50: 1.151 → 1.097
    in 5 s of work, threshold's 1.085), so the budget goes to the bounds after it.  It ends early once
    ``patience`` Z steps in a row gained nothing (``PATIENCE``; None: never)."""
    k = check_k(problem, k)
    deadline = deadline_after(time_limit)
    start = START_KEY, k
    if not warm or start not in problem.memo:
        dabe_sdp_bound(problem, k, nonneg, time_limit=deadline.within(DABE_SHARE * deadline.left()))
    rho, first, X = problem.memo[start]
    if first > target:
        raise NotApplicable("dabe_sdp, its start, is not the best bound so far: another bound leads")
    F, ferr = factor_with_error(problem)
    r = F.shape[0]
    if r > MAX_SAMPLES:
        raise NotApplicable(f"r × r eigenproblems per step with r = {r} > {MAX_SAMPLES}")
    step = step_seconds(r, F.shape[1]) + CUBE_OPS * r**3 / FLOP_RATE
    Z = rho * np.eye(r)
    eta0, t = eta, 0.5
    best, done, last, idle, steady = first, 0, math.inf, 0, False
    for z_step in range(outer):
        if deadline.passed() or (patience is not None and idle >= patience):
            break
        # at Z = ρI, dABE's own iterate is the primal point: its bound is dABE's, so no step there
        deadline.charge(Z_STEP_SHARE * step)
        try:
            X, p, y, _f, t = _frank_wolfe(F, X, Z, k, steps if z_step else 0, deadline, step, t)
            value = certified_value(F, ferr, _sqrt_psd(Z), y, k)
        except np.linalg.LinAlgError:  # Z too ill-conditioned for the steps' eigenproblems: the best so far stands
            break
        if not math.isfinite(value):
            break
        idle = 0 if value < best * (1 - PATIENCE_RTOL) else idle + 1
        best = min(best, value)
        eta, steady = _next_step(eta, eta0, value > last, steady)
        last = value
        done += 1
        g = k * ((1 - MIX) * X + MIX * np.eye(r) / r) - p @ p.T  # a subgradient of the dual function at Z
        gn = float(np.linalg.norm(g))
        if not math.isfinite(gn) or gn == 0.0:
            break
        Z = _sqrt_psd(Z - eta * rho * g / gn, math.sqrt(Z_FLOOR * rho))
        Z = Z @ Z
    return Bound(
        best,
        "dabe_sdp_matrix",
        {
            "rho": rho,
            "dabe_sdp": first,
            "z_steps": done,
            "time_limit_reached": deadline.passed(),
            "stalled": patience is not None and idle >= patience,
        },
        0.0,
        "λmax(kZ + ΣY_i) for Z = R², certified as (B) at ρ = 1 for R⁻¹F read through R: dABE's margins, "
        "forming errors of R(kI + M)R and of R·R⁻¹F, Weyl margin, ‖C − FᵀF‖ + rel 1e-10",
    )


DABE_SDP_MATRIX = BoundSpec(
    "dabe_sdp_matrix",
    matrix_dabe_bound,
    COST_SDP,
    time_option="time_limit",
    target_option="target",
    # wherever dabe_sdp (just before it) is a default: wide data, and dense D > 150 (CBCL k = 30, r = 361: dABE's
    # 1.0096 × the vector's value falls to 1.0045 in 6 Z steps, where dABE's own search had converged)
    default_when=DABE_SDP.default_when,
    estimate=sample_space_seconds,
    charges=True,  # each Frank–Wolfe step, dabe_sdp's search first
    sign_free=True,
    continues="dabe_sdp",
    description="dABE sample-space bound with a matrix multiplier: λmax(kZ + ΣY_i), Y_i ⪰ a_ia_iᵀ − Z, Y_i ⪰ 0",
    reference=DABE + " (§4), with the multiplier ρI of the cardinality constraint replaced by a matrix Z ⪰ 0, "
    "the dual of the constraint Σ_i P_i ⪯ kX (certpca's own strengthening).",
)

SPECS = [DABE_SDP_MATRIX]
