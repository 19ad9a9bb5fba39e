"""The bundled data sets against the facts stated in data/README.md."""

import time
from functools import cache

import numpy as np
import pytest

from certpca import datasets
from certpca.data import prepare
from certpca.errors import InputError

# name: (shape, class counts) as data/README.md states them.
README = {
    "leukemia": ((72, 12582), {"ALL": 24, "MLL": 20, "AML": 28}),
    "golub": ((72, 7129), {"ALL": 47, "AML": 25}),
    "khan": ((63, 2308), {"EWS": 23, "RMS": 20, "NB": 12, "BL": 8}),
    "alon": ((62, 2000), {"t": 40, "n": 22}),
    "pbmc": ((700, 765), None),  # 10 cell types; counts checked in tests/test_convert.py against the h5ad
    "lrs": ((531, 93), None),
    "cbcl": ((2429, 361), None),
    "pitprops": ((13, 13), None),
}


@cache
def raw(name: str):
    """Each file is read once per test session; datasets are immutable."""
    return datasets.raw(name)


def load(name: str, **options):
    return prepare(raw(name), **options)


def pc1_share(ds) -> float:
    problem = ds.problem()
    return problem.eigenvalues()[0] / problem.trace


def test_names_cover_the_readme():
    assert set(datasets.names()) == set(README)
    assert {"leukemia_armstrong", "srbct_khan", "colon_alon", "cbcl_faces"} <= set(datasets.names(True))


@pytest.mark.parametrize("name", sorted(README))
def test_shape_and_class_counts(name):
    shape, counts = README[name]
    ds = load(name)
    assert ds.shape == shape
    assert ds.name == name and ds.source == f"bundled:{name}"
    assert np.isfinite(ds.matrix.data if ds.is_sparse else ds.matrix).all()  # pbmc stays sparse
    assert ds.feature_ids.is_unique
    if counts is not None:
        assert ds.labels.value_counts().to_dict() == counts
        assert list(ds.labels.index) == list(ds.sample_ids)
    info = datasets.info(name)
    assert info["shape"] == shape and info["class_counts"] == counts
    assert info["kind"] == ("covariance" if ds.is_covariance else "samples")


def test_leukemia_sample_ids_and_labels_line_up():
    ds = raw("leukemia")
    assert ds.sample_ids[0] == "ALL_01" and ds.sample_ids[-1] == "AML_28"
    assert (ds.labels == ds.sample_ids.str[:3]).all()
    assert ds.feature_ids[-1] == "109_at"
    assert ds.matrix.min() == -15584 and ds.matrix.max() == 58380


def test_leukemia_reads_fast():
    """72 × 12582 from a 1.7 MB gzip: ~0.35 s here; best of two guards against a busy machine."""
    timings = []
    for _ in range(2):
        start = time.perf_counter()
        datasets.raw("leukemia")
        timings.append(time.perf_counter() - start)
    assert min(timings) < 1.0


@pytest.mark.parametrize(
    "name, cov, corr",
    [
        ("leukemia", 24.2, 17.4),
        ("golub", 17.4, 14.9),
        ("khan", 15.4, 12.9),
        ("alon", 36.1, 45.0),
        ("lrs", 51.1, 59.9),
    ],
)
def test_pc1_shares(name, cov, corr):
    assert 100 * pc1_share(load(name)) == pytest.approx(cov, abs=0.05)
    assert 100 * pc1_share(load(name, scale=True)) == pytest.approx(corr, abs=0.05)


def test_leukemia_log2_floor_share():
    with pytest.warns(UserWarning, match="constant features"):
        ds = load("leukemia", log2=20)
    assert 100 * pc1_share(ds) == pytest.approx(17.1, abs=0.05)


def test_lrs_features_and_labels():
    ds = raw("lrs")
    assert ds.feature_ids[0] == "blue_7.8636um" and ds.feature_ids[-1] == "red_22.9216um"
    # "normalizing each spectrum to a mean value of 5000" (lrs.names)
    np.testing.assert_allclose(ds.matrix.mean(axis=1), 5000, atol=0.003)
    assert ds.labels.nunique() == 48
    tens = ds.labels.astype(int) // 10
    assert [int((tens == d).sum()) for d in range(10)] == [12, 90, 273, 38, 96, 1, 2, 6, 7, 6]


def test_cbcl_pixels():
    ds = raw("cbcl")
    assert ds.image_shape == (19, 19)
    assert ds.feature_ids[0] == "r01c01" and ds.feature_ids[19] == "r02c01" and ds.feature_ids[-1] == "r19c19"
    assert 0 <= ds.matrix.min() and ds.matrix.max() <= 1
    assert 255 * ds.matrix.mean() == pytest.approx(127.1, abs=0.05)
    assert 100 * pc1_share(load("cbcl")) == pytest.approx(53.4, abs=0.05)


def test_pitprops_is_the_correlation_matrix():
    ds = load("pitprops")
    assert ds.is_covariance and ds.labels is None
    assert 100 * pc1_share(ds) == pytest.approx(32.45, abs=0.005)
    assert ds.problem().eigenvalues()[-1] == pytest.approx(0.0387, abs=1e-4)


def test_checksums_verify():
    assert datasets.verify() == []


def test_table_lists_every_set():
    frame = datasets.table()
    assert list(frame["name"]) == datasets.names()
    row = frame.set_index("name").loc["leukemia"]
    assert row["shape"] == "72 × 12582" and row["labels"] == "ALL 24 / MLL 20 / AML 28"
    assert "Armstrong" in row["source"]


def test_aliases_and_case():
    assert datasets.info("srbct_khan")["name"] == "khan"
    assert datasets.info("Leukemia")["name"] == "leukemia"


def test_unknown_name():
    with pytest.raises(InputError, match="no bundled data set named 'iris'.*leukemia"):
        datasets.info("iris")


def test_data_dir_is_the_checkout_folder():
    folder = datasets.data_dir()
    assert (folder / "README.md").is_file() and (folder / "SHA256SUMS").is_file()
