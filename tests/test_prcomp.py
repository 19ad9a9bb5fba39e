"""R's prcomp contract on Fit: x, center, scale, predict, print(fit) and summary() with certificates."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import certpca
from certpca.data import Dataset, prepare
from certpca.errors import InputError
from certpca.problem import Problem
from tests.brute import brute_force


def raw_dataset(n: int = 30, d: int = 8, *, constant: tuple[int, ...] = (), seed: int = 0) -> Dataset:
    rng = np.random.default_rng(seed)
    X = np.exp(rng.standard_normal((n, d)) @ rng.standard_normal((d, d)) / 2) * 50
    X[:, list(constant)] = 7.0
    return Dataset("toy", X, pd.Index([f"g{j}" for j in range(d)]), pd.Index([f"s{i}" for i in range(n)]), None)


def frame(ds: Dataset) -> pd.DataFrame:
    return pd.DataFrame(ds.matrix.copy(), index=ds.sample_ids, columns=ds.feature_ids)


def test_predict_applies_log2_floor_dropping_centring_and_scaling():
    raw = raw_dataset(constant=(2, 5))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the dropped-constant warning
        ds = prepare(raw, center=True, scale=False, log2=40.0)
    fit = certpca.fit(ds, k=3, n_components=2)
    assert fit.x.shape == (30, 2) and list(fit.x.index) == list(raw.sample_ids)
    np.testing.assert_allclose(fit.x.to_numpy(), ds.matrix @ fit.rotation.to_numpy())
    np.testing.assert_allclose(fit.predict(frame(raw)), fit.x, atol=1e-12)
    # columns matched by name: order and extra columns do not matter, dropped features need not be given
    shuffled = frame(raw).drop(columns=["g2", "g5"]).iloc[:, ::-1].assign(extra=1.0)
    np.testing.assert_allclose(fit.predict(shuffled), fit.x, atol=1e-12)
    one = fit.predict(frame(raw).iloc[3])
    np.testing.assert_allclose(one.to_numpy()[0], fit.x.to_numpy()[3], atol=1e-12)
    assert fit.predict() is fit.x
    assert fit.scale is False and list(fit.center.index) == list(ds.feature_ids)


def test_predict_applies_the_unit_rescaling_of_extreme_magnitudes():
    raw = raw_dataset()
    huge = Dataset("huge", raw.matrix * 1e300, raw.feature_ids, raw.sample_ids, None)
    with pytest.warns(UserWarning, match="divided by 2"):
        ds = prepare(huge, scale=False)
    assert ds.preprocessing["unit_exponent"] > 0
    fit = certpca.fit(ds, k=3)
    np.testing.assert_allclose(fit.predict(frame(huge)), fit.x, rtol=1e-10, atol=1e-12 * np.abs(fit.x.to_numpy()).max())
    scaled = prepare(huge, scale=True)  # unit-free: no exponent, no warning (pytest.warns above caught only one)
    assert "unit_exponent" not in scaled.preprocessing
    np.testing.assert_allclose(scaled.matrix, prepare(raw, scale=True).matrix, rtol=1e-12, atol=1e-12)
    fit = certpca.fit(scaled, k=3)
    np.testing.assert_allclose(fit.predict(frame(huge)), fit.x, rtol=1e-10, atol=1e-12)


def test_predict_names_what_is_wrong_with_newdata():
    raw = raw_dataset(constant=(2,))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = certpca.fit(prepare(raw), k=3)
    with pytest.raises(InputError, match=r"^newdata lacks 2 feature\(s\) the fit uses \(g0, g4\)"):
        fit.predict(frame(raw).drop(columns=["g0", "g4"]))
    with pytest.raises(InputError, match="constant feature.*give a DataFrame"):
        fit.predict(raw.matrix)  # 8 columns, but the fit has 7 features
    with pytest.raises(InputError, match="has 5 columns but the fit has 7 features"):
        fit.predict(raw.matrix[:, :5])
    with pytest.raises(InputError, match="must be 2-D"):
        fit.predict(np.ones(7))
    bad = frame(raw)
    bad.iloc[0, 0] = np.nan
    with pytest.raises(InputError, match="missing or infinite values in 1 sample"):
        fit.predict(bad)


def test_a_fit_without_samples_has_no_scores():
    fit = certpca.fit("pitprops", 3)
    assert fit.x is None and fit.center is None and fit.scale is None
    with pytest.raises(InputError, match="predict needs the preprocessing"):
        fit.predict(np.ones((1, 13)))
    X = np.random.default_rng(1).standard_normal((20, 5))
    fit = certpca.fit(Problem.from_data(X - X.mean(0)), 2)
    assert fit.x is None


def test_print_is_r_print_prcomp():
    ds = prepare(raw_dataset(d=6))
    fit = certpca.fit(ds, k=6, n_components=3, method="pca")
    lines = str(fit).splitlines()
    assert lines[0] == "Standard deviations (1, .., p=3):"
    printed = [float(v) for v in lines[1].split()[1:]]
    np.testing.assert_allclose(printed, fit.sdev, rtol=5e-7)
    assert lines[3] == "Rotation (n x k) = (6 x 3):"
    assert lines[4].split() == ["PC1", "PC2", "PC3"] and len(lines) == 5 + 6


def test_print_shows_only_nonzero_rows_of_a_wide_sparse_rotation():
    rng = np.random.default_rng(3)
    X = rng.standard_normal((25, 300))
    ds = Dataset("wide", X, pd.Index([f"f{j}" for j in range(300)]), pd.Index([f"s{i}" for i in range(25)]), None)
    fit = certpca.fit(prepare(ds), k=4, n_components=2)
    text = str(fit)
    support = set(fit.components[0].support) | set(fit.components[1].support)
    assert f"(only the {len(support)} rows with a nonzero loading; the other {300 - len(support)} are zero)" in text
    rows = text.split("PC2\n", 1)[1].splitlines()
    assert sorted(r.split()[0] for r in rows) == sorted(support)


def test_summary_is_summary_prcomp_with_certificate_rows():
    fit = certpca.fit("pitprops", 6, n_components=2)
    certpca.certify(fit)
    s = fit.summary()
    text = str(s)
    assert "Importance of components:" in text
    assert list(s.table.index) == [
        "Standard deviation",
        "Proportion of Variance",
        "Cumulative Proportion",
        "Cardinality",
        "Upper bound",
        "Certified fraction",
        "Optimal",
    ]
    # PC2 is certified on the deflated covariance it maximised: its exact optimum there bounds it
    deflated = fit.problem.deflate(fit.components[0].weights)
    best2, _ = brute_force(deflated.dense(), 6)
    # (up to rounding: the default method reaches this optimum, and eigh gives it to the last bits)
    assert fit.certificates[1].upper_bound >= best2 >= fit.certificates[1].value * (1 - 1e-12)
    assert s.table.loc["Optimal", "PC1"] == "proven"
    assert s.table.loc["Optimal", "PC2"] == ("proven" if fit.certificates[1].optimal else "not proven")
    assert s.table.loc["Upper bound", "PC1"] == fit.certificates[0].upper_bound
    assert "100.00%" in text
    assert "Optimal" in s.as_html() and "Optimal" in s.as_latex()


def test_fit_takes_prcomp_preprocessing_arguments_as_load_does():
    """R's prcomp(x, center, scale.) in the call: the same fit as preparing with certpca.load first."""
    X = frame(raw_dataset())
    for kwargs in ({"scale": True}, {"center": False}, {"log2": 1.0, "scale": True}):
        direct = certpca.fit(X, k=3, n_components=2, **kwargs)
        prepared = certpca.fit(certpca.load(X, **kwargs), k=3, n_components=2)
        np.testing.assert_array_equal(direct.rotation.to_numpy(), prepared.rotation.to_numpy())
        np.testing.assert_array_equal(direct.x.to_numpy(), prepared.x.to_numpy())
        assert direct.scale is not None or "scale" not in kwargs
    with pytest.raises(InputError, match="scale applies when fit reads the data"):
        certpca.fit(certpca.load(X), k=3, scale=True)


@pytest.mark.parametrize("deflation", ["projection", "disjoint"])
def test_one_cardinality_per_component_as_nsprcomp_k_vector(deflation):
    """k = [2, 4, 3]: each component is the brute-force optimum of its own problem at its own k."""
    ds = raw_dataset(n=40, d=9, seed=3)
    ds = prepare(ds)
    fit = certpca.fit(ds, k=[2, 4, 3], deflation=deflation)
    assert [c.cardinality for c in fit.components] == [2, 4, 3] and fit.options["k"] == [2, 4, 3]
    C = np.cov(ds.matrix, rowvar=False)
    used = np.zeros(9, dtype=bool)
    for comp, k in zip(fit.components, [2, 4, 3]):
        w = comp.weights
        if deflation == "projection":
            opt, _ = brute_force(C, k)
            assert w @ C @ w >= opt * (1 - 1e-9)
            P = np.eye(9) - np.outer(w, w)
            C = P @ C @ P
        else:
            free = np.flatnonzero(~used)
            opt, _ = brute_force(C[np.ix_(free, free)], k)
            assert not (w[used] != 0).any() and w @ C @ w >= opt * (1 - 1e-9)
            used |= w != 0
    certpca.certify(fit)
    assert [c.k for c in fit.certificates] == [2, 4, 3]
    with pytest.raises(InputError, match="n_components is 2 but k gives 3 cardinalities"):
        certpca.fit(ds, k=[2, 4, 3], n_components=2)
