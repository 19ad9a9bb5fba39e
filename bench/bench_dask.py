"""Sparse single-cell-like data through dask: time and peak memory of fit and certify as N grows.

    OMP_NUM_THREADS=1 python bench/bench_dask.py [--sizes 10000,100000,1000000] [--cluster]

Each size runs in a fresh subprocess (its peak resident memory is its own).  The data are
never whole in memory: every row block of 10^4 cells × 2000 genes is drawn inside its dask
task from a seeded negative binomial low-rank model (2 % nonzero, log1p), as a scipy.sparse
CSR block, so the matrix is "beyond memory" in the sense that matters.  Steps: the chunked
covariance pass (``ChunkedData.prepare``), a k = 50 fit (EM), the certificate with the cheap
bounds, and the scores pass.  The dense matrix's size is beside each row; the baseline is the
same fit on the covariance already in memory (the solver alone), measured in the same run.
With ``--cluster`` the largest size also runs on a 2-worker ``LocalCluster``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time

import numpy as np
from common import publish

GENES, BLOCK, DENSITY, K = 2000, 10_000, 0.02, 50
CHEAP = "trace,lambda1,gershgorin,dabe"


def block(seed: int, rows: int):
    """One CSR block: counts from a rank-5 negative binomial model with ~2 % nonzeros, log1p."""
    import scipy.sparse as sp

    rng = np.random.default_rng(seed)
    programs = np.random.default_rng(0).gamma(0.3, 1.0, (5, GENES))  # the same programs in every block
    usage = rng.gamma(1.0, 1.0, (rows, 5))
    mean = usage @ programs
    mean *= DENSITY * rows * GENES / (1.2 * mean.sum())  # about 2 % of the entries nonzero
    counts = rng.negative_binomial(2, 2 / (2 + mean))
    return sp.csr_matrix(np.log1p(counts))


def one_size(n: int, cluster: bool) -> dict:
    import dask
    import dask.array as da

    import certpca
    from certpca.data.chunked import ChunkedData

    client = None
    if cluster:
        from distributed import Client, LocalCluster

        client = Client(LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=None))
    n_blocks = n // BLOCK
    blocks = [
        da.from_delayed(dask.delayed(block)(b, BLOCK), shape=(BLOCK, GENES), dtype=float, meta=block(0, 2))
        for b in range(n_blocks)
    ]
    X = da.concatenate(blocks, axis=0)
    out: dict = {"n": n, "cluster": cluster}
    t0 = time.perf_counter()
    data = ChunkedData.prepare(X, client=client)
    out["covariance_s"] = time.perf_counter() - t0
    problem = data.problem()
    t0 = time.perf_counter()
    fit = certpca.fit(data, k=K)
    out["fit_s"] = time.perf_counter() - t0  # the solver plus the scores pass
    t0 = time.perf_counter()
    cert = certpca.certify(fit, bounds=CHEAP)
    out["certify_s"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    certpca.fit(problem, k=K)
    out["solver_only_s"] = time.perf_counter() - t0
    out["certified"] = cert.certified_fraction
    out["nonzero_share"] = float(block(1, 2000).nnz / (2000 * GENES))
    out["peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    if client is not None:
        workers = client.run(lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
        out["worker_peak_mb"] = max(workers.values())
        client.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--cluster", action="store_true")
    parser.add_argument("--one", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        n, cluster = args.one.split(":")
        print(json.dumps(one_size(int(n), cluster == "1")))
        return
    sizes = [int(s) for s in args.sizes.split(",")]
    runs = [(n, False) for n in sizes] + ([(sizes[-1], True)] if args.cluster else [])
    rows = []
    env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    for n, cluster in runs:
        done = subprocess.run(
            [sys.executable, __file__, "--one", f"{n}:{int(cluster)}"], capture_output=True, text=True, env=env
        )
        if done.returncode != 0:
            raise SystemExit(done.stderr)
        rows.append(json.loads(done.stdout.strip().splitlines()[-1]))
    lines = [
        "# Sparse cells × 2000 genes through dask (reports/bench/dask.md)",
        "",
        f"Command: `OMP_NUM_THREADS=1 python bench/bench_dask.py --sizes {args.sizes}"
        f"{' --cluster' if args.cluster else ''}`; x86_64, 2 cores (shared), one BLAS thread. Data drawn "
        f"block by block inside dask tasks ({BLOCK} cells per block, negative binomial rank 5, log1p, "
        f"~{100 * DENSITY:.0f} % nonzero), never whole in memory. k = {K}, EM; certificate: {CHEAP}.",
        "",
        "| cells | scheduler | dense size (GB) | covariance pass (s) | fit + scores (s) | solver alone (s) "
        "| certify (s) | total (s) | certified | peak memory (MB) |",
        "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        total = r["covariance_s"] + r["fit_s"] + r["certify_s"]
        peak = f"{r['peak_mb']:.0f}" + (f" (+ workers {r['worker_peak_mb']:.0f} each)" if r["cluster"] else "")
        lines.append(
            f"| {r['n']} | {'LocalCluster, 2 workers' if r['cluster'] else 'threads'} | "
            f"{r['n'] * GENES * 8 / 1e9:.1f} | {r['covariance_s']:.1f} | {r['fit_s']:.1f} | "
            f"{r['solver_only_s']:.2f} | {r['certify_s']:.1f} | {total:.1f} | {100 * r['certified']:.2f}% | {peak} |"
        )
    if len(rows) > 1:
        ns = np.array([r["n"] for r in rows if not r["cluster"]], dtype=float)
        ts = np.array([r["covariance_s"] + r["fit_s"] + r["certify_s"] for r in rows if not r["cluster"]])
        mem = np.array([r["peak_mb"] for r in rows if not r["cluster"]])
        if len(ns) > 1:
            lines += [
                "",
                f"Growth (least-squares slope of log time and log peak memory on log cells, threads): "
                f"time ∝ N^{np.polyfit(np.log(ns), np.log(ts), 1)[0]:.2f}, "
                f"memory ∝ N^{np.polyfit(np.log(ns), np.log(mem), 1)[0]:.2f}.",
            ]
    publish("dask.md", "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
