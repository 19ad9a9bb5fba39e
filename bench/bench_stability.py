"""Stability selection and the cross-validated choice of k, timed against one fit in the same run.

Rows: one k = 50 fit on all samples (the baseline), ``certpca.stability`` with 100 halves on one
process and on every core, and ``certpca.choose_k`` over a grid of 12 k, on leukemia (72 × 12582,
``--log2 20``) and pbmc (700 cells × 765 genes); one BLAS thread.  The ratio column divides by the
baseline of the same data set, so the table compares across machines; the absolute seconds and the
load average say how busy this one was.

    python bench/bench_stability.py          # writes reports/bench/stability.md
"""

from __future__ import annotations

import os
import time
import warnings

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from common import publish  # noqa: E402

import certpca  # noqa: E402


def seconds(fn) -> tuple[float, object]:
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def main() -> None:
    warnings.simplefilter("ignore")
    rows = []
    for name, options in (("leukemia", {"log2": 20}), ("pbmc", {})):
        ds = certpca.load(name, **options)
        certpca.fit(ds, k=50, nonneg=True)  # warm: the baseline is a fit, not the first call's imports
        base, _ = seconds(lambda ds=ds: certpca.fit(ds, k=50, nonneg=True))
        one, result = seconds(lambda ds=ds: certpca.stability(ds, 50, nonneg=True, n_subsamples=100, n_jobs=1))
        every, _ = seconds(lambda ds=ds: certpca.stability(ds, 50, nonneg=True, n_subsamples=100))
        cv, choice = seconds(lambda ds=ds: certpca.choose_k(ds, "5:300:12", nonneg=True))
        stable = len(result.stable())
        bound = result.expected_false[0]
        rows += [
            f"| {name} | one fit, k = 50 (baseline) | {base:.2f} | 1.0 | |",
            f"| {name} | stability, 100 halves, 1 process | {one:.2f} | {one / base:.0f} | "
            f"{stable} of 50 at ≥ 0.9; E[false] ≤ {bound:.2f} |",
            f"| {name} | stability, 100 halves, {os.cpu_count()} processes | {every:.2f} | {every / base:.0f} | same |",
            f"| {name} | choose_k, 12 k × 5 folds | {cv:.2f} | {cv / base:.0f} | "
            f"k = {choice.k} (minimum at {choice.k_min}) |",
        ]
    load = os.getloadavg()
    text = "\n".join(
        [
            "# Stability selection and the choice of k",
            "",
            "`python bench/bench_stability.py`: nonnegative k = 50, one BLAS thread, "
            f"{os.cpu_count()} cores, load average {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} at the end.",
            "",
            "| data | what | seconds | × one fit | result |",
            "|---|---|---|---|---|",
            *rows,
            "",
        ]
    )
    publish("stability.md", text)


if __name__ == "__main__":
    main()
