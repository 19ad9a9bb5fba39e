"""The loadings reader (data.read_loadings), the one suffix dispatch (data.data_format) and a label
column read with the data (data.read_labelled)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import certpca
from certpca.data import data_format, read, read_loadings
from certpca.errors import InputError

IDS = ["a", "b", "c", "d"]


def write(tmp_path, text, name="L.csv"):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_a_column_by_number_or_name_aligned_to_the_features(tmp_path):
    path = write(tmp_path, "feature,PC1,PC2,symbol\nc,0.6,0.1,GC\na,-0.8,0.2,GA\n")
    w, name = read_loadings(path, IDS)
    assert name == "PC1" and w.tolist() == [-0.8, 0.0, 0.6, 0.0]  # absent ids are zeros; symbol is dropped
    w, name = read_loadings(path, IDS, "PC2")
    assert name == "PC2" and w.tolist() == [0.2, 0.0, 0.1, 0.0]
    assert read_loadings(path, IDS, 2)[1] == "PC2"


def test_a_column_named_by_digits_is_taken_by_name(tmp_path):
    path = write(tmp_path, "feature,7,1\na,0.5,0.25\n")
    assert read_loadings(path, IDS, "1") == (pytest.approx(np.array([0.25, 0, 0, 0])), "1")


@pytest.mark.parametrize(
    "text, component, message",
    [
        (None, 1, "not found; give the CSV that 'certpca fit --out' writes"),
        ("feature\na\nb\n", 1, "has no loading columns"),
        ("feature,PC1\n", 1, "has no loading columns"),
        ("feature,PC1\na,0.5\n", 3, "component=3 is out of range"),
        ("feature,PC1\na,0.5\n", "PC9", "component='PC9' is not a column of"),
        ("feature,PC1\na,0.5\nb,x\n", 1, "loading of feature 'b' in column 'PC1'"),
        ("feature,PC1\na,0.5\na,0.5\n", 1, "feature id 'a' appears twice"),
        ("feature,PC1\na,0.5\nz,0.5\n", 1, "1 feature id(s) of"),
        ('feature,PC1\n"a,0.5\n', 1, "cannot read loadings file"),
    ],
)
def test_each_check_names_the_problem(tmp_path, text, component, message):
    path = tmp_path / "missing.csv" if text is None else write(tmp_path, text)
    with pytest.raises(InputError) as err:
        read_loadings(path, IDS, component)
    assert message in str(err.value) and "--" not in str(err.value).replace("fit --out", "")


@pytest.mark.parametrize(
    "name, fmt",
    [
        ("x.csv", "text"),
        ("x.tsv.gz", "text"),
        ("x.H5AD", "h5ad"),
        ("x.zarr/", "zarr"),
        ("x.parquet", "parquet"),
        ("x.npz", "npz"),
        ("leukemia", "text"),
    ],
)
def test_data_format_by_name(name, fmt):
    assert data_format(name) == fmt


def test_a_folder_is_parquet_unless_a_zarr_store(tmp_path):
    assert data_format(tmp_path) == "parquet"
    (tmp_path / "s.zarr").mkdir()
    assert data_format(tmp_path / "s.zarr") == "zarr"


def test_a_label_column_is_read_with_the_data_in_one_pass(tmp_path):
    """The labels come from the column, the rest is the data exactly as read() reads it without the column."""
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(6, 3)), index=[f"s{i}" for i in range(6)], columns=["g1", "g2", "g3"])
    X.to_csv(tmp_path / "plain.csv")
    with_column = X.copy()
    with_column.insert(1, "class", ["a", "b"] * 3)
    with_column.to_csv(tmp_path / "labelled.csv")
    ds = certpca.load(tmp_path / "labelled.csv", labels="class")
    plain = read(tmp_path / "plain.csv")
    np.testing.assert_array_equal(ds.matrix, certpca.load(tmp_path / "plain.csv").matrix)
    assert list(ds.feature_ids) == list(plain.feature_ids) and list(ds.labels) == ["a", "b"] * 3
    assert ds.source == str(tmp_path / "labelled.csv") and ds.name == "labelled"  # no temporary file
    with pytest.raises(InputError, match="no such column in labelled.csv"):
        certpca.load(tmp_path / "labelled.csv", labels="kind")
    with pytest.raises(InputError, match="a label column works only for CSV/TSV"):
        certpca.load(tmp_path / "labelled.csv", labels="class", transpose=True)


@pytest.mark.parametrize(
    "text, options, message",
    [
        ("feature,PC1\na,inf\n", {}, "loading of feature 'a' in column 'PC1' of"),
        ("feature,PC1\na,0\nb,0\n", {}, "column 'PC1' of"),
        ("feature,PC1\na,0.5\nb,0.5\nc,0.5\n", {"k": 2}, "has 3 nonzeros but k = 2; raise k to 3"),
        ("feature,PC1\na,0.5\nb,-0.5\n", {"nonneg": True}, "1 negative loadings; drop nonneg"),
    ],
)
def test_a_column_that_cannot_be_certified_is_refused_with_the_file_named(tmp_path, text, options, message):
    path = write(tmp_path, text)
    with pytest.raises(InputError) as err:
        read_loadings(path, IDS, **options)
    assert message in str(err.value) and path.name in str(err.value)


def test_the_certifiable_checks_pass_a_column_that_meets_them(tmp_path):
    w, _ = read_loadings(write(tmp_path, "feature,PC1\na,0.5\nb,0.25\n"), IDS, k=2, nonneg=True)
    assert w.tolist() == [0.5, 0.25, 0.0, 0.0]
