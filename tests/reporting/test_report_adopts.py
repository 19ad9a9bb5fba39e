"""The report adopts the better vector its certificate's bounds find, as ``certpca.certify(fit)`` does
(issue 27, part 3), and says when later components add more variance than earlier ones; checked against
brute force over pitprops' supports (tests/brute.py)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import certpca
from certpca.reporting import ReportOptions, compute_run
from tests.brute import brute_force


def _run(**options):
    ds = certpca.load("pitprops")
    defaults = dict(nonneg_modes=(False,), path="", genes=False, progress=False, stability=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ds, compute_run(ds, ReportOptions(**{**defaults, **options}))


def test_the_report_adopts_the_exact_searchs_optimum():
    """Thresholded PC1 at k = 3 (2.3294) is below the optimum 2.4753: the report's fit becomes it."""
    ds, run = _run(k=3, methods="threshold", bounds="lambda1,exact")
    C = ds.problem().dense()
    opt, _ = brute_force(C, 3)
    (fit,) = run.fits
    loadings = fit.components[0].loadings
    w = np.array([loadings.get(f, 0.0) for f in ds.feature_ids])
    assert w @ C @ w == pytest.approx(opt, rel=1e-9) and np.count_nonzero(w) <= 3
    assert fit.certificate.value == pytest.approx(opt, rel=1e-9) and fit.certificate.optimal
    assert any("a better vector was found while certifying: +" in n for n in run.notes)


def test_the_report_says_when_a_later_component_adds_more():
    """pitprops, k = 2, 3 components of thresholded PC1: PC3 adds more variance than PC2 (1.882 against
    1.679), computed here from the report's loadings."""
    ds, run = _run(k=2, components=3, methods="threshold", bounds="lambda1")
    C = ds.problem().dense()
    W = np.column_stack([[c.loadings.get(f, 0.0) for f in ds.feature_ids] for c in run.fits[0].fit.components])
    Q, _ = np.linalg.qr(W)
    added = [Q[:, j] @ C @ Q[:, j] for j in range(3)]
    later_more = any(added[j] > min(added[:j]) * (1 + 1e-9) for j in range(1, 3))
    assert later_more and added[2] > added[1]
    assert any("not by variance" in n and "PC3" in n for n in run.notes)


def test_the_reports_exact_method_is_the_brute_force_optimum_proven():
    """pitprops k = 3: the method exact's row is the optimum of brute force over its 13 features, proven."""
    ds, run = _run(k=3, methods="em,exact", bounds="lambda1")
    opt, _ = brute_force(ds.problem().dense(), 3)
    (row,) = [f for f in run.fits if f.fit.options["method"] == "exact"]
    assert row.fit.components[0].value == pytest.approx(opt, rel=1e-9)
    assert row.fit.components[0].extras["proven"]
