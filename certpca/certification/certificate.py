"""Certificates: a feasible vector's value together with valid upper bounds on OPT.

    cert = certify_vector(problem, w, k=10, nonneg=False, bounds=["lambda1", "dabe"])
    cert.upper_bound, cert.winner, cert.certified_fraction, cert.optimal

Bounds are computed cheapest first (see :data:`certpca.certification.REGISTRY`) within
a time budget (``DEFAULT_BUDGET`` for the default list); the upper bound is the
minimum over all of them.

Scale: every bound is computed on the problem rescaled by a power of two
(:func:`_rescale_exponents`, ``Problem.scaled_by``), which is exact in floating point, so the bounds neither
overflow nor underflow at extreme scales and are exactly equivariant under
scalings by powers of two; they are mapped back by the same power.  A bound
that is not finite after that is discarded with the reason; the value and the
lower bound come from the original matrix.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from certpca.certification.feasible import Better, feasible, signed_reach
from certpca.certification.numerics import Bound, NotApplicable
from certpca.certification.registry import REGISTRY, default_bounds, parse_bounds
from certpca.certification.schedule import computing_order, schedule
from certpca.certification.spec import BoundSpec
from certpca.clock import NET_FACTOR, NET_NOTE, Work
from certpca.errors import InputError, TooLarge
from certpca.summary import Summary
from certpca.validation import check_cardinality, check_float

#: seconds of estimated work (:mod:`certpca.clock`) for the default bound list when no budget is given: a
#: time a person waits for (issue 29); bounds are skipped, or stopped, so as to end within it
DEFAULT_BUDGET = 15.0

#: the share of the remaining budget given to a bound with a time option
TIME_OPTION_SHARE = 0.85


#: what a certificate says of a bound that stopped at its target (``BoundSpec.target_option``)
STOPPED_NOTE = "stopped where it could not go below the bounds before it"


def _finite(x) -> float | None:
    x = float(x)
    return x if np.isfinite(x) else None


def _rescale_exponents(problem) -> tuple[int, int]:
    """(the power of two F or C is multiplied by, the one its bounds are multiplied back by): the largest
    |F_ij| (or |C_ij|) brought into [0.5, 1).

    Multiplying by a power of two is exact for every entry that stays a normal
    float, so OPT(C) = 2^e·OPT(C') up to entries that become subnormal; those
    move C' by at most 2^−1075 per entry of C (or of F, changing C' by at most
    3·r·D·2^−1075 in spectral norm), which :func:`certify_vector` adds to every
    bound before mapping it back.
    """
    m = problem.largest_entry()
    if m == 0 or not np.isfinite(m):
        return 0, 0
    e = int(np.frexp(m)[1])
    return -e, 2 * e if problem.uses_factor else e


def _subnormal_margin(problem) -> float:
    """Spectral-norm change of C' from entries made subnormal by the rescaling (:func:`_rescale_exponents`)."""
    r = max(problem.factor_rows, 1)
    return 3.0 * r * problem.dim * 2.0**-1074


def _scale_back(b: Bound, e: int, sub: float) -> Bound:
    """The bound on the original problem: (value + subnormal margin)·2^e, feasible values mapped too."""
    params = dict(b.params) if isinstance(b.params, dict) else {"params": b.params}
    if e:
        params["computed_at_scale"] = f"C·2^{-e}"
        if params.get("feasible_value") is not None:
            params["feasible_value"] = float(np.ldexp(float(params["feasible_value"]), e))
    return Bound(float(np.ldexp(b.value + sub, e)), b.name, params, b.seconds, b.validity)


@dataclass
class Certificate:
    """A feasible value and the best valid upper bound on OPT(k, nonneg).

    ``winner``, the names in ``bounds`` and the keys of ``skipped`` are registry
    names (:data:`certpca.certification.REGISTRY`).
    """

    value: float
    lower_bound: float
    upper_bound: float
    winner: str
    bounds: list
    k: int
    nonneg: bool
    tol: float = 1e-6
    skipped: dict = field(default_factory=dict)
    better: Better | None = None  # a better feasible vector a bound found (not the certified one)
    notes: list[str] = field(default_factory=list)  # e.g. that the certified vector was adopted from a bound
    budget: float | None = None  # seconds of estimated work it was given (None: none; certpca/clock.py)
    budget_used: float = 0.0  # seconds of estimated work its bounds charged
    net_fired: bool = False  # the CPU safety net shortened the work: the result may depend on the load

    def adopt(self) -> Certificate:
        """The certificate of ``better``'s vector: every bound bounds OPT whatever the vector, so only
        the value changes; a note says where the vector came from and what it gained."""
        if self.better is None:
            raise ValueError("this certificate holds no better vector to adopt")
        b = self.better
        note = f"a better vector was found while certifying: +{100 * b.gain:.3g}%, {b.finder}"
        return replace(
            self, value=b.value, lower_bound=max(self.lower_bound, b.value), better=None, notes=[*self.notes, note]
        )

    @property
    def certified_fraction(self) -> float:
        """value / upper bound: the vector achieves at least this fraction of OPT."""
        return self.value / self.upper_bound if self.upper_bound > 0 else float("nan")

    @property
    def gap(self) -> float:
        """upper bound − value (≥ OPT − value)."""
        return self.upper_bound - self.value

    @property
    def relative_gap(self) -> float:
        return self.gap / self.upper_bound if self.upper_bound > 0 else float("nan")

    @property
    def optimal(self) -> bool:
        """True when gap / upper bound ≤ tol (both finite): the vector is optimal to that tolerance."""
        if not (np.isfinite(self.upper_bound) and np.isfinite(self.value)):
            return False
        return bool(self.upper_bound > 0 and self.gap <= self.tol * self.upper_bound) or bool(
            self.upper_bound == 0 and self.value == 0
        )

    def to_dict(self) -> dict:
        return {
            "value": _finite(self.value),
            "lower_bound": _finite(self.lower_bound),
            "upper_bound": _finite(self.upper_bound),
            "winner": self.winner,
            "certified_fraction": _finite(self.certified_fraction),
            "gap": _finite(self.gap),
            "relative_gap": _finite(self.relative_gap),
            "optimal": self.optimal,
            "tol": float(self.tol),
            "k": int(self.k),
            "nonneg": bool(self.nonneg),
            "bounds": [b.to_dict() for b in self.bounds],
            "skipped": dict(self.skipped),
            "better": None if self.better is None else self.better.to_dict(),
            "notes": list(self.notes),
            "budget": self.budget,
            "budget_used": float(self.budget_used),
            "net_fired": self.net_fired,
        }

    def budget_note(self) -> str:
        """'budget: used 8.3 of 10 s of estimated work' (or 'bounds took 8.3 s of estimated work (no budget)'),
        and a warning when the CPU safety net stopped a bound (certpca/clock.py)."""
        if self.budget is None:
            note = f"bounds took {self.budget_used:.3g} s of estimated work (no budget)"
        else:
            note = f"budget: used {self.budget_used:.3g} of {self.budget:.3g} s of estimated work"
        if self.net_fired:
            note += f"; {NET_NOTE}"
        return note

    def summary(self) -> Summary:
        """The bounds computed, tightest first, as a table (upper bound, the certified fraction it
        alone gives, seconds) with the verdict in the notes; ``as_text``, ``as_html``, ``as_latex``."""
        ranked = sorted(self.bounds, key=lambda b: b.value)
        table = pd.DataFrame(
            {
                "Upper bound": [b.value for b in ranked],
                "Certified fraction": [self.value / b.value if b.value > 0 else float("nan") for b in ranked],
                "Seconds": [b.seconds for b in ranked],
            },
            index=pd.Index([b.name for b in ranked]),
        )
        verdict = "proven optimal" if self.optimal else "not proven optimal"
        notes = [
            f"Value {self.value:.6g} <= OPT <= {self.upper_bound:.6g} (bound: {self.winner}); "
            f"certified {100 * self.certified_fraction:.2f}%, {verdict} (tolerance {self.tol:g})",
            *(f"{name} skipped: {why}" for name, why in self.skipped.items()),
            *(f"{b.name} {STOPPED_NOTE}" for b in ranked if b.params.get("stopped_at_target")),
            *self.remarks(),
            *(f"{b.name}: {_survivors(b)}" for b in ranked if "survivors" in b.params),
            self.budget_note(),
        ]
        kind = "nonnegative " if self.nonneg else ""
        return Summary(
            f"Certificate for {kind}k = {self.k}", table, notes, by_column=True, heading="Upper bounds on OPT:"
        )

    def __str__(self) -> str:
        kind = "nonnegative " if self.nonneg else ""
        head = (
            f"Certificate ({kind}k={self.k}): value {self.value:.6g} ≤ OPT ≤ {self.upper_bound:.6g} "
            f"[{self.winner}]; certified {100 * self.certified_fraction:.2f}%, "
            f"gap {self.gap:.3g}{' — optimal' if self.optimal else ''}"
        )
        lines = [head]
        for b in sorted(self.bounds, key=lambda b: b.value):
            stopped = f"; {STOPPED_NOTE}" if b.params.get("stopped_at_target") else ""
            stopped += f"; {_survivors(b)}" if "survivors" in b.params else ""
            lines.append(f"  {b.name:<11} {b.value:.6g}  ({b.seconds:.2g} s{stopped})")
        for name, why in self.skipped.items():
            lines.append(f"  {name:<11} skipped: {why}")
        lines.extend(self.remarks())
        lines.append(f"  {self.budget_note()}")
        return "\n".join(lines)

    def remarks(self) -> list[str]:
        """The notes, and the better vector a bound found, one line each."""
        out = list(self.notes)
        if self.better is not None:
            b = self.better
            out.append(
                f"a better vector exists: value {b.value:.6g} (+{100 * b.gain:.3g}%), found by {b.finder} "
                "(Certificate.better)"
            )
        return out


def _survivors(b: Bound) -> str:
    """What screening left (certification/screening.py): '27 of 361 features left, 39 nodes'."""
    return f"{b.params['survivors']} of {b.params['features']} features left, {b.params.get('nodes', 0)} nodes"


def _validate(problem, w, k, nonneg) -> tuple[np.ndarray, int]:
    """(w normalised, k) or an InputError naming the parameter at fault."""
    k = check_cardinality(k, problem.dim)
    w = np.asarray(w, dtype=float)
    if w.ndim != 1 or w.shape[0] != problem.dim:
        raise InputError.bad_argument("w", f"must be a vector of length {problem.dim}, got shape {w.shape}")
    if not np.all(np.isfinite(w)):
        raise InputError.bad_argument("w", "has non-finite entries; pass a finite loading vector")
    nnz = int(np.count_nonzero(w))
    if nnz == 0:
        raise InputError.bad_argument("w", "is the zero vector; pass a nonzero loading vector")
    if nnz > k:
        raise InputError.bad_argument("w", f"has {nnz} nonzeros but k = {k}; truncate w or raise k")
    if nonneg and np.any(w < 0):
        raise InputError.bad_argument(
            "w", f"has {int(np.sum(w < 0))} negative entries but nonneg=True; flip/clip w or use nonneg=False"
        )
    return w / np.linalg.norm(w), k


def work_of(budget: float | Work | None, fixed_work: bool = False) -> Work:
    """The allotment of a call's budget: ``budget`` itself when it is one (a share of a larger call's), else
    a :class:`~certpca.clock.Work` of its seconds (None: unlimited) with the CPU safety net unless ``fixed_work``."""
    return budget if isinstance(budget, Work) else Work(budget, net=None if fixed_work else NET_FACTOR)


def certify_vector(
    problem,
    w,
    k,
    nonneg=False,
    *,
    bounds=None,
    budget: float | Work | None = None,
    tol: float = 1e-6,
    stop_when_optimal: bool | None = None,
    reuse: Mapping[str, Bound] | None = None,
    time_limits: dict[str, float] | None = None,
    progress: Callable[[str, float], None] | None = None,
    fixed_work: bool = False,
    settled: Callable[[str, Bound | None], None] | None = None,
) -> Certificate:
    """Certify a feasible vector w: its value, the best upper bound on OPT, the gap.

    Parameters
    ----------
    problem : Problem
    w : (D,) array — at most k nonzeros (and ≥ 0 when ``nonneg``); normalised here.
    k : int
    nonneg : bool
    bounds : list of names or "a,b,c", optional — default: every applicable bound
        (:func:`default_bounds`), computed cheapest first within ``DEFAULT_BUDGET``.
    budget : float or Work, optional — seconds of estimated work (:mod:`certpca.clock`: the same certificate
        on a busy machine as on a quiet one, about as many CPU seconds) for all the bounds; no new bound
        starts after it is spent (the cheapest requested bound always runs, so there is always an upper
        bound), nor one whose estimated work before it can stop (``BoundSpec.work_on``: a bound that
        does not charge its steps, all of it) is more than what is left, and a bound with a time option
        (``BoundSpec.time_option``) gets 85% of what is left and, when it charges its steps
        (``BoundSpec.charges``), stops there with its best valid bound so far.  Each bound charges its
        work, or is charged its estimate.  Behind it a CPU safety net (``NET_FACTOR`` × the budget:
        ``net_fired``, and a note, when it is reached).  The certificate says how much it used
        (``budget_used``).  A bound with a target option (``BoundSpec.target_option``) is given the
        smallest bound so far, below which it alone can help.
    tol : float — ``optimal`` when (upper − value)/upper ≤ tol.
    stop_when_optimal : bool — stop computing once optimal (default: only for the
        default bound list).
    reuse : {name: Bound}, optional — bounds already computed for this problem and k
        (for w ≥ 0: bounds of the plain problem): used as they are instead of being
        computed again, in their place in the list (for w ≥ 0 only the ``sign_free`` ones),
        unless one stopped at a target below this certificate's best bound so far.

    For w ≥ 0 every other bound that applies to the signed problem is the smaller of its
    nonnegative and its signed value (``_with_signed``: the signed one from ``reuse``, or
    computed beside it within the budget; a bound that continues another, from the signed twin of its start), so a
    nonnegative certificate is never above the signed certificate of the same bounds.
    time_limits : {name: seconds}, optional — time limits of named bounds with a time
        option (at most what the budget leaves them); the others get their share of the
        budget, or their own default.
    progress : callable, optional — ``progress(name, seconds used)`` before each bound is computed
        (a progress bar's hook).
    fixed_work : bool — no CPU safety net and no default budget: every bound with a time option gets its
        ``time_limits`` entry (or its probe's seconds, or its share of ``budget``) as work, else an
        unlimited allotment under which its own caps (the exact search's, screening's) are work too, so
        the certificate is a function of its inputs alone (the report's byte-identical page).
    settled : callable, optional — ``settled(name, its final Bound or None)`` per bound once nothing changes it
        (for w ≥ 0: at the end), for a certificate of w ≥ 0 computed at once to reuse (reporting/beside.py).

    Bounds are computed on the problem rescaled by :func:`_rescale_exponents` and mapped back; a non-finite bound is
    skipped with its reason.  The lower bound is the vector's value or the value
    of a feasible vector a bound proposes (its ``weights``, or the top eigenvector
    of the original C on a sparse pattern's support), recomputed on the original C.
    Raises InputError for an invalid w, k or bound name.
    """
    w, k = _validate(problem, w, k, nonneg)
    if budget is not None and not isinstance(budget, Work):
        budget = check_float(budget, "budget", low=0.0)
    time_limits = {n: check_float(t, "time_limits", low=0.0) for n, t in (time_limits or {}).items()}
    tol = check_float(tol, "tol", low=0.0)
    explicit = bounds is not None
    names = parse_bounds(bounds) if explicit else default_bounds(problem, nonneg)
    if budget is None and not explicit and not fixed_work:
        budget = DEFAULT_BUDGET
    if stop_when_optimal is None:
        stop_when_optimal = not explicit
    names = computing_order(names, problem, nonneg)
    value = problem.variance(w)
    shift, e = _rescale_exponents(problem)
    sub = _subnormal_margin(problem)
    work = work_of(budget, fixed_work)
    seconds, spent_before = work.seconds, work.used()
    timed = work.seconds is not None or fixed_work  # time options as work: by a budget, or fixed
    done: list[Bound] = []
    skipped: dict[str, str] = {}
    upper = np.inf
    # a large factor is scaled in place and restored (Problem.scaled_by): the original is
    # not used inside, so the lower bounds on it are computed after
    first_runs: dict[str, int] = {}  # a probed bound's name → where its first run's Bound is in done
    twins: list[tuple[int, BoundSpec, dict, float]] = []  # for w ≥ 0: bounds whose signed twin is still to compute
    used_by: dict[str, float] = {}  # a computed bound's name → the work it charged

    def skip(name: str, reason: str) -> None:
        if name not in first_runs:  # a first run's bound stands for a full run that is skipped
            skipped[name] = reason

    def spent_reason() -> str:
        if work.net_fired():
            return f"the CPU safety net ({NET_FACTOR:g} × the {seconds:.3g} s budget) was reached"
        return f"time budget of {seconds:.3g} s spent"

    def limited(spec: BoundSpec, limit: float) -> dict:
        """Its options with its share of the budget (at most ``limit``) through its time option."""
        if spec.time_option is None or not (timed or limit < np.inf):
            return {}
        left = work.left()
        share = max(spec.share_on(scaled, TIME_OPTION_SHARE) * left, 0.0) if np.isfinite(left) else np.inf
        return {spec.time_option: work.within(min(share, limit))}

    reach: list[float] = []  # signed_reach of w, computed once when first needed

    def signed_value() -> float:
        """A signed vector's value, below which no bound of the signed problem, nor one ignoring w ≥ 0, can go
        (:func:`~.feasible.signed_reach`)."""
        if not reach:
            reach.append(float(np.ldexp(signed_reach(scaled, w, k), e)))
        return reach[0]

    def charged(spec: BoundSpec, nn: bool, limit: float, kw: dict, upfront: float) -> Bound:
        """The bound computed (:func:`_computed`) with ``kw`` and its share of the budget (at most ``limit``),
        charged first ``upfront``, what it does not charge itself (``BoundSpec.work_on``): its whole run, or
        for a bound that charges its steps, what comes before its first, so that its share is what is left
        after that.  Refunded when the bound does not apply."""
        work.charge(upfront)
        try:
            return _computed(spec.name, scaled, k, nn, {**kw, **limited(spec, limit)}, e, sub)
        except (NotApplicable, TooLarge):
            work.charge(-upfront)
            raise

    # one BLAS thread: a budget stands for the CPU seconds of one thread, and two OpenBLAS threads spinning on a
    # busy 2-core machine took 13.8 CPU s for an eigenproblem that takes 0.7 s on one (certpca/clock.py)
    with problem.scaled_by(shift) as scaled, threadpool_limits(1):
        order, untold = schedule(names), list(names)  # untold: not yet settled
        for at, (name, probe) in enumerate(order):
            if settled is not None and not nonneg:
                _settle(settled, untold, {n for n, _ in order[at:]}, done)
            spec = REGISTRY[name]
            if spec.nonneg_only and not nonneg:
                skipped[name] = "applies to nonnegative problems only"
                continue
            if name in first_runs and done[first_runs[name]].params.get("proven"):
                continue  # its first run settled it
            # a reused bound costs nothing: used even when the budget is spent
            if (spec.sign_free or not nonneg) and reuse and name in reuse and _reusable(reuse[name], upper):
                if probe is not None:
                    continue  # used once, at its own place
                done.append(reuse[name])
                upper = min(upper, reuse[name].value)
                continue
            left = work.left()
            if done and left <= 0:
                skip(name, spent_reason())
                continue
            if stop_when_optimal and np.isfinite(upper) and upper - value <= tol * upper:
                skip(name, "already certified optimal")
                continue
            if stop_when_optimal and any(b.params.get("proven") for b in done):
                skip(name, "the optimum is proven (no bound can be lower)")
                continue
            upfront = spec.work_on(scaled, k)
            if done and upfront > left:
                skip(
                    name,
                    f"estimated {upfront:.3g} s of work without a pause, more than the {max(left, 0):.3g} s left "
                    f"of the {seconds:.3g} s budget",
                )
                continue
            if spec.floor is not None and np.isfinite(upper):
                floor = float(np.ldexp(spec.floor(scaled, k, time_limit=work), e))
                if floor >= upper:
                    skip(name, f"cannot improve on {upper:.6g}: a point of its relaxation reaches {floor:.6g}")
                    continue
            if nonneg and spec.sign_free and spec.time_option is not None and signed_value() >= upper:
                why = f"it bounds the signed problem too, where a vector reaches {signed_value():.6g}"
                skip(name, f"cannot improve on {upper:.6g}: {why}")
                continue
            limit = _time_limit(spec, time_limits, used_by)
            if limit <= 0 and name not in time_limits:
                skip(name, f"{spec.continues}, which it continues, spent its time limit")
                continue
            limit = min(limit, np.inf if probe is None else probe)
            kw: dict[str, object] = {}
            if spec.start_option is not None:
                start = next((b for b in done if b.name == spec.continues), None)
                if start is None:
                    why = skipped.get(spec.continues or "", "not among this certificate's bounds")
                    skip(name, f"it continues {spec.continues}, which was skipped: {why}")
                    continue
                if start.value > (1 + spec.reach) * upper:
                    skip(name, f"{spec.continues}, which it continues, is more than {spec.reach:.0%} above {upper:.6g}")
                    continue
                kw[spec.start_option] = start
            if spec.support_option is not None:
                kw[spec.support_option] = np.flatnonzero(w)
            if spec.target_option is not None and np.isfinite(upper):
                kw[spec.target_option] = float(np.ldexp(upper, -e))  # on the rescaled problem the bound sees
            if spec.stall_option is not None and any(REGISTRY[n].continues == name for n, _ in order[at + 1 :]):
                kw[spec.stall_option] = True  # what it would spend stalled, the bound that continues it uses
            if progress is not None:
                progress(name, work.used() - spent_before)
            before = work.used()
            try:
                b = charged(spec, nonneg, limit, kw, upfront)
            except (NotApplicable, TooLarge) as exc:
                skip(name, str(exc))
                continue
            used_by[name] = used_by.get(name, 0.0) + work.used() - before
            if spec.target_option in kw:
                b.params["target"] = float(upper)
            twin = nonneg and not spec.sign_free and probe is None  # after its own value: a wait, when streamed
            given = (reuse or {}).get(name) if twin else None
            if twin and given is not None:
                b = _with_signed(b, given)
            if name in first_runs:  # the full run after a first one: the better of the two stands
                i = first_runs[name]
                done[i] = min(done[i], b, key=lambda x: x.value)
            else:
                if probe is not None:
                    first_runs[name] = len(done)
                i = len(done)
                done.append(b)
            # a bound continuing another has a signed twin to compute only without ``reuse``: with it, the signed
            # certificate had the signed start and did not continue it (its bound is then not among the signed ones)
            if twin and given is None and (spec.start_option is None or reuse is None):
                twins.append((i, spec, kw, limit))
            upper = min(upper, b.value)
        # for w ≥ 0, the signed problem's bounds too, with what the budget leaves once every bound of
        # w ≥ 0 had its turn (computed at once, they took the time of the nonnegative bounds after them)
        if twins and signed_value() >= upper:  # each twin is at least a signed vector's value, so above ``upper``
            twins.clear()
        signed_twins: dict[str, Bound] = {}
        for i, spec, kw, limit in twins:
            if spec.start_option is not None:  # it continues the signed twin of its start, when there is one
                if spec.continues not in signed_twins:
                    continue
                kw = {**kw, spec.start_option: signed_twins[spec.continues]}
            left = work.left()
            finished = upper - value <= tol * upper or any(b.params.get("proven") for b in done)
            if left <= 0 or (stop_when_optimal and finished):
                break
            upfront = spec.work_on(scaled, k)
            if upfront > left:
                continue
            try:
                signed = charged(spec, False, limit, kw, upfront)
            except (NotApplicable, TooLarge):
                continue
            signed_twins[spec.name] = signed
            done[i] = _with_signed(done[i], signed)
            upper = min(upper, done[i].value)
    if settled is not None:
        _settle(settled, untold, set(), done)
    if not done:
        raise InputError("no bound could be computed: " + "; ".join(f"{n}: {r}" for n, r in skipped.items()))
    lower, better = feasible(problem, done, k, nonneg, value, tol)
    win = min(done, key=lambda b: b.value)
    return Certificate(
        value=value,
        lower_bound=lower,
        upper_bound=win.value,
        winner=win.name,
        bounds=done,
        k=k,
        nonneg=bool(nonneg),
        tol=tol,
        skipped=skipped,
        better=better,
        budget=seconds,
        budget_used=work.used() - spent_before,
        net_fired=work.net_fired(),
    )


def _computed(name: str, scaled, k: int, nonneg: bool, options: dict, e: int, sub: float) -> Bound:
    """The bound ``name`` computed on the rescaled problem and mapped back (:func:`_scale_back`); NotApplicable
    when it is not finite on the original scale."""
    b = _scale_back(REGISTRY[name].func(scaled, k, nonneg, **options), e, sub)
    if not np.isfinite(b.value):
        raise NotApplicable(f"not finite ({b.value}) after mapping back to the original scale")
    return b


def evaluate_bound(problem, name: str, k: int, nonneg: bool = False, **options) -> Bound:
    """The registered bound ``name`` on OPT(k, nonneg), computed exactly as :func:`certify_vector` computes
    each of its bounds: on the problem rescaled by a power of two, mapped back with the subnormal margin.

    For a bound alone (the report's band along the path) rather than a certificate of a vector.  Raises
    NotApplicable or TooLarge (with the reason) when the bound does not apply or is not finite.
    """
    shift, e = _rescale_exponents(problem)
    with problem.scaled_by(shift) as scaled:
        return _computed(name, scaled, k, nonneg, options, e, _subnormal_margin(problem))


def recertify(shared: Certificate, problem, w) -> Certificate:
    """The certificate of the vector ``w`` from the bounds of ``shared``, a certificate of another vector for
    the same problem, k and sign constraint: the bounds on OPT do not depend on the vector, so they are
    used as they are, and the value and lower bound are those :func:`certify_vector` gives ``w``
    (recomputed on the original C, bit for bit).

    Raises InputError for an invalid ``w``, or when ``shared`` holds a bound built around the vector's
    support (``BoundSpec.support_option``, e.g. ``pattern``; a support that is only a hint, as screening's,
    is fine).
    """
    w, k = _validate(problem, w, shared.k, shared.nonneg)
    specific = [
        b.name
        for b in shared.bounds
        if REGISTRY[b.name].support_option is not None and not REGISTRY[b.name].support_hint
    ]
    if specific:
        raise InputError.bad_argument(
            "shared", f"holds {', '.join(specific)}, which depend on the vector's support; certify w itself"
        )
    value = problem.variance(w)
    lower, better = feasible(problem, shared.bounds, k, shared.nonneg, value, shared.tol)
    return replace(shared, value=value, lower_bound=lower, better=better, notes=[])


def _time_limit(spec: BoundSpec, time_limits: Mapping[str, float], used_by: Mapping[str, float]) -> float:
    """A bound's entry of ``time_limits``; for one without an entry that continues one with an entry
    (``BoundSpec.continues``), what that one left of it (``used_by``: the work each bound charged); else inf."""
    start = spec.continues
    if spec.name in time_limits or start is None or start not in time_limits:
        return time_limits.get(spec.name, np.inf)
    return max(time_limits[start] - used_by.get(start, 0.0), 0.0)


def _with_signed(b: Bound, signed: Bound) -> Bound:
    """For w ≥ 0: the smaller of ``b`` and ``signed``, the same bound of the signed problem (from ``reuse``, or
    computed beside it), valid too since OPT over w ≥ 0 ≤ OPT over all w.  Its proof flags are dropped: a
    proven signed optimum proves nothing for w ≥ 0."""
    if not np.isfinite(signed.value) or signed.value >= b.value:
        return b
    params = {**signed.params, "signed_problem": True}
    for flag in ("proven", "proves_support_optimal"):
        if flag in params:
            params[flag] = False
    validity = f"{signed.validity}; of the signed problem, whose OPT is at least that of w ≥ 0"
    return Bound(signed.value, b.name, params, b.seconds + signed.seconds, validity)


def _settle(settled: Callable[[str, Bound | None], None], told: list[str], pending: set[str], done: list) -> None:
    """``settled(name, its bound in done or None)`` for each name of ``told`` no longer ``pending``, taken from it."""
    for name in [n for n in told if n not in pending]:
        told.remove(name)
        settled(name, next((b for b in done if b.name == name), None))


def _reusable(b: Bound, upper: float) -> bool:
    """Whether a bound computed for another certificate stands in one whose best bound so far is ``upper``:
    not when it stopped at a target below ``upper`` (BoundSpec.target_option), where run again it might
    have gone on below ``upper``."""
    return not b.params.get("stopped_at_target") or b.params.get("target", -np.inf) >= upper
