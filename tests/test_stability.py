"""Stability selection of sparse PCA supports: planted spikes, the error bound against a simulation,
determinism."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import certpca
from certpca.data import Dataset, prepare
from certpca.errors import InputError
from certpca.stability_selection import stabilities, stability


def spiked(n: int, d: int, supports: list[range], strengths: list[float], seed: int = 0) -> Dataset:
    """Noise plus one rank-1 spike per support: x = Σ_l sqrt(s_l)·z_l·v_l + e, v_l uniform on its support."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    for support, strength in zip(supports, strengths):
        v = np.zeros(d)
        v[list(support)] = 1 / np.sqrt(len(support))
        X += np.sqrt(strength) * rng.standard_normal((n, 1)) * v
    ds = Dataset("spike", X, pd.Index([f"f{j}" for j in range(d)]), pd.Index([f"s{i}" for i in range(n)]), None)
    return prepare(ds)


def test_a_planted_support_is_selected_in_nearly_every_half():
    """The issue's planted spike: N = 100, D = 2000, a support of 20."""
    ds = spiked(100, 2000, [range(20)], [40.0])
    result = stability(ds, 20, n_subsamples=50, seed=0, n_jobs=1)
    freq = result.frequencies["PC1"].to_numpy()
    assert (freq[:20] >= 0.9).all()
    assert np.count_nonzero(freq[20:] >= 0.5) <= 2
    assert set(result.stable()) <= {f"f{j}" for j in range(20)} and len(result.stable()) >= 18
    assert result.complementary and result.n_subsamples == 50


def test_components_are_matched_by_their_loadings_not_their_position():
    """Two spikes of nearly equal strength swap order between halves; matching by |cosine| keeps
    each component's frequencies on its own planted support."""
    ds = spiked(120, 300, [range(10), range(10, 20)], [30.0, 27.0], seed=2)
    result = stability(ds, 10, n_components=2, n_subsamples=30, seed=1, n_jobs=1)
    ref = result.reference.rotation
    for name in ("PC1", "PC2"):
        own = ref.index[ref[name] != 0]
        assert (result.frequencies.loc[own, name] >= 0.9).all(), name


def test_the_error_bound_holds_in_a_simulation_of_pure_noise():
    """No feature carries signal, so every feature at frequency ≥ π is a false selection; Meinshausen &
    Bühlmann's bound q²/((2π − 1)D) caps their expected number.  Averaged over 12 independent data sets."""
    false = []
    for seed in range(12):
        ds = spiked(40, 200, [], [], seed=seed)
        result = stability(ds, 5, n_subsamples=20, threshold=0.6, seed=seed, n_jobs=1)
        false.append(np.count_nonzero(result.frequencies["PC1"] >= 0.6))
    bound = 5 * 5 / ((2 * 0.6 - 1) * 200)
    assert result.expected_false == [pytest.approx(bound)]
    assert np.mean(false) <= bound


def test_the_result_depends_on_the_seed_only_not_on_the_processes():
    ds = spiked(60, 150, [range(8)], [15.0], seed=3)
    one = stability(ds, 8, n_subsamples=12, seed=4, n_jobs=1)
    two = stability(ds, 8, n_subsamples=12, seed=4, n_jobs=2)
    pd.testing.assert_frame_equal(one.frequencies, two.frequencies)


@pytest.mark.parametrize("sparse", [False, True])
def test_fits_sharing_their_halves_give_what_each_gives_alone(sparse):
    """:func:`stabilities` forms each half's covariance once for several fits (the report's plain and
    nonnegative refits): bit for bit what :func:`stability` gives each fit alone, also for two fits of the same
    sign, whose memo a shared covariance would otherwise carry from one to the other."""
    ds = spiked(60, 150, [range(8)], [15.0], seed=3)
    if sparse:
        sp = pytest.importorskip("scipy.sparse")
        X = np.abs(ds.columns(np.arange(ds.n_features)))
        ds = certpca.load(sp.csr_matrix(X))
    fits = [
        {"k": 8, "nonneg": False, "method": "auto"},
        {"k": 8, "nonneg": True, "method": "auto"},
        {"k": 5, "nonneg": False, "method": "em", "n_components": 2},
        {"k": 4, "nonneg": False, "method": "threshold"},
    ]
    together = stabilities(ds, fits, n_subsamples=12, seed=4, n_jobs=1)
    for options, shared in zip(fits, together):
        alone = stability(ds, n_subsamples=12, seed=4, n_jobs=1, **options)
        pd.testing.assert_frame_equal(shared.frequencies, alone.frequencies, check_exact=True)
        pd.testing.assert_frame_equal(shared.reference.rotation, alone.reference.rotation, check_exact=True)
        assert shared.expected_false == alone.expected_false and shared.k == alone.k


def test_sparse_input_gives_the_dense_frequencies():
    sp = pytest.importorskip("scipy.sparse")
    rng = np.random.default_rng(6)
    X = np.where(rng.random((50, 40)) < 0.3, rng.exponential(size=(50, 40)), 0.0)
    X[:, :5] += rng.exponential(size=(50, 1)) * 3
    dense = certpca.load(pd.DataFrame(X, columns=[f"g{j}" for j in range(40)]))
    sparse = certpca.load(sp.csr_matrix(X))
    a = stability(dense, 5, n_subsamples=10, n_jobs=1)
    b = stability(sparse, 5, n_subsamples=10, n_jobs=1)
    np.testing.assert_array_equal(a.frequencies.to_numpy(), b.frequencies.to_numpy())


def test_bad_arguments_are_named():
    ds = spiked(20, 30, [range(3)], [5.0])
    with pytest.raises(InputError, match="fraction"):
        stability(ds, 3, fraction=0.01)
    with pytest.raises(InputError, match="threshold"):
        stability(ds, 3, threshold=0.3)
    with pytest.raises(InputError, match="n_subsamples"):
        stability(ds, 3, n_subsamples=1)
