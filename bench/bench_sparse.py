"""Sparse input kept sparse against densifying it, in one run: time and peak memory.

Data: 100000 cells × 2000 genes, counts from a rank-5 negative-binomial model at
about 2 % density, log1p (the single-cell setting; the dense matrix is 1.6 GB).
Each mode runs in its own process (one BLAS thread) so its peak resident memory
(VmHWM, not ``ru_maxrss``, which a child inherits from its parent) is its own:
*sparse* hands the CSR matrix to certpca, *dense* hands it ``X.toarray()``
(the old behaviour of ``certpca/data/convert.py``).
Stages: build the problem (load + prepare + covariance operator), fit k = 50,
certify with the cheap bounds (bench/common.py) and with the default ones (60 s
budget).  The pbmc report is timed in reports/bench/report.md, not here.

    python bench/bench_sparse.py            # writes reports/bench/sparse.md
    python bench/bench_sparse.py --cells 20000   # a smaller trial
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
import scipy.sparse as sp
from common import CHEAP, in_child, peak_bytes, publish

os.environ.setdefault("OMP_NUM_THREADS", "1")


def counts(n: int, d: int, *, rank: int = 5, density: float = 0.02, seed: int = 0) -> sp.csr_matrix:
    """log1p of negative-binomial counts with a rank-``rank`` log-mean, built 5000 rows at a time."""
    rng = np.random.default_rng(seed)
    genes = rng.standard_normal((rank, d)) * 0.7
    base = np.log(density) - 0.5  # sets the share of nonzero counts near ``density``
    shape = 2.0  # NB dispersion: gamma-Poisson with this shape
    parts = []
    for start in range(0, n, 5000):
        m = min(5000, n - start)
        cells = rng.standard_normal((m, rank)) * 0.7
        mean = np.exp(base + cells @ genes)
        x = rng.poisson(rng.gamma(shape, mean / shape))
        parts.append(sp.csr_matrix(np.log1p(x)))
    return sp.vstack(parts, format="csr")


def peak_mb() -> float:
    return peak_bytes() / 2**20


def run_mode(path: str, mode: str) -> dict:
    """One mode in this process: stage times and the peak RSS after each stage."""
    import certpca

    X = sp.load_npz(path).tocsr()
    out = {"loaded_mb": peak_mb()}  # after importing certpca and reading the CSR matrix
    t0 = time.perf_counter()
    data = X.toarray() if mode == "dense" else X
    ds = certpca.load(data)
    problem = ds.problem()
    out["build_s"], out["build_mb"] = time.perf_counter() - t0, peak_mb()
    del data
    t0 = time.perf_counter()
    fit = certpca.fit(problem, 50)
    out["fit_s"], out["fit_mb"] = time.perf_counter() - t0, peak_mb()
    t0 = time.perf_counter()
    cheap = certpca.certify(fit, bounds=CHEAP)
    out["cheap_s"], out["cheap_mb"] = time.perf_counter() - t0, peak_mb()
    t0 = time.perf_counter()
    cert = certpca.certify(fit)
    out["certify_s"], out["certify_mb"] = time.perf_counter() - t0, peak_mb()
    out.update(
        variance=fit.components[0].variance,
        cheap_upper=cheap.upper_bound,
        cheap_winner=cheap.winner,
        upper=cert.upper_bound,
        winner=cert.winner,
        problem=repr(problem),
        support=sorted(fit.components[0].support),
    )
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cells", type=int, default=100_000)
    ap.add_argument("--genes", type=int, default=2000)
    ap.add_argument("--no-dense", action="store_true", help="skip the densifying baseline")
    ap.add_argument("--mode", help=argparse.SUPPRESS)
    ap.add_argument("--path", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.mode:  # a child process
        print(json.dumps(run_mode(args.path, args.mode)))
        return

    t0 = time.perf_counter()
    X = counts(args.cells, args.genes)
    t_gen = time.perf_counter() - t0
    dense_gb = 8 * X.shape[0] * X.shape[1] / 1e9
    sparse_mb = (X.data.nbytes + X.indices.nbytes + X.indptr.nbytes) / 1e6
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        path = str(Path(tmp) / "x.npz")
        sp.save_npz(path, X, compressed=False)
        for mode in ("sparse",) + (() if args.no_dense else ("dense",)):
            results[mode] = in_child(__file__, "--mode", mode, "--path", path)

    import certpca

    lines = ["# Sparse input benchmark (reports/bench/sparse.md)\n"]
    lines.append(
        f"Command: `python bench/bench_sparse.py`; machine: {platform.machine()}, {os.cpu_count()} cores "
        f"(shared), one BLAS thread; certpca {certpca.__version__}, numpy {np.__version__}.\n"
    )
    lines.append(
        f"Data: {X.shape[0]} × {X.shape[1]}, log1p of rank-5 negative-binomial counts, "
        f"{X.nnz / (X.shape[0] * X.shape[1]):.2%} nonzero ({X.nnz} stored values, {sparse_mb:.0f} MB as CSR; "
        f"dense it would be {dense_gb:.2f} GB); generated in {t_gen:.0f} s. Each mode in its own process; "
        "peak RSS (VmHWM) is cumulative over the stages and includes the "
        "libraries and the CSR matrix read from disk (*loaded*).\n"
    )
    lines.append(
        "| mode | loaded (MB) | build problem (s / peak MB) | fit k = 50 (s / peak MB) | cheap certificate "
        "(s / peak MB) | build + fit + cheap (s) | default certificate (s / peak MB) |"
    )
    lines.append("|---|---|---|---|---|---|---|")
    for mode, r in results.items():
        if "error" in r:
            lines.append(f"| {mode} | failed: {r['error']} | | | | | |")
            continue
        lines.append(
            f"| {mode} | {r['loaded_mb']:.0f} | {r['build_s']:.1f} / {r['build_mb']:.0f} | "
            f"{r['fit_s']:.1f} / {r['fit_mb']:.0f} | {r['cheap_s']:.1f} / {r['cheap_mb']:.0f} | "
            f"{r['build_s'] + r['fit_s'] + r['cheap_s']:.1f} | {r['certify_s']:.1f} / {r['certify_mb']:.0f} |"
        )
    lines.append("")
    lines.append(
        f"The cheap certificate is `{CHEAP}` (as in reports/bench/scale.md); the default one runs every "
        "applicable bound, cheapest first, within its 60 s budget. Issue 15's goal for 10⁵ × 2000 in memory: "
        "under 30 s. With N ≥ D both modes certify the same D × D covariance with the same bounds; their "
        "certify times differ by the shared machine's load.\n"
    )
    for mode, r in results.items():
        if "error" not in r:
            lines.append(
                f"- {mode}: {r['problem']}; variance {r['variance']:.10g}; cheap upper bound "
                f"{r['cheap_upper']:.10g} ({r['cheap_winner']}), default {r['upper']:.10g} ({r['winner']})"
            )
    if len(results) == 2 and all("error" not in r for r in results.values()):
        s, d = results["sparse"], results["dense"]
        lines.append(
            f"- same support: {s['support'] == d['support']}; relative difference of the variances "
            f"{abs(s['variance'] - d['variance']) / d['variance']:.1e}; building the problem "
            f"{d['build_s'] / s['build_s']:.1f}x faster and peak memory after it "
            f"{d['build_mb'] / s['build_mb']:.1f}x lower kept sparse"
        )
    publish("sparse.md", "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
