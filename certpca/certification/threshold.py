"""Threshold-and-split bound: threshold the covariance, split it into connected components.

For ρ ≥ 0 let M keep the diagonal of C and threshold the off-diagonal entries,

    M_ij = (C_ij − ρ)₊                  (nonnegative problem),
    M_ij = sign(C_ij)·(|C_ij| − ρ)₊     (signed problem),

and R = C − M.  R has a zero diagonal and |R_ij| ≤ ρ (for w ≥ 0 only R_ij ≤ ρ is
needed), so for a unit w with ‖w‖₀ ≤ k

    wᵀRw ≤ ρ·Σ_{i≠j}|w_i||w_j| = ρ(‖w‖₁² − 1) ≤ (k − 1)ρ.

M is block diagonal over the connected components K of its off-diagonal
pattern, and wᵀMw = Σ_K w_Kᵀ M_KK w_K ≤ max_K ub_k(M_KK) (a convex combination,
weights ‖w_K‖²), with ub_k(M_KK) any bound on the k-sparse (nonneg) top
eigenvalue of one block.  Hence

    OPT ≤ (k − 1)ρ + max_K ub_k(M_KK)                                     (A)

for every ρ.  The idea — soft-thresholding the covariance as in the DSPCA dual of
d'Aspremont et al. (SIAM Review 2007), whose dual gives kρ + λmax(soft(C, ρ)) —
is sharpened here by keeping the diagonal (k − 1 instead of k) and by bounding
each component separately with sparse bounds (certpca's own bound; derivation
in docs/certification.md §7).  The inequality needs no positive
semidefiniteness: it holds for any symmetric C.

Per-component bounds ub_k (each valid for every symmetric block):

* |K| ≤ k, or |K| ≤ ``DENSE_COMPONENT_MAX``: λmax(M_KK) (Cauchy interlacing
  puts λmax(M_SS) ≤ λmax(M_KK) for S ⊆ K), with the Weyl margin;
* k-sparse Gershgorin: max_i [M_ii + sum of the k − 1 largest |M_ij|];
* weighted k-sparse Gershgorin (Collatz–Wielandt): for every v > 0,
  λmax(M_SS) ≤ λmax(Diag(M) + |Off(M_SS)|) ≤ max_{i∈S} [M_ii + Σ_{j∈S}|M_ij|v_j/v_i]
  ≤ max_i [M_ii + top_{k−1}(|M_ij| v_j)/v_i];  v = an approximate Perron vector
  of |M_KK| plus a floor (any v > 0 is valid);
* the same with all of row i (k unrestricted): max_i (|M| v)_i / v_i;
* in the refinement pass, for components of at most ``DENSE_COMPONENT_MAX``
  features, the rank-2 spannogram bound (Asteris et al., ICML 2014, Thm. 1):
  with Â = Σ_{j≤2}(λ_j − λ_3)v_jv_jᵀ (PSD) and any symmetric Â, M_KK = Â + (M_KK − Â),
  so ub ≤ OPT_k(Â) + λmax(M_KK − Â); OPT_k(Â) is the exact rank-2 enumeration of
  :mod:`certpca.solvers.spannogram` (nonnegative version for w ≥ 0) × (1 + 1e-9),
  and λmax(M_KK − Â) is recomputed with its Weyl margin (the solver's λ_3 is not
  trusted), as in :mod:`certpca.certification.lowrank`;
* last, at the best ρ and only under a time limit, for the components of k + 1 to ``SEARCH_MAX_DIM``
  (400) features that set the maximum: the upper bound of the exact branch and bound of
  :func:`certpca.solvers.exact.exact` on M_KK (OPT_k(M_KK) = max over |S| ≤ k of λmax(M_SS), Moghaddam,
  Weiss & Avidan, NIPS 2006; for w ≥ 0 over the positive eigenvectors), which holds wherever the search
  stops (the largest bound of its nodes left, with the Weyl margins of its node bounds) and needs no
  positive semidefiniteness; it runs until the allotment is spent or the optimum of M_KK is proven.

Floating-point margins (rules of docs/certification.md §1):

* a formed entry of C = FᵀF (r rows) is off by at most γ_r·√(C_ii C_jj) ≤ γ_r·c_max,
  c_max = max C_ii, and the diagonal by γ_r·C_ii; M is *defined* as the rounded
  thresholded values actually used, so R_ij ≤ ρ + e with e = (γ_r + 2·eps)·c_max
  (2·eps for the rounding of Ĉ_ij − ρ), R_ii ≤ γ_r·c_max; the bound adds
  (k − 1)e + γ_r·c_max (for a dense C: e = 2·eps·max|C_ij|);
* dense λmax: Weyl margin 8·n·eps·‖M_KK‖_F (+ its forming, one rounding per entry);
* row sums of k terms: relative γ_{k+4} (products, sums, one division, one addition);
* the result then gets the relative 1e-10 of :func:`~certpca.certification.numerics.safe`.

Pairs are kept sparse (:mod:`certpca.certification.threshold_pairs`): only those above a low cut τ
(chosen so that about ``PAIR_BUDGET_PER_FEATURE``·D pairs survive), and ρ is searched on a fine
logarithmic grid in [τ, max pair], from the top down (the cheap end first): the bound is not
unimodal in ρ.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg
from scipy.sparse.csgraph import connected_components

from certpca.certification.numerics import (
    EPS,
    ESTIMATE_FINALISTS,
    FLOP_RATE,
    LANCZOS_MIN,
    TINY,
    Bound,
    check_k,
    deadline_after,
    gamma,
    lmax_estimate,
    lmax_upper,
    quadratic_seconds,
    safe,
    shifted_rank2,
    timed,
)
from certpca.certification.spec import ASTERIS, COST_SEARCH, DSPCA, MOGHADDAM, BoundSpec
from certpca.certification.threshold_pairs import canonical_csr, row_topk, sorted_pairs
from certpca.clock import Deadline, TimeUp
from certpca.problem import Problem
from certpca.solvers.exact import MAX_DIM as SEARCH_MAX_DIM
from certpca.solvers.exact import exact
from certpca.solvers.spannogram import spannogram

#: components up to this size get the dense λmax (interlacing) besides the row bounds
DENSE_COMPONENT_MAX = 1500

#: ρ grid: this many log-spaced points in [τ, max pair], then a finer grid around the best
N_GRID = 40
N_REFINE = 12

#: Perron vector for the weighted row bound: power steps, and the floor (relative to max)
POWER_STEPS = 30
PERRON_FLOOR = 1e-9

#: relative slack on the spannogram's OPT_2 (rounding of its 2 × 2 eigenproblems), as lowrank.py
OPT_D_SLACK = 1e-9

#: relative margin on the level at which an evaluation stops (a rank-2 sweep, a ρ; ``cap`` of
#: :func:`_ub_components`): it stops only where the value it would have returned is surely above the level,
#: whatever the rounding of the sums that form it (of the order of 10 ulps), so the cut never changes the bound
CAP_MARGIN = 1e-9

#: the refinement pass (rank-2 component bounds) re-evaluates the grid points in this window of ρ
REFINE_WINDOW = (0.5, 1.5)

#: estimated operations, charged to a work allotment (:class:`certpca.clock.Work`) for each ρ evaluated: per
#: kept pair and feature (the slices, signs, row sums and component bookkeeping), per n³ of a dense
#: component's eigenproblem, per n² of a Lanczos estimate, per pair of a Perron power step
#: (calibrated against CPU seconds: reports/bench/work.md)
PAIR_OPS = 900.0
EIGEN_OPS = 3.0
LANCZOS_OPS = 1000.0

#: the exact search on a component (last, at the best ρ) ends once its bound fell by less than SEARCH_STALL_RTOL
#: (relative) over the last SEARCH_STALL_WINDOW seconds of work (:class:`certpca.clock.Stall`), rather than spend
#: the whole allotment for nothing.  Its bound falls in steps: golub ``--log2 20`` k = 20 w ≥ 0 (328 features) 49.72
#: after 0.5 and 1 s of work, 48.80 after 2, 48.39 after 4, 47.96 after 8 (a 1 s window stopped it at 49.72)
SEARCH_STALL_WINDOW = 2.0
SEARCH_STALL_RTOL = 1e-3

#: the threshold bound works on factor problems row block by row block: default limit on D
THRESHOLD_MAX_DIM = 60000


def _top_pairs(Mk: np.ndarray, estimate: bool) -> tuple[np.ndarray, np.ndarray]:
    """Eigenpairs of Mk, ascending: for an estimate of a large Mk only the top three, by Lanczos."""
    if estimate and Mk.shape[0] >= max(LANCZOS_MIN, 5):  # ARPACK needs n > k + 1
        try:
            return scipy.sparse.linalg.eigsh(Mk, k=3, which="LA", v0=np.ones(Mk.shape[0]))
        except scipy.sparse.linalg.ArpackError:
            pass
    return np.linalg.eigh(Mk)


def _rank2_parts(Mk: np.ndarray, estimate: bool) -> tuple[np.ndarray, float] | None:
    """The parts of the rank-2 bound that do not depend on k: (G with Â = GᵀG, λmax(M_KK − Â) with its
    Weyl margin, or its estimate), Â the top-2 eigen-part shifted by λ_3 (module docstring); None when
    M_KK is too small."""
    if Mk.shape[0] < 4:
        return None
    G, R, form = shifted_rank2(Mk, *_top_pairs(Mk, estimate))
    return G, (lmax_estimate(R) if estimate else lmax_upper(R, form)[0])


def _rank2_bound(
    parts: tuple[np.ndarray, float] | None,
    k: int,
    nonneg: bool,
    estimate: bool = False,
    stop: Deadline | None = None,
    cap: float = np.inf,
) -> float:
    """OPT_k(Â) + λmax(M_KK − Â) from :func:`_rank2_parts`; inf if unusable or when ``stop`` passes during
    the enumeration (its part proves nothing).  With ``estimate`` an estimate of it (Lanczos for the top
    three pairs and for λmax(M_KK − Â)).  ``cap``: the caller has no use for a value above it, so the
    sweep stops once it has found OPT_k(Â) to put the value above ``cap`` (``target`` of
    :func:`~certpca.solvers.spannogram.spannogram`, with a margin ``CAP_MARGIN``·|cap| for the rounding of
    this sum) and inf is returned: the value is then above ``cap`` too."""
    if parts is None:
        return np.inf
    G, rest = parts
    slack = 1.0 if estimate else 1 + OPT_D_SLACK
    if rest > cap:  # OPT_k(Â) ≥ 0 (Â is PSD)
        return np.inf
    target = (cap - rest) / slack + CAP_MARGIN * abs(cap) if np.isfinite(cap) else None
    try:
        res = spannogram(Problem(factor=G), k, nonneg=nonneg, d=2, deadline=stop, target=target)
    except TimeUp:
        return np.inf
    if res.truncated is not None:
        return np.inf
    return float(res.opt_d) * slack + rest


def _perron(r_l: np.ndarray, c_l: np.ndarray, a_l: np.ndarray, dK: np.ndarray) -> tuple[np.ndarray, float]:
    """(v, the all-row Collatz–Wielandt bound max_i (|M| v)_i / v_i with its margin) for one component of
    M: diagonal dK, off-diagonal magnitudes a_l at (r_l, c_l); v an approximate Perron vector of
    Diag(M) + |Off(M)| (``POWER_STEPS`` power steps, shifted to a nonnegative diagonal) plus a floor,
    which makes any v valid."""
    n = len(dK)
    A = canonical_csr(r_l, c_l, a_l, n)
    shift = max(0.0, -float(np.min(dK)))
    dpos = dK + shift
    v = np.ones(n)
    for _ in range(POWER_STEPS):
        v = dpos * v + A @ v
        v = v / np.max(v)
    v = np.maximum(v, PERRON_FLOOR)
    full = (A @ v) / v
    return v, float(np.max(dK + full + gamma(n + 4) * (np.abs(dK) + full)))


def _ub_components(
    labels,
    n_comp,
    i,
    j,
    m,
    diag,
    k,
    dense_max,
    rank2=None,
    estimate=False,
    top=None,
    stop=None,
    memo=None,
    charged=None,
    cap=np.inf,
    search=None,
    free_parts=False,
):
    """max over components of ub_k(M_KK); M's off-diagonal entries are (i, j, m) (i < j).

    Components are visited in decreasing order of their cheap (Gershgorin) bound
    and refined until no remaining cheap bound can exceed the current maximum.
    ``rank2`` (None, or the problem's ``nonneg``) adds the rank-2 spannogram bound
    on dense components whose other bounds leave them above the current maximum (below it, no bound
    of theirs can change the maximum).  ``search`` (None, or the problem's ``nonneg``) adds, on such
    components of k + 1 to ``SEARCH_MAX_DIM`` features, the exact search's upper bound on M_KK
    (:func:`certpca.solvers.exact.exact`, valid wherever it stops), run until ``stop`` passes or it stalls.
    ``cap``: the caller has no use for a maximum above it (its ρ
    cannot be the best), so the visit stops as soon as the running maximum is above it, and
    ``(inf, info)`` is returned with ``info["cut"]`` 1; a rank-2 sweep stops once its bound is above both
    ``cap`` and the component's other bounds (:func:`_rank2_bound`).  The largest components usually
    come first (their k-sparse row sums are the largest), so the cut comes before the small ones.
    ``estimate`` estimates the eigenvalues of large dense components instead of bounding them (to steer
    the ρ search).  ``top``: each row's sum of its k − 1 largest |m| when already known
    (:meth:`~certpca.certification.threshold_pairs.Pairs.row_top`).  Once ``stop`` (a Deadline) passes, the
    rank-2 bounds are left out (each component keeps its other bounds).  ``memo``: a dict for the
    component bounds of this M (this ρ), given again with the same M so that a later call reuses them:
    those that do not depend on k (λmax, the rank-2 bound's eigen-part, the Perron vector and its row
    bound) and the weighted k-sparse row bound per k.  Its work (``info["ops"]``) is charged once per call of
    :func:`threshold_bound` (``charged``: the parts of this M charged so far in it), whether computed or taken
    from ``memo``, so that a bound cut by its allotment does not depend on what earlier calls left there (the
    report's band runs its k on a pool, each worker with the memo of the tasks it happened to get); with
    ``free_parts`` those parts are not charged at all (threshold_search, right after the call that computed them
    at this ρ: charged again, the λmax of khan k = 50's 1130-feature component took the matrix bound's budget).
    Returns (value, info), ``info["max_component"]`` the size of the component whose bound is the maximum.
    """
    memo = {} if memo is None else memo
    charged = set() if charged is None else charged

    def charge(key, ops: float) -> None:
        if key not in charged and not free_parts:
            charged.add(key)
            info["ops"] += ops

    D = len(diag)
    kk = k - 1
    a = np.abs(m)
    rows = np.r_[i, j]
    cols = np.r_[j, i]
    av = np.r_[a, a]
    # k-sparse Gershgorin per row, with its summation margin
    top = row_topk(rows, av, D, kk) if top is None else top
    row_g = diag + top
    row_g = row_g + gamma(k + 4) * (np.abs(diag) + top)
    comp_g = np.full(n_comp, -np.inf)
    np.maximum.at(comp_g, labels, row_g)
    sizes = np.bincount(labels, minlength=n_comp)
    order = np.argsort(-comp_g)
    best = -np.inf
    info = {"largest_component": int(sizes.max()) if n_comp else 0, "refined": 0, "ops": 0.0, "cut": 0}
    # edges grouped by component of their endpoint
    lab_e = labels[rows]
    e_order = np.argsort(lab_e, kind="stable")
    e_start = np.searchsorted(lab_e[e_order], np.arange(n_comp + 1))
    for c in order:
        g = comp_g[c]
        if g <= best:
            break
        ub = g  # a single feature: its diagonal entry
        if sizes[c] > 1:
            sel = e_order[e_start[c] : e_start[c + 1]]
            nodes = np.flatnonzero(labels == c)
            loc = np.full(D, -1, np.int64)
            loc[nodes] = np.arange(len(nodes))
            r_l, c_l, a_l = loc[rows[sel]], loc[cols[sel]], av[sel]
            sgn = np.r_[m, m][sel]
            dK = diag[nodes]
            n = len(nodes)
            if n <= dense_max:
                lam = memo.get(("lmax", int(c), estimate))
                eig_ops = LANCZOS_OPS * n * n if estimate else EIGEN_OPS * n**3
                charge(("lmax", int(c), estimate), eig_ops)  # whether computed or reused (docstring)
                Mk = None
                if lam is None:
                    Mk = _dense_block(n, r_l, c_l, sgn, dK)
                    lam = lmax_estimate(Mk) if estimate else lmax_upper(Mk, EPS * float(np.linalg.norm(Mk)))[0]
                    memo["lmax", int(c), estimate] = lam
                ub = min(ub, lam)
                if rank2 is not None and n > k and ub > best and not (stop is not None and stop.passed()):
                    charge(("rank2", int(c), estimate), eig_ops)
                    if ("rank2", int(c), estimate) not in memo:
                        Mk = _dense_block(n, r_l, c_l, sgn, dK) if Mk is None else Mk
                        memo["rank2", int(c), estimate] = _rank2_parts(Mk, estimate)
                    ub = min(ub, _rank2_bound(memo["rank2", int(c), estimate], k, rank2, estimate, stop, min(ub, cap)))
                if (
                    search is not None
                    and k < n <= SEARCH_MAX_DIM
                    and ub > best
                    and not (stop is not None and stop.passed())
                ):
                    Mk = _dense_block(n, r_l, c_l, sgn, dK) if Mk is None else Mk
                    found = exact(
                        Problem.from_covariance(Mk),
                        k,
                        search,
                        time_limit=stop,
                        stall=(SEARCH_STALL_WINDOW, SEARCH_STALL_RTOL),
                    )
                    info["searched"] = info.get("searched", 0) + 1
                    info["search_nodes"] = info.get("search_nodes", 0) + found.nodes
                    ub = min(ub, found.upper_bound)
            if n > k and ub > best:
                if ("perron", int(c)) not in memo:
                    memo["perron", int(c)] = _perron(r_l, c_l, a_l, dK)
                charge(("perron", int(c)), PAIR_OPS * POWER_STEPS * len(a_l) / 10)
                v, cw = memo["perron", int(c)]
                # weighted k-sparse rows: top_{k−1}(|M_ij| v_j) / v_i, the same at this k for a later call
                if ("weighted", int(c), kk) not in memo:
                    wt = row_topk(r_l, a_l * v[c_l], n, kk) / v
                    memo["weighted", int(c), kk] = float(np.max(dK + wt + gamma(k + 4) * (np.abs(dK) + wt)))
                ub = min(ub, cw, memo["weighted", int(c), kk])
            info["refined"] += 1
            info["ops"] += PAIR_OPS * (D / 10 + len(sel))  # the component's rows and edges picked out
        if ub > best:
            best, info["max_component"] = ub, int(sizes[c])
        if best > cap:
            info["cut"] = 1
            return np.inf, info
    return best, info


def _dense_block(n: int, r_l: np.ndarray, c_l: np.ndarray, sgn: np.ndarray, dK: np.ndarray) -> np.ndarray:
    """The n × n block M_KK of one component: off-diagonal entries ``sgn`` at (r_l, c_l), diagonal dK."""
    Mk = np.zeros((n, n))
    Mk[r_l, c_l] = sgn
    Mk[np.arange(n), np.arange(n)] = dK
    return Mk


def _value_at(ub: float, spread: float, diag_err: float) -> float:
    """(A) from ub = max_K ub_k(M_KK) and spread = (k − 1)(ρ + e), with the forming error of the diagonal
    and the margins of these sums (module docstring): nondecreasing in ub."""
    return safe(spread + diag_err + ub + gamma(4) * (abs(ub) + spread))


def _cap_for(cutoff: float, spread: float, diag_err: float) -> float:
    """A level of max_K ub_k(M_KK) above which :func:`_value_at` is surely above ``cutoff`` (inf for none):
    an evaluation whose running maximum passes it cannot give a value at most ``cutoff``."""
    if not np.isfinite(cutoff):
        return np.inf
    level = cutoff - spread - diag_err
    step = CAP_MARGIN * max(abs(cutoff), abs(level), TINY)
    for _ in range(64):  # the margins of _value_at put it above cutoff at once, but for rounding
        if _value_at(level, spread, diag_err) > cutoff:
            return level
        level, step = level + step, 2 * step
    return np.inf


class _Evaluator:
    """(A) at a ρ for one problem, k and sign constraint: the pairs, components per ρ and component bounds kept in
    ``Problem.memo`` (the same for every k, and for a later call), the work charged to ``stop``."""

    def __init__(
        self,
        problem,
        k: int,
        nonneg: bool,
        pair_budget: int | None,
        dense_max: int,
        stop: Deadline,
        free_parts: bool = False,
    ):
        self.problem, self.k, self.nonneg, self.stop = problem, k, nonneg, stop
        self.pair_budget, self.dense_max, self.free_parts = pair_budget, dense_max, free_parts
        self.diag = problem.diag.astype(float)
        self.pairs = sorted_pairs(problem, nonneg, pair_budget)
        self.split = problem.memo.setdefault("threshold_components", {})  # ρ → components: the same for every k
        self.per_rho = problem.memo.setdefault("threshold_rho", {})  # ρ → its k-free component bounds
        self.diag_err = (
            gamma(problem.factor().shape[0]) * float(np.max(np.abs(self.diag))) if problem.uses_factor else 0.0
        )
        self.charged: dict[float, set] = {}  # ρ → the component parts charged in this call (_ub_components)
        self.cut = 0  # evaluations stopped at their cutoff

    def __call__(self, rho, rank2=None, estimate=False, cutoff=np.inf, search=None):
        """(A) at ρ, or inf once it is seen to be above ``cutoff`` (then it cannot change the search)."""
        pairs, k, D = self.pairs, self.k, self.problem.dim
        m_act = int(np.searchsorted(-pairs.key, -rho, side="left"))  # pairs with key > ρ
        ii, jj, vv = pairs.i[:m_act], pairs.j[:m_act], pairs.v[:m_act]
        mm = vv - rho if self.nonneg else np.sign(vv) * (np.abs(vv) - rho)
        at = (self.nonneg, self.pair_budget, m_act)
        if at not in self.split:
            g = sp.coo_matrix((np.ones(m_act), (ii, jj)), shape=(D, D))
            self.split[at] = connected_components(g, directed=False)
        n_comp, labels = self.split[at]
        spread = (k - 1) * (rho + pairs.err)
        ub, info = _ub_components(
            labels,
            n_comp,
            ii,
            jj,
            mm,
            self.diag,
            k,
            self.dense_max,
            rank2,
            estimate,
            top=pairs.row_top(m_act, rho, k - 1, D),
            stop=self.stop,
            memo=self.per_rho.setdefault((self.nonneg, self.pair_budget, rho), {}),
            charged=self.charged.setdefault(rho, set()),
            cap=_cap_for(cutoff, spread, self.diag_err),
            search=search,
            free_parts=self.free_parts,
        )
        self.cut += info.pop("cut")
        info.update(n_pairs=m_act, components=int(n_comp))
        self.stop.charge((info.pop("ops") + PAIR_OPS * (m_act + D)) / FLOP_RATE)
        return _value_at(ub, spread, self.diag_err), info


def evaluate_at(problem, k, nonneg, rho: float, stop: Deadline, pair_budget=None, dense_max=DENSE_COMPONENT_MAX):
    """(A) at ρ with the rank-2 component bounds and the exact search on the components that set the maximum,
    charged to ``stop`` but for the component parts a threshold bound at ρ left in ``Problem.memo``
    (``free_parts`` of :func:`_ub_components`): the last step of :func:`threshold_bound` on its own, (value, info)."""
    return _Evaluator(problem, k, nonneg, pair_budget, dense_max, stop, free_parts=True)(rho, nonneg, search=nonneg)


@timed
def threshold_bound(
    problem,
    k,
    nonneg=False,
    *,
    n_grid: int = N_GRID,
    n_refine: int = N_REFINE,
    pair_budget: int | None = None,
    dense_max: int = DENSE_COMPONENT_MAX,
    rank2: bool = True,
    search: bool = False,
    time_limit: Deadline | float | None = None,
) -> Bound:
    """OPT ≤ (k − 1)ρ + max over components K of ub_k(M_KK)  (module docstring, (A)).

    M thresholds the off-diagonal of C at ρ (positive parts for w ≥ 0, soft
    threshold of |C_ij| for signed w) and keeps the diagonal; its components
    come from ``scipy.sparse.csgraph.connected_components`` on the pairs above
    ρ, which are kept sparse (no D × D array for a factor problem).  ρ is
    searched on a log grid in [τ, max pair], from the largest down, and refined around the best point,
    then (``rank2``) the grid points within ``REFINE_WINDOW`` of the best ρ are
    re-evaluated with the rank-2 component bound, then (``search``, with ``rank2`` and a ``time_limit``) the best ρ
    with the exact search on the components that set its maximum, until the allotment is spent (a certificate
    runs that last step as a bound of its own, ``threshold_search``, once the sample-space SDP has said
    whether this bound leads); every ρ ≥ τ
    gives a valid bound (pairs below τ are not needed: their M entry is 0).  After ``time_limit`` seconds of
    the budget clock (:mod:`certpca.clock`) no further ρ is tried and no rank-2 bound is started or finished
    (a started one is abandoned; a started search returns its bound so far); at least one ρ is
    bounded (with estimates, from ``LANCZOS_MIN`` features: the best estimate without the rank-2 bound,
    then the best with it while the allotment lasts), so the bound returned is the minimum over the ρ
    bounded so far, each valid by itself (``params["time_limit_reached"]``).  An evaluation stops once it
    is seen to be above the value it must beat to matter (the best so far; for estimates the
    ``ESTIMATE_FINALISTS``-th smallest), and only the work done is charged: with an allotment that lasts,
    the same bound as evaluating every point to its end (``params["evaluations_cut"]`` counts the stops).
    Validity: (k − 1)(ρ + e) + γ_r·c_max added for the formed entries, component
    bounds with Weyl / summation margins (module docstring), then rel 1e-10.
    """
    k = check_k(problem, k)
    stop = deadline_after(time_limit)
    evaluate = _Evaluator(problem, k, nonneg, pair_budget, dense_max, stop)
    key, tau, D = evaluate.pairs.key, evaluate.pairs.tau, problem.dim

    def kth_smallest(n: int) -> float:
        """The n-th smallest value found so far (inf before n points): a point above it is not among the n
        best, whatever the points still to come (values only fall), so its evaluation may stop there."""
        values = sorted(t[0] for t in results.values())
        return values[n - 1] if len(values) >= n else np.inf

    hi = float(key[0]) if len(key) else 0.0
    lo = tau
    if hi <= lo:
        grid = np.array([lo])
    elif lo > 0:
        grid = np.geomspace(lo, hi, n_grid)
    else:
        grid = np.r_[0.0, np.geomspace(max(hi * 1e-4, EPS * hi), hi, n_grid - 1)]
    # from LANCZOS_MIN features the search runs on estimates and only its best points are bounded
    # (every ρ is valid, so a misleading estimate costs tightness only)
    est = D >= LANCZOS_MIN
    # an estimated search keeps its ESTIMATE_FINALISTS best points (below), an exact one its best: a point
    # whose evaluation goes above the kept-th smallest value so far is stopped there (it cannot be kept)
    kept = ESTIMATE_FINALISTS if est else 1
    results: dict[float, tuple] = {}
    # from the largest ρ down: an evaluation costs more as ρ falls (more pairs, larger components), so a
    # search its allotment cuts has bounded the cheap end and the middle instead of a few giant components
    # (leukemia --log2 20 k = 50 w ≥ 0 with 1 s of work: 4 points and 68.9% upwards, 33 and 91.0% down)
    for r in grid[::-1]:
        if results and stop.passed():
            break
        results[float(r)] = evaluate(float(r), estimate=est, cutoff=kth_smallest(kept))
    best_rho = min(results, key=lambda r: results[r][0])
    pos = int(np.searchsorted(grid, best_rho))
    a = grid[max(pos - 1, 0)]
    b = grid[min(pos + 1, len(grid) - 1)]
    for r in np.linspace(a, b, n_refine + 2)[1:-1]:
        if stop.passed():
            break
        results[float(r)] = evaluate(float(r), estimate=est, cutoff=kth_smallest(kept))
    best_rho = min(results, key=lambda r: results[r][0])
    plain = dict(results)  # the search's points without the rank-2 bound
    with_rank2: set[float] = set()
    if rank2:
        # second pass: rank-2 component bounds, which gain most at smaller ρ (larger components)
        lo_w, hi_w = REFINE_WINDOW[0] * best_rho, REFINE_WINDOW[1] * best_rho
        with_rank2 = {r for r in results if lo_w <= r <= hi_w}
        for r in sorted(with_rank2):
            if stop.passed():
                break
            again = evaluate(r, nonneg, estimate=est, cutoff=kth_smallest(kept))
            results[r] = min(results[r], again, key=lambda t: t[0])
        best_rho = min(results, key=lambda r: results[r][0])
    if est:
        # the estimates steered the search; its best point without the rank-2 bound is bounded (even past
        # the limit), then the best points with it while the allotment lasts: a rank-2 bound the limit
        # abandons falls back to its point's plain bound, which may be worse than the plain best
        # (leukemia --log2 20 k = 50 w ≥ 0 with 5 s of work: 341.7 against 336.3); a finalist's evaluation
        # stops once it is above the best bound so far
        plain_best = min(plain, key=lambda r: plain[r][0])
        finalists = [r for r in sorted(results, key=lambda r: results[r][0])[:ESTIMATE_FINALISTS] if r in with_rank2]
        results = {plain_best: evaluate(plain_best)}
        for r in finalists:
            if stop.passed():
                break
            again = evaluate(r, nonneg, cutoff=kth_smallest(1))
            results[r] = min(results.get(r, (np.inf,)), again, key=lambda t: t[0])
        best_rho = min(results, key=lambda r: results[r][0])
    if search and rank2 and time_limit is not None and not stop.passed():
        # last, at the best ρ: the exact search on the components that set the maximum, until the allotment is
        # spent (without one it is left out: it could run for minutes); with the rank-2 pass only, so that
        # under one allotment the refinement never ends above the plain search (test_estimates.py)
        again = evaluate(best_rho, nonneg, cutoff=results[best_rho][0], search=nonneg)
        if again[0] <= results[best_rho][0]:  # on a tie too, so that params say the search ran
            results[best_rho] = again
    value, info = results[best_rho]
    info["time_limit_reached"] = stop.passed()
    return Bound(
        value,
        "threshold",
        {
            "rho": best_rho,
            "tau": tau,
            "pairs_kept": int(len(key)),
            "evaluations": len(results),
            "evaluations_cut": evaluate.cut,
            **info,
        },
        0.0,
        "(k−1)ρ + max_K ub_k(M_KK) for the thresholded C, forming error (k−1)e + γ_r·c_max, "
        "Weyl / γ_{k+4} margins on the component bounds + rel 1e-10",
    )


THRESHOLD = BoundSpec(
    "threshold",
    threshold_bound,
    COST_SEARCH,
    max_dim=THRESHOLD_MAX_DIM,
    time_option="time_limit",
    estimate=quadratic_seconds,
    charges=True,  # each ρ evaluated (PAIR_OPS ...) and each step of the rank-2 sweep
    # on wide data it leaves 40% of what is left to dabe_sdp, often the stronger there; with half, leukemia
    # --log2 20 k = 50 w ≥ 0 lost its rank-2 finalists for want of 0.4 s of its 7.4 s (90.97% → 93.39% with 0.6)
    factor_share=0.6,
    description="(k−1)ρ + max over connected components of the thresholded C of a k-sparse bound",
    reference="certpca's own bound: C = M + R with M the off-diagonal threshold of C at ρ (diagonal "
    "kept) and |R_ij| ≤ ρ, so wᵀRw ≤ (k−1)ρ for unit k-sparse w, and M is block diagonal over "
    "the connected components of its pattern, each bounded by interlacing, (weighted) "
    "k-sparse Gershgorin bounds, the rank-2 spannogram bound of " + ASTERIS + " and, on components of "
    f"at most {SEARCH_MAX_DIM} features, the branch and bound over supports of " + MOGHADDAM + " The "
    "thresholding follows the soft-threshold dual of " + DSPCA,
)

SPECS = [THRESHOLD]
