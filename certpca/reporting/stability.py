"""The report's "How stable are these features?" section: stability selection of the best fit's first
component (:func:`certpca.stability_selection.stabilities`) as a saved record and its table."""

from __future__ import annotations

import pandas as pd

from certpca.data import Dataset
from certpca.reporting.formats import Table, Units, fmt, mode_name, mode_slug
from certpca.reporting.saved import ReportRun, SavedStability, StabilityRow
from certpca.results import Fit
from certpca.stability_selection import Stability, stabilities

#: what the section cites
STABILITY_REFS = (
    "Meinshausen, N. & Bühlmann, P. (2010). Stability selection. Journal of the Royal Statistical Society B, "
    "72(4), 417-473.",
    "Shah, R. D. & Samworth, R. J. (2013). Variable selection with error control: another look at stability "
    "selection. Journal of the Royal Statistical Society B, 75(1), 55-80.",
)


def stability_records(ds: Dataset, fits: list[Fit], n_subsamples: int, seed: int) -> list[SavedStability]:
    """Refit each of ``fits``' methods at its k on the same ``n_subsamples`` halves of the samples (complementary
    pairs), each half's covariance formed once for all of them (:func:`certpca.stability_selection.stabilities`),
    in this process: the report runs it in a child process beside the certificates (reporting/side.py), which a
    pool of its own would crowd out (the result does not depend on the number of processes)."""
    results = stabilities(
        ds,
        [
            {"k": int(f.options["k"]), "nonneg": bool(f.options["nonneg"]), "method": str(f.options["method"])}
            for f in fits
        ],
        n_subsamples=n_subsamples,
        seed=seed,
        n_jobs=1,
    )
    return [_saved(fit.options, result) for fit, result in zip(fits, results)]


def _saved(options: dict, result: Stability) -> SavedStability:
    """The saved record of one fit's stability: its settings and its first component's ranked features."""
    table = result.ranked(1)
    return SavedStability(
        nonneg=bool(options["nonneg"]),
        method=str(options["method"]),
        k=int(options["k"]),
        n_subsamples=result.n_subsamples,
        threshold=result.threshold,
        expected_false=None if result.expected_false is None else float(result.expected_false[0]),
        rows=[
            StabilityRow(str(fid), float(r.frequency), float(r.loading), bool(r.selected))
            for fid, r in table.iterrows()
        ],
    )


def stable_count(record: SavedStability) -> int:
    """Selected features at or above the threshold."""
    return sum(r.selected and r.frequency >= record.threshold for r in record.rows)


def stability_table(run: ReportRun, nonneg: bool) -> Table | None:
    """Every feature some half selected, by frequency: the selected ones and the ones the halves preferred."""
    record = run.stability_of(nonneg)
    if record is None:
        return None
    u = Units.of(run.data.units)
    raw = [
        {u.col: r.feature, "frequency": r.frequency, "loading": r.loading, "selected": r.selected} for r in record.rows
    ]
    disp = [
        {
            u.col: run.feature_label(r.feature),
            "frequency": fmt(r.frequency, "fraction"),
            f"loading on all {u.rows}": fmt(r.loading, "loading") if r.selected else "–",
            "selected": fmt(r.selected),
        }
        for r in record.rows
    ]
    caption = (
        f"Selection frequency of each {u.col} in the first {mode_name(nonneg)} component ({record.method}, "
        f"k = {record.k}) refitted on {record.n_subsamples} halves of the {u.rows} (complementary pairs); "
        f"selected: in the fit on all {u.rows}"
    )
    return Table(f"stability-{mode_slug(nonneg)}", caption, pd.DataFrame(disp), pd.DataFrame(raw))


__all__ = ["STABILITY_REFS", "stability_records", "stability_table", "stable_count"]
