"""Wide sparse data (D > N) held as the implicit factor against its dense form, in one run: CPU time.

``Problem.from_sparse`` holds sparse D > N data as their dense factor when that is at most
``SMALL_FACTOR_BYTES`` (certpca/problem.py).  This bench measures what that buys and where the limit sits:
each case is fitted (``auto``, k = 30, three components) and certified (the default certificate, 15 s of
estimated work) once with the implicit factor (``SMALL_FACTOR_BYTES = 0``) and once dense, alternating
in one process, one BLAS thread; CPU seconds of this process (the budgets are estimated work, so both
modes do the same work when their numbers agree).

    python bench/bench_small_sparse.py      # writes reports/bench/small-sparse.md
"""

from __future__ import annotations

import os
import platform
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np
from bench_sparse import counts
from common import publish

#: (name, cells, genes, density) of the synthetic cases, beside the bundled pbmc (700 × 765)
CASES = [("counts", 1000, 4000, 0.05), ("counts", 2000, 4096, 0.02), ("counts", 1000, 12000, 0.02)]
K, COMPONENTS = 30, 3


def _run(ds, small_bytes: int) -> dict:
    import certpca
    from certpca import problem as problem_module

    problem_module.SMALL_FACTOR_BYTES = small_bytes
    t0 = time.process_time()
    problem = ds.problem()
    fit = certpca.fit(problem, K, n_components=COMPONENTS)
    t1 = time.process_time()
    certpca.certify(fit)
    t2 = time.process_time()
    return {
        "held": "implicit" if problem.__dict__.get("_S") is not None else "dense",
        "fit_s": t1 - t0,
        "certify_s": t2 - t1,
        "variance": [c.variance for c in fit.components],
        "upper": [c.upper_bound for c in fit.certificates if c is not None],
    }


def main() -> None:
    import certpca
    from certpca import problem as problem_module

    default = problem_module.SMALL_FACTOR_BYTES
    data = [("pbmc (bundled, raw.X)", certpca.load("pbmc"))]
    for name, n, d, density in CASES:
        X = counts(n, d, density=density)
        data.append((f"{name} {n} × {d}, {X.nnz / (n * d):.0%} stored", certpca.load(X)))
    rows = []
    for label, ds in data:
        n, d = ds.shape
        runs = {"implicit": [], "dense": []}
        for mode in ("implicit", "dense", "dense", "implicit"):  # alternating: the load drifts alike
            runs[mode].append(_run(ds, 0 if mode == "implicit" else 2**40))
        imp, den = runs["implicit"], runs["dense"]
        same = all(
            np.allclose(a["variance"], b["variance"], rtol=1e-9) and np.allclose(a["upper"], b["upper"], rtol=1e-6)
            for a, b in zip(imp, den)
        )
        fit_i, fit_d = np.median([r["fit_s"] for r in imp]), np.median([r["fit_s"] for r in den])
        cert_i, cert_d = np.median([r["certify_s"] for r in imp]), np.median([r["certify_s"] for r in den])
        held = "dense" if 8 * n * d <= default else "implicit"
        rows.append(
            f"| {label} | {8 * n * d / 2**20:.0f} | {held} | {fit_i:.2f} | {fit_d:.2f} | {fit_d / fit_i:.2f} | "
            f"{cert_i:.1f} | {cert_d:.1f} | {cert_d / cert_i:.2f} | {'yes' if same else 'NO'} |"
        )
        print(rows[-1], flush=True)
    load = os.getloadavg()[0]
    text = "\n".join(
        [
            "# Wide sparse data: the implicit factor against its dense form (reports/bench/small-sparse.md)\n",
            f"Command: `python bench/bench_small_sparse.py`; {platform.machine()}, {os.cpu_count()} cores shared "
            f"with other jobs (load average {load:.1f} at the end), one BLAS thread; certpca {certpca.__version__}. "
            f"Fit: `auto`, k = {K}, {COMPONENTS} components; certificate: the default one (15 s of estimated "
            "work, the same work in both modes). CPU seconds, medians of 2 alternating runs per mode. "
            f"'held' is what `Problem.from_sparse` does by default (dense up to SMALL_FACTOR_BYTES = "
            f"{default / 2**20:.0f} MiB).\n",
            "| data | dense factor (MiB) | held | fit, implicit (CPU s) | fit, dense | ratio | certify, implicit "
            "(CPU s) | certify, dense | ratio | same variances and bounds |",
            "|---|---|---|---|---|---|---|---|---|---|",
            *rows,
            "",
        ]
    )
    publish("small-sparse.md", text)


if __name__ == "__main__":
    main()
