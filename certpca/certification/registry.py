"""The registry of bounds: one :class:`~certpca.certification.spec.BoundSpec` per name, cheapest first.

The names here are the package's one vocabulary for bounds (``Bound.name``,
a certificate's ``bounds``, ``winner`` and ``skipped``); each spec is declared
beside its bound's code and carries its cost class, description and citation.
"""

from __future__ import annotations

from certpca.certification import (
    duals,
    exact,
    lowrank,
    relax,
    screening,
    sdp_matrix,
    sdp_sample,
    spectral,
    threshold,
    threshold_search,
)
from certpca.certification.spec import COST_EIGEN, BoundSpec
from certpca.errors import InputError

#: sorted by cost class (a stable sort keeps each module's order within a class)
REGISTRY: dict[str, BoundSpec] = {
    s.name: s
    for s in sorted(
        [
            *spectral.SPECS,
            *duals.SPECS,
            *lowrank.SPECS,
            *threshold.SPECS,
            *screening.SPECS,
            *relax.SPECS,
            *sdp_sample.SPECS,
            *threshold_search.SPECS,  # after dabe_sdp, which says whether threshold leads, before its continuation
            *sdp_matrix.SPECS,
            *exact.SPECS,
        ],
        key=lambda s: s.cost,
    )
}


def parse_bounds(spec, param: str = "bounds") -> list[str]:
    """'lambda1,gershgorin,dspca' (or a list) → validated names; InputError naming ``param``."""
    if isinstance(spec, str):
        names = [s.strip() for s in spec.split(",")]
    else:
        try:
            names = [str(s).strip() for s in spec]
        except TypeError:
            raise InputError.bad_argument(
                param, f"must be a list of bound names or a comma-separated string, got {spec!r}"
            ) from None
    names = [n for n in names if n]
    if not names:
        raise InputError.bad_argument(param, f"names no bound; give some of {', '.join(REGISTRY)}")
    unknown = [n for n in names if n not in REGISTRY]
    if unknown:
        raise InputError.bad_argument(
            param, f"names unknown bound(s) {', '.join(unknown)}; choose from {', '.join(REGISTRY)}"
        )
    return names


def default_bounds(problem, nonneg: bool) -> list[str]:
    """Every registered bound that applies and whose default size limit (and condition) the problem meets.

    Cheapest first; a certificate runs them within its time budget, so on wide data
    the threshold-and-split and sample-space SDP bounds run without being asked.
    """
    return [
        s.name
        for s in REGISTRY.values()
        if (nonneg or not s.nonneg_only)
        and (s.max_dim is None or problem.dim <= s.max_dim)
        and (s.default_when is None or s.default_when(problem))
    ]


def cheap_bounds(problem, nonneg: bool) -> list[str]:
    """The default bounds of cost class at most ``COST_EIGEN`` (trace, λ1): a certificate that costs
    less than a fit, with no search or time limit (so no clock in the result).  Gershgorin (O(r·D²))
    is left out: on khan (D = 2308) it costs 5 × a 3-component fit per component."""
    return [n for n in default_bounds(problem, nonneg) if REGISTRY[n].cost <= COST_EIGEN]
