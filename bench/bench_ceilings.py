"""How far the sample-space ℓ0 family can go on the weak cells of issue 28: a floor under every ``dabe_sdp`` bound.

For C = FᵀF (columns a_i), d'Aspremont, Bach & El Ghaoui (JMLR 2008) bound OPT ≤ kρ + φ(ρ) with
φ(ρ) = max_{‖x‖=1} Σ_i ((a_iᵀx)² − ρ)₊, and ``dabe_sdp`` evaluates kρ + λmax(ΣY_i) ≥ kρ + ψ(ρ) ≥ kρ + φ(ρ)
(ψ its semidefinite relaxation, weak duality).  So for any unit vectors x_c

    every dabe_sdp bound ≥ min_ρ g(ρ),   g(ρ) = kρ + max_c Σ_i ((a_iᵀx_c)² − ρ)₊,

a convex piecewise-linear function of ρ, minimised here exactly (ternary search to a bracket, then the
intersection of the two tangents at its ends, which is ≤ the minimum).  The x_c come from alternating
maximisation (x ← top left singular vector of the active columns) from several starts and ρ.  On a
nonnegative problem every bound that ignores w ≥ 0 is also ≥ the signed problem's best value.  Neither
number is a bound on OPT: each says what a family of bounds cannot certify.  Beside them, the bound with a
matrix multiplier (``dabe_sdp_matrix``, docs/certification.md §8a), which is not held by that floor, at a
fixed work allotment (:class:`certpca.clock.Work`, ``MATRIX_WORK`` estimated seconds).

    python bench/bench_ceilings.py     # writes reports/bench/ceilings.md (about 15 CPU minutes)
"""

from __future__ import annotations

import os
import time

import numpy as np
from common import publish
from threadpoolctl import threadpool_limits

from certpca import datasets
from certpca.certification import matrix_dabe_bound
from certpca.certification.duals import factor_with_error
from certpca.certification.sdp_matrix import DABE_SHARE
from certpca.clock import Work
from certpca.solvers import solve

#: the weak cells (data, k) of issue 28 at the default budget; both signs are measured
CELLS = [("khan", 20), ("alon", 20), ("khan", 50), ("cbcl", 30), ("cbcl", 50), ("alon", 50), ("leukemia", 50)]

#: starts and ρ (× value / k) of the alternating maximisation that proposes the x_c
RHO_FACTORS = (0.2, 0.3, 0.45, 0.6, 0.8, 1.0)
N_RANDOM = 6
ITERS = 40

#: the work allotment (estimated seconds) of dabe_sdp_matrix in the table
MATRIX_WORK = 60.0


def candidates(F: np.ndarray, w: np.ndarray, value: float, k: int) -> np.ndarray:
    """Unit x_c (rows): local maxima of Σ_i ((a_iᵀx)² − ρ)₊ from Fw, the top singular vectors and random starts."""
    r = F.shape[0]
    U = np.linalg.svd(F, full_matrices=False)[0]
    rng = np.random.default_rng(0)
    starts = [F @ w, *U[:, : min(4, U.shape[1])].T, *rng.standard_normal((N_RANDOM, r))]
    out = []
    for fct in RHO_FACTORS:
        rho = fct * value / k
        for x0 in starts:
            x = x0 / np.linalg.norm(x0)
            for _ in range(ITERS):
                act = (F.T @ x) ** 2 > rho
                if not act.any():
                    break
                new = np.linalg.svd(F[:, act], full_matrices=False)[0][:, 0]
                done = abs(float(new @ x)) > 1 - 1e-12
                x = new
                if done:
                    break
            out.append(x)
    return np.array(out)


def ceiling(F: np.ndarray, X: np.ndarray, k: int) -> float:
    """min over ρ ≥ 0 of g(ρ) = kρ + max_c Σ_i (v_ci − ρ)₊ with v_ci = (a_iᵀx_c)², from below."""
    V = (X @ F) ** 2

    def g(rho: float) -> tuple[float, float]:
        s = np.sum(np.maximum(V - rho, 0.0), axis=1)
        c = int(np.argmax(s))
        return k * rho + float(s[c]), k - float(np.sum(V[c] > rho))  # value, a subgradient

    lo, hi = 0.0, float(V.max())
    for _ in range(100):
        a, b = lo + (hi - lo) / 3, hi - (hi - lo) / 3
        if g(a)[0] <= g(b)[0]:
            hi = b
        else:
            lo = a
    (g_lo, s_lo), (g_hi, s_hi) = g(lo), g(hi)

    def below(rho: float) -> float:  # g(ρ) ≥ both tangents (g convex); their max at ρ
        return max(g_lo + s_lo * (rho - lo), g_hi + s_hi * (rho - hi))

    points = [lo, hi]
    if s_lo != s_hi:  # where the tangents meet, if inside the bracket
        meet = (g_hi - g_lo + s_lo * lo - s_hi * hi) / (s_lo - s_hi)
        points += [meet] if lo < meet < hi else []
    return min(below(p) for p in points)  # the minimum over [lo, hi] of the two-piece convex minorant


def _publish(load: float, lines: list[str], cells: int) -> None:
    """reports/bench/ceilings.md with the rows so far (every cell's once the run has finished)."""
    done = len(lines) // 2
    partial = "" if done == cells else f" Partial: {done} of {cells} cells so far (the run was cut short)."
    head = [
        "# What the sample-space ℓ0 family (dabe_sdp) can certify on the weak cells (reports/bench/ceilings.md)",
        "",
        "Command: `OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python bench/bench_ceilings.py` "
        f"(load average {load:.1f} at the start, {os.getloadavg()[0]:.1f} at the end). Centred raw data. "
        "'floor' = min_ρ [kρ + max_c Σ_i((a_iᵀx_c)² − ρ)₊] over local maxima x_c, divided by the vector's value: "
        "every dabe_sdp bound is at least this (the ℓ0-penalty Lagrangian's value is at least it; "
        "bench/bench_ceilings.py). 'signed / value': the best signed value over the nonnegative one, a floor under "
        "every bound that ignores w ≥ 0. 'at most' = the vector's value over the larger of the two: the largest"
        " fraction a bound of the family can certify with this vector (100% where no floor above the value was found).",
        "",
        f"'dabe_sdp' and 'matrix': the bound dabe_sdp_matrix starts from (dABE's, with {DABE_SHARE:.0%} of the "
        f"work) and its own, at {MATRIX_WORK:g} estimated seconds of work; 'Z steps' = certified matrix "
        "multipliers; CPU s = its CPU seconds (one computation for both rows)." + partial,
        "",
        "| data | k | problem | value | floor / value | signed / value | at most | dabe_sdp / value "
        "| matrix / value | matrix certifies | Z steps | CPU s |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    publish("ceilings.md", "\n".join(head + lines) + "\n")


def main():
    load = os.getloadavg()[0]
    lines = []
    with threadpool_limits(1):
        for name, k in CELLS:
            P = datasets.load(name).problem()
            F, _ = factor_with_error(P)
            signed = solve(P, k, nonneg=False, method="auto")
            nonneg = solve(P, k, nonneg=True, method="auto")
            X = np.vstack([candidates(F, c.weights, c.variance, k) for c in (signed, nonneg)])
            floor = ceiling(F, X, k)
            t0 = time.process_time()
            bz = matrix_dabe_bound(P, k, time_limit=Work(MATRIX_WORK))  # sign-free: one bound for both rows
            t_z = time.process_time() - t0
            for c in (signed, nonneg):
                is_nn = c is nonneg
                sign_free = max(floor, signed.variance)  # every bound of the family is ≥ the signed value too
                lines.append(
                    f"| {name} | {k} | {'nonneg' if is_nn else 'signed'} | {c.variance:.6g} | {floor / c.variance:.4f} "
                    f"| {signed.variance / c.variance:.4f} | {c.variance / sign_free:.2%} "
                    f"| {bz.params['dabe_sdp'] / c.variance:.4f} | {bz.value / c.variance:.4f} "
                    f"| {c.variance / bz.value:.2%} | {bz.params['z_steps']} | {t_z:.0f} |"
                )
                print(lines[-1], flush=True)
            _publish(load, lines, len(CELLS))  # after each cell: a run cut short leaves its rows


if __name__ == "__main__":
    main()
