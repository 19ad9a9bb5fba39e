"""``certpca stability`` and ``certpca path --choose`` on a planted spike written as a CSV."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from certpca.cli import main


@pytest.fixture
def spike_csv(tmp_path):
    """40 samples x 30 features, a strong spike on features f0..f4."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((40, 30))
    X[:, :5] += 3.0 * rng.standard_normal((40, 1))
    path = tmp_path / "spike.csv"
    pd.DataFrame(X, index=[f"s{i}" for i in range(40)], columns=[f"f{j}" for j in range(30)]).to_csv(path)
    return path


def test_stability_json_and_csv(spike_csv, tmp_path, capsys):
    out = tmp_path / "freq.csv"
    assert (
        main(["stability", str(spike_csv), "--k", "5", "--resamples", "10", "--jobs", "1", "-o", str(out), "--json"])
        == 0
    )
    obj = json.loads(capsys.readouterr().out)
    pc1 = obj["components"]["PC1"]
    planted = {f"f{j}" for j in range(5)}
    assert {f for f, q in zip(pc1["feature"], pc1["frequency"]) if q == 1.0} == planted
    assert obj["n_subsamples"] == 10 and obj["complementary"] is True
    freq = pd.read_csv(out, index_col="feature")
    assert list(freq.columns) == ["PC1"] and set(freq.index[freq["PC1"] == 1.0]) == planted
    # an existing output is refused without --force, and nothing is written
    before = out.read_text()
    assert main(["stability", str(spike_csv), "--k", "5", "--resamples", "4", "-o", str(out)]) == 2
    assert out.read_text() == before


def test_stability_names_its_flags_in_errors(spike_csv, capsys):
    assert main(["stability", str(spike_csv), "--k", "5", "--resamples", "1"]) == 2
    assert "--resamples" in capsys.readouterr().err


def test_path_choose_picks_the_planted_cardinality(spike_csv, capsys):
    assert main(["path", str(spike_csv), "--k", "1,3,5,8,12", "--choose", "--json"]) == 0
    choice = json.loads(capsys.readouterr().out)["choice"]
    assert choice["k"] == 5 and [p["k"] for p in choice["curve"]] == [1, 3, 5, 8, 12]
