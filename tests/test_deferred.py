"""Dense data held as given (``load(copy=False)``, what ``certpca.fit`` uses): centring and scaling
deferred into the covariance factor, the columns and the scores, with the values of the copying path."""

from __future__ import annotations

from contextlib import nullcontext

import numpy as np
import pandas as pd
import pytest

import certpca
from certpca.data import advice, prepare
from certpca.data.advice import raw_blocks, raw_summary
from certpca.io import load


def _data(n=12, d=40, seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n, d)) * np.exp(rng.standard_normal(d)) + 5.0


@pytest.mark.parametrize("scale", [False, True])
@pytest.mark.parametrize("order", ["C", "F"])
def test_deferred_dataset_gives_the_copying_paths_values(scale, order):
    X = np.array(_data(), order=order)
    before = X.copy()
    held = load(X, copy=False, scale=scale)
    copied = load(X, scale=scale)
    assert held.deferred and not copied.deferred
    assert np.shares_memory(held.matrix, X)  # no copy of the data
    # the factor, the centring and scaling vectors and any columns: bit for bit
    np.testing.assert_array_equal(held.problem().factor(), copied.problem().factor())
    np.testing.assert_array_equal(held.center.to_numpy(), copied.center.to_numpy())
    if scale:
        np.testing.assert_array_equal(held.scale.to_numpy(), copied.scale.to_numpy())
    idx = np.array([3, 0, 17])
    np.testing.assert_array_equal(held.columns(idx), copied.columns(idx))
    # the scores of sparse and of dense loadings
    rng = np.random.default_rng(1)
    dense = rng.standard_normal((X.shape[1], 2))
    sparse = np.zeros_like(dense)
    sparse[idx] = dense[idx]
    for W in (dense, sparse):
        np.testing.assert_allclose(held.project(W), copied.project(W), rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(X, before)  # nothing written to the caller's array
    assert X.flags.writeable


def test_fit_holds_the_data_once_and_matches_a_fit_of_the_prepared_copy():
    X = _data(d=60)
    fit = certpca.fit(X, k=5)
    ref = certpca.fit(load(X), k=5)  # a Dataset: its prepared copy
    np.testing.assert_array_equal(fit.rotation.to_numpy(), ref.rotation.to_numpy())
    np.testing.assert_allclose(fit.x.to_numpy(), ref.x.to_numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(fit.predict(X), ref.x.to_numpy(), rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize(
    "change, options",
    [
        ("log", {"log2": 1.0}),
        ("constant feature", {}),
        ("values beyond the safe range", {}),
    ],
)
def test_values_that_must_change_are_copied(change, options):
    X = np.abs(_data())
    if change == "constant feature":
        X[:, 4] = 2.0
    if change == "values beyond the safe range":
        X *= 2.0**400
    with pytest.warns(UserWarning) if change != "log" else nullcontext():
        held = load(X, copy=False, **options)
    assert not held.deferred
    assert not np.shares_memory(held.matrix, X)


def test_prepared_again_starts_from_the_values_as_prepared():
    X = _data()
    twice = prepare(load(X, copy=False, scale=True), scale=True)
    ref = prepare(load(X, scale=True), scale=True)
    assert not twice.deferred
    np.testing.assert_array_equal(twice.matrix, ref.matrix)


def test_advice_sees_the_values_as_given():
    X = _data()
    np.testing.assert_array_equal(np.hstack(list(raw_blocks(load(X, copy=False)))), X)


@pytest.mark.parametrize("copy", [True, False])
def test_the_advice_summary_read_in_blocks_is_that_of_the_whole_matrix(monkeypatch, copy):
    monkeypatch.setattr(advice, "BLOCK_BYTES", 8 * 12 * 3)  # blocks of 3 features: 14 of them
    X = _data() - 6.0  # negatives and positives
    X[0, 0] = 4000.0
    raw = raw_summary(load(X, copy=copy, scale=True))
    assert raw is not None
    np.testing.assert_allclose([raw.top, raw.bottom], [X.max(), X.min()], rtol=1e-12)
    assert raw.negatives == np.count_nonzero(X < 0) and not raw.integers
    np.testing.assert_allclose(raw.median_positive, np.median(X[X > 0]), rtol=1e-12)


def test_a_dataframe_is_held_as_given_too():
    frame = pd.DataFrame(_data(), index=[f"s{i}" for i in range(12)], columns=[f"g{j}" for j in range(40)])
    held = load(frame, copy=False)
    assert held.deferred and np.shares_memory(held.matrix, frame.to_numpy())
    np.testing.assert_array_equal(held.problem().factor(), load(frame).problem().factor())


def test_advice_sees_the_values_as_given_after_a_unit_rescale():
    X = _data() * 2.0**400
    with pytest.warns(UserWarning, match="divided by 2"):
        ds = load(X)
    np.testing.assert_allclose(np.hstack(list(raw_blocks(ds))), X, rtol=1e-12)
