"""The report's text: references that are citations only (the notes around them stay in the bounds'
glossary), each paper once in its fullest form, sorted by first author; methods not run noted under the
problem they did not run on."""

from __future__ import annotations

import re

import certpca
from certpca.certification import REGISTRY as BOUNDS
from certpca.certification import spec
from certpca.reporting import ReportOptions, compute_run, render
from certpca.reporting.references import CITATION, references
from certpca.solvers import REGISTRY as SOLVERS


def _all() -> list[str]:
    return references(list(SOLVERS), list(BOUNDS), band=True, genes=True, stable=True, source="bundled:pbmc")


def test_references_are_citations_without_notes():
    refs = _all()
    data = [r for r in refs if r.startswith("Data:")]
    assert len(data) == 1
    for r in refs:
        if r in data:
            continue
        assert CITATION.fullmatch(r), r  # authors (year). title. venue. and nothing else
        assert not r.startswith(("Elementary", "certpca's own", "Weak duality", "Branch and bound", "The best")), r
        assert "§" not in r and "(Thm" not in r and "elementary" not in r, r


def test_each_paper_once_in_its_fullest_form_and_sorted():
    refs = [r for r in _all() if not r.startswith("Data:")]
    keys = [(m["authors"].split(",")[0], m["year"], m["title"]) for m in map(CITATION.fullmatch, refs)]
    assert len(keys) == len(set(keys))
    assert sum(r.startswith("Horn, R. A. & Johnson") for r in refs) == 1
    assert sum(r.startswith("d'Aspremont, A., Bach") for r in refs) == 1
    # the spannogram solver and bound cite the same two papers with different initials and venues
    assert (
        "Papailiopoulos, D. S., Dimakis, A. G. & Korokythakis, S. (2013). Sparse PCA through low-rank "
        "approximations. Proceedings of the 30th International Conference on Machine Learning." in refs
    )
    assert sum(r.startswith("Asteris") for r in refs) == 1
    for constant in (spec.HORN_JOHNSON, spec.DABE, spec.DSPCA, spec.LI_XIE, spec.PDK, spec.MOGHADDAM):
        assert constant in refs, constant
    order = [r.removeprefix("d'").casefold() for r in _all()]
    assert order == sorted(order)


def test_a_method_not_run_in_one_problem_is_noted_under_that_problem_only():
    options = ReportOptions(k=4, methods="em,nspca", path="", stability=0, progress=False)
    html = render(compute_run(certpca.load("pitprops"), options))
    results = html[html.index('<section id="results">') : html.index("</section>", html.index('id="results"'))]
    sparse, nonneg = results.split('<h3 id="results-nonneg">')
    assert re.search(r"Not run on the sparse problem: <strong>nspca</strong>", sparse)
    assert "<td >nspca</td>" in nonneg  # its row in the nonnegative table
    assert "nspca" not in nonneg.replace("<td >nspca</td>", "")  # and no note there saying it did not run


def test_figures_name_features_by_symbol_where_the_annotation_gives_one():
    from certpca.reporting.plots import class_styles, feature_names
    from certpca.reporting.saved import ReportRun

    class Annotated:  # the two fields feature_names reads
        annotation = {"201_at": ["CD74", "HLA class II"], "202_at": ["LYZ", ""], "203_at": ["LYZ", ""]}
        feature_label = ReportRun.feature_label

    names = feature_names(Annotated(), ["201_at", "202_at", "203_at", "AFFX-x_at"])  # type: ignore[arg-type]
    assert names == ["CD74", "202_at (LYZ)", "203_at (LYZ)", "AFFX-x_at"]  # a shared symbol keeps the ids
    for n in (3, 10, 11, 20, 21, 160):
        styles = class_styles(n)
        assert len(set(styles)) == n  # no two classes alike up to 160
        assert len({c for c, _ in styles}) == min(n, 10 if n <= 10 else 20)
