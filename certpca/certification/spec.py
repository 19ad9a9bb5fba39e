"""What a registered bound declares beside its code: cost, scope, description, citation.

Each bound module defines one :class:`BoundSpec` per bound next to the
function; :data:`certpca.certification.REGISTRY` collects them.  The names are the
one vocabulary of the package: ``Bound.name``, a certificate's ``bounds``,
``winner`` and ``skipped`` all use them.  The reference texts live here once
so that two bounds citing the same paper cite it identically.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

#: cost classes, cheapest first: the order in which a certificate computes bounds
COST_LINEAR = 0  # O(D)
COST_EIGEN = 1  # one (small) eigenvalue problem
COST_QUADRATIC = 2  # O(D²) work on the covariance
COST_SEARCH = 3  # a 1-D parameter search of eigenvalue problems, or a rank-d enumeration
COST_SDP = 4  # a semidefinite program (cvxpy)
COST_EXPONENTIAL = 5  # branch and bound over supports

HORN_JOHNSON = "Horn, R. A. & Johnson, C. R. (2013). Matrix Analysis, 2nd ed. Cambridge University Press."
DABE = (
    "d'Aspremont, A., Bach, F. & El Ghaoui, L. (2008). Optimal solutions for sparse principal component "
    "analysis. Journal of Machine Learning Research, 9, 1269-1294."
)
DSPCA = (
    "d'Aspremont, A., El Ghaoui, L., Jordan, M. I. & Lanckriet, G. R. G. (2007). A direct formulation "
    "for sparse PCA using semidefinite programming. SIAM Review, 49(3), 434-448."
)
LI_XIE = (
    "Li, Y. & Xie, W. (2020). Exact and approximation algorithms for sparse PCA. Preprint, "
    "Optimization Online 2020/05/7802."
)
ASTERIS = (
    "Asteris, M., Papailiopoulos, D. & Dimakis, A. G. (2014). Nonnegative sparse PCA with provable "
    "guarantees. Proceedings of the 31st International Conference on Machine Learning."
)
PDK = (
    "Papailiopoulos, D. S., Dimakis, A. G. & Korokythakis, S. (2013). Sparse PCA through low-rank "
    "approximations. Proceedings of the 30th International Conference on Machine Learning."
)
MOGHADDAM = (
    "Moghaddam, B., Weiss, Y. & Avidan, S. (2006). Spectral bounds for sparse PCA: exact and greedy "
    "algorithms. Advances in Neural Information Processing Systems 18."
)


@dataclass(frozen=True)
class BoundSpec:
    """A registered bound.

    Attributes
    ----------
    name : str
        The registry name, also ``Bound.name`` of what ``func`` returns.
    func : callable
        ``func(problem, k, nonneg=False, **options) -> Bound``.
    cost : int
        Cost class (``COST_*`` above): certificates compute bounds cheapest first.
    nonneg_only : bool
        Valid only when w ≥ 0 is required.
    max_dim : int or None
        Default-selection limit on D (an explicit request may go beyond it).
    description : str
        One line: the inequality the bound evaluates.
    reference : str
        The full reference text(s), or for an elementary bound the inequality
        and a textbook where it is proved.
    time_option : str or None
        The keyword through which ``func`` accepts a time limit in seconds
        (certificates pass what is left of their budget), None when it has none.
    target_option : str or None
        The keyword through which ``func`` accepts the smallest bound a certificate
        holds so far: ``func`` may stop where it sees it cannot go below it (the
        bound it returns is then weaker, never invalid, and says so in its
        ``params["stopped_at_target"]``).  None: it takes none.
    default_when : callable or None
        ``default_when(problem) -> bool``: a further condition for the default
        selection (e.g. only where cheaper relaxations do not apply); None: always.
    estimate : callable or None
        ``estimate(problem, k) -> seconds`` of the part of ``func`` no time limit
        can interrupt (all of it without a ``time_option``): a certificate skips
        the bound when this exceeds what is left of its budget.  None: negligible.
    sign_free : bool
        ``func`` ignores ``nonneg``: the bound of the plain problem is the same
        number for w ≥ 0, so it may be computed once and used for both.
    support_option : str or None
        The keyword through which ``func`` takes the support of the vector being
        certified (the pattern certificate is built around it); None: it takes none.
    support_hint : bool
        The support is only a hint (screening starts from it as an incumbent): the bound is
        as valid for any other vector, so a certificate of another vector may reuse it.
    probe : float or None
        Seconds of a first, short run (through ``time_option``) before the semidefinite
        programs, for a search that often settles a problem at once (the exact search on
        LRS k = 10: 0.1 s, behind 17 s of SDP): when it does not prove optimality, its
        bound stands until the full run at its own cost class.  None: no first run.
    factor_cost : int or None
        The cost class on a factor problem (D > r, C never formed) when it differs from ``cost``: the
        bounds that form the D × D covariance cost more there (``COST_EXPONENTIAL``: computed last); on
        wide data the dense duals took the budget before the strong bounds
        (:func:`~certpca.certification.schedule.computing_order`).  None: ``cost``.
    charges : bool
        ``func`` charges every step it takes to the :class:`~certpca.clock.Work` given through
        ``time_option`` (its steps' estimated seconds), so a budget can stop it part way.  False: it
        charges nothing, runs to its end under a budget, and the certificate charges it :meth:`work_on`
        (each bound charges all of its work or none of it: certpca/clock.py).
    stall_option : str or None
        The keyword through which ``func`` accepts ``True`` to end its search once its bound stalls; a
        certificate passes it when a bound that ``continues`` this one comes after it (dabe_sdp, whose last
        0.2% took 7 s of work on CBCL k = 50, hands that time to the matrix bound).  None: it takes none.
    continues : str or None
        The bound whose search this one continues from where it stopped (the matrix bound starts at
        dabe_sdp's best ρ and primal point; threshold_search at the threshold bound's best ρ).  In a certificate
        given time limits per bound (``time_limits``, the report's allotments) and none of its own, it runs within
        what that bound left of its limit.  None: none.
    start_option : str or None
        The keyword through which ``func`` takes the Bound of the bound it ``continues``, computed earlier in the
        same certificate: the certificate skips it when there is none, or when that bound is more than ``reach``
        above the best bound so far (another bound leads by more than continuing could gain).  For w ≥ 0 its
        signed twin continues the signed twin of its start.  None: it takes none.
    reach : float
        With ``start_option``: the most, relative, continuing lowered its start on the bundled data sets, so that
        a start further above the best bound so far is not continued (pbmc k = 30 signed: threshold 41.40,
        4.4% above dabe_sdp's 39.66, lowered to 40.47 in 2.9 s of work, for nothing).
    floor : callable or None
        ``floor(problem, k, time_limit=work) -> value`` below which ``func`` cannot go, whatever its
        search finds and whatever sign constraint it is computed for (a feasible point of the relaxation
        whose dual the bound is: weak duality), charging its steps to ``time_limit``: a certificate skips
        the bound, with that reason, when the floor is at least its best bound so far, since it could not
        lower it (the DNN dual on pbmc k = 30, w ≥ 0: floor 40.27, value
        41.08 after 17 CPU s, the best bound 39.35).  None: none known.
    work : callable or None
        ``work(problem, k) -> seconds``: the estimated work of a whole run, for a bound that does not
        charge (calibrated against CPU seconds in reports/bench/work.md).  None: ``estimate``.
    factor_share : float or None
        On a factor problem, the share of what is left of a certificate's budget it is given through
        ``time_option`` (None: the certificate's own share, 85%): the threshold bound takes 60% and
        leaves the rest to the sample-space SDP after it (with 85%, golub raw k = 50 signed: 83.1%, the
        SDP skipped; the SDP alone: 94.9% in 1 CPU s; with 50%, leukemia ``--log2 20`` k = 50 w ≥ 0 lost
        the threshold bound's rank-2 finalists: 90.97% against 93.39%).
    """

    name: str
    func: Callable
    cost: int
    nonneg_only: bool = False
    max_dim: int | None = None
    description: str = ""
    reference: str = ""
    time_option: str | None = None
    target_option: str | None = None
    default_when: Callable | None = None
    estimate: Callable | None = None
    sign_free: bool = False
    support_option: str | None = None
    support_hint: bool = False
    probe: float | None = None
    factor_cost: int | None = None
    factor_share: float | None = None
    charges: bool = False
    work: Callable | None = None
    floor: Callable | None = None
    stall_option: str | None = None
    continues: str | None = None
    start_option: str | None = None
    reach: float = 0.0

    def share_on(self, problem, default: float) -> float:
        """The share of the budget left it is given on ``problem``: ``factor_share`` on a factor problem when
        given, else ``default``."""
        return self.factor_share if problem.uses_factor and self.factor_share is not None else default

    def work_on(self, problem, k) -> float:
        """The seconds of work a certificate charges for a run of this bound when it does not charge them
        itself (``charges``): ``work``, else ``estimate``, else 0; for a bound that charges, what it
        spends before it can first stop (``estimate``)."""
        model = self.estimate if self.charges else (self.work or self.estimate)
        return 0.0 if model is None else float(model(problem, k))

    def cost_on(self, problem) -> int:
        """The cost class on ``problem``: ``factor_cost`` on a factor problem when given, else ``cost``."""
        return self.factor_cost if problem.uses_factor and self.factor_cost is not None else self.cost

    def cite(self) -> str:
        """The full reference text for a report's bibliography (as ``Solver.cite``)."""
        return self.reference
