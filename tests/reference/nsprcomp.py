"""Write tests/reference/nsprcomp_loadings.csv: R's nsprcomp on the bundled data sets.

Run from the repository root (needs Rscript with the nsprcomp package, e.g. installed from
its source with ``R CMD INSTALL``):

    python tests/reference/nsprcomp.py

Each case ``name:prep:sign:k`` is the first component on the data as ``certpca.load`` prepares it
(centred; ``scale``: also unit variance), signed or nonnegative, k nonzeros.  The matrices go to R
as raw doubles (tests/reference/nsprcomp.R), so R sees exactly certpca's numbers.  R is not needed
to run the tests that read the output.
"""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

import certpca

HERE = Path(__file__).resolve().parent
SETS = ("leukemia", "golub", "khan", "alon", "cbcl", "pbmc", "lrs")
CASES = [f"{s}:{p}:{g}:{k}" for s in SETS for p in ("raw", "scale") for g in ("signed", "nonneg") for k in (10, 50)]


def prepared(case: str) -> np.ndarray:
    """The dense prepared matrix of a case (samples × features)."""
    name, prep, _, _ = case.split(":")
    ds = certpca.load(name, scale=prep == "scale")
    if not ds.pending:
        return np.asarray(ds.matrix, dtype=float)
    X = ds.matrix.toarray() if ds.is_sparse else np.asarray(ds.matrix, dtype=float)
    return (X - ds.center.to_numpy()) / (1.0 if ds.scale is None else ds.scale.to_numpy())


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        rows, matrices = [], {}
        for case in CASES:
            name, prep, sign, k = case.split(":")
            key = f"{name}_{prep}"
            if key not in matrices:
                X = prepared(case)
                path = Path(tmp) / f"{key}.bin"
                X.T.astype("<f8").tofile(path)  # column-major, as R's matrix() fills
                matrices[key] = (path, X.shape)
            path, (n, d) = matrices[key]
            nneg = "TRUE" if sign == "nonneg" else "FALSE"
            rows.append({"case": case, "file": str(path), "n": n, "d": d, "k": int(k), "nneg": nneg})
        manifest = Path(tmp) / "manifest.csv"
        pd.DataFrame(rows).to_csv(manifest, index=False)
        out = HERE / "nsprcomp_loadings.csv"
        subprocess.run(["Rscript", str(HERE / "nsprcomp.R"), str(manifest), str(out)], check=True)
    version = subprocess.run(
        ["Rscript", "-e", 'cat(R.version.string, "; nsprcomp", as.character(packageVersion("nsprcomp")))'],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    (HERE / "NSPRCOMP_VERSION").write_text(version.strip() + "\n")


if __name__ == "__main__":
    main()
