"""certpca's default fit against R's nsprcomp (issue 27: the default is never below a peer).

tests/reference/nsprcomp_loadings.csv holds nsprcomp's first components (R 4.2.2, nsprcomp 0.5.1.2,
its defaults, seed 1; written by tests/reference/nsprcomp.py) on every bundled data set, centred or
scaled, signed or nonnegative, k = 10 and 50.  Both vectors are measured by the same C here, so the
comparison does not depend on either tool's variance convention.  R is not needed to run it.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import certpca

REFERENCE = pd.read_csv(Path(__file__).parent / "reference" / "nsprcomp_loadings.csv")
CASES = list(dict.fromkeys(REFERENCE.case))
#: relative slack for the two variances' rounding (each wᵀCw of a unit vector, C the same matrix)
RTOL = 1e-9


@pytest.fixture(scope="module")
def loaded():
    cache: dict = {}

    def get(name: str, prep: str):
        if (name, prep) not in cache:
            cache[(name, prep)] = certpca.load(name, scale=prep == "scale")
        return cache[(name, prep)]

    return get


@pytest.mark.parametrize("case", CASES)
def test_default_fit_at_least_nsprcomp(case, loaded):
    name, prep, sign, k = case.split(":")
    ds = loaded(name, prep)
    problem = ds.problem()
    rows = REFERENCE[REFERENCE.case == case]
    w = np.zeros(problem.dim)
    w[rows.feature.to_numpy()] = rows.loading.to_numpy()
    assert np.count_nonzero(w) <= int(k)
    if sign == "nonneg":
        assert np.all(w >= 0)
    theirs = problem.variance(w / np.linalg.norm(w))
    ours = certpca.fit(ds, k=int(k), nonneg=sign == "nonneg").sdev[0] ** 2
    assert ours >= theirs * (1 - RTOL), f"{case}: certpca {ours:.8g} < nsprcomp {theirs:.8g}"
