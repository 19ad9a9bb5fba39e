"""The screened Gershgorin bound equals the full row-by-row computation (its independent truth here)."""

import numpy as np
import pytest

from certpca import datasets
from certpca.certification import gershgorin_bound
from certpca.certification.numerics import gamma, gershgorin_block_seconds, safe
from certpca.certification.spectral import gershgorin_screen
from certpca.clock import Work
from certpca.problem import Problem


def full_gershgorin(C: np.ndarray, k: int, nonneg: bool) -> float:
    """max_i [C_ii + the k − 1 largest |C_ij|, j ≠ i] row by row, every row formed (the pre-screening definition)."""
    best = -np.inf
    for i in range(C.shape[0]):
        row = np.delete(C[i], i)
        row = np.maximum(row, 0.0) if nonneg else np.abs(row)
        d = max(C[i, i], 0.0) if nonneg else C[i, i]
        best = max(best, d + float(np.sum(np.sort(row)[::-1][: k - 1])))
    return best


def value_without_margins(bound, k: int, r: int, cmax: float) -> float:
    """Undo the margins gershgorin_bound adds (margin k·γ_r·max C_jj, γ_k·value, safe) to compare raw maxima."""
    err = k * gamma(r) * cmax
    return (bound.value - err) / (1 + gamma(k) + 1e-10)


def wide_problems():
    rng = np.random.default_rng(11)
    out = []
    for n, d, spread in ((8, 300, 0.0), (20, 500, 1.5), (5, 200, 3.0)):
        F = rng.standard_normal((n, d)) * np.exp(rng.normal(0, spread, d))
        out.append(Problem(factor=F))
    # low rank + noise with a few strong features: the screen prunes most rows here
    Z = rng.standard_normal((30, 2))
    W = np.zeros((400, 2))
    W[:25] = rng.standard_normal((25, 2)) * 5
    out.append(Problem(factor=Z @ W.T + rng.standard_normal((30, 400))))
    return out


@pytest.mark.parametrize("nonneg", [False, True])
@pytest.mark.parametrize("k", [1, 2, 7, 60])
def test_screened_value_equals_the_full_computation(k, nonneg):
    for P in wide_problems():
        C = P.dense()
        r = P.factor().shape[0]
        b = gershgorin_bound(P, k, nonneg, block_bytes=8 * P.dim * 16)
        assert b.params["complete"]
        full = full_gershgorin(C, k, nonneg)
        raw = value_without_margins(b, k, r, float(np.max(P.diag)))
        assert abs(raw - full) <= 1e-12 * abs(full) + 1e-300


def test_integer_data_gives_the_same_number_bit_for_bit():
    # integer entries: every product and sum is exact, so the screened maximum is the full one exactly
    rng = np.random.default_rng(3)
    F = rng.integers(-4, 5, (12, 250)).astype(float) * rng.integers(1, 6, 250)
    P = Problem(factor=F)
    C = F.T @ F
    for k, nonneg in ((5, False), (5, True), (30, False)):
        b = gershgorin_bound(P, k, nonneg, block_bytes=8 * 250 * 9)
        expected = full_gershgorin(C, k, nonneg)
        err = k * gamma(12) * float(np.max(P.diag))
        assert b.value == safe(expected + err + gamma(k) * abs(expected))
        assert b.params["rows_formed"] < 250 or k == 30  # the screen did prune


def test_screened_value_on_real_data():
    ds = datasets.load("leukemia")
    X = ds.matrix[:, :1500] - ds.matrix[:, :1500].mean(axis=0)
    P = Problem.from_data(X)
    assert P.uses_factor
    C = P.dense()
    for nonneg in (False, True):
        b = gershgorin_bound(P, 50, nonneg)
        raw = value_without_margins(b, 50, P.factor().shape[0], float(np.max(P.diag)))
        assert abs(raw - full_gershgorin(C, 50, nonneg)) <= 1e-12 * raw


def test_screen_is_at_or_above_every_row_value():
    rng = np.random.default_rng(4)
    for scale in (1e-150, 1.0, 1e150):
        F = rng.standard_normal((15, 120)) * np.exp(rng.normal(0, 2, 120)) * scale
        P = Problem(factor=F)
        C = P.dense()
        for k in (1, 3, 120):
            u = gershgorin_screen(P.diag, k, 15)
            # the bound's diagonal is problem.diag; the off-diagonal entries are formed products
            rows = [P.diag[i] + np.sort(np.abs(np.delete(C[i], i)))[::-1][: k - 1].sum() for i in range(120)]
            assert np.all(u >= np.asarray(rows))


def test_stopped_by_its_time_limit_it_is_still_at_or_above_the_full_value():
    rng = np.random.default_rng(6)
    P = Problem(factor=rng.standard_normal((10, 300)))  # equal variances: the screen prunes nothing
    full = gershgorin_bound(P, 10)
    cut = gershgorin_bound(P, 10, block_bytes=8 * 300 * 5, time_limit=0.0)
    assert not cut.params["complete"] and cut.params["rows_formed"] == 5
    assert cut.value >= full.value
    assert full.params["complete"]


def test_under_work_it_charges_each_block_after_the_first_and_forms_none_it_cannot_pay_for():
    """The first block is the certificate's to charge (its estimate); three more blocks' worth of work forms
    exactly three more, and the value stays at or above the full one."""
    rng = np.random.default_rng(6)
    P = Problem(factor=rng.standard_normal((10, 300)))  # equal variances: the screen prunes nothing
    full = gershgorin_bound(P, 10)
    block = gershgorin_block_seconds(5, 300, 10)
    work = Work(3.5 * block)
    cut = gershgorin_bound(P, 10, block_bytes=8 * 300 * 5, time_limit=work)
    assert cut.params["rows_formed"] == 20 and not cut.params["complete"]
    assert work.used() == pytest.approx(3 * block) and work.used() <= work.seconds
    assert cut.value >= full.value


def test_in_a_certificate_it_takes_a_twentieth_of_what_is_left_where_its_screen_prunes_nothing():
    """A cheap bound does not eat the budget of the strong ones: with equal variances its screen prunes no row, and
    forming all of C would cost three blocks; it gets 5% of the budget, forms its first block, and stops."""
    from certpca.certification import certify_vector

    rng = np.random.default_rng(6)
    F = rng.standard_normal((10, 3000))
    P = Problem(factor=F / np.linalg.norm(F, axis=0))  # unit variances, as with --scale
    w = np.r_[np.ones(5), np.zeros(2995)]
    alone = gershgorin_bound(P, 5)
    assert alone.params["complete"] and alone.params["rows_formed"] > 1398  # unlimited: more than its first block
    cert = certify_vector(P, w, 5, bounds=["trace", "gershgorin"], budget=1.0)
    bound = next(b for b in cert.bounds if b.name == "gershgorin")
    assert bound.params["rows_formed"] == 1398 and not bound.params["complete"]  # 32 MiB of rows of 3000
    assert bound.value >= alone.value and cert.budget_used <= 0.05 * 1.0 + gershgorin_block_seconds(1398, 3000, 10)
