"""An .h5ad file read into memory against read lazily in row blocks (``--chunked``): time and peak memory.

Data: the single-cell counts of bench_sparse.py (log1p of rank-5 negative-binomial counts, ~2 %
nonzero, CSR float32 as scanpy writes them), written once as .h5ad.  Each mode runs in its own
process (one BLAS thread) so its peak resident memory (VmHWM) is its own: *memory* is
``certpca.fit(path)`` (anndata.read_h5ad, the whole matrix in memory, kept sparse), *chunked* is
``certpca.fit(open_h5ad(path))`` (anndata's lazy reading, 10000 cells at a time, the covariance in
one pass).  Both fit k = 50 and certify with the cheap bounds.

    python bench/bench_h5ad.py                 # writes reports/bench/h5ad.md
    python bench/bench_h5ad.py --cells 20000   # a smaller trial
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import tempfile
import time
from pathlib import Path

import numpy as np
from bench_sparse import counts
from common import CHEAP, in_child, peak_bytes, publish


def run_mode(path: str, mode: str) -> dict:
    """Fit and cheap certificate in this process; seconds and peak RSS (MB) above the imports."""
    import certpca
    from certpca.data.chunked import open_h5ad

    base = peak_bytes() / 2**20
    t0 = time.perf_counter()
    fit = certpca.fit(open_h5ad(path) if mode == "chunked" else path, 50)
    t1 = time.perf_counter()
    cert = certpca.certify(fit, bounds=CHEAP)
    t2 = time.perf_counter()
    return {
        "fit_s": t1 - t0,
        "certify_s": t2 - t1,
        "peak_mb": peak_bytes() / 2**20 - base,
        "variance": fit.components[0].variance,
        "upper": cert.upper_bound,
    }


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cells", type=int, default=100_000)
    ap.add_argument("--genes", type=int, default=2000)
    ap.add_argument("--mode", help=argparse.SUPPRESS)
    ap.add_argument("--path", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.mode:  # a child process
        print(json.dumps(run_mode(args.path, args.mode)))
        return

    import anndata
    import pandas as pd

    X = counts(args.cells, args.genes).astype(np.float32)
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        path = str(Path(tmp) / "cells.h5ad")
        obs = pd.DataFrame(index=[f"c{i}" for i in range(X.shape[0])])
        var = pd.DataFrame(index=[f"g{j}" for j in range(X.shape[1])])
        anndata.AnnData(X=X, obs=obs, var=var).write_h5ad(path)
        size_mb = Path(path).stat().st_size / 1e6
        for mode in ("memory", "chunked"):
            results[mode] = in_child(__file__, "--mode", mode, "--path", path)

    import certpca

    lines = [
        "# An .h5ad file in memory and read lazily (reports/bench/h5ad.md)\n",
        f"Command: `python bench/bench_h5ad.py --cells {args.cells}`; machine: {platform.machine()}, "
        f"{os.cpu_count()} cores (shared), one BLAS thread; certpca {certpca.__version__}, numpy {np.__version__}.\n",
        f"Data: {X.shape[0]} cells × {X.shape[1]} genes, {X.nnz / (X.shape[0] * X.shape[1]):.2%} nonzero, "
        f"CSR float32 in an uncompressed .h5ad of {size_mb:.0f} MB (dense float64 it would be "
        f"{8 * X.shape[0] * X.shape[1] / 1e9:.2f} GB). Each mode in its own process; peak memory is the "
        f"process's peak RSS minus its peak after importing certpca. Certificate: `{CHEAP}`.\n",
        "| mode | fit k = 50 (s) | cheap certificate (s) | peak memory (MB) | variance | upper bound |",
        "|---|---|---|---|---|---|",
    ]
    for mode, r in results.items():
        if "error" in r:
            lines.append(f"| {mode} | failed: {r['error']} | | | | |")
        else:
            lines.append(
                f"| {mode} | {r['fit_s']:.1f} | {r['certify_s']:.1f} | {r['peak_mb']:.0f} | "
                f"{r['variance']:.10g} | {r['upper']:.10g} |"
            )
    if all("error" not in r for r in results.values()):
        m, c = results["memory"], results["chunked"]
        lines.append(
            f"\nThe same component: variances differ by {abs(m['variance'] - c['variance']) / m['variance']:.1e} "
            f"relative; reading lazily takes {c['peak_mb'] / max(m['peak_mb'], 1):.2f}x the memory and "
            f"{(c['fit_s'] + c['certify_s']) / (m['fit_s'] + m['certify_s']):.2f}x the time of reading the file whole."
        )
    publish("h5ad.md", "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
