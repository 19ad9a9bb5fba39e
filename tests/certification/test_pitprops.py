"""Pit props (Jeffers 1967): the published sparse PCA path and the nonnegative k = 10 optimum."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from certpca.certification.certificate import certify_vector
from certpca.certification.exact import exact
from certpca.certification.relax import dnn_sdp_bound
from certpca.problem import Problem

DATA = Path(__file__).resolve().parents[2] / "data" / "pitprops.csv"
# Berk & Bertsimas (2019), optimal first sparse PC, k = 1..13
BERK_BERTSIMAS = [1.000, 1.954, 2.475, 2.937, 3.406, 3.771, 3.996, 4.069, 4.139, 4.173, 4.208, 4.218, 4.219]
OPT_NONNEG_10 = 4.14411


@pytest.fixture(scope="module")
def pit():
    df = pd.read_csv(DATA, index_col=0)
    assert df.shape == (13, 13) and list(df.index) == list(df.columns)
    C = df.to_numpy(float)
    assert np.allclose(C, C.T) and np.allclose(np.diag(C), 1)
    return Problem.from_covariance(C, feature_ids=df.columns)


@pytest.mark.parametrize("k", range(1, 14))
def test_exact_path_matches_berk_bertsimas(pit, k):
    r = exact(pit, k)
    assert r.proven
    assert round(r.value, 3) == BERK_BERTSIMAS[k - 1]
    assert np.count_nonzero(r.weights) <= k
    assert (r.upper_bound - r.value) <= 1e-8 * r.value
    cert = certify_vector(pit, r.weights, k, bounds=["exact"])
    assert cert.optimal


def test_nonneg_k10_certified_optimal_by_dnn(pit):
    r = exact(pit, 10, nonneg=True)
    assert r.proven and abs(r.value - OPT_NONNEG_10) < 5e-6
    b = dnn_sdp_bound(pit, 10, True)
    rel = (b.value - r.value) / b.value
    print(f"\npit props nonneg k=10: OPT⁺ {r.value:.8f}, DNN bound {b.value:.8f}, rel gap {rel:.2e}")
    assert b.value >= r.value
    assert rel <= 1e-6
    cert = certify_vector(pit, r.weights, 10, True, bounds="dnn_sdp,lambda1,perron")
    assert cert.optimal and cert.winner == "dnn_sdp"
