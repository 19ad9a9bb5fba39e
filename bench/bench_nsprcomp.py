"""certpca's default fit against R's nsprcomp on every bundled data set (issue 27: never below a peer).

R's loadings are tests/reference/nsprcomp_loadings.csv (written by tests/reference/nsprcomp.py,
nsprcomp with its defaults, seed 1); their variance wᵀCw is computed here on certpca's own problem,
so both sides are measured by the same C.  For each case: nsprcomp's variance, certpca's default
fit's (``certpca.fit`` with its defaults) and EM's, and the ratio default / nsprcomp.  A row "loses"
when the default is below nsprcomp by more than 1e-9 relative.

    PYTHONPATH=. python bench/bench_nsprcomp.py      # writes reports/bench/nsprcomp.md
"""

from __future__ import annotations

import inspect
import os
import platform
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from common import publish
from threadpoolctl import threadpool_limits

import certpca

REFERENCE = Path(__file__).resolve().parent.parent / "tests" / "reference"


def nsprcomp_vectors() -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """{case: (feature indices, loadings)} of R's first components."""
    table = pd.read_csv(REFERENCE / "nsprcomp_loadings.csv")
    return {c: (g.feature.to_numpy(), g.loading.to_numpy()) for c, g in table.groupby("case", sort=False)}


def row(case: str, idx: np.ndarray, vals: np.ndarray, data: dict) -> dict:
    name, prep, sign, k = case.split(":")
    key = (name, prep)
    if key not in data:
        data[key] = certpca.load(name, scale=prep == "scale")
    ds = data[key]
    problem = ds.problem()
    w = np.zeros(problem.dim)
    w[idx] = vals
    ref = problem.variance(w / np.linalg.norm(w))
    nonneg = sign == "nonneg"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        default = certpca.fit(ds, k=int(k), nonneg=nonneg).sdev[0] ** 2
        em = certpca.fit(ds, k=int(k), nonneg=nonneg, method="em").sdev[0] ** 2
    ratio = default / ref
    return {
        "data": name,
        "prep": prep,
        "sign": sign,
        "k": k,
        "nsprcomp": f"{ref:.6g}",
        "default": f"{default:.6g}",
        "em": f"{em:.6g}",
        "default / nsprcomp": f"{ratio:.6f}" + (" **lost**" if ratio < 1 - 1e-9 else ""),
        "em / nsprcomp": f"{em / ref:.6f}",
    }


def markdown(frame: pd.DataFrame) -> str:
    """A GitHub table of the frame's rows."""
    lines = ["| " + " | ".join(frame.columns) + " |", "|" + "---|" * len(frame.columns)]
    return "\n".join(lines + ["| " + " | ".join(map(str, r)) + " |" for r in frame.itertuples(index=False)])


def main() -> None:
    load = os.getloadavg()[0]
    data: dict = {}
    with threadpool_limits(1):
        rows = [row(c, i, v, data) for c, (i, v) in nsprcomp_vectors().items()]
    frame = pd.DataFrame(rows)
    lost = frame["default / nsprcomp"].str.contains("lost").sum()
    em_lost = (frame["em / nsprcomp"].astype(float) < 1 - 1e-9).sum()
    default_method = inspect.signature(certpca.fit).parameters["method"].default
    version = (REFERENCE / "NSPRCOMP_VERSION").read_text().strip()
    text = (
        "# certpca's default fit beside R's nsprcomp (reports/bench/nsprcomp.md)\n\n"
        f"Command: `PYTHONPATH=. python bench/bench_nsprcomp.py`; {platform.machine()}, 2 cores (shared; load average "
        f"{load:.1f} at the start), one BLAS thread; certpca {certpca.__version__}, default method `{default_method}`; "
        f"R side: {version}, defaults (5 restarts), seed 1, first component on certpca's prepared data "
        "(tests/reference/nsprcomp_loadings.csv). Variances wᵀCw of both vectors on the same C.\n\n"
        f"**{lost} of {len(frame)} rows** where nsprcomp beats certpca's default (EM alone: {em_lost}).\n\n"
        + markdown(frame)
        + "\n"
    )
    publish("nsprcomp.md", text)


if __name__ == "__main__":
    main()
