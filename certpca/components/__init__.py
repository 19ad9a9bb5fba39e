"""Several components: the schemes that fit them and the variance they add.

- ``projection``: deflate C to (I − wwᵀ)C(I − wwᵀ) after each component
  (Sigg & Buhmann 2008, eq. 18).
- ``disjoint``: later components may only use features no earlier one used
  (eq. 19), which makes nonnegative components exactly orthogonal.
  Both in :mod:`.sequential`.
- ``quasi``: nonnegative EM whose M-step penalises α·wᵀVVᵀw (eq. 20), α tuned
  until every pair of components is at least ``min_angle`` degrees apart
  (:mod:`.quasi`).
- ``joint``: any solver with the ``joint`` capability fits L components at once
  through :meth:`~certpca.solvers.base.Solver.fit_joint` (:mod:`.joint`).

:func:`certify_fit` certifies every component and adopts a better vector a bound's
search found (``Certificate.better``) where the deflation scheme allows it.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd

from ..certification import Certificate, certify_components
from ..certification.certificate import Better
from ..certification.components import adopted_component, share_of, total_budget, work_of
from ..clock import Work
from ..errors import InputError
from ..problem import Problem
from ..results import Fit
from ..solvers import check_method
from ..validation import (
    check_cardinality,
    check_choice,
    check_float,
    check_int,
    check_random_state,
)
from .joint import joint_components
from .quasi import quasi_components
from .sequential import sequential_components

DEFLATIONS = ("projection", "disjoint", "quasi", "joint")
#: the schemes whose components are fitted one after another, so that one can be replaced and the
#: later ones fitted again after it (:func:`certify_fit`)
SEQUENTIAL = ("projection", "disjoint")
#: what ``Fit.options`` holds besides the method's own options
FIT_OPTIONS = ("method", "k", "nonneg", "n_components", "deflation", "seed", "restarts", "renormalize", "min_angle")
#: the Fit keeps at least this many leading eigenvalues for the summary's scree
N_EIGENVALUES = 10


def fit_components(
    problem: Problem,
    k: int | Sequence[int],
    *,
    n_components: int | None = None,
    method: str = "auto",
    nonneg: bool = False,
    deflation: str = "projection",
    seed: int = 0,
    restarts: int = 10,
    renormalize: bool = True,
    min_angle: float = 85.0,
    data: dict | None = None,
    **options,
) -> Fit:
    """Fit ``n_components`` components with at most ``k`` nonzeros each.

    ``k`` may also be a sequence, one cardinality per component (nsprcomp's ``k`` vector);
    ``n_components`` then defaults to its length, and otherwise to 1.
    ``min_angle`` (degrees) applies to ``deflation="quasi"`` only; ``options`` go to
    the method (for ``quasi``: the options of
    :func:`~certpca.components.quasi.quasi_orthogonal_components`).
    """
    deflation = check_choice(deflation, DEFLATIONS, "deflation")
    ks = _cardinalities(k, n_components, problem.dim)
    n_components = len(ks)
    k = max(ks)
    if len(set(ks)) > 1 and deflation not in ("projection", "disjoint"):
        raise InputError.bad_argument(
            "k",
            f"has one cardinality per component, which deflation {deflation!r} cannot take: use projection or disjoint",
        )
    restarts = check_int(restarts, "restarts", low=0)
    min_angle = check_float(min_angle, "min_angle", low=0.0, high=90.0)
    rng = check_random_state(seed, "seed")
    t0 = time.perf_counter()
    # the spectrum the Fit reports, first: the solvers' PC1 is then read off it instead of being
    # computed apart (at D = 2000 dense the separate top-1 eigenproblem cost 0.5 s of a 2 s fit)
    eigenvalues = problem.eigenvalues()[: max(N_EIGENVALUES, n_components)]
    if deflation == "quasi":
        components = quasi_components(
            problem,
            k,
            n_components,
            method=method,
            nonneg=nonneg,
            min_angle=min_angle,
            rng=rng,
            restarts=restarts,
            **options,
        )
    elif deflation == "joint":
        solver = check_method(method, nonneg, options)
        components = joint_components(problem, k, n_components, solver, nonneg, rng, options)
    else:
        check_method(method, nonneg, options)
        components = sequential_components(
            problem,
            ks,
            method=method,
            nonneg=nonneg,
            disjoint=deflation == "disjoint",
            rng=rng,
            restarts=restarts,
            renormalize=renormalize,
            options=options,
        )
    seconds = time.perf_counter() - t0

    W = np.column_stack([c.weights for c in components])
    extra = {"min_angle": min_angle} if deflation == "quasi" else {}
    fit = Fit(
        components=components,
        additional_variance=additional_variance(problem, W),
        total_variance=problem.trace,
        eigenvalues=eigenvalues,
        data=data or {"name": "", "n_samples": None, "n_features": problem.dim},
        options={
            "method": method,
            "k": k if len(set(ks)) == 1 else ks,
            "nonneg": nonneg,
            "n_components": n_components,
            "deflation": deflation,
            "seed": seed,
            "restarts": restarts,
            "renormalize": renormalize,
            **extra,
            **options,
        },
        seconds=seconds,
        problem=problem,
    )
    if fit.order_note():
        warnings.warn(str(fit.order_note()), stacklevel=2)
    return fit


def certify_fit(
    fit: Fit,
    *,
    bounds=None,
    budget: float | Work | None = None,
    tol: float = 1e-6,
    time_limits: dict[str, float] | None = None,
    progress: Callable[[str, float], None] | None = None,
) -> list[Certificate | None]:
    """Certify every component on the problem it solved (:func:`certify_components`), adopting
    what certification finds; ``fit.certificates`` holds the list, which is returned.

    ``budget`` (seconds of estimated work, :mod:`certpca.clock`; default ``DEFAULT_BUDGET`` with the default bounds)
    is for the whole call: each component gets an equal share of what is left when it starts
    (:func:`~certpca.certification.components.share_of`), what one leaves unused goes to the later ones,
    and the refits after an adoption count too.  ``progress(label, seconds used)`` is called before each bound.

    When a bound's search holds a vector better than component j (``Certificate.better``: the
    exact search's optimum, the spannogram's vector, ...), a sequential fit (``projection`` or
    ``disjoint``) takes it as component j, fits every later component again after it (their
    problems depend on it: the deflated C, or the features left) with the fit's own method,
    seed and options, and certifies them in turn; the adopted component's certificate has the
    same bounds (they bound OPT whatever the vector) and a note ("a better vector was found
    while certifying: +0.89%, exact search").  Scores and additional variances follow.  A
    ``quasi`` or ``joint`` fit is left as it is (an adopted vector would break its angle
    constraint or its joint objective): the certificate keeps the vector in ``better``.
    """
    adopt = fit.options.get("deflation", "projection") in SEQUENTIAL
    certificates: list[Certificate | None] = []
    clock = work_of(total_budget(bounds, budget))
    n = len(fit.components)
    for j in range(n):
        (cert,) = certify_components(
            fit,
            bounds=bounds,
            budget=share_of(clock, n - j),
            tol=tol,
            start=j,
            stop=j + 1,
            time_limits=time_limits,
            progress=None if progress is None else lambda label, _used: progress(label, clock.used()),
        )
        if adopt and cert is not None and cert.better is not None:
            adopt_better(fit, j, cert.better)
            cert = cert.adopt()
        certificates.append(cert)
    fit.certificates = certificates
    return certificates


def adopt_better(fit: Fit, j: int, better: Better) -> None:
    """Component j of ``fit`` replaced by ``better`` (on the coordinates of the problem it solved), the
    later components fitted again after it, the additional variances and scores recomputed."""
    problem = fit.problem
    assert isinstance(problem, Problem)
    o = fit.options
    disjoint = o.get("deflation") == "disjoint"
    free = np.arange(problem.dim)
    for comp in fit.components[:j] if disjoint else ():
        free = free[comp.weights[free] == 0]
    adopted = adopted_component(problem, fit.components[j], better, free)
    nonneg = bool(o["nonneg"])
    fit.components = sequential_components(
        problem,
        [c.k for c in fit.components],
        method=o["method"],
        nonneg=nonneg,
        disjoint=disjoint,
        rng=check_random_state(o.get("seed", 0), "seed"),
        restarts=int(o.get("restarts", 10)),
        renormalize=bool(o.get("renormalize", True)),
        options={n: v for n, v in o.items() if n not in FIT_OPTIONS},
        fixed=[*fit.components[:j], adopted],
    )
    fit.additional_variance = additional_variance(problem, np.column_stack([c.weights for c in fit.components]))
    if fit.source is not None:
        fit.attach_data(fit.source)


def _cardinalities(k, n_components: int | None, dim: int) -> list[int]:
    """One checked cardinality per component from ``k`` (an int or a sequence) and ``n_components``."""
    if isinstance(k, (list, tuple, np.ndarray, pd.Series)):
        ks = [check_cardinality(v, dim, "k") for v in k]
        if not ks:
            raise InputError.bad_argument("k", "is an empty sequence: give one cardinality per component")
        if n_components is not None and check_cardinality(n_components, dim, "n_components") != len(ks):
            raise InputError.bad_argument(
                "n_components", f"is {n_components} but k gives {len(ks)} cardinalities: give one per component"
            )
        return ks
    n = 1 if n_components is None else check_cardinality(n_components, dim, "n_components")
    return [check_cardinality(k, dim, "k")] * n


def additional_variance(problem: Problem, W: np.ndarray, *, rtol: float = 1e-10) -> np.ndarray:
    """Variance each column of W adds beyond the span of the earlier columns.

    With W = QR (Gram–Schmidt in column order) the span of the first l columns
    carries tr(Q_lᵀCQ_l); the l-th increment is q_lᵀCq_l.  A column that lies in
    the span of the earlier ones (|R_ll| ≤ rtol) adds nothing.
    """
    Q, R = np.linalg.qr(W)
    added = np.array([problem.variance(Q[:, j]) for j in range(W.shape[1])])
    added[np.abs(np.diag(R)) <= rtol] = 0.0
    return added


__all__ = ["DEFLATIONS", "SEQUENTIAL", "additional_variance", "adopt_better", "certify_fit", "fit_components"]
