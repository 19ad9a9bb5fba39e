"""The secular-equation eigenvalues (certpca._secular) against LAPACK's eigvalsh."""

import numpy as np
import pytest

from certpca._secular import modified_eigenvalues


def spectra(A, z, j):
    """(λ, weights of the downdate A − zzᵀ, weights of deleting row and column j) from one eigh."""
    lam, U = np.linalg.eigh(A)
    return lam, (U.T @ z) ** 2, U[j] ** 2


def cases():
    rng = np.random.default_rng(11)
    for n in (1, 2, 3, 9, 40):
        B = rng.standard_normal((n, n))
        yield "full rank", B @ B.T, rng.standard_normal(n)
        low = rng.standard_normal((n, max(1, n // 3)))
        yield "rank deficient (repeated zero eigenvalues)", low @ low.T, rng.standard_normal(n)
        Q = np.linalg.qr(rng.standard_normal((n, n)))[0]
        lam = np.repeat(rng.uniform(1, 5, size=(n + 2) // 3), 3)[:n]  # triple eigenvalues
        z = rng.standard_normal(n)
        z[rng.random(n) < 0.4] = 0.0
        yield "repeated eigenvalues, sparse z", (Q * lam) @ Q.T, z
        yield "z an eigenvector", (Q * rng.uniform(1, 2, n)) @ Q.T, 0.5 * Q[:, 0]
        yield "clustered poles (1e-13 apart)", (Q * (1.0 + 1e-13 * np.arange(n))) @ Q.T, rng.standard_normal(n)


@pytest.mark.parametrize("name, A, z", list(cases()))
def test_downdate_and_deletion_match_eigvalsh(name, A, z):
    n = A.shape[0]
    j = n // 2
    lam, w_down, w_del = spectra(A, z, j)
    scale = max(1.0, np.abs(lam).max(), z @ z)
    out = np.empty((2, n))
    modified_eigenvalues(lam, np.vstack([w_down, w_down]), 1.0, out)
    np.testing.assert_array_equal(out[0], out[1])  # rows are independent
    truth = np.linalg.eigvalsh(A - np.outer(z, z))
    np.testing.assert_allclose(np.sort(out[0]), truth, rtol=0, atol=64 * n * np.finfo(float).eps * scale)
    if n > 1:
        keep = np.arange(n) != j
        modified_eigenvalues(lam, w_del[None, :], 0.0, out[:1])
        assert out[0, -1] == 0.0  # the deletion has one eigenvalue fewer
        truth = np.linalg.eigvalsh(A[np.ix_(keep, keep)])
        np.testing.assert_allclose(np.sort(out[0, :-1]), truth, rtol=0, atol=64 * n * np.finfo(float).eps * scale)


def test_all_zero_weights_leave_the_spectrum():
    lam = np.array([0.0, 1.0, 2.5, 7.0])
    out = np.empty((1, 4))
    modified_eigenvalues(lam, np.zeros((1, 4)), 1.0, out)
    np.testing.assert_array_equal(np.sort(out[0]), lam)
