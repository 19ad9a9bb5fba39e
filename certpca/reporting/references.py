"""The report's references: every method and bound that ran, the band figure's paper, the evaluations' and a
bundled data set's source, each paper once."""

from __future__ import annotations

import re
from collections.abc import Sequence

from certpca import datasets
from certpca.certification import REGISTRY as BOUNDS
from certpca.reporting.genes import GENE_REFS
from certpca.reporting.stability import STABILITY_REFS
from certpca.solvers import REGISTRY as SOLVERS

#: the band figure follows Asteris et al. (2014), Fig. 4-6: the paper of the spannogram solver
BAND_FIGURE_SOURCE = "spannogram"
#: one author "Surname, I. J." (a surname of several words or with a particle such as d' kept whole)
_AUTHOR = r"(?:d'|de |van |von )?[A-Z][\w'’-]+(?: [A-Z][\w'’-]+)*, [A-Z][a-z]?\.(?:[ -][A-Z][a-z]?\.)*"
#: a reference inside a cite() text: authors (year). Title. Venue — without the notes around it
#: ("Elementary: ...", "certpca's own bound: ...", "(§4, ...)"), which the bounds' glossary shows
CITATION = re.compile(
    rf"(?P<authors>{_AUTHOR}(?:(?:, | & |, & ){_AUTHOR})*) \((?P<year>\d{{4}})\)\. "
    r"(?P<title>[^.]+\.)(?P<venue> [^;.]+\.?)?"
)


def references(
    methods: Sequence[str],
    bounds: Sequence[str],
    *,
    band: bool,
    genes: bool,
    stable: bool = False,
    source: str | None = None,
) -> list[str]:
    """The references of every method and bound that ran, of the band figure, of the evaluation and of
    a bundled data set (``source`` "bundled:NAME"; a user's file cites nothing): the citations alone
    (:data:`CITATION`), each paper once in its fullest form, sorted by first author."""
    cites = [SOLVERS[m].cite() for m in methods] + [BOUNDS[b].cite() for b in bounds]
    if source and source.startswith("bundled:"):
        cites.append(f"Data: {datasets.info(source.split(':', 1)[1])['source']}")
    if band:
        cites.append(SOLVERS[BAND_FIGURE_SOURCE].cite())
    if genes:
        cites += GENE_REFS
    if stable:
        cites += STABILITY_REFS
    found: dict[tuple[str, str, str], str] = {}
    for cite in cites:
        matches = list(CITATION.finditer(cite))
        if not matches:  # not an author-year reference (a bundled data set's source): as it is
            found[(cite, "", "")] = cite.rstrip(".") + "."
        for m in matches:
            ref = m.group(0).rstrip(".") + "."
            key = (m["authors"].split(",")[0], m["year"], m["title"].casefold())
            found[key] = max(found.get(key, ""), ref, key=lambda r: (len(r), r))  # the fullest of a paper's forms
    return sorted(found.values(), key=lambda r: (r.removeprefix("d'").casefold(), r))


__all__ = ["BAND_FIGURE_SOURCE", "CITATION", "references"]
