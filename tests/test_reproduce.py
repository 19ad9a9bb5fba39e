"""certpca reproduce --quick: every experiment writes its figure, tables and index entry, published beside ours."""

from __future__ import annotations

import csv

import pytest

from certpca.cli import main
from certpca.reproduce import ASTERIS, EXPERIMENTS, SLIDES


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("reproduce") / "out"
    assert main(["reproduce", "--quick", "--out", str(out)]) == 0
    return out


@pytest.mark.parametrize("name", list(EXPERIMENTS))
def test_every_experiment_writes_figure_and_tables(quick_run, name):
    folder = quick_run / name
    svg = (folder / "figure.svg").read_text()
    assert svg.startswith("<svg") and f'aria-label="{name}"' in svg
    assert (folder / "figure.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    stems = {p.stem for p in folder.glob("*.md")}
    assert "published-vs-ours" in stems and len(stems) >= 2
    for stem in stems:
        for ext in ("md", "tex", "csv"):
            assert (folder / f"{stem}.{ext}").stat().st_size > 0
    rows = list(csv.DictReader((folder / "published-vs-ours.csv").open()))
    assert rows and all(r["published"] and r["ours"] for r in rows)


def test_index_links_every_output_and_records_the_run(quick_run):
    index = (quick_run / "index.html").read_text()
    assert "QUICK GRID" in index and "cores" in index and "numpy" in index and "certpca reproduce" in index
    for name in EXPERIMENTS:
        assert f"href='{name}/figure.svg'" in index and f"href='{name}/figure.png'" in index
        assert f"href='{name}/published-vs-ours.csv'" in index
    assert index.count("Published beside ours") == len(EXPERIMENTS)


def test_published_numbers_appear_beside_ours(quick_run):
    band = (quick_run / "asteris2014-fig4-6" / "published-vs-ours.md").read_text()
    for _k, pub, _fig in ASTERIS.values():
        assert f"{pub:.2%}" in band
    speed = (quick_run / "gpower-speed" / "published-vs-ours.md").read_text()
    l1, l0, _ = SLIDES[(250, 2500)]
    assert f"{l1 / l0:.2f}" in speed
    fig3 = (quick_run / "sigg2008-fig3" / "published-vs-ours.md").read_text()
    assert "0.4 s vs 24 s" in fig3
    genes = (quick_run / "sigg2008-fig4" / "published-vs-ours.md").read_text()
    assert "centred raw" in genes and "log2 floor 20" in genes


def test_unknown_experiment_is_one_line_exit_2(tmp_path, capsys):
    assert main(["reproduce", "no-such-figure", "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "unknown experiment 'no-such-figure'" in err
    assert not (tmp_path / "o").exists()


def test_refuses_non_empty_out_without_force(tmp_path, capsys):
    (tmp_path / "keep.txt").write_text("x")
    assert main(["reproduce", "zass2006-fig5", "--quick", "--out", str(tmp_path)]) == 2
    assert "--force" in capsys.readouterr().err
    assert [p.name for p in tmp_path.iterdir()] == ["keep.txt"]
    assert main(["reproduce", "zass2006-fig5", "--quick", "--out", str(tmp_path), "--force"]) == 0
    assert (tmp_path / "zass2006-fig5" / "figure.svg").exists()
