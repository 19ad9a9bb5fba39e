"""Spannogram solvers for sparse and nonnegative sparse PCA on a rank-d surrogate.

References
----------
[APD14] M. Asteris, D. Papailiopoulos, A. Dimakis.  *Nonnegative Sparse PCA with
        Provable Guarantees.*  ICML 2014.  (Alg. 1-3, Prop. 3.1, eqs. (8)-(16), Sec. 4-6.)
[PDK13] D. Papailiopoulos, A. Dimakis, S. Korokythakis.  *Sparse PCA through
        Low-rank Approximations.*  ICML 2013.  (The signed variant.)

The problem is ``OPT = max wᵀCw`` over unit ``w`` with ``‖w‖₀ ≤ k`` (and ``w ≥ 0``
when ``nonneg``).  With the top-d eigenpairs of C put into the feature matrix
``V = [√λ₁v₁ … √λ_d v_d]`` (n × d, [APD14] eq. (7)) the rank-d surrogate is
``A_d = VVᵀ`` and ``OPT_d`` is the same problem on ``A_d``.  Two facts make the
surrogate useful ([APD14] Thm. 1 and its proof; docs/certification.md §4):

* ``OPT_d ≤ OPT ≤ OPT_d + λ_{d+1}``, because ``A_d ⪯ C ⪯ A_d + λ_{d+1}I``;
* by Cauchy-Schwarz ([APD14] eqs. (11)-(13)) ``OPT_d = max_{‖c‖=1} f(c)`` with
  ``f(c) = ‖top_k(|Vc|)‖²`` (sparse) or ``‖top_k((Vc)₊)‖²`` (nonneg): for a fixed
  direction c the inner problem is the rank-1 problem of [APD14] Prop. 3.1.

So ``OPT_d`` is attained on one of the supports ``top_k(Vc)`` as c runs over the
sphere, and these change only where two "curves" ``[Vc]_i`` meet: on the
hyperplanes ``(V_i ∓ V_j)ᵀc = 0`` (sparse) or ``(V_i − V_j)ᵀc = 0`` and
``V_iᵀc = 0`` (nonneg; the zero row of [APD14] Alg. 2).  This module enumerates
those supports exactly (d = 2 by an angular sweep, d ≥ 3 by Alg. 2's vertices),
or samples directions c on an ε-net ([APD14] Alg. 3).  Per support, the sparse
value is ``λmax(V_IᵀV_I)`` ([PDK13]); the nonnegative value is the cone-constrained
quadratic maximum of [APD14] Sec. 5 (:func:`max_quad_on_cone`).

What is exact and what is not
-----------------------------
* ``d = 1``: exact for ``OPT_1`` in O(n) ([APD14] Prop. 3.1).
* ``net=None``, ``d = 2``: exact ``OPT_2`` via the sweep (:func:`sweep_supports_2d`).
* ``net=None``, ``d ≥ 3``: exact ``OPT_d`` via Alg. 2 (:func:`vertex_supports`),
  O(n^{d+1}) time: for n up to a few hundred — unless a degenerate tie has more
  completions than :data:`~.vertices.MAX_TIE_COMPLETIONS`: the enumeration is
  then cut, and the result says so (``exact`` False, ``truncated`` the reason).
* ``net="grid"`` / ``net="random"``: ``opt_d`` is ``max_{c∈net} f(c) ≤ OPT_d``, and
  the covering radius ε of the net (returned) gives ``OPT_d ≤ opt_d/(1−ε)²``
  ([APD14] Sec. 6).  The grid's ε is proven (see :func:`grid_net`); a random
  net's ε is the *realised* covering radius of the sample, computed exactly
  (:func:`covering_radius`), not a probabilistic one.

This package computes no upper bound on OPT: the certification layer
(certpca/certification/lowrank.py) turns ``opt_d``, ``epsilon`` and the spectrum into
``OPT ≤ OPT_d + λ_{d+1}`` with its floating-point margins.  Exactness here is up
to floating point: supports found at nearly coincident critical angles are
evaluated at the midpoint of each cell, and the pruning keeps curves within a
relative slack (:data:`~.topk.REL_TOL`) of the k-th level.

Modules: :mod:`.topk` (surrogate, rank-1 supports), :mod:`.sweep2d` (exact
d = 2), :mod:`.vertices` (exact d ≥ 3, Alg. 2), :mod:`.values` (per-support
values), :mod:`.nets` (ε-nets); this file holds the driver and the solver plugin.

The returned ``weights`` are a feasible point for C itself: the best few
candidates (by surrogate value) are renormalised on their supports against the
full C and the best is kept (:func:`certpca.solvers.renormalize.renormalize`).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ...clock import Deadline
from ...errors import InputError
from ...problem import Problem
from ...validation import (
    check_cardinality,
    check_choice,
    check_float,
    check_int,
    check_random_state,
)
from ..base import Run, Solver
from ..renormalize import renormalize
from .nets import covering_radius, grid_net, net_supports, random_net
from .sweep2d import sweep_supports_2d
from .topk import rank1_supports, surrogate_factor, top_k_supports
from .values import max_quad_on_cone, support_values
from .vertices import vertex_supports

__all__ = [
    "Spannogram",
    "SpannogramResult",
    "covering_radius",
    "grid_net",
    "max_quad_on_cone",
    "random_net",
    "rank1_supports",
    "spannogram",
    "support_values",
    "surrogate_factor",
    "sweep_supports_2d",
    "top_k_supports",
    "vertex_supports",
]

#: the net choices of :func:`spannogram` (None: exact enumeration)
NETS = (None, "grid", "random")

#: a chordal covering radius is at most 2 (the sphere's diameter): ε must lie in (0, 2)
MAX_EPSILON = 2.0


@dataclass
class SpannogramResult:
    """Output of :func:`spannogram`.

    Attributes
    ----------
    weights : (n,) array
        Unit, at most k nonzeros (exactly k whenever the data allow it; for
        nonneg fewer can be optimal), ``≥ 0`` when nonneg.  The best candidate
        re-evaluated on the full C after renormalisation on its support.
    value : float
        ``weightsᵀ C weights`` on the full C (a lower bound on OPT).
    opt_d : float
        Exact methods: ``OPT_d`` of the rank-d surrogate ``A_d`` (the best
        candidate's ``xᵀA_d x``, a feasible value, so never above ``OPT_d``).
        Nets: ``max_{c ∈ net} f(c)``, with ``OPT_d ≤ opt_d/(1−ε)²``.
    lambda_next : float
        ``λ_{d+1}`` of C (clipped at 0; 0 beyond the rank).
    d : int
        Rank of the surrogate actually used (``min(d, rank C)``).
    method : str
        ``"exact"``, ``"net-random"`` or ``"net-grid"``.
    epsilon : float or None
        Covering radius (chordal, on the unit sphere of R^d) of the net; None
        for exact methods.
    n_candidates : int
        Number of distinct candidate supports considered.
    seconds : float
        Wall time.
    exact : bool
        True when ``opt_d`` is ``OPT_d`` itself: an exact method whose
        enumeration was complete.  False for nets and for truncated enumerations.
    truncated : str or None
        Why an exact method's enumeration is incomplete (Alg. 2 at a degenerate
        tie; ``"above target"``: the sweep stopped at ``target``); None when it is
        complete.  A truncated ``opt_d`` is only a lower bound on ``OPT_d``.
    """

    weights: np.ndarray
    value: float
    opt_d: float
    lambda_next: float
    d: int
    method: str
    epsilon: float | None
    n_candidates: int
    seconds: float
    exact: bool = True
    truncated: str | None = None


def spannogram(
    problem: Problem,
    k: int,
    *,
    nonneg: bool = False,
    d: int = 2,
    net: str | None = None,
    epsilon: float = 0.1,
    samples: int | None = None,
    rng=None,
    n_refine: int = 16,
    deadline: Deadline | None = None,
    target: float | None = None,
) -> SpannogramResult:
    """Spannogram (nonnegative) sparse PCA on the rank-d surrogate ([APD14] Alg. 1).

    Parameters
    ----------
    problem : Problem
        The covariance operator C (only ``eigh``, ``eigenvalues``, ``submatrix``
        and ``variance`` are used: no D × D array is formed).
    k : int
        Cardinality: at most k nonzeros, 1 ≤ k ≤ D.
    nonneg : bool
        Also require ``w ≥ 0``.
    d : int
        Rank of the surrogate ``A_d``.
    net : None, "grid" or "random"
        None: exact enumeration of candidate supports ([APD14] Alg. 1-2; d = 2 by
        the angular sweep).  "grid": a deterministic net of proven covering
        radius ≤ epsilon (:func:`grid_net`).  "random": [APD14] Alg. 3 with
        seeded uniform directions c and both signs ±c; the returned epsilon is
        the realised covering radius (:func:`covering_radius`).
    epsilon : float
        Target covering radius of a net (chordal distance on the unit sphere), in (0, 2).
    samples : int, optional
        Net size: number of directions (random) or an upper limit on the number
        of grid points (the grid is then as fine as that allows, and its ε is
        reported).
    rng : numpy.random.Generator or int, optional
        Randomness for ``net="random"`` only (None: the fixed seed 0).
    n_refine : int
        How many of the best candidates (by surrogate value) are renormalised on
        the full C before the best is returned.
    deadline : Deadline, optional
        Ends the d = 2 enumeration by :class:`certpca.clock.TimeUp` when it passes (a bound
        built on ``opt_d`` then has nothing to stand on); None: no limit.
    target : float, optional
        For a caller that needs ``OPT_2`` only when it is at most ``target`` (a bound
        built on it that is of no use above): the d = 2 sweep stops at the first
        candidate whose surrogate value exceeds it (:func:`sweep_supports_2d`), and
        ``truncated`` is then ``"above target"``, ``exact`` False and ``opt_d`` the best
        value of the candidates found (feasible, so ``OPT_2 ≥ opt_d``).  Other methods run
        to their end.  None: no target.

    Returns
    -------
    SpannogramResult

    Notes
    -----
    Long only because of its parameter documentation: the body dispatches to
    the enumeration or net, then refines the best candidates on C.
    """
    t0 = time.perf_counter()
    k, d, samples, n_refine = _check(problem, k, d, net, epsilon, samples, n_refine)
    n = problem.dim
    V, lam_next = surrogate_factor(problem, d)
    d_eff = V.shape[1]
    eps_out = None
    method = "exact"
    truncated = None
    if d_eff == 0:  # C = 0: every feasible vector is optimal
        w = np.zeros(n)
        w[:k] = 1 / math.sqrt(k)
        return SpannogramResult(w, problem.variance(w), 0.0, lam_next, 0, method, None, 1, time.perf_counter() - t0)

    if d_eff == 1:
        supports, f_lb = top_k_supports(V[:, 0][None, :] * np.array([[1.0], [-1.0]]), k, nonneg)
        supports, first = np.unique(supports, axis=0, return_index=True)
        f_lb = f_lb[first]
        opt_net: float | None = None
    elif net is None:
        if d_eff == 2:
            supports, f_lb = sweep_supports_2d(V, k, nonneg, deadline=deadline, target=target)
            if target is not None and f_lb.max() > target:
                truncated = "above target"
        else:
            supports, f_lb, truncated = vertex_supports(V, k, nonneg)
        opt_net = None
    else:
        method = "net-" + net
        if net == "grid":
            C, eps_out = grid_net(d_eff, epsilon, nonneg, samples)
        else:
            C, eps_out = random_net(d_eff, epsilon, nonneg, samples, check_random_state(rng, "rng"))
        supports, f_lb, opt_net = net_supports(V, C, k, nonneg)

    # Per-support values on the surrogate ([PDK13]; [APD14] Sec. 5), then refine on C.
    enumerated = method == "exact"
    vals, xs, _ = support_values(V, supports, nonneg, f_lb=f_lb, keep=n_refine, exhaustive=enumerated)
    opt_d = float(vals[0]) if opt_net is None else float(opt_net)
    best_w, best_val = None, -np.inf
    for x in xs:
        w, val = renormalize(problem, x, np.flatnonzero(x), nonneg)
        if val > best_val:
            best_w, best_val = w, val
    assert best_w is not None  # support_values always returns at least one candidate
    return SpannogramResult(
        best_w,
        float(best_val),
        opt_d,
        lam_next,
        d_eff,
        method,
        eps_out,
        len(supports),
        time.perf_counter() - t0,
        exact=enumerated and truncated is None,
        truncated=truncated,
    )


def _check(problem, k, d, net, epsilon, samples, n_refine) -> tuple[int, int, int | None, int]:
    """The validated (k, d, samples, n_refine); InputError naming the parameter otherwise."""
    if not isinstance(problem, Problem):
        raise InputError.bad_argument(
            "problem", "must be a certpca.Problem; build one with Problem.from_data(X) or Problem.from_covariance(C)"
        )
    k = check_cardinality(k, problem.dim)
    d = check_int(d, "d", low=1)
    check_choice(net, NETS, "net")  # type: ignore[arg-type]  # None is a valid choice
    if net is not None:
        epsilon = check_float(epsilon, "epsilon", low=0.0, high=MAX_EPSILON, low_open=True)
        if epsilon == MAX_EPSILON:
            raise InputError.bad_argument(
                "epsilon", f"must be less than {MAX_EPSILON:g} (useful bounds need less than 1), got 2"
            )
    if samples is not None:
        samples = check_int(samples, "samples", low=1)
    n_refine = check_int(n_refine, "n_refine", low=1)
    return k, d, samples, n_refine


class Spannogram(Solver):
    """The spannogram as a registry solver: the best vector found on the rank-d surrogate.

    Its by-products (OPT_d, λ_{d+1}, the net's ε, whether the enumeration was
    exact) go to ``extras``; the certification layer computes bounds from them.
    """

    name = "spannogram"
    defaults: ClassVar[dict] = {"d": 2, "net": None, "epsilon": 0.1, "samples": None, "n_refine": 16}
    reference = (
        "Asteris, M., Papailiopoulos, D. S. & Dimakis, A. G. (2014). Nonnegative sparse PCA "
        "with provable guarantees. Proceedings of the 31st International Conference on Machine "
        "Learning; Papailiopoulos, D. S., Dimakis, A. G. & Korokythakis, S. (2013). Sparse PCA "
        "through low-rank approximations. ICML."
    )

    def starts(self, problem, nonneg, rng, restarts):
        return [rng]  # the random net is the only random choice: seeded by the driver's rng

    def run(self, problem, k, nonneg, start, d=2, net=None, epsilon=0.1, samples=None, n_refine=16):
        res = spannogram(
            problem, k, nonneg=nonneg, d=d, net=net, epsilon=epsilon, samples=samples, rng=start, n_refine=n_refine
        )
        extras = {
            "opt_d": res.opt_d,
            "lambda_next": res.lambda_next,
            "d": res.d,
            "net": res.method,
            "epsilon": res.epsilon,
            "candidates": res.n_candidates,
            "exact": res.exact,
            "truncated": res.truncated,
        }
        return Run(res.weights, np.flatnonzero(res.weights), res.n_candidates, True, extras)
