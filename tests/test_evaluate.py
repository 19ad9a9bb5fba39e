"""Gene-selection evaluation: Jaccard by pair enumeration, k-means on planted
clusters, CE against SVDs recomputed feature by feature, and the Sigg & Buhmann
(2008, §5.3) leukemia experiment on the real Armstrong data."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

import certpca
from certpca import evaluate as ev
from certpca.data import Dataset
from certpca.errors import InputError


# ------------------------------------------------------------- pair_jaccard
def jaccard_by_pairs(a, b) -> float:
    """n11 / (n11 + n10 + n01) by enumerating every pair of samples."""
    n11 = n10 = n01 = 0
    for i, j in itertools.combinations(range(len(a)), 2):
        same_a, same_b = a[i] == a[j], b[i] == b[j]
        n11 += same_a and same_b
        n10 += same_a and not same_b
        n01 += same_b and not same_a
    return n11 / (n11 + n10 + n01)


def test_pair_jaccard_by_hand():
    a = ["x", "x", "x", "y", "y"]
    b = [0, 0, 1, 1, 1]
    # together in a: (0,1) (0,2) (1,2) (3,4); in b: (0,1) (2,3) (2,4) (3,4)
    # n11 = {(0,1), (3,4)} = 2, n10 = 2, n01 = 2
    assert ev.pair_jaccard(a, b) == pytest.approx(2 / 6)
    assert jaccard_by_pairs(a, b) == pytest.approx(2 / 6)


@pytest.mark.parametrize("seed", range(20))
def test_pair_jaccard_matches_pair_enumeration(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 30))
    a = rng.integers(0, rng.integers(1, 5), size=n)
    b = rng.integers(0, rng.integers(1, 6), size=n)
    if not any(a[i] == a[j] or b[i] == b[j] for i, j in itertools.combinations(range(n), 2)):
        pytest.skip("no pair together in either partition")
    assert ev.pair_jaccard(a, b) == pytest.approx(jaccard_by_pairs(a, b), abs=1e-15)


def test_pair_jaccard_identical_permuted_and_symmetric():
    rng = np.random.default_rng(1)
    a = rng.integers(0, 4, size=50)
    assert ev.pair_jaccard(a, a) == 1.0
    renamed = np.array(["d", "a", "c", "b"])[a]  # a relabelling of the same partition
    assert ev.pair_jaccard(a, renamed) == 1.0
    b = rng.integers(0, 3, size=50)
    perm = rng.permutation(3)
    assert ev.pair_jaccard(a, perm[b]) == ev.pair_jaccard(a, b) == ev.pair_jaccard(b, a)
    assert ev.pair_jaccard(list("abc"), [1, 2, 3]) == 1.0  # all singletons in both


def test_pair_jaccard_against_sklearn_pair_confusion_matrix():
    cluster = pytest.importorskip("sklearn.metrics.cluster")
    rng = np.random.default_rng(2)
    for _ in range(50):
        n = int(rng.integers(5, 400))
        a = rng.integers(0, rng.integers(2, 8), size=n)
        b = rng.integers(0, rng.integers(2, 8), size=n)
        # sklearn counts ordered pairs: C[1,1] = 2 n11, C[1,0] = 2 n10 (together in a only), ...
        C = cluster.pair_confusion_matrix(a, b)
        assert ev.pair_jaccard(a, b) == pytest.approx(C[1, 1] / (C[1, 1] + C[1, 0] + C[0, 1]), rel=1e-14)


def test_pair_jaccard_rejects_bad_input():
    with pytest.raises(InputError, match="samples"):
        ev.pair_jaccard([0, 1, 1], [0, 1])
    with pytest.raises(InputError, match="missing"):
        ev.pair_jaccard([0, None, 1], [0, 1, 1])


# ------------------------------------------------------------------ k-means
def planted(n_per=(15, 20, 25), d=10, spread=20.0, seed=0):
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((len(n_per), d)) * spread
    X = np.vstack([c + rng.standard_normal((m, d)) for c, m in zip(centres, n_per)])
    y = np.repeat(["A", "B", "C"][: len(n_per)], n_per)
    return X, y


def test_kmeans_jaccard_recovers_planted_clusters():
    X, y = planted()
    scores = ev.kmeans_jaccard(X, y, n_init=100, seed=0)
    assert scores.shape == (100,)
    assert np.all((scores >= 0) & (scores <= 1))
    # random data points as centroids: a run can start with two centroids in one
    # cluster and stop in a local optimum, so "most", not all
    assert np.mean(scores == 1.0) >= 0.6
    assert np.median(scores) == 1.0


def test_kmeans_jaccard_deterministic_and_seed_dependent():
    X, y = planted(spread=1.5, seed=3)  # overlapping clusters: runs differ
    a = ev.kmeans_jaccard(X, y, n_init=30, seed=7)
    b = ev.kmeans_jaccard(X, y, n_init=30, seed=7)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, ev.kmeans_jaccard(X, y, n_init=30, seed=8))
    # run r depends on (seed, r) only, not on n_init
    np.testing.assert_array_equal(ev.kmeans_jaccard(X, y, n_init=10, seed=7), a[:10])


def test_kmeans_converges_to_a_lloyd_fixed_point():
    X, y = planted(spread=1.5, seed=4)
    labels, centroids, inertia, _ = ev.kmeans(X, 3, rng=np.random.default_rng(0))
    np.testing.assert_allclose(centroids, [X[labels == j].mean(axis=0) for j in range(3)], atol=1e-12)
    d2 = ((X[:, None, :] - centroids[None]) ** 2).sum(axis=2)
    np.testing.assert_array_equal(labels, d2.argmin(axis=1))
    assert inertia == pytest.approx(d2.min(axis=1).sum(), rel=1e-10)


def test_kmeans_fills_empty_clusters():
    # 4 distinct points, 3 duplicates of the first: starting from three copies
    # of one point, two clusters are empty after the first assignment
    X = np.array([[0.0, 0], [0, 0], [0, 0], [10, 0], [0, 10], [10, 10]])

    class Fixed:
        def choice(self, n, size, replace):
            return np.array([0, 1, 2])

    labels, *_ = ev.kmeans(X, 3, rng=Fixed())
    assert sorted(np.bincount(labels, minlength=3)) != [0, 0, 6]
    assert (np.bincount(labels, minlength=3) > 0).all()


def lloyd_reference(X, k, rng, max_iter=300):
    """Plain numpy Lloyd with kmeans' documented rules (ties and empty clusters), step by step."""
    X = X - X.mean(axis=0)
    n = X.shape[0]
    centroids = X[rng.choice(n, size=k, replace=False)].copy()
    labels = None
    for n_iter in range(1, max_iter + 1):  # noqa: B007
        d2 = (X * X).sum(1)[:, None] - 2.0 * X @ centroids.T + (centroids * centroids).sum(1)[None, :]
        new = d2.argmin(axis=1)
        counts = np.bincount(new, minlength=k)
        own = d2[np.arange(n), new]
        for j in np.flatnonzero(counts == 0):
            i = int(np.argmax(np.where(counts[new] > 1, own, -np.inf)))
            counts[new[i]] -= 1
            new[i], counts[j], own[i] = j, 1, -np.inf
        if labels is not None and np.array_equal(new, labels):
            break
        labels = new
        centroids = np.array([X[labels == j].mean(axis=0) for j in range(k)])
    return labels, n_iter


@pytest.mark.parametrize("d", [1, 2, 7, 30])
def test_kmeans_matches_a_numpy_lloyd_run_for_run(d):
    X, y = planted(n_per=(30, 25, 5), d=d, spread=1.0, seed=9)  # overlapping: many iterations
    X = np.vstack([X, np.repeat(X[:1], 4, axis=0)])  # duplicates: runs that start with empty clusters
    if d == 30:  # columns of a wider matrix, as the gene evaluation's subsets are (Fortran order)
        X = np.asfortranarray(X)
    for child in np.random.SeedSequence(3).spawn(20):
        for k in (3, 6, 10):
            labels, _, _, n_iter = ev.kmeans(X, k, rng=np.random.default_rng(child))
            ref, ref_iter = lloyd_reference(X, k, np.random.default_rng(child))
            np.testing.assert_array_equal(labels, ref)
            assert n_iter == ref_iter


def test_squared_norms_sum_every_entry_once():
    """The centroids' squared norms of the compiled loop (summed in einsum's order) for every width around
    its steps of eight and two: each entry counted once, up to rounding."""
    from certpca._lloyd import squared_norms

    rng = np.random.default_rng(6)
    for d in range(1, 41):
        C = rng.standard_normal((5, d))
        out = np.empty(5)
        squared_norms(C, out)
        np.testing.assert_allclose(out, (C * C).sum(axis=1), rtol=1e-14)


def test_load_kmeans_loads_the_step_the_gene_evaluation_calls():
    """What :func:`ev.load_kmeans` loads before the report forks its gene-set test is the compiled step that
    k-means × Jaccard and the gene-set test then call: they add no signature of their own."""
    from certpca._lloyd import lloyd

    ev.load_kmeans()
    loaded = set(lloyd.signatures)
    assert loaded
    rng = np.random.default_rng(3)
    X, labels = rng.standard_normal((40, 6)), np.arange(40) % 3
    for Y in (X, np.asfortranarray(X)):  # the gene evaluation's columns of a wider matrix are in Fortran order
        ev.kmeans_jaccard(Y, labels, n_init=2)
        ev.best_partition_jaccard(Y, labels, n_init=2)
    assert set(lloyd.signatures) == loaded


def test_isometric_reduction_keeps_the_clustering():
    rng = np.random.default_rng(5)
    X, y = planted(n_per=(8, 8, 8), d=3, spread=1.0, seed=5)
    wide = X @ rng.standard_normal((3, 500)) + rng.standard_normal((24, 500)) * 0.1  # D ≫ N
    Y = ev._isometric(wide)
    assert Y.shape == (24, 24)
    Wc = wide - wide.mean(axis=0)
    dist = lambda Z: ((Z[:, None] - Z[None]) ** 2).sum(-1)  # noqa: E731
    np.testing.assert_allclose(dist(Y), dist(Wc), rtol=1e-9, atol=1e-9 * dist(Wc).max())
    for child in np.random.SeedSequence(0).spawn(10):
        a, *_ = ev.kmeans(wide, 3, rng=np.random.default_rng(child))
        b, *_ = ev.kmeans(Y, 3, rng=np.random.default_rng(child))
        np.testing.assert_array_equal(a, b)


# --------------------------------------------------------------- CE ranking
def entropy_by_svd(X):
    s = np.linalg.svd(X, compute_uv=False)
    v = s**2 / np.sum(s**2)
    v = v[v > 0]
    return -np.sum(v * np.log(v)) / np.log(min(X.shape))


@pytest.mark.parametrize(
    "shape, centre",
    # Gram downdate (N ≤ D) and deletion (N > D); centred: a zero eigenvalue, deflated in every downdate
    [((12, 40), False), ((30, 8), False), ((25, 60), True), ((40, 9), True)],
)
def test_ce_equals_svd_recomputed_feature_by_feature(shape, centre):
    rng = np.random.default_rng(6)
    X = rng.standard_normal(shape) * rng.uniform(0.2, 3.0, size=shape[1])
    if centre:
        X -= X.mean(axis=0)
    n_values = min(shape)
    full = entropy_by_svd(X)
    direct = []
    for i in range(shape[1]):
        s = np.linalg.svd(np.delete(X, i, axis=1), compute_uv=False)
        v = s**2 / np.sum(s**2)
        v = v[v > 0]
        direct.append(full + np.sum(v * np.log(v)) / np.log(n_values))  # same log N normaliser
    np.testing.assert_allclose(ev.ce_scores(X, chunk=7), direct, atol=1e-12)
    assert ev.svd_entropy(X) == pytest.approx(full, abs=1e-14)
    np.testing.assert_array_equal(ev.ce_ranking(X), np.argsort(-np.array(direct), kind="stable"))


def test_ce_ranks_a_planted_block_first():
    # Varshavsky et al.: features carrying cluster structure spread the
    # spectrum (raise the SVD-entropy) above a background whose spectrum is
    # dominated by one direction
    rng = np.random.default_rng(7)
    n, d, block = 60, 200, 10
    groups = np.repeat(np.arange(4), n // 4)
    X = np.outer(rng.standard_normal(n), rng.uniform(2.0, 3.0, size=d))  # rank one background
    X += 0.05 * rng.standard_normal((n, d))
    planted_cols = rng.choice(d, size=block, replace=False)
    X[:, planted_cols] = rng.standard_normal((4, block))[groups] * 3.0 + 0.05 * rng.standard_normal((n, block))
    order = ev.ce_ranking(X)
    assert set(order[:block]) == set(planted_cols)


def test_ce_is_scale_invariant_and_rejects_bad_input():
    X = np.random.default_rng(8).standard_normal((10, 25))
    np.testing.assert_allclose(ev.ce_scores(X * 1e6), ev.ce_scores(X), atol=1e-12)
    with pytest.raises(InputError):
        ev.ce_scores(np.zeros((5, 5)))
    with pytest.raises(InputError):
        ev.ce_scores(np.ones((5, 1)))


# ---------------------------------------------------------------- selection
def toy_dataset():
    X, y = planted(n_per=(10, 10, 10), d=4, spread=10.0, seed=9)
    noise = np.random.default_rng(9).standard_normal((30, 16))
    M = np.hstack([X, noise])
    M = M - M.mean(axis=0)
    return Dataset(
        "toy",
        M,
        pd.Index([f"g{i}" for i in range(20)]),
        pd.Index([f"s{i}" for i in range(30)]),
        pd.Series(y, index=[f"s{i}" for i in range(30)]),
    )


def test_gene_selection_frame():
    ds = toy_dataset()
    first_four = lambda dataset, size: list(dataset.feature_ids[:size])  # noqa: E731
    df = ev.gene_selection(ds, [2, 4], selectors={"first": first_four, "ce": ev.ce_selector()}, n_init=20)
    assert list(df.selector) == ["full data", "first", "first", "ce", "ce"]
    assert list(df["size"]) == [20, 2, 4, 2, 4]
    assert all(len(s) == 20 for s in df.scores)
    row = df.iloc[2]
    np.testing.assert_array_equal(row.scores, ev.kmeans_jaccard(ds.matrix[:, :4], ds.labels, n_init=20))
    assert row["mean"] == pytest.approx(row.scores.mean())
    assert row["sd"] == pytest.approx(row.scores.std(ddof=1))
    assert df.attrs["n_init"] == 20 and df.attrs["n_clusters"] == 3
    with pytest.raises(InputError, match="unknown"):
        ev.gene_selection(ds, [2], selectors={"bad": lambda d, s: ["nope"]}, n_init=2)
    with pytest.raises(InputError, match="outside"):
        ev.gene_selection(ds, [0], selectors={}, n_init=2)


# ------------------------------------------- Sigg & Buhmann §5.3, real data
@pytest.fixture(scope="module")
def leukemia_selection():
    ds = certpca.datasets.load("leukemia")  # centred raw values, variance not standardised
    return ev.gene_selection(
        ds,
        [70],
        n_init=100,
        seed=0,
        selectors={
            "CE simple ranking": ev.ce_selector(),
            "nonneg sparse PC": ev.sparse_pc_selector(nonneg=True),
        },
    )


def test_leukemia_gene_selection(leukemia_selection):
    df = leukemia_selection
    assert list(df.selector) == ["full data", "CE simple ranking", "nonneg sparse PC"]
    assert list(df.n_features) == [12582, 70, 70]
    for r in df.itertuples():
        assert r.scores.shape == (100,)
        assert np.all(np.isfinite(r.scores)) and np.all((r.scores >= 0) & (r.scores <= 1))
        assert 0 <= r.mean <= 1 and np.isfinite(r.sd)
        print(
            f"\n{r.selector:>18} ({r.n_features:5d} genes): Jaccard {r.mean:.3f} ± {r.sd:.3f} "
            f"[{r.min:.3f}, {r.max:.3f}] over {r.scores.size} inits; selection {r.seconds:.1f} s"
        )
    # Sigg & Buhmann report NSPC-70 significantly better than the full data; the report asks instead
    # whether the 70 genes beat random gene sets (gene_set_test, tested below)


# ------------------------------------------------------------ gene_set_test
def classes_in_some_genes(seed: int, n: int = 60, d: int = 200, signal: int = 10) -> Dataset:
    """Three classes of n/3 samples that differ (by 2 sd) in the first ``signal`` genes only."""
    rng = np.random.default_rng(seed)
    labels = np.repeat(["a", "b", "c"], n // 3)
    X = rng.standard_normal((n, d))
    X[:, :signal] += 2.0 * pd.factorize(labels)[0][:, None]
    ids = pd.Index([f"s{i}" for i in range(n)])
    return Dataset("planted", X, pd.Index([f"g{j}" for j in range(d)]), ids, pd.Series(labels, index=ids))


def test_gene_set_test_finds_the_planted_genes_and_scores_the_references():
    ds = classes_in_some_genes(0)
    result = ev.gene_set_test(ds, [f"g{j}" for j in range(10)], n_sets=49, seed=1)
    # no random 10-gene set from 200 (most hold no planted gene) separates the classes as well
    assert result["statistic"] > 0.9 and result["p_value"] == 1 / 50
    assert result["null"].shape == (49,) and result["null_mean"] < 0.5
    assert 0 < result["all_features"] < 1 and 0 < result["top_variance"] <= 1
    # the statistic is the Jaccard of the best-inertia k-means partition on those columns
    direct = ev.best_partition_jaccard(ds.columns(np.arange(10)), ds.labels.to_numpy(), n_init=10, seed=1)
    assert result["statistic"] == direct


def test_gene_set_test_rejects_at_its_level_under_the_null():
    """H0 true by construction (the 'selected' genes are a uniformly random set): P(p ≤ 0.05) = 1/20
    for n_sets = 19 (ties only make p larger).  Over 40 independent data sets the number of rejections
    is Binomial(40, ≤ 0.05); 7 or more has probability 0.0003 under it."""
    rejections = 0
    for seed in range(40):
        ds = classes_in_some_genes(100 + seed, n=30, d=60, signal=6)
        chosen = np.random.default_rng(seed).choice(60, size=6, replace=False)
        p = ev.gene_set_test(ds, [f"g{j}" for j in chosen], n_sets=19, n_init=3, seed=seed)["p_value"]
        assert 1 / 20 <= p <= 1
        rejections += p <= 0.05
    assert rejections <= 6


def test_gene_set_test_names_bad_input():
    ds = classes_in_some_genes(0)
    with pytest.raises(InputError, match="features must be ids"):
        ev.gene_set_test(ds, ["nope"])
    with pytest.raises(InputError, match="needs labelled samples"):
        ev.gene_set_test(Dataset("x", ds.matrix, ds.feature_ids, ds.sample_ids, None), ["g0"])
