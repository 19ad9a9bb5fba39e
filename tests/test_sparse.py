"""Sparse data stay sparse: the implicit operator against the dense path (itself tested against brute force)."""

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

import certpca
from certpca import problem as problem_module
from certpca import sparse_factor
from certpca.certification import gershgorin_bound
from certpca.data import Dataset, prepare
from certpca.errors import InputError
from certpca.problem import Problem
from certpca.sparse_factor import covariance
from tests.brute import brute_force


@pytest.fixture(autouse=True)
def implicit(monkeypatch):
    """This module tests the implicit factor: small D > N data would otherwise be densified at once."""
    monkeypatch.setattr(problem_module, "SMALL_FACTOR_BYTES", 0)


def _counts(n, d, seed):
    """Sparse nonnegative data with unequal means and spreads (about 30 % stored)."""
    rng = np.random.default_rng(seed)
    X = rng.poisson(rng.uniform(0.5, 4, d), size=(n, d)) * (rng.random((n, d)) < 0.3)
    return sp.csr_matrix(X.astype(float) * rng.uniform(0.2, 5, d))


@pytest.fixture(params=[(60, 15), (20, 45)], ids=["N>D", "D>N"])
def pair(request):
    """(sparse Problem, dense Problem of the same data centred and scaled by numpy), both regimes, both scalings."""
    n, d = request.param
    X = _counts(n, d, n * d)
    out = []
    for scale in (False, True):
        Xd = X.toarray()
        mean, sd = Xd.mean(axis=0), Xd.std(axis=0, ddof=1)
        dense = (Xd - mean) / (sd if scale else 1.0)
        out.append((Problem.from_sparse(X, mean=mean, scale=sd if scale else None), Problem.from_data(dense)))
    return out


def _close(a, b, rel=1e-10):
    a, b = np.asarray(a), np.asarray(b)
    assert np.max(np.abs(a - b)) <= rel * max(np.max(np.abs(b)), 1e-300)


def test_operator_matches_dense_centring(pair):
    rng = np.random.default_rng(5)
    for S, P in pair:
        assert S.uses_factor == P.uses_factor
        d = P.dim
        v = rng.standard_normal(d)
        sparse_v = np.where(np.arange(d) % 7 == 0, v, 0.0)
        block = rng.standard_normal((d, 3))
        _close(S.matvec(v), P.matvec(v))
        _close(S.matvec(sparse_v), P.matvec(sparse_v))
        _close(S.matvec(block), P.matvec(block))
        _close(S.variance(v), P.variance(v))
        _close(S.variance(sparse_v), P.variance(sparse_v))
        _close(S.diag, P.diag)
        _close(S.submatrix([0, 3, 7]), P.submatrix([0, 3, 7]))
        _close(S.columns([4, 0, 4, 7]), P.columns([4, 0, 4, 7]))
        for nonneg in (False, True):
            _close(gershgorin_bound(S, 3, nonneg).value, gershgorin_bound(P, 3, nonneg).value)
        _close(S.dense(), P.dense())
        _close(S.largest_entry(), P.largest_entry())
        vals, vecs = S.eigh(3)
        ref_vals, ref_vecs = P.eigh(3)
        _close(vals, ref_vals)
        _close(np.abs(vecs), np.abs(ref_vecs), rel=1e-8)  # eigenvectors: conditioned by the eigengap
        _close(S.eigenvalues(), P.eigenvalues())
        w = np.zeros(d)
        w[[1, 4, 6]] = [0.6, 0.64, 0.48]
        _close(S.deflate(w).dense(), P.deflate(w).dense())
        _close(S.subset([2, 5, 8, 9]).dense(), P.subset([2, 5, 8, 9]).dense())
        _close(S.ldexp(-3).dense(), P.ldexp(-3).dense())


def test_covariance_does_not_cancel_large_means():
    """Columns ten thousand standard deviations from zero (one of them sparse): against an extended-precision truth."""
    rng = np.random.default_rng(0)
    n = 2000
    Xd = rng.standard_normal((n, 5)) + 1e4
    Xd[:, 0] = rng.standard_normal(n) * (rng.random(n) < 0.1)
    mean = Xd.mean(axis=0)
    exact = np.array(Xd, dtype=np.longdouble)
    exact -= exact.mean(axis=0)
    truth = np.asarray(exact.T @ exact / (n - 1), dtype=float)

    def error(C):
        return float(np.max(np.abs(C - truth) / np.sqrt(np.outer(np.diag(truth), np.diag(truth)))))

    textbook = ((Xd.T @ Xd) - n * np.outer(mean, mean)) / (n - 1)
    assert error(textbook) > 1e-8  # the case is hard: the squared means cancel
    assert error(covariance(sp.csr_matrix(Xd), mean, None)) < 1e-12


def test_sparse_input_is_never_densified(monkeypatch):
    """fit, certify and path on sparse D > N data with no N × D array allowed: bounds that need one are skipped."""
    X = sp.csc_matrix(_counts(20, 45, 7))
    full = X.shape

    def guarded(toarray):
        def call(self, *args, **kwargs):
            if self.shape == full:
                raise AssertionError("the N × D matrix was densified")
            return toarray(self, *args, **kwargs)

        return call

    for cls in (sp.csr_matrix, sp.csc_matrix, sp.coo_matrix):
        monkeypatch.setattr(cls, "toarray", guarded(cls.toarray))
        monkeypatch.setattr(cls, "todense", guarded(cls.todense))
    monkeypatch.setattr(sparse_factor, "BLOCK_BYTES", 8 * 20 * 10)  # column blocks of 10
    monkeypatch.setattr(problem_module, "FACTOR_BYTES", 0)
    ds = certpca.load(X)
    assert ds.is_sparse and ds.problem().uses_factor
    fit = certpca.fit(ds, k=4, n_components=2)
    cert = certpca.certify(fit)
    assert cert.upper_bound >= cert.value
    assert any(f"dense 20 × {ds.n_features} factor" in why for why in cert.skipped.values())
    assert len(certpca.path(ds, "1,3,5", bounds="trace,lambda1")) == 3


def test_dataset_scores_and_columns_are_the_prepared_values():
    X = _counts(30, 12, 3)
    Xd = X.toarray()
    prepared = (Xd - Xd.mean(axis=0)) / Xd.std(axis=0, ddof=1)
    ds = certpca.load(X, scale=True)
    assert ds.is_sparse
    _close(ds.columns([0, 5, 11]), prepared[:, [0, 5, 11]])
    W = np.random.default_rng(1).standard_normal((12, 2))
    few = np.zeros((12, 2))
    few[[2, 9], 0] = 1.0
    _close(ds.project(W), prepared @ W)
    _close(ds.project(few), prepared @ few)


def test_prepare_keeps_sparsity_where_the_operation_does():
    X = _counts(30, 12, 4)
    X = sp.csr_matrix(X @ sp.diags((np.arange(12) != 3).astype(float)))  # feature 3 constant: dropped as for dense
    ids = pd.Index([f"g{j}" for j in range(12)])
    raw = Dataset(name="x", matrix=X, feature_ids=ids, sample_ids=pd.Index(range(30)).astype(str), labels=None)
    dense = Dataset(name="x", matrix=X.toarray(), feature_ids=ids, sample_ids=raw.sample_ids, labels=None)
    with pytest.warns(UserWarning, match="constant"):
        a, b = prepare(raw, log2=1.0), prepare(dense, log2=1.0)
    assert a.is_sparse and list(a.feature_ids) == list(b.feature_ids)
    _close(a.columns(np.arange(a.n_features)), b.matrix)
    _close(a.problem().dense(), b.problem().dense())
    with pytest.raises(InputError, match="make them dense") as err:
        prepare(raw, log2=20.0)
    assert "\n" not in str(err.value)


def test_unsorted_and_duplicate_entries_mean_what_scipy_says():
    """A CSC with unsorted row indices and a duplicate entry (summed, as scipy defines it) is held canonical,
    read-only, and gives numpy's covariance."""
    X = sp.csc_matrix(
        (np.array([1.0, 2.0, 3.0, 4.0, 0.5]), np.array([2, 0, 2, 1, 3]), np.array([0, 3, 5])), shape=(4, 2)
    )
    ds = certpca.load(X)
    assert not ds.matrix.data.flags.writeable
    _close(ds.problem().dense(), np.cov(X.toarray(), rowvar=False))


@pytest.mark.parametrize("center", [True, False])
@pytest.mark.parametrize("scale", [True, False])
def test_sparse_preparation_equals_dense_with_r_conventions(center, scale):
    """center/scale vectors, the prepared values and predict agree with the dense path (R's scale():
    the root mean square divides when not centred), sparse or dense input alike."""
    X = _counts(25, 9, 8)
    a = certpca.load(X, center=center, scale=scale)
    b = certpca.load(X.toarray(), center=center, scale=scale)
    assert a.is_sparse and not b.is_sparse
    for got, want in ((a.center, b.center), (a.scale, b.scale)):
        assert (got is None) == (want is None)
        if want is not None:
            _close(got.to_numpy(), want.to_numpy())
    _close(a.columns(np.arange(9)), b.matrix)
    fa, fb = certpca.fit(a, k=3), certpca.fit(b, k=3)
    _close(fa.x.to_numpy(), fb.x.to_numpy())
    _close(fa.predict(X.toarray()[:4]), fb.x.to_numpy()[:4])


def test_sparse_extreme_magnitudes_work_in_safe_units_or_say_why():
    """Values near the top of the floating-point range: centred in units of 2^e (center kept in the data's
    units, as for dense data), and refused with its fix when they would also be scaled."""
    X = _counts(20, 6, 9) * 2.0**1000
    with pytest.warns(UserWarning, match="divided by 2"):
        a = certpca.load(X)
    with pytest.warns(UserWarning, match="divided by 2"):
        b = certpca.load(X.toarray())
    assert a.preprocessing["unit_exponent"] == b.preprocessing["unit_exponent"]
    _close(a.center.to_numpy(), b.center.to_numpy())
    _close(a.problem().dense(), b.problem().dense())
    with pytest.raises(InputError, match="do not scale"):
        certpca.load(X, scale=True)


@pytest.mark.parametrize("nonneg", [False, True])
def test_em_refit_wider_than_the_samples_equals_dense(nonneg, monkeypatch):
    """EM with k > N refits its supports through the Gram matrix of the factor's columns: on sparse
    data those columns come from the implicit factor (no dense N × D factor), with the dense fit's
    support and variance."""
    from certpca.paths import fit_path
    from certpca.solvers import solve

    monkeypatch.setattr(problem_module, "FACTOR_BYTES", 0)  # Problem.factor() would raise TooLarge
    X = _counts(20, 45, 11)
    Xd = X.toarray()
    mean = None if nonneg else Xd.mean(0)  # uncentred counts reach every k under nonneg
    S, P = Problem.from_sparse(X, mean=mean), Problem.from_data(Xd - (0 if nonneg else mean))
    assert S.uses_factor and S.factor_rows == 20
    for k in (25, 40):
        a, b = solve(S, k, nonneg=nonneg, rng=0), solve(P, k, nonneg=nonneg, rng=0)
        assert a.cardinality == b.cardinality == k
        assert a.support == b.support
        assert a.variance == pytest.approx(b.variance, rel=1e-9)
        # the refit on its support is C_SS's top eigenvalue (a nonneg vector on that face may be lower)
        top = np.linalg.eigvalsh(P.submatrix(np.flatnonzero(b.weights)))[-1]
        assert b.variance <= top * (1 + 1e-12) and (nonneg or b.variance == pytest.approx(top, rel=1e-9))
    pa, pb = fit_path(S, [22, 30], nonneg=nonneg), fit_path(P, [22, 30], nonneg=nonneg)
    assert [c.variance for c in pa] == pytest.approx([c.variance for c in pb], rel=1e-9)


@pytest.mark.parametrize("nonneg", [False, True])
def test_default_fit_of_sparse_data_beyond_the_factor_limit_leaves_gpower_out_and_says_so(nonneg, monkeypatch):
    """auto without the dense factor (FACTOR_BYTES = 0): EM, the spannogram and the swap search still reach
    brute force's optimum on sparse D > N data, and the fit's notes say GPower was left out."""
    X = _counts(8, 11, 5)
    Xd = X.toarray()
    C = np.cov(Xd.T)
    monkeypatch.setattr(problem_module, "FACTOR_BYTES", 0)
    P = Problem.from_sparse(X, mean=Xd.mean(axis=0))
    assert P.uses_factor and not P.factor_fits
    fit = certpca.fit(P, 3, nonneg=nonneg)
    comp = fit.components[0]
    assert fit.options["method"] == "auto" and "GPower left out" in comp.extras["auto"]
    assert any(note.startswith("Method: GPower left out") for note in fit.summary().notes)
    assert comp.variance == pytest.approx(brute_force(C, 3, nonneg)[0], rel=1e-9)
    monkeypatch.setattr(problem_module, "FACTOR_BYTES", 2**30)  # within the limit GPower runs, and no note
    assert (
        "auto" not in certpca.fit(Problem.from_sparse(X, mean=Xd.mean(axis=0)), 3, nonneg=nonneg).components[0].extras
    )


@pytest.mark.parametrize("scale", [False, True])
def test_small_sparse_data_get_the_implicit_factors_columns_as_a_dense_factor(scale, monkeypatch):
    """Within SMALL_FACTOR_BYTES, D > N sparse data are held as the dense factor, column for column the
    implicit factor's (bit for bit), and fit to the implicit factor's component and certificate."""
    X = _counts(20, 45, 5)  # no constant column
    Xd = X.toarray()
    mean, sd = Xd.mean(axis=0), Xd.std(axis=0, ddof=1)
    implicit = Problem.from_sparse(X, mean=mean, scale=sd if scale else None)
    monkeypatch.setattr(problem_module, "SMALL_FACTOR_BYTES", 8 * 20 * 45)
    small = Problem.from_sparse(X, mean=mean, scale=sd if scale else None)
    assert small._S is None and implicit._S is not None
    np.testing.assert_array_equal(small.factor(), implicit._S.columns(np.arange(45)))
    a, b = certpca.fit(small, 4), certpca.fit(implicit, 4)
    assert a.components[0].support == b.components[0].support
    assert a.components[0].variance == pytest.approx(b.components[0].variance, rel=1e-10)
    assert certpca.certify(a).upper_bound == pytest.approx(certpca.certify(b).upper_bound, rel=1e-8)
    monkeypatch.setattr(problem_module, "SMALL_FACTOR_BYTES", 8 * 20 * 45 - 1)  # one byte short: implicit
    assert Problem.from_sparse(X, mean=mean)._S is not None
