"""What a biologist reads in a report: proofs stated plainly, the samples, every component, advice, own citations."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import certpca
from certpca.data import Dataset, prepare
from certpca.data.advice import is_control, preprocessing_advice
from certpca.reporting import ReportOptions, compute_run, render
from certpca.reporting.tables import features_table, importance_table, scores_table
from tests.brute import brute_force


def _quick(ds, **kw):
    # no stability section unless a test asks for one: it refits 50 times (tests/reporting/test_report.py checks it)
    options = {"methods": "em,threshold", "path": "", "progress": False, "stability": 0, **kw}
    return compute_run(ds, ReportOptions(**options))


def test_pitprops_is_reported_proven_optimal():
    ds = certpca.load("pitprops")
    run = _quick(ds, k=4)
    opt = brute_force(ds.matrix, 4)[0]
    for nonneg in (False, True):
        cert = run.best_fit(nonneg).certificate
        assert cert.optimal and cert.upper_bound >= opt * (1 - 1e-12)
        assert cert.value == pytest.approx(opt, rel=1e-9)
    html = render(run)
    assert "proven optimal" in html and "optimal: no" not in html and ">no<" not in html


def test_the_budget_cut_is_stated_and_sign_free_bounds_are_shared():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(10, 30)) * rng.uniform(0.3, 2.0, 30)  # wide: a factor, where dabe_sdp applies
    ds = prepare(
        Dataset("wide", X, pd.Index([f"g{j}" for j in range(30)]), pd.Index([f"s{i}" for i in range(10)]), None)
    )
    run = _quick(ds, k=3, genes=False, bounds="lambda1,dabe,threshold,dabe_sdp", budget=0.0)
    plain, nonneg = (run.best_fit(nn).certificate for nn in (False, True))
    for cert in (plain, nonneg):
        # the threshold bound evaluates its first ρ; dabe_sdp cannot pay for its first steps and says so
        assert [b.name for b in cert.bounds] == ["lambda1", "dabe", "threshold"]
        assert list(cert.skipped) == ["dabe_sdp"] and "first Frank–Wolfe step" in cert.skipped["dabe_sdp"]
    # dabe ignores w >= 0: the nonnegative certificate holds the plain one's numbers, computed once
    shared = {b.name: b for b in plain.bounds}
    for b in nonneg.bounds:
        if b.name in ("lambda1", "dabe"):
            assert b == shared[b.name]
    stated = [n for n in run.notes if "allotment" in n]
    # the threshold bound's rank-2 sweep has the same allotment; the nonnegative certificate computed its own
    assert sorted(stated) == [
        "certificate at k (nonnegative): threshold used its allotment of 0 s of estimated work (--budget 0) "
        "before converging; a larger budget can tighten the bound",
        "certificate at k: threshold used its allotment of 0 s of estimated work (--budget 0) before "
        "converging; a larger budget can tighten the bound",
    ]
    page = render(run)
    assert "threshold used its allotment of 0 s" in page and "first Frank–Wolfe step" in page
    # an allotment the bound did not use up is not mentioned: 3 runs (plain threshold and dabe_sdp, nonnegative
    # threshold) share half the budget, 600 s each
    roomy = _quick(ds, k=3, genes=False, bounds="lambda1,dabe,threshold,dabe_sdp", budget=3600.0)
    assert not roomy.best_fit(False).certificate.bounds[-1].params["time_limit_reached"]
    assert not [n for n in roomy.notes if "allotment" in n]
    # dabe_sdp ignores w >= 0 too: computed once, by the plain certificate
    plain_sdp, nonneg_sdp = ({b.name: b for b in roomy.best_fit(nn).certificate.bounds}["dabe_sdp"] for nn in (0, 1))
    assert nonneg_sdp == plain_sdp


def test_the_report_says_which_bound_stopped_where_it_could_not_win():
    from certpca.reporting.tables import bounds_table

    rng = np.random.default_rng(0)
    X = rng.standard_normal((10, 1)) + 0.25 * rng.standard_normal((10, 60))  # one strong factor: trace wins
    ds = prepare(
        Dataset("factor", X, pd.Index([f"g{j}" for j in range(60)]), pd.Index([f"s{i}" for i in range(10)]), None),
        scale=True,
    )
    run = _quick(ds, k=20, genes=False, bounds="trace,dabe_sdp")
    for nonneg in (False, True):
        cert = run.best_fit(nonneg).certificate
        assert cert.winner == "trace" and cert.bounds[1].params["stopped_at_target"] > 0
        shown = bounds_table(run, nonneg).display.set_index("bound")["upper bound on OPT"]
        assert shown["dabe_sdp"].endswith("(stopped where it could not go below the bounds before it)")
        assert "stopped" not in shown["trace"]


def test_a_report_cites_its_own_data_set_and_no_other():
    run = _quick(certpca.load("khan"), k=10, genes=False)
    refs = " ".join(run.references)
    assert "Khan et al. 2001" in refs
    html = render(run)
    for other in ("Armstrong", "leukemia", "Golub", "Alon", "12582"):
        assert other not in html, other


def test_a_users_file_cites_no_data_set():
    rng = np.random.default_rng(0)
    ds = prepare(
        Dataset(
            "mine",
            rng.normal(size=(12, 8)),
            pd.Index([f"g{j}" for j in range(8)]),
            pd.Index([f"s{i}" for i in range(12)]),
            None,
        )
    )
    assert not any(r.startswith("Data:") for r in _quick(ds, k=3).references)


def test_raw_intensities_are_advised_a_log_scale_and_log_data_are_not():
    raw = preprocessing_advice(certpca.load("leukemia"))
    assert any("--log2" in a and "raw intensities" in a for a in raw)
    assert not any("raw intensities" in a for a in preprocessing_advice(certpca.load("leukemia", log2=20)))
    assert preprocessing_advice(certpca.load("khan")) == []  # log ratios already
    assert preprocessing_advice(certpca.load("lrs")) == []  # spectra, not expression


def test_raw_counts_are_advised_log1p():
    counts = np.random.default_rng(1).negative_binomial(2, 0.001, size=(30, 20)).astype(float)
    ds = prepare(
        Dataset("counts", counts, pd.Index([f"g{j}" for j in range(20)]), pd.Index([f"c{i}" for i in range(30)]), None)
    )
    assert any("raw counts" in a and "log1p" in a for a in preprocessing_advice(ds))


def test_control_probes_are_flagged_in_the_features_table():
    assert is_control("AFFX-BioB-5_at") and is_control("ERCC-00002") and not is_control("31348_at")
    rng = np.random.default_rng(2)
    X = rng.normal(size=(20, 6))
    X[:, 0] *= 10  # the control probe carries the variance
    ids = pd.Index(["AFFX-HUMGAPDH_at", "g1", "g2", "g3", "g4", "g5"])
    run = _quick(prepare(Dataset("ctrl", X, ids, pd.Index([f"s{i}" for i in range(20)]), None)), k=2)
    table = features_table(run, False)
    assert "AFFX-HUMGAPDH_at (control)" in set(table.display["feature"])
    assert table.raw.set_index("feature").loc["AFFX-HUMGAPDH_at", "control"]
    assert any("control probes" in a for a in run.advice)


@pytest.fixture(scope="module")
def three_components():
    rng = np.random.default_rng(3)
    classes = np.repeat(["a", "b"], 12)
    X = rng.normal(size=(24, 15))
    X[:, :3] += 4.0 * (classes == "a")[:, None]
    ids = pd.Index([f"s{i}" for i in range(24)])
    ds = prepare(
        Dataset("three", X, pd.Index([f"g{j}" for j in range(15)]), ids, pd.Series(classes, index=ids, name="label"))
    )
    return ds, _quick(ds, k=3, components=3, genes=False)


def test_scores_are_the_prepared_data_times_the_loadings(three_components):
    ds, run = three_components
    for nonneg in (False, True):
        sc = run.scores_of(nonneg)
        best = run.best_fit(nonneg)
        W = np.array([[c.loadings.get(f, 0.0) for c in best.components] for f in ds.feature_ids])
        np.testing.assert_allclose(np.array(sc.components).T, ds.matrix @ W, rtol=1e-12, atol=1e-12)
        _, V = np.linalg.eigh(np.cov(ds.matrix, rowvar=False))
        pca = np.array(sc.pca).T
        for j in range(2):  # ordinary PCA's scores up to sign
            v = V[:, -1 - j]
            assert np.allclose(np.abs(pca[:, j]), np.abs(ds.matrix @ v), rtol=1e-8, atol=1e-10)
        assert sc.labels == list(ds.labels.astype(str))
        assert len(scores_table(run, nonneg).raw) == ds.n_samples
    html = render(run)
    assert '<section id="samples">' in html and html.count('id="fig-scores-') == 2


def test_every_component_has_its_importance_row_and_certificate(three_components):
    ds, run = three_components
    for nonneg in (False, True):
        best = run.best_fit(nonneg)
        assert len(best.later_certificates) == 2
        table = importance_table(run, nonneg)
        assert list(table.display[""]) == ["PC1", "PC2", "PC3"]
        assert table.raw["certified_fraction"].notna().all()
        assert np.all(np.diff(table.raw["cumulative"]) >= 0)
        C = np.cov(ds.matrix, rowvar=False)
        W = np.array([[c.loadings.get(f, 0.0) for c in best.components] for f in ds.feature_ids])
        for j, cert in enumerate(best.later_certificates, start=1):  # against brute force on the deflated C
            Cj = C.copy()
            for i in range(j):
                w = W[:, i] / np.linalg.norm(W[:, i])
                P = np.eye(len(w)) - np.outer(w, w)
                Cj = P @ Cj @ P
            assert cert.upper_bound >= brute_force(Cj, 3, nonneg=nonneg)[0] * (1 - 1e-12)
