"""``Summary`` prints summary.prcomp's importance rows as R itself prints them (print.summary.prcomp:
4 significant digits, column by column, the proportions rounded to 5 decimals first), compared with the
output of Debian's R (r-base-core) where Rscript is installed; skipped, visibly, where it is not."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from certpca.summary import R_ROWS, Summary


def _rscript() -> str | None:
    found = shutil.which("Rscript")
    return found or next((p for p in ("/usr/bin/Rscript", "/usr/local/bin/Rscript") if Path(p).is_file()), None)


#: (sdev, variances): a microarray on raw intensities (R prints scientific there too), log-scale single
#: cells, mtcars' scale, and a last component that adds almost nothing (a proportion below 1e-5)
CASES = {
    "raw": ([43120.51, 39861.27, 30380.96], 3.0214e10),
    "cells": ([6.283482, 4.185361, 3.217138], 446.307),
    "mtcars": ([136.533, 38.14808, 3.07102], 20107.98),
    "tiny": ([5.587123, 2.1, 0.0031234], 35.7),
}


def _importance(sdev: list[float], total: float) -> pd.DataFrame:
    share = np.asarray(sdev) ** 2 / total
    cols = [f"PC{i + 1}" for i in range(len(sdev))]
    return pd.DataFrame([sdev, share, np.cumsum(share)], index=list(R_ROWS), columns=cols)


def _r_lines(sdev: list[float], total: float, rscript: str) -> list[str]:
    """R's own print.summary.prcomp of the same numbers (summary.prcomp's rounding, then print)."""
    code = (
        f"s <- c({', '.join(repr(x) for x in sdev)}); v <- s^2 / {total!r}; "
        'm <- rbind("Standard deviation" = s, "Proportion of Variance" = round(v, 5), '
        '"Cumulative Proportion" = round(cumsum(v), 5)); '
        'colnames(m) <- paste0("PC", seq_along(s)); '
        "x <- list(importance = m, sdev = s, rotation = matrix(0, 1, length(s))); "
        'class(x) <- "summary.prcomp"; print(x)'
    )
    out = subprocess.run([rscript, "--vanilla", "-e", code], capture_output=True, text=True, timeout=60, check=True)
    return out.stdout.splitlines()


@pytest.mark.parametrize("case", sorted(CASES))
def test_importance_rows_print_as_r_prints_them(case):
    rscript = _rscript()
    if rscript is None:
        pytest.skip("Rscript not found (apt-get install r-base-core)")
    sdev, total = CASES[case]
    ours = Summary("t", _importance(sdev, total), []).as_text().splitlines()
    r = _r_lines(sdev, total, rscript)
    assert r[0] == "Importance of components:"
    for name in R_ROWS:
        theirs = next(line for line in r if line.startswith(name))
        mine = next(line for line in ours if line.startswith(name))
        assert mine[len(name) :].split() == theirs[len(name) :].split(), (case, name, mine, theirs)


def test_the_cases_cover_both_notations():
    """The comparison above covers R's fixed notation and its scientific one (for a column that mixes 4e4
    with 0.06, where fixed notation would be wider)."""
    scientific = re.compile(r"\d\.\d+e[+-]\d\d")
    texts = {c: Summary("t", _importance(*CASES[c]), []).as_text() for c in CASES}
    assert "4.312e+04" in texts["raw"] and "6.154e-02" in texts["raw"]  # as R prints them
    assert not scientific.search(texts["cells"]) and "0.08846" in texts["cells"]
    # unrounded, the last proportion (2.7e-07) would have made that column scientific; R rounds it to 0
    assert not scientific.search(texts["tiny"]) and "0.00000" in texts["tiny"]
