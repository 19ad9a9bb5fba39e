"""How far the matrix-multiplier bound (``dabe_sdp_matrix``, docs/certification.md §8a) can go on one cell: a
floor under every value of its family, and its Z search's certified value against work.

Every dual value λmax(kZ + ΣY_i) (Z ⪰ 0, Y_i ⪰ a_ia_iᵀ − Z, Y_i ⪰ 0) is at least Σ_i ⟨a_ia_iᵀ, P_i⟩ for any
feasible point of the primal 0 ⪯ P_i ⪯ X, Σ_i P_i ⪯ kX, tr X = 1 (weak duality: ⟨a_ia_iᵀ − Z, P_i⟩ ≤
⟨Y_i, P_i⟩ ≤ ⟨Y_i, X⟩ and ⟨Z, ΣP_i⟩ ≤ k⟨Z, X⟩, so the sum is at most ⟨kZ + ΣY_i, X⟩ ≤ λmax).  The feasible
point here: the primal restricted to the span U of the top ``m`` eigenvectors of dABE's primal X (the start of
the matrix bound), X = U X̃ Uᵀ and P_i = U P̃_i Uᵀ for the ``top`` features of largest ‖Uᵀa_i‖² (P_i = 0 for
the others), solved by Clarabel through cvxpy, then repaired so that it is feasible whatever the solver's
accuracy: X̃ mixed with 10⁻³·I/m, each P̃_i's negative eigenvalues dropped and P̃_i scaled into X̃, then all
scaled into kX̃.  The floor is no bound on OPT: it says what no bound of the family can certify.

Beside it, the bound itself called alone with ``WORK`` estimated seconds (:class:`certpca.clock.Work`): its
certified value at each Z step (recorded by wrapping ``sdp_matrix.certified_value``) and the step size
ETA·ρ of its halving rule.

Usage: python bench/matrix_floor.py DATA K VALUE [M TOP] [--log2 OFFSET]   (one BLAS thread; khan 50 35.6137: about
4 minutes; alon 50 64.4254 --log2 20: about 3)
"""

from __future__ import annotations

import argparse
import math
import time

import cvxpy as cp
import numpy as np
from threadpoolctl import threadpool_limits

from certpca import datasets
from certpca.certification import sdp_matrix
from certpca.certification.duals import factor_with_error
from certpca.certification.sdp_sample import START_KEY
from certpca.clock import Work

#: the bound's work allotment (estimated seconds): its halving rule has stopped it long before, on khan k = 50
WORK = 600.0
#: work marks (estimated seconds) at which the curve is printed
MARKS = (0.5, 1.2, 2, 3, 5, 10, 20, 40, 600)
#: the mixing weight that keeps the repaired X̃ positive definite
MIX = 1e-3


def subspace_floor(F: np.ndarray, X: np.ndarray, k: int, m: int, top: int) -> float:
    """Σ_i ⟨a_ia_iᵀ, P_i⟩ at a feasible point of the primal restricted to the top-m eigenvectors of X."""
    U = np.linalg.eigh(X)[1][:, ::-1][:, :m]
    A = U.T @ F
    A = A[:, np.argsort(-np.einsum("ij,ij->j", A, A))[:top]]
    Xv = cp.Variable((m, m), PSD=True)
    Ps = [cp.Variable((m, m), PSD=True) for _ in range(A.shape[1])]
    cons = [cp.trace(Xv) == 1, k * Xv - sum(Ps) >> 0] + [Xv - P >> 0 for P in Ps]
    cp.Problem(cp.Maximize(sum(a @ P @ a for a, P in zip(A.T, Ps))), cons).solve(solver="CLARABEL")
    w, V = np.linalg.eigh((Xv.value + Xv.value.T) / 2)
    w = np.maximum(w, 0.0)
    w = (1 - MIX) * w / np.sum(w) + MIX / m  # tr X̃ = 1, X̃ ≻ 0
    inv_half = (V / np.sqrt(w)) @ V.T
    repaired = []
    for P in Ps:
        p, Q = np.linalg.eigh((P.value + P.value.T) / 2)
        Pi = (Q * np.maximum(p, 0.0)) @ Q.T
        repaired.append(Pi / max(1.0, float(np.linalg.eigvalsh(inv_half @ Pi @ inv_half)[-1])))  # P̃_i ⪯ X̃
    total = inv_half @ sum(repaired) @ inv_half
    scale = 1.0 / max(1.0, float(np.linalg.eigvalsh((total + total.T) / 2)[-1]) / k)  # ΣP̃_i ⪯ kX̃
    return scale * float(sum(a @ P @ a for a, P in zip(A.T, repaired)))


def curve(problem, k: int) -> list[tuple[float, float, float]]:
    """(work used since its first Z step, certified value, step size ETA·ρ / ρ after it) at each Z step of the
    bound called alone (its first Z step is dABE's own point, after dABE's search)."""
    work, seen = Work(WORK), []
    certified = sdp_matrix.certified_value

    def recorded(*args):
        value = certified(*args)
        seen.append((work.used(), value))
        return value

    sdp_matrix.certified_value = recorded
    try:
        sdp_matrix.matrix_dabe_bound(problem, k, time_limit=work)
    finally:
        sdp_matrix.certified_value = certified
    eta, last, out = sdp_matrix.ETA, math.inf, []
    for used, value in seen:  # the module's rule: halved whenever a value is worse than the one before
        eta = eta / 2 if value > last else eta
        last = value
        out.append((used - seen[0][0], value, eta))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description="The matrix bound's floor and its Z search's curve on one cell.")
    parser.add_argument("data", help="a bundled data set, centred")
    parser.add_argument("k", type=int)
    parser.add_argument("value", type=float, help="the vector's value the fractions are of")
    parser.add_argument("m", type=int, nargs="?", default=20, help="the subspace's dimension (default 20)")
    parser.add_argument("top", type=int, nargs="?", default=400, help="features with P_i != 0 (default 400)")
    parser.add_argument("--log2", type=float, metavar="OFFSET", help="log2(x + OFFSET) before centring")
    a = parser.parse_args()
    name, k, value, m, top, log2 = a.data, a.k, a.value, a.m, a.top, a.log2
    problem = datasets.load(name, log2=log2).problem()
    F, _ = factor_with_error(problem)
    with threadpool_limits(1):
        t0 = time.process_time()
        steps = curve(problem, k)
        t_curve = time.process_time() - t0
        rho, start, X = problem.memo[START_KEY, k]
        print(f"{t_curve:.1f} CPU s, ρ = {rho:.4g}, dABE's bound {start / value:.5f} × the value")
        print("| work after dABE (s) | best certified / value | Z steps | step ETA·ρ / ρ |")
        for mark in MARKS:
            upto = [s for s in steps if s[0] <= mark]
            if upto:
                best = min(v for _, v, _ in upto)
                print(f"| {mark:g} | {best / value:.5f} | {len(upto)} | {upto[-1][2]:.3g} |")
        t0 = time.process_time()
        floor = subspace_floor(F, X, k, m, top)
        print(
            f"floor (m = {m}, top = {top} features): {floor:.4f} = {floor / value:.5f} × the value, "
            f"at most {value / floor:.2%} certifiable ({time.process_time() - t0:.1f} CPU s)"
        )


if __name__ == "__main__":
    main()
