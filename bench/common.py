"""What every benchmark script shares: timing and publishing its table.

Scripts run as ``python bench/bench_X.py``, so this module is imported as ``common``.
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path

REPORTS = Path(__file__).resolve().parent.parent / "reports" / "bench"

#: the cheap certificate of issue 15's goals: every bound here is O(N·D) or O(D·log D) per evaluation
CHEAP = "trace,lambda1,gershgorin,dabe,pattern"


def timed(fn, repeats: int):
    """(median seconds, fastest seconds, last result) of ``repeats`` calls of ``fn``."""
    times, result = [], None
    for _ in range(max(1, repeats)):
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), min(times), result


def publish(name: str, text: str, path: Path | None = None) -> Path:
    """Print the table and write it to reports/bench/<name> (or ``path``)."""
    out = path or REPORTS / name
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text)
    print(text)
    return out
