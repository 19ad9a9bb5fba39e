"""Choosing k by cross-validation on held-out entries: a planted spike's support size is recovered."""

from __future__ import annotations

import pytest

from certpca.crossval import choose_k
from certpca.errors import InputError
from tests.test_stability import spiked


def test_cv_recovers_the_planted_cardinality():
    """The issue's planted spike (N = 100, D = 2000, support 20): the choice lies within 20 ± 2."""
    ds = spiked(100, 2000, [range(20)], [40.0], seed=0)
    choice = choose_k(ds, range(10, 31, 2), seed=0)
    assert abs(choice.k - 20) <= 2 and abs(choice.k_min - 20) <= 2
    curve = choice.curve.set_index("k")["error"]
    # too few features: the planted ones left out are predicted by their mean, a larger error
    assert curve[10] > curve[choice.k_min] and curve[30] >= curve[choice.k_min]
    assert (choice.curve["se_difference"] >= 0).all() and choice.curve["se_difference"][
        choice.curve["k"] == choice.k_min
    ].item() == 0


def test_cv_recovers_a_smaller_planted_support_with_another_seed():
    ds = spiked(80, 400, [range(6)], [25.0], seed=5)
    choice = choose_k(ds, range(2, 15), seed=3)
    assert abs(choice.k - 6) <= 1


def test_bad_grids_are_named():
    ds = spiked(20, 30, [range(3)], [5.0])
    with pytest.raises(InputError, match="ks"):
        choose_k(ds, [0, 3])
    with pytest.raises(InputError, match="n_folds"):
        choose_k(ds, [2, 3], n_folds=1)
