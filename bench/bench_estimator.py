"""Issue 29's acceptance rows for the estimator: its default certificate costs about the fit.

Two rows, each timed with the estimator's defaults and with ``certify=False`` in alternation in one
run (median of ``--repeats``), one BLAS thread:

- ``certpca.SparsePCA(n_components=3, k=50).fit(khan)``: goal ≤ 3 × the uncertified fit + 1 s;
- a 5-fold ``GridSearchCV`` over five k of the pipeline SparsePCA(n_components=3) → logistic
  regression on khan's bundled labels (the four tumour classes): goal ≤ 3 × its uncertified time.

    PYTHONPATH=. python bench/bench_estimator.py     # writes reports/bench/estimator.md
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time
import warnings

from common import publish
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV, StratifiedKFold
from sklearn.pipeline import make_pipeline
from threadpoolctl import threadpool_limits

import certpca

#: the five k of the grid search (khan has D = 2308 features)
GRID_K = [10, 20, 50, 100, 200]


def single_fit(X, y, certify: bool) -> str:
    """One ``SparsePCA(n_components=3, k=50)`` fit; its summary for the table."""
    est = certpca.SparsePCA(n_components=3, k=50, certify=certify).fit(X)
    return f"variance {sum(est.explained_variance_):.6g}"


def grid_search(X, y, certify: bool) -> str:
    """The 5-fold grid search over ``GRID_K``; the k it chose and its accuracy for the table."""
    pipe = make_pipeline(certpca.SparsePCA(n_components=3, certify=certify), LogisticRegression(max_iter=1000))
    cv = StratifiedKFold(5, shuffle=True, random_state=0)
    search = GridSearchCV(pipe, {"sparsepca__k": GRID_K}, cv=cv).fit(X, y)
    return f"k = {search.best_params_['sparsepca__k']}, accuracy {search.best_score_:.3f}"


def ratio_row(run, X, y, repeats: int) -> tuple[float, float, str, str]:
    """(median seconds with defaults, median with certify=False, their outcomes), run in alternation."""
    times: dict[bool, list[float]] = {True: [], False: []}
    outcome = {}
    for _ in range(repeats):
        for certify in (True, False):
            t0 = time.perf_counter()
            outcome[certify] = run(X, y, certify)
            times[certify].append(time.perf_counter() - t0)
    return statistics.median(times[True]), statistics.median(times[False]), outcome[True], outcome[False]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    khan = certpca.load("khan")
    X, y = khan.matrix, khan.labels.to_numpy()
    rows = [
        "# The estimator's default certificate (issue 29)",
        "",
        f"`PYTHONPATH=. python bench/bench_estimator.py --repeats {args.repeats}`, {platform.node()}, "
        f"{os.cpu_count()} cores, one BLAS thread; median of {args.repeats}, defaults and `certify=False` in "
        "alternation; load average: 1-minute value when the row started.",
        "",
        "| call on khan (63 × 2308) | defaults (s) | certify=False (s) | ratio | goal | met | load | outcome |",
        "|---|---|---|---|---|---|---|---|",
    ]
    cases = [
        ("`SparsePCA(n_components=3, k=50).fit(X)`", single_fit, 3.0, 1.0),
        (
            f"5-fold `GridSearchCV`, k ∈ {{{', '.join(map(str, GRID_K))}}}, SparsePCA(n_components=3) → "
            "LogisticRegression",
            grid_search,
            3.0,
            0.0,
        ),
    ]
    with threadpool_limits(1):
        for name, run, factor, extra in cases:
            load = os.getloadavg()[0]
            t_cert, t_plain, out_cert, out_plain = ratio_row(run, X, y, args.repeats)
            goal = f"≤ {factor:g} × uncertified" + (f" + {extra:g} s" if extra else "")
            met = "yes" if t_cert <= factor * t_plain + extra else "no"
            same = "same" if out_cert == out_plain else f"uncertified: {out_plain}"
            rows.append(
                f"| {name} | {t_cert:.3f} | {t_plain:.3f} | {t_cert / t_plain:.2f} | {goal} | {met} | {load:.2f} "
                f"| {out_cert} ({same}) |"
            )
    publish("estimator.md", "\n".join(rows) + "\n")


if __name__ == "__main__":
    main()
