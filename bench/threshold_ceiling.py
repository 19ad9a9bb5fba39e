"""How far the threshold bound (certpca/certification/threshold.py) can go on its weak expression cells.

The bound is OPT ≤ (k − 1)ρ + max_K ub_k(M_KK), M the thresholded C, R = C − M (zero diagonal).  Since
max (a + b) ≤ max a + max b over the same unit k-sparse w (w ≥ 0 for nonneg), any valid bound on
max wᵀRw may replace (k − 1)ρ.  At ρ around the bound's best this prints one markdown row per cell and ρ:

* the residual term's alternatives: λmax(R) (interlacing), the k-sparse Gershgorin max_i Σ top_{k−1}|R_ij|,
  for w ≥ 0 the same on R₊ (wᵀRw ≤ wᵀR₊w), and a lower bound of max wᵀRw itself (certpca's solvers on
  R + sI): no bound of the residual term can go below it;
* the same sum for the hard threshold (M keeps C_ij where the key is above ρ, R the rest);
* the giant component: the bound's ub_k on it, a lower bound of its own k-sparse maximum (the solvers on
  M_KK + sI), and the bound if every component were bounded by max(that lower bound, the other
  components' bounds): what no better component bound can beat;
* for a giant of at most ``SCREEN_MAX`` features, the lowest level at which Schur screening
  (:func:`certpca.solvers.search.screen`) leaves at most one feature of it, with its diagonal entry below the
  level, found by bisection: a valid component bound (every support above the level lies in what is left).

With ``--remainder``, per cell and ρ, the giant's rank-2 split M_KK = Â + (M_KK − Â) (Â the top-2
eigen-part shifted by λ_3, as the bound's): OPT_k(Â), λmax of the remainder (λ_3, what the bound adds),
its k-sparse Gershgorin and weighted (Perron) k-sparse Gershgorin bounds, and the spectral trace bound
λmax(A_SS) ≤ s + trace(((A − sI)₊)_SS) ≤ s + top_k diag((A − sI)₊) with s optimised over A's spectrum,
for A the remainder and A = M_KK itself (no margins: these only say whether such a bound could pay).

Usage: python bench/threshold_ceiling.py [--remainder | DATA ...]   (one BLAS thread; about 10 / 3 minutes)
"""

from __future__ import annotations

import sys
import warnings

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as sla
from scipy.sparse.csgraph import connected_components
from threadpoolctl import threadpool_limits

from certpca import datasets
from certpca.certification.threshold import DENSE_COMPONENT_MAX, _rank2_bound, _ub_components, threshold_bound
from certpca.margins import shifted_rank2
from certpca.problem import Problem
from certpca.solvers import solve
from certpca.solvers.search import screen

CELLS = [("alon", 50, False), ("alon", 50, True), ("golub", 20, True)]
FACTORS = (0.7, 0.85, 0.95, 1.0, 1.15)
SCREEN_MAX = 800
BISECTIONS = 7
#: the residual's feasible value: em and threshold up to this many features, threshold alone above (em on
#: golub's 7129 × 7129 residual ran for minutes)
R_EM_MAX = 3000
R_METHODS = ("em", "threshold")


def thresholded(C: np.ndarray, rho: float, nonneg: bool, hard: bool) -> np.ndarray:
    """M: the diagonal of C kept, the off-diagonal thresholded at ρ (soft as the bound, or hard)."""
    keep = (C if nonneg else np.abs(C)) > rho
    if hard:
        M = np.where(keep, C, 0.0)
    else:
        M = np.where(keep, C - rho if nonneg else np.sign(C) * (np.abs(C) - rho), 0.0)
    np.fill_diagonal(M, np.diag(C))
    return M


def sparse_rows(A: np.ndarray, kk: int) -> float:
    """max_i of the sum of the kk largest entries of row i of A (A ≥ 0, zero diagonal)."""
    return float(np.max(np.sum(-np.partition(-A, kk - 1, axis=1)[:, :kk], axis=1)))


def lmax(A: np.ndarray) -> float:
    return float(sla.eigsh(A, k=1, which="LA", v0=np.ones(A.shape[0]))[0][0])


def components_bound(M: np.ndarray, k: int, nonneg: bool) -> tuple[float, np.ndarray]:
    """(max_K ub_k(M_KK) as the threshold bound computes it, with the rank-2 bound; the giant's features)."""
    D = M.shape[0]
    iu, ju = np.nonzero(np.triu(M, 1))
    m = M[iu, ju]
    n_comp, labels = connected_components(sp.coo_matrix((np.ones(len(m)), (iu, ju)), shape=(D, D)), directed=False)
    ub, _ = _ub_components(labels, n_comp, iu, ju, m, np.diag(M).copy(), k, DENSE_COMPONENT_MAX, rank2=nonneg)
    return ub, np.flatnonzero(labels == np.argmax(np.bincount(labels)))


def sparse_lower(A: np.ndarray, k: int, nonneg: bool, methods=("em", "threshold", "auto")) -> float:
    """A feasible value of max wᵀAw over unit k-sparse w (w ≥ 0): certpca's solvers on A + sI (PSD)."""
    s = max(0.0, -lmax(-A)) * 1.001 + 1e-9
    Q = Problem.from_covariance(A + s * np.eye(len(A)))
    values = []
    for method in methods:
        w = solve(Q, k, nonneg=nonneg, method=method).weights
        values.append(float(w @ A @ w) / float(w @ w))
    return max(values)


def screening_level(Mg: np.ndarray, k: int, nonneg: bool, lo: float, hi: float) -> float:
    """The lowest level in [lo, hi] (to 2^-BISECTIONS of it) at which screening leaves at most one feature."""
    for _ in range(BISECTIONS):
        mid = (lo + hi) / 2
        F, _ = screen(Mg, k, nonneg, mid)
        # every support above ``mid`` lies in F: with one feature left, only that feature alone
        lo, hi = (lo, mid) if len(F) == 0 or (len(F) == 1 and Mg[F[0], F[0]] <= mid) else (mid, hi)
    return hi


def trace_bound(A: np.ndarray, k: int) -> float:
    """min over s in A's spectrum of s + the sum of the k largest diagonal entries of (A − sI)₊."""
    mu, U = np.linalg.eigh(A)
    U2 = U * U
    best = float(mu[-1])
    for top in range(len(mu) - 1, max(len(mu) - 400, 0), -1):
        s = float(mu[top - 1])
        h = U2[:, top:] @ (mu[top:] - s)
        best = min(best, s + float(np.sum(np.partition(h, len(h) - k)[-k:])))
    return best


def remainder_rows() -> None:
    print(
        "| cell | ρ | giant features | OPT_k(Â) | λ_3 | remainder: Gersh_k, weighted Gersh_k, trace bound "
        "| rank-2 bound → with the trace bound | λmax(M_KK) → trace bound |"
    )
    print("|" + "---|" * 8)
    with threadpool_limits(1):
        for name, k, nonneg in CELLS:
            P = datasets.load(name, log2=20).problem()
            C = P.dense()
            rho0 = threshold_bound(P, k, nonneg, time_limit=60.0).params["rho"]
            for f in (0.65, 0.85, 1.0):
                M = thresholded(C, rho0 * f, nonneg, hard=False)
                giant = components_bound(M, k, nonneg)[1]
                Mg = M[np.ix_(giant, giant)]
                lam, V = np.linalg.eigh(Mg)
                G, Rem, _ = shifted_rank2(Mg, lam[-3:], V[:, -3:])
                opt2 = _rank2_bound((G, 0.0), k, nonneg)
                A = np.abs(Rem)
                d = np.diag(Rem).copy()
                np.fill_diagonal(A, 0.0)
                v = np.ones(len(d))
                for _ in range(50):  # Perron vector of Diag(d − min d) + |Off(Rem)|
                    v = A @ v + (d - d.min()) * v
                    v = np.maximum(v / v.max(), 1e-9)
                gersh = float(np.max(d + np.sum(-np.partition(-A, k - 2, axis=1)[:, : k - 1], axis=1)))
                W = A * v[None, :]
                wgersh = float(np.max(d + np.sum(-np.partition(-W, k - 2, axis=1)[:, : k - 1], axis=1) / v))
                tr = trace_bound(Rem, k)
                print(
                    f"| {name} `--log2 20` k = {k} {'nonneg' if nonneg else 'signed'} | {rho0 * f:.4g} ({f:.2f}×) "
                    f"| {len(giant)} | {opt2:.3f} | {lam[-3]:.3f} | {gersh:.2f}, {wgersh:.2f}, {tr:.3f} "
                    f"| {opt2 + lam[-3]:.3f} → {opt2 + tr:.3f} | {lam[-1]:.3f} → {trace_bound(Mg, k):.3f} |",
                    flush=True,
                )


def main() -> None:
    if "--remainder" in sys.argv:
        remainder_rows()
        return
    names = sys.argv[1:]  # the data sets whose cells to measure (all: none)
    print(
        "| cell | ρ | (k−1)ρ | λmax(R) | Gersh_k(R) | Gersh_k(R₊) | max wᵀRw ≥ | hard: bound | max_K ub "
        "| giant: features, ub, ≥ | others' ub | ideal bound (fraction) | screening level → bound (fraction) |"
    )
    print("|" + "---|" * 13)
    warnings.simplefilter("ignore")  # the solvers' convergence notes on the shifted blocks
    with threadpool_limits(1):
        for name, k, nonneg in CELLS:
            if names and name not in names:
                continue
            P = datasets.load(name, log2=20).problem()
            C = P.dense()
            value = solve(P, k, nonneg=nonneg, method="auto").variance  # the vector of the expression rows
            rho0 = threshold_bound(P, k, nonneg, time_limit=60.0).params["rho"]
            cell = f"{name} `--log2 20` k = {k} {'nonneg' if nonneg else 'signed'}, value {value:.4f}"
            for f in FACTORS:
                rho = rho0 * f
                spread = (k - 1) * rho
                cols = [f"{rho:.4g} ({f:.2f}×)", f"{spread:.2f}"]
                M = thresholded(C, rho, nonneg, hard=False)
                R = C - M
                np.fill_diagonal(R, 0.0)
                cols += [f"{lmax(R):.1f}", f"{sparse_rows(np.abs(R), k - 1):.2f}"]
                cols.append(f"{sparse_rows(np.maximum(R, 0.0), k - 1):.2f}" if nonneg else "")
                cols.append(f"{sparse_lower(R, k, nonneg, R_METHODS if len(R) <= R_EM_MAX else ('threshold',)):.2f}")
                H = thresholded(C, rho, nonneg, hard=True)
                RH = C - H
                np.fill_diagonal(RH, 0.0)
                resid_h = min(spread, sparse_rows(np.maximum(RH, 0.0) if nonneg else np.abs(RH), k - 1))
                cols.append(f"{components_bound(H, k, nonneg)[0] + resid_h:.2f}")
                ub, giant = components_bound(M, k, nonneg)
                Mg = M[np.ix_(giant, giant)]
                ub_g = components_bound(Mg, k, nonneg)[0]
                low_g = sparse_lower(Mg, k, nonneg)
                others = M.copy()
                others[np.ix_(giant, giant)] = 0.0
                np.fill_diagonal(others, np.diag(M))
                ub_o = components_bound(others, k, nonneg)[0]
                ideal = spread + max(low_g, ub_o)
                cols += [f"{ub:.3f}", f"{len(giant)}, {ub_g:.3f}, {low_g:.3f}", f"{ub_o:.2f}"]
                cols.append(f"{ideal:.2f} ({value / ideal:.2%})")
                if len(giant) <= SCREEN_MAX:
                    level = screening_level(Mg, k, nonneg, low_g, ub_g)
                    total = spread + max(level, ub_o)
                    cols.append(f"{level:.3f} → {total:.2f} ({value / total:.2%})")
                else:
                    cols.append("")
                print(
                    f"| {cell}, now {spread + ub:.2f} ({value / (spread + ub):.2%}) | " + " | ".join(cols) + " |",
                    flush=True,
                )


if __name__ == "__main__":
    main()
