"""One options object, one plan (issue 26, part 1).

``certpca.report``'s keywords are the fields of ReportOptions with the same defaults; a report loads
the data, builds the covariance and resolves the options once each; the plan is frozen and decides up
front which methods are fitted under which sign constraint.
"""

from __future__ import annotations

import dataclasses
import inspect

import pytest

import certpca
from certpca.data import Dataset
from certpca.reporting import ReportOptions, write
from certpca.reporting.options import resolve


def test_report_keywords_are_the_options_with_their_defaults():
    params = inspect.signature(certpca.report).parameters
    fields = {f.name: f.default for f in dataclasses.fields(ReportOptions)}
    assert sorted(p for p in params if p != "data") == sorted(fields), (
        "certpca.report and ReportOptions: the same knobs"
    )
    for name, default in fields.items():
        assert params[name].kind is inspect.Parameter.KEYWORD_ONLY
        assert params[name].default == (inspect.Parameter.empty if default is dataclasses.MISSING else default), name


def test_a_report_builds_the_problem_and_resolves_once(tmp_path, monkeypatch):
    calls = {"problem": 0, "resolve": 0}
    problem = Dataset.problem

    def counted_problem(self, *a, **kw):
        calls["problem"] += 1
        return problem(self, *a, **kw)

    def counted_resolve(*a, **kw):
        calls["resolve"] += 1
        return resolve(*a, **kw)

    monkeypatch.setattr(Dataset, "problem", counted_problem)
    monkeypatch.setattr(write, "resolve", counted_resolve)
    run = certpca.report("pitprops", k=4, output=tmp_path / "p.html", path="2,4", methods="em,nspca", progress=False)
    assert calls == {"problem": 1, "resolve": 1}
    assert run.settings.k == 4 and (tmp_path / "p.html").is_file()


def test_the_plan_is_decided_up_front_and_frozen():
    ds = certpca.load("pitprops")
    plan = resolve(ds, ds.problem(), ReportOptions(k=4, methods="em,nspca"))
    with pytest.raises(dataclasses.FrozenInstanceError):
        plan.k = 5  # type: ignore[misc]
    with pytest.raises(TypeError):
        plan.skipped["em"] = "no"  # type: ignore[index]
    # which method runs under which sign constraint is in the plan, with the reason for the others
    assert plan.methods_for(False) == ["em"] and plan.methods_for(True) == ["em", "nspca"]
    assert dict(plan.skipped) == {"nspca": "finds nonnegative components only (nonnegative fit only)"}


def test_the_exact_search_is_a_default_method_of_small_problems_with_the_reports_allotment():
    """Up to EXACT_IN_REPORT features the default methods include exact, with one headline run's allotment of
    estimated work; above, it is left out with the reason (and still runs when named)."""
    from certpca.reporting.options import EXACT_IN_REPORT

    small = certpca.load("pitprops")
    plan = resolve(small, small.problem(), ReportOptions(k=4, budget=20.0))
    assert "exact" in plan.methods and plan.options_for("exact") == {"time_limit": plan.allot.head}
    assert 0 < plan.allot.head <= 10.0
    assert plan.options_for("em") == {} and "exact" not in plan.on_path
    wide = certpca.load("cbcl")
    assert wide.problem().dim > EXACT_IN_REPORT
    plan = resolve(wide, wide.problem(), ReportOptions(k=4))
    assert "exact" not in plan.methods and f"above {EXACT_IN_REPORT} features" in plan.skipped["exact"]
    plan = resolve(wide, wide.problem(), ReportOptions(k=4, methods="em,exact"))
    assert "exact" in plan.methods
