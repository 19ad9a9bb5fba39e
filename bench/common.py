"""What every benchmark script shares: timing, peak memory, child processes and publishing its table.

Scripts run as ``python bench/bench_X.py``, so this module is imported as ``common``.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
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


def peak_bytes() -> int:
    """This process's peak resident memory: VmHWM of /proc/self/status (Linux).

    Not ``ru_maxrss``: Linux carries that over from the parent through fork and exec, so a
    child of a large parent would report the parent's peak.
    """
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no VmHWM in /proc/self/status: the bench measures memory on Linux only")


#: a child process measures with one BLAS thread, as the benchmarks' tables say
CHILD_ENV = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


def in_child(script: str, *args: str) -> dict:
    """Run ``python script *args`` in a fresh process (its own peak memory) and read the JSON object
    on its last line of output; ``{"error": its last line of stderr}`` when it failed."""
    done = subprocess.run([sys.executable, script, *args], capture_output=True, text=True, env=CHILD_ENV)
    if done.returncode:
        return {"error": (done.stderr.strip().splitlines() or ["no output"])[-1]}
    return json.loads(done.stdout.strip().splitlines()[-1])
