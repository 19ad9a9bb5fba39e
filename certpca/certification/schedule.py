"""The order in which a certificate computes its bounds (:func:`certpca.certification.certify_vector`): by cost
class, with a first run of a bound that has one (``BoundSpec.probe``) before the semidefinite programs."""

from __future__ import annotations

from certpca.certification.registry import REGISTRY
from certpca.certification.spec import COST_SDP


def computing_order(names: list[str], problem, nonneg: bool = False) -> list[str]:
    """``names`` in the order a certificate computes them: by cost class on ``problem``
    (``BoundSpec.cost_on``), then the registry's order.

    On wide data (a factor problem) the bounds that form the D × D covariance come last: before, the dense
    duals took the budget of the stronger threshold bound and sample-space SDP (alon raw k = 20 w ≥ 0: dspca
    25 s, both skipped, 83.7% certified against 90.6% with them).  For w ≥ 0 a bound of w ≥ 0 alone
    (``nonneg_only``, no signed counterpart) comes after the semidefinite programs both certificates
    compute, so that a time-limited search gets the same share of the budget in both (khan k = 50: perron
    ran first and took dabe_sdp's time)."""
    place = {n: i for i, n in enumerate(REGISTRY)}

    def key(n: str) -> tuple[int, bool, int]:
        spec = REGISTRY[n]
        late = nonneg and spec.nonneg_only
        cost = spec.cost_on(problem)
        return (max(cost, COST_SDP) if late else cost, late, place[n])

    return sorted(names, key=key)


def first_runs(names: list[str], problem, nonneg: bool = False) -> list[str]:
    """The bounds of ``names`` that a certificate of ``problem`` runs twice, a first run before the full one
    (:func:`schedule`): a bound with a ``probe`` whose place comes after the first semidefinite program (on a
    dense problem screening runs before them and has no first run)."""
    return [n for n, probe in schedule(computing_order(names, problem, nonneg)) if probe is not None]


def schedule(names: list[str]) -> list[tuple[str, float | None]]:
    """(name, seconds of a first run or None) in computing order: ``names`` (sorted by cost) with a
    first run of each bound that has a ``probe`` placed before the first semidefinite program or
    costlier bound, where one comes before it."""
    out: list[tuple[str, float | None]] = [(n, None) for n in names]
    for name in names:
        probe = REGISTRY[name].probe
        at = next(i for i, (n, _) in enumerate(out) if REGISTRY[n].cost >= COST_SDP or n == name)
        if probe is not None and out[at][0] != name:
            out.insert(at, (name, probe))
    return out
