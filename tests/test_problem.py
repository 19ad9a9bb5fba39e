"""The covariance operator: factor (Gram trick) and dense routes against plain numpy."""

import numpy as np
import pytest

from certpca.problem import Problem


@pytest.fixture(params=[(50, 12), (9, 40)], ids=["N>D dense", "D>N factor"])
def data(request):
    n, d = request.param
    rng = np.random.default_rng(n * d)
    X = rng.standard_normal((n, d)) * rng.uniform(0.5, 3, d)
    X -= X.mean(0)
    return X, X.T @ X / (n - 1)


def test_operations_match_the_explicit_covariance(data):
    X, C = data
    P = Problem.from_data(X)
    rng = np.random.default_rng(0)
    v = rng.standard_normal(C.shape[0])
    sparse_v = np.where(rng.random(C.shape[0]) < 0.1, v, 0.0)
    np.testing.assert_allclose(P.matvec(v), C @ v, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(P.matvec(sparse_v), C @ sparse_v, rtol=1e-10, atol=1e-12)
    # a known support (an EM iterate's) gives the same product
    np.testing.assert_allclose(P.matvec(sparse_v, np.flatnonzero(sparse_v)), C @ sparse_v, rtol=1e-10, atol=1e-12)
    assert np.isclose(P.variance(v), v @ C @ v, rtol=1e-12)
    S = [0, 3, 5]
    np.testing.assert_allclose(P.submatrix(S), C[np.ix_(S, S)], rtol=1e-12)
    np.testing.assert_allclose(P.diag, np.diag(C), rtol=1e-12)
    assert np.isclose(P.trace, np.trace(C))
    cols = [4, 0, 4, 7]
    np.testing.assert_allclose(P.columns(cols), C[:, cols], rtol=1e-10, atol=1e-12)
    assert P.columns([]).shape == (C.shape[0], 0)
    F = P.factor()
    np.testing.assert_allclose(F.T @ F, C, atol=1e-10 * np.abs(C).max())


def test_spectrum_matches_eigh(data):
    X, C = data
    P = Problem.from_data(X)
    ref = np.sort(np.linalg.eigvalsh(C))[::-1]
    vals, vecs = P.eigh(3)
    np.testing.assert_allclose(vals, ref[:3], rtol=1e-10)
    np.testing.assert_allclose(np.abs(vecs.T @ C @ vecs), np.diag(vals), atol=1e-9 * vals[0])
    rank = min(X.shape[0] - 1, X.shape[1])
    np.testing.assert_allclose(P.eigenvalues()[:rank], ref[:rank], rtol=1e-9)


def test_factor_route_never_forms_d_by_d():
    X = np.random.default_rng(1).standard_normal((20, 5000))
    P = Problem.from_data(X - X.mean(0))
    assert P.uses_factor and P._C is None
    P.eigenvalues()
    P.first_pc()
    D2 = P.deflate(P.first_pc())
    assert D2.uses_factor and D2._C is None


def test_deflation_is_projection(data):
    X, C = data
    P = Problem.from_data(X)
    w = np.random.default_rng(2).standard_normal(C.shape[0])
    w /= np.linalg.norm(w)
    Pw = np.eye(len(w)) - np.outer(w, w)
    np.testing.assert_allclose(P.deflate(w).dense(), Pw @ C @ Pw, atol=1e-10 * np.abs(C).max())


def test_subset_keeps_ids(data):
    X, C = data
    P = Problem.from_data(X, feature_ids=[f"g{i}" for i in range(C.shape[1])])
    sub = P.subset([4, 1])
    assert list(sub.feature_ids) == ["g4", "g1"]
    np.testing.assert_allclose(sub.dense(), C[np.ix_([4, 1], [4, 1])], rtol=1e-12)


def test_column_major_factor_is_kept_without_a_copy_and_gives_the_same_operator():
    """A Fortran-ordered data matrix (as datasets load it) is used in place; every product equals the
    row-major one's, and the top eigenpair equals numpy's eigh of the formed C."""
    rng = np.random.default_rng(3)
    F = np.asfortranarray(rng.standard_normal((6, 40)))
    P, Q = Problem(factor=F), Problem(factor=np.ascontiguousarray(F))
    assert np.shares_memory(P.factor(), F) and P.factor().flags.f_contiguous
    v, sparse_v = rng.standard_normal(40), np.where(np.arange(40) % 9 == 0, 1.0, 0.0)
    for x in (v, sparse_v):
        np.testing.assert_allclose(P.matvec(x), Q.matvec(x), rtol=1e-12)
        assert P.variance(x) == pytest.approx(Q.variance(x), rel=1e-12)
    np.testing.assert_allclose(P.diag, Q.diag, rtol=1e-12)
    np.testing.assert_allclose(P.submatrix([1, 5, 7]), Q.submatrix([1, 5, 7]), rtol=1e-12)
    vals, vecs = np.linalg.eigh(F.T @ F)
    assert P.eigenvalues()[0] == pytest.approx(vals[-1], rel=1e-10)
    assert abs(P.first_pc() @ vecs[:, -1]) == pytest.approx(1.0, rel=1e-10)
    strided = np.ascontiguousarray(rng.standard_normal((6, 80)))[:, ::2]  # neither order: copied
    assert Problem(factor=strided).factor().flags.c_contiguous


@pytest.mark.parametrize("sparse", [False, True])
def test_top_pairs_before_the_full_gram_spectrum_equal_numpys(sparse, monkeypatch):
    """eigh(d) on a wide factor not yet decomposed computes only the Gram's top d pairs: the same
    values and vectors (up to sign) as numpy's eigh of the formed C, and as after the full spectrum."""
    import scipy.sparse as sp

    from certpca import problem as problem_module

    monkeypatch.setattr(problem_module, "SMALL_FACTOR_BYTES", 0)  # sparse: the implicit factor

    rng = np.random.default_rng(9)
    X = rng.standard_normal((30, 200)) * rng.uniform(0.5, 2, 200)
    X[:, 3] = X[:, 4]  # a repeated column (C is rank-deficient anyway: 30 < 200)
    X -= X.mean(0)
    make = (lambda: Problem.from_sparse(sp.csr_matrix(X))) if sparse else (lambda: Problem.from_data(X))
    vals, vecs = np.linalg.eigh(X.T @ X / 29)
    vals, vecs = vals[::-1], vecs[:, ::-1]
    for d in (1, 3):
        P = make()
        got_vals, got_vecs = P.eigh(d)
        assert "_gram_spectrum" not in P.__dict__  # only the top pairs were computed
        np.testing.assert_allclose(got_vals, vals[:d], rtol=1e-10)
        np.testing.assert_allclose(np.abs(np.sum(got_vecs * vecs[:, :d], axis=0)), 1.0, rtol=1e-9)
        np.testing.assert_allclose(make().eigenvalues()[:d], got_vals, rtol=1e-12)
    P = make()
    assert abs(P.first_pc() @ vecs[:, 0]) == pytest.approx(1.0, rel=1e-10)


def test_a_large_factor_is_scaled_in_place_exactly_and_restored(monkeypatch):
    from certpca import problem as problem_module
    from certpca.certification import certify_vector

    rng = np.random.default_rng(1)
    X = rng.standard_normal((6, 40)) * 1e3
    X[0, 0] = 3e-305  # becomes subnormal when scaled down by 2^-11: the in-place route must not take it
    for tiny in (False, True):
        P = Problem.from_data(X if tiny else X[:, 1:])
        F0 = P.factor().copy()
        w = np.zeros(P.dim)
        w[[2, 5, 7]] = [0.6, 0.48, 0.64]
        copied = certify_vector(P, w, 3, bounds="trace,lambda1,gershgorin,dabe,pattern")
        monkeypatch.setattr(problem_module, "SHARED_SCALE_BYTES", 0)
        with P.scaled_by(-11) as S:
            assert np.shares_memory(S.factor(), P.factor()) != tiny
            np.testing.assert_array_equal(S.factor(), np.ldexp(F0, -11))
        np.testing.assert_array_equal(P.factor(), F0)  # bit for bit
        shared = certify_vector(P, w, 3, bounds="trace,lambda1,gershgorin,dabe,pattern")
        np.testing.assert_array_equal(P.factor(), F0)
        assert [b.value for b in shared.bounds] == [b.value for b in copied.bounds]
        assert shared.lower_bound == copied.lower_bound and shared.value == copied.value
        monkeypatch.undo()


def test_a_scaled_problem_shares_the_memo_of_its_exponent(monkeypatch):
    from certpca.certification import certify_vector, duals

    X = np.random.default_rng(2).standard_normal((8, 30)) * 1e5  # a certificate rescales it by 2^-e, e ≠ 0
    P = Problem.from_data(X - X.mean(axis=0))
    with P.scaled_by(-20) as a:
        a.memo["seen"] = 1
    with P.scaled_by(-20) as b, P.scaled_by(-19) as c:
        assert b.memo["seen"] == 1 and "seen" not in c.memo
    calls = []
    counted = duals._shrunk_gram
    monkeypatch.setattr(duals, "_shrunk_gram", lambda *a, **kw: calls.append(1) or counted(*a, **kw))
    w = np.zeros(P.dim)
    w[:4] = 0.5
    first = certify_vector(P, w, 4, bounds="dabe")
    n_first = len(calls)
    again = certify_vector(P, w, 4, bounds="dabe")  # the same ρ: nothing recomputed, the same bound
    assert n_first > 0 and len(calls) == n_first and again.upper_bound == first.upper_bound
