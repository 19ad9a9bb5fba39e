"""One BLAS thread for the whole suite, and for the commands it runs in child processes.

On a shared 2-core machine a two-thread OpenBLAS spins against the other jobs: one dense
2000 × 2000 eigenvalue problem took 13.8 s of CPU with two threads and 0.7 s with one (load 4).
The suite checks results, not BLAS threading; budgets are CPU seconds of the process
(certpca/clock.py), which count every thread.
"""

import os

from threadpoolctl import threadpool_limits

for _name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_name] = "1"
_ONE_THREAD = threadpool_limits(1)
