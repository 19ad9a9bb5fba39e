"""The saved run: typed records, one to_json / from_json, older formats still read.

``data/run-v2.json`` is a ``certpca-run/2`` run saved by the version before the typed records
(``certpca report planted.csv --k 3 --components 2 ... --json`` on 30 samples × 12 features in three
classes), and ``data/run-v2-tables.json`` the Markdown and CSV tables that version made from it: read
by this version, the run gives the same tables.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from certpca.errors import InputError
from certpca.reporting.saved import (
    FORMAT,
    ReportRun,
    SavedBound,
    SavedCertificate,
    SavedComponent,
    SavedFit,
)
from certpca.reporting.tables import report_tables, table_files, tables_for

DATA = Path(__file__).parent / "data"


@pytest.fixture(scope="module")
def v2() -> dict:
    return json.loads((DATA / "run-v2.json").read_text(encoding="utf-8"))


def test_a_saved_v2_run_gives_the_tables_it_gave_before(v2):
    assert v2["format"] == "certpca-run/2"
    run = ReportRun.from_json(json.dumps(v2))
    assert run.format == FORMAT == "certpca-run/3"
    best = run.best_fit(False)
    assert isinstance(best.fit, SavedFit) and isinstance(best.components[1], SavedComponent)
    assert isinstance(best.certificate, SavedCertificate) and isinstance(best.certificate.bounds[0], SavedBound)
    assert isinstance(best.later_certificates[0], SavedCertificate)
    expected = json.loads((DATA / "run-v2-tables.json").read_text(encoding="utf-8"))
    assert len(expected) == 30  # 15 tables: data, genes, genes-tests and 6 per sign constraint, as .md and .csv
    files = table_files(report_tables(run))
    assert {name: files[name] for name in expected} == expected
    assert table_files(tables_for(v2)) == files  # what `certpca table RUN.json` writes


def test_v3_round_trip_and_what_it_leaves_out(v2):
    run = ReportRun.from_json(json.dumps(v2))
    text = run.to_json()
    assert ReportRun.from_json(text).to_json() == text
    fit = json.loads(text)["fits"][0]["fit"]
    assert "data" not in fit and "certificates" not in fit  # the run's data section; certificates beside the fit
    assert not hasattr(run, "__getitem__")  # typed access only: run.settings.k, not run["settings"]["k"]


def test_v1_is_read_and_an_unknown_format_refused(v2):
    v1 = json.loads(json.dumps(v2))
    v1["format"] = "certpca-run/1"
    for absent in ("class_counts", "n_classes"):
        del v1["data"][absent]
    run = ReportRun.from_dict(v1)
    assert run.data.class_counts is None and run.fits[0].certificate.winner == v2["fits"][0]["certificate"]["winner"]
    with pytest.raises(InputError, match="certpca-run/9"):
        ReportRun.from_dict({**v2, "format": "certpca-run/9"})
