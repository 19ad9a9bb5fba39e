"""The threshold bound's last step as a bound of its own: the exact search on the components at its best ρ.

:func:`~certpca.certification.threshold.threshold_bound` bounds each connected component K of the thresholded C
by cheap k-sparse bounds; at its best ρ the components that set its maximum can also get the upper bound of the
exact branch and bound on M_KK (Moghaddam, Weiss & Avidan, NIPS 2006; :func:`certpca.solvers.exact.exact`),
valid wherever the search stops (module docstring of :mod:`~certpca.certification.threshold`, docs/certification.md
§7).  That search costs seconds and pays only where the threshold bound is (nearly) the best bound of a certificate,
which is known once the sample-space SDP has run: on pbmc k = 30 (signed) it lowered the threshold bound from 41.40
to 40.47 in 2.9 s of work while dabe_sdp's 39.71 won, and on golub ``--log2 20`` k = 20, w ≥ 0 it took the winning
bound from 106.9 to 105.4.  So a certificate computes it after dabe_sdp (and before the matrix bound that continues
dabe_sdp, which took its budget when it came last: raw leukemia k = 20 signed 95.37% against 95.70%), from the
threshold bound it computed (``BoundSpec.start_option``), and only while that bound is within ``reach`` of the best
bound so far.
"""

from __future__ import annotations

from certpca.certification.numerics import FLOP_RATE, Bound, NotApplicable, check_k, deadline_after, timed
from certpca.certification.spec import COST_SDP, MOGHADDAM, BoundSpec
from certpca.certification.threshold import (
    DENSE_COMPONENT_MAX,
    PAIR_OPS,
    SEARCH_MAX_DIM,
    THRESHOLD_MAX_DIM,
    evaluate_at,
)

#: seconds of work below which the search is not started: its bound falls in steps, the first on golub
#: ``--log2 20`` k = 20 w ≥ 0 between 1 and 2 s of work (certpca/certification/threshold.py, SEARCH_STALL_WINDOW)
SEARCH_MIN_WORK = 1.0


@timed
def threshold_search_bound(
    problem,
    k,
    nonneg=False,
    *,
    start: Bound,
    time_limit=None,
    pair_budget: int | None = None,
    dense_max: int = DENSE_COMPONENT_MAX,
) -> Bound:
    """(k − 1)ρ + max_K ub_k(M_KK) at the ρ of ``start`` (a threshold bound of this problem, k and sign, computed
    with the same ``pair_budget`` and ``dense_max``), the components of k + 1 to ``SEARCH_MAX_DIM`` features that
    set the maximum bounded by the exact search too, until ``time_limit`` (seconds of work, or a
    :class:`~certpca.clock.Work`) is spent or the search stalls; the component parts the threshold bound left in
    ``Problem.memo`` at ρ are not charged again.  NotApplicable without a time limit (the search could run for
    minutes), with less of it than its evaluation at ρ is charged and ``SEARCH_MIN_WORK`` of search, or when the
    component that set the start's maximum (``params["max_component"]``) has not k + 1 to ``SEARCH_MAX_DIM``
    features: the search would leave its bound, the maximum, as it is.  Valid at any ρ ≥ 0: the margins are those
    of the threshold bound."""
    k = check_k(problem, k)
    if time_limit is None:
        raise NotApplicable("runs only under a time limit: the search could run for minutes")
    rho = start.params.get("rho")
    if rho is None:
        raise NotApplicable(f"its start, the {start.name} bound, has no ρ")
    size = start.params.get("max_component", 0)
    if not k < size <= SEARCH_MAX_DIM:  # the search leaves that component's bound, so the maximum, as it is
        raise NotApplicable(
            f"the component that sets its maximum at ρ = {rho:.6g} has {size} features, not {k + 1} to {SEARCH_MAX_DIM}"
        )
    stop = deadline_after(time_limit)
    # what its evaluation at ρ charges before the search can stop: the pairs above ρ, then each component visited
    # (the start's count) with at most all of them (:func:`~certpca.certification.threshold._ub_components`)
    p = start.params
    need = PAIR_OPS * (2 * p.get("n_pairs", 0) + problem.dim * (1 + p.get("refined", 0) / 10)) / FLOP_RATE
    if stop.left() < need + SEARCH_MIN_WORK:
        raise NotApplicable(
            f"{stop.left():.3g} s of work is less than its evaluation at ρ ({need:.3g} s) and {SEARCH_MIN_WORK:g} s of "
            "search"
        )
    value, info = evaluate_at(problem, k, nonneg, float(rho), stop, pair_budget, dense_max)
    return Bound(
        value,
        "threshold_search",
        {"rho": float(rho), **info, "time_limit_reached": stop.passed()},
        0.0,
        "the threshold bound's (k−1)ρ + max_K ub_k(M_KK) and margins; on the searched components the exact "
        "search's largest open node bound with its Weyl margins + rel 1e-10",
    )


THRESHOLD_SEARCH = BoundSpec(
    "threshold_search",
    threshold_search_bound,
    COST_SDP,  # registered after dabe_sdp, which says which bound leads, and before dabe_sdp_matrix
    max_dim=THRESHOLD_MAX_DIM,
    time_option="time_limit",
    charges=True,  # its evaluation at ρ and each node of the search
    continues="threshold",
    start_option="start",
    # on the 36 expression rows of golub, alon and leukemia it lowered the threshold bound by 2.93% at most (golub
    # --log2 20 k = 20 signed), by 2.90% on raw leukemia k = 20 signed, where it wins from 2.1% above dabe_sdp
    reach=0.03,
    description="the threshold bound at its best ρ with the exact search's bound on the components that set it",
    reference="certpca's threshold-and-split bound (see threshold) at its best ρ, its largest components "
    f"(at most {SEARCH_MAX_DIM} features) bounded by the branch and bound over supports of " + MOGHADDAM,
)

SPECS = [THRESHOLD_SEARCH]
