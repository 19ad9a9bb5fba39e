"""The report's one budget (``--budget``, reporting/options.py ``split_budget``): the work its bounds charge stays
within it.

Every bound that charges its steps gets an allotment of estimated work (certpca/clock.py ``Work``): the runs of
the budgeted bounds in the certificates at k and the band's costly bounds (what one leaves, the band hands on).
Here every ``Work`` the report creates is recorded: the work charged must add up to at most the budget, each
allotment be exceeded by at most one step, and nothing may charge an unlimited one.  Estimated work is
counted, never a clock, so nothing here is timed.
"""

from __future__ import annotations

import math
import os

import numpy as np
import pandas as pd
import pytest

from certpca.certification import REGISTRY, default_bounds
from certpca.clock import Work
from certpca.data import Dataset, prepare
from certpca.problem import Problem
from certpca.reporting import ReportOptions, compute_run
from certpca.reporting.options import BUDGETED_BOUNDS, certificate_bounds, split_budget


def test_the_split_gives_the_headline_half_and_shares_the_rest():
    alone = split_budget(60.0, head_runs=5, later_runs=0, band=True)
    assert (alone.head, alone.later, alone.band) == (6.0, 0.0, 30.0)
    three = split_budget(60.0, head_runs=5, later_runs=10, band=True)
    assert (three.head, three.later, three.band) == (6.0, 1.5, 15.0)  # the headline keeps its allotments
    no_band = split_budget(60.0, head_runs=5, later_runs=10, band=False)
    assert (no_band.later, no_band.band) == (3.0, 0.0)
    for s in (alone, three, no_band):
        assert 5 * s.head + 10 * s.later * (s is not alone) + s.band <= 60.0


@pytest.fixture
def works(monkeypatch):
    """Every Work created, and the largest single charge of each; one process, so that the band's bounds charge
    here too."""
    made: list[Work] = []
    largest: dict[int, float] = {}
    init, charge = Work.__init__, Work.charge

    def recording_init(self, seconds=None, parent=None, net=None):
        init(self, seconds, parent, net)
        made.append(self)

    def recording_charge(self, seconds):
        largest[id(self)] = max(largest.get(id(self), 0.0), seconds)
        charge(self, seconds)

    monkeypatch.setattr(Work, "__init__", recording_init)
    monkeypatch.setattr(Work, "charge", recording_charge)
    monkeypatch.setattr(os, "cpu_count", lambda: 1)  # no forked band workers or side processes
    return made, largest


def _finite(w: Work) -> bool:
    return w.seconds is not None and math.isfinite(w.seconds)


def _allotments(made: list[Work]) -> list[Work]:
    """The Works with a finite allotment that are not shares of another finite one (a certificate's own meter
    is unlimited: the bounds that do not charge their steps run to their end, charged their estimate there)."""
    out = []
    for w in made:
        parent, inside = w.parent, False
        while parent is not None:
            inside |= _finite(parent)
            parent = parent.parent
        if _finite(w) and not inside:
            out.append(w)
    return out


def test_the_work_charged_stays_within_the_budget(works):
    made, largest = works
    rng = np.random.default_rng(5)
    X = rng.normal(size=(12, 40)) * rng.uniform(0.3, 2.0, 40)  # wide: a factor, where dabe_sdp applies
    genes, samples = pd.Index([f"g{j}" for j in range(40)]), pd.Index([f"s{i}" for i in range(12)])
    ds = prepare(Dataset("wide", X, genes, samples, None))
    budget = 1.0
    options = ReportOptions(
        k=5,
        methods="em,threshold",
        components=2,
        bounds="lambda1,dabe,threshold,screening,dabe_sdp",
        path="2,5,10,20",
        budget=budget,
        genes=False,
        stability=0,
        progress=False,
    )
    run = compute_run(ds, options)
    assert run.settings.budget == budget
    allotted = _allotments(made)
    parents = {id(w.parent) for w in made if w.parent is not None}
    leaves = [w for w in made if _finite(w) and id(w) not in parents]  # the allotments bounds check between steps
    # at most one step beyond it; a step of the threshold bound (one ρ) closes with the charge of its component
    # work after its last sweep step, so two charges can land beyond the allotment, each at most the largest
    for w in leaves:
        assert w.spent <= w.seconds + 2 * largest.get(id(w), 0.0)
    assert any(w.spent >= w.seconds > 0 for w in allotted)  # the budget did cut something: the test has teeth
    charged = sum(w.spent for w in allotted)
    assert charged <= budget + sum(2 * largest.get(id(w), 0.0) for w in leaves)


def test_every_bound_that_charges_its_steps_is_allotted_or_capped():
    """A report gives its budget's allotments to ``BUDGETED_BOUNDS``; a bound that charges its steps and is not
    there runs on an unlimited allotment (the matrix-multiplier bound did, 369 s on pbmc): only the bounds
    with caps of their own may (the spannogram's enumeration, the cvxpy solvers' iteration caps, the Gershgorin
    bound's row blocks: at most the D rows of C, its cost before it charged its blocks; dabe's 1-D search: its
    grid and golden-section points, 30 by default, its cost before it charged them), and a bound that continues
    one of ``BUDGETED_BOUNDS`` runs within what that one left of its allotment (threshold_search)."""
    own_caps = {"spannogram", "dspca_sdp", "dnn_sdp", "gershgorin", "dabe"}
    charging = {name for name, spec in REGISTRY.items() if spec.charges}
    continuing = {name for name, spec in REGISTRY.items() if spec.continues in BUDGETED_BOUNDS}
    assert charging - set(BUDGETED_BOUNDS) - continuing == own_caps
    assert "threshold_search" in continuing


def test_the_report_leaves_out_the_matrix_bound_unless_named():
    """On wide data ``certpca certify`` runs the matrix-multiplier bound by default; the report does not (its
    allotments go to the threshold bound) but runs it when named."""
    rng = np.random.default_rng(3)
    P = Problem.from_data(rng.normal(size=(12, 40)))
    assert "dabe_sdp_matrix" in default_bounds(P, False)
    assert "dabe_sdp_matrix" not in certificate_bounds(P, False, None)
    assert "dabe_sdp_matrix" in certificate_bounds(P, False, ["dabe_sdp", "dabe_sdp_matrix"])
