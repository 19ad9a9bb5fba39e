"""The cardinality path against solving every k on its own."""

import numpy as np

from certpca.paths import fit_path
from certpca.problem import Problem
from certpca.solvers import solve


def _problem():
    X = np.random.default_rng(12).standard_normal((20, 80))
    return Problem.from_data(X - X.mean(0))


def test_threshold_path_equals_independent_fits():
    P = _problem()
    ks = [1, 3, 10, 40]
    for nonneg in (False, True):
        path = fit_path(P, ks, method="threshold", nonneg=nonneg)
        for k, comp in zip(ks, path):
            alone = solve(P, k, method="threshold", nonneg=nonneg)
            assert comp.cardinality == alone.cardinality and np.isclose(comp.variance, alone.variance)


def test_warm_em_path_is_feasible_and_close_to_cold():
    P = _problem()
    ks = list(range(1, 31))
    warm = fit_path(P, ks)
    cold = [solve(P, k) for k in ks]
    assert [c.cardinality for c in warm] == ks
    ratio = np.array([w.variance / c.variance for w, c in zip(warm, cold)])
    assert ratio.mean() > 0.99


def test_path_table_certifies_every_point():
    import certpca

    table = certpca.path("pitprops", list(range(1, 14)), bounds="exact")
    assert list(table["k"]) == list(range(1, 14))
    # Berk & Bertsimas: the pit props path is proven optimal at every k
    published = [1.000, 1.954, 2.475, 2.937, 3.406, 3.771, 3.996, 4.069, 4.139, 4.173, 4.208, 4.218, 4.219]
    np.testing.assert_allclose(table["upper_bound"], published, atol=5e-4)
    assert (table["variance"] <= table["upper_bound"]).all()
    assert table["certified"].between(0, 1).all()


def test_grid_syntax():
    import pytest

    from certpca.errors import InputError
    from certpca.validation import parse_grid

    assert parse_grid("5,1,3", 10) == [1, 3, 5]
    assert parse_grid("1:100:3", 1000) == [1, 10, 100]
    assert parse_grid("1:500:2", 50) == [1, 50]  # clipped to the number of features
    for bad, message in (
        ("0:5", "FROM >= 1"),
        ("5:1", "runs backwards; give FROM:TO with FROM <= TO, e.g. 1:5"),
        ("a,b", "cannot be read"),
        ("1:2:3:4", "cannot be read"),
        ("", "is empty"),
    ):
        with pytest.raises(InputError, match=message):
            parse_grid(bad, 10)


def test_path_command(tmp_path, capsys):
    import json

    import pandas as pd

    from certpca.cli import main

    out = tmp_path / "path.csv"
    assert main(["path", "pitprops", "--k", "2,4", "--bounds", "lambda1", "--json", "--out", str(out)]) == 0
    d = json.loads(capsys.readouterr().out)
    assert [p["k"] for p in d["points"]] == [2, 4]
    assert all(p["upper_bound"] >= p["variance"] for p in d["points"])
    table = pd.read_csv(out)
    np.testing.assert_allclose(table["variance"], [p["variance"] for p in d["points"]], rtol=1e-15)


def test_table_command_reads_a_saved_path(tmp_path, capsys):
    from certpca.cli import main

    assert main(["path", "pitprops", "--k", "2,4", "--bounds", "lambda1", "--json"]) == 0
    saved = tmp_path / "path.json"
    saved.write_text(capsys.readouterr().out)
    assert main(["table", str(saved), "--tables", str(tmp_path / "t")]) == 0
    md = (tmp_path / "t" / "path.md").read_text()
    assert "| certified |" in md and "\n| 2 | 1.954 |" in md and "\n| 4 | " in md
    assert (tmp_path / "t" / "path.tex").read_text().count(r"\toprule") == 1


def test_path_floor_bounds_hold_and_skipping_changes_nothing(monkeypatch):
    """Along a path the floor skips refits whose Weyl bound on λ1(C_SS) cannot beat the solver: every
    bound kept is ≥ numpy's λ1 of its support, and the path equals the one that refits every k."""
    import certpca.solvers as solvers

    rng = np.random.default_rng(3)
    X = rng.standard_normal((20, 400)) * rng.uniform(0.2, 3, 400)  # here the floor wins at one k
    P = Problem.from_data(X - X.mean(0))
    ks = list(range(1, 41))
    checked = refits = 0
    floor, renormalize = solvers.floor, solvers.renormalize

    def counting(*args, **kw):
        nonlocal refits
        refits += 1
        return renormalize(*args, **kw)

    def checking_floor(problem, k, nonneg, **kw):
        nonlocal checked
        out = floor(problem, k, nonneg, **kw)
        for key, (m, ub) in problem.memo.get(solvers.PC1_BOUNDS, {}).items():
            support = problem.memo[solvers.PC1_ORDERS][key][:m]
            assert ub >= np.linalg.eigvalsh(problem.submatrix(support))[-1] * (1 - 1e-12)
            checked += 1
        return out

    monkeypatch.setattr(solvers, "floor", checking_floor)
    monkeypatch.setattr(solvers, "renormalize", counting)
    skipping = fit_path(P, ks)
    assert checked > len(ks) // 2
    skipped_refits, refits = refits, 0
    monkeypatch.setattr(solvers, "BOUND_SLACK", np.inf)  # bounds never below the solver: no skips
    refitting = fit_path(Problem.from_data(X - X.mean(0)), ks)
    assert skipped_refits < refits  # some refits were skipped
    assert any("floor" in c.extras for c in refitting)
    for a, b in zip(skipping, refitting):
        assert a.variance == b.variance and np.array_equal(a.weights, b.weights)
