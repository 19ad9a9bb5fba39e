"""Reading, validation and preprocessing (certpca.data).

Every rejected input is checked for the words of its one-line message; the
accepted ones are checked against values computed here by hand.
"""

import gzip
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from certpca.data import Dataset, prepare, read
from certpca.errors import InputError
from certpca.io import load

PITPROPS = Path(__file__).resolve().parent.parent / "data" / "pitprops.csv"
# Jeffers' eigenvalues as listed in data/README.md.
PITPROPS_EIGENVALUES = [
    4.2186,
    2.3781,
    1.8782,
    1.1094,
    0.9100,
    0.8154,
    0.5763,
    0.4396,
    0.3527,
    0.1908,
    0.0506,
    0.0415,
    0.0387,
]

X = np.array([[1.0, 2.0, 3.0], [4.0, 6.0, 5.0], [7.0, 1.0, 9.0], [2.0, 8.0, 4.0]])
SAMPLES = ["s1", "s2", "s3", "s4"]
FEATURES = ["g1", "g2", "g3"]


def write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def table_text(values=X, samples=SAMPLES, features=FEATURES, sep=",") -> str:
    lines = [sep.join(["sample", *features])]
    lines += [sep.join([s, *map(str, row)]) for s, row in zip(samples, values)]
    return "\n".join(lines) + "\n"


def message(excinfo) -> str:
    msg = str(excinfo.value)
    assert "\n" not in msg
    return msg


# ------------------------------------------------------------ good reads
def test_csv_round_trip(tmp_path):
    ds = read(write(tmp_path / "x.csv", table_text()))
    np.testing.assert_array_equal(ds.matrix, X)
    assert list(ds.feature_ids) == FEATURES and list(ds.sample_ids) == SAMPLES
    assert ds.name == "x" and ds.shape == (4, 3) and ds.n_samples == 4 and ds.n_features == 3
    assert ds.labels is None and not ds.is_covariance and ds.matrix.dtype == np.float64


def test_matrix_is_read_only(tmp_path):
    ds = read(write(tmp_path / "x.csv", table_text()))
    with pytest.raises(ValueError):
        ds.matrix[0, 0] = 5


def test_tsv_and_gzip(tmp_path):
    tsv = read(write(tmp_path / "x.tsv", table_text(sep="\t")))
    gz = tmp_path / "x.csv.gz"
    with gzip.open(gz, "wt") as fh:
        fh.write(table_text())
    zipped = read(gz)
    np.testing.assert_array_equal(tsv.matrix, X)
    np.testing.assert_array_equal(zipped.matrix, X)
    assert zipped.name == "x"


@pytest.mark.parametrize("sep", ["\t", ";", " "])
def test_txt_delimiter_is_sniffed(tmp_path, sep):
    ds = read(write(tmp_path / "x.txt", table_text(sep=sep)))
    np.testing.assert_array_equal(ds.matrix, X)
    assert list(ds.feature_ids) == FEATURES


def test_header_without_id_column_name(tmp_path):
    # R's write.csv leaves the corner empty or omits it: both mean "first column is ids".
    text = ",".join(FEATURES) + "\n" + table_text().split("\n", 1)[1]
    ds = read(write(tmp_path / "x.csv", text))
    assert list(ds.feature_ids) == FEATURES and list(ds.sample_ids) == SAMPLES


def test_quoted_names_with_commas(tmp_path):
    text = 'sample,"gene, a",b\ns1,1,2\ns2,3,5\n'
    assert list(read(write(tmp_path / "x.csv", text)).feature_ids) == ["gene, a", "b"]


def test_transpose(tmp_path):
    ds = read(write(tmp_path / "x.csv", table_text(X.T, FEATURES, SAMPLES)), transpose=True)
    np.testing.assert_array_equal(ds.matrix, X)
    assert list(ds.sample_ids) == SAMPLES and list(ds.feature_ids) == FEATURES
    assert ds.preprocessing["transposed"] is True


def test_parquet_round_trip(tmp_path):
    pytest.importorskip("pyarrow")
    frame = pd.DataFrame(X, index=pd.Index(SAMPLES, name="sample"), columns=FEATURES)
    frame.to_parquet(tmp_path / "indexed.parquet")
    frame.reset_index().to_parquet(tmp_path / "column.parquet", index=False)
    for name in ("indexed", "column"):
        ds = read(tmp_path / f"{name}.parquet")
        np.testing.assert_array_equal(ds.matrix, X)
        assert list(ds.sample_ids) == SAMPLES and list(ds.feature_ids) == FEATURES


def test_parquet_of_numbers_reads_as_pandas_does_without_pandas(tmp_path, monkeypatch):
    pytest.importorskip("pyarrow")
    from certpca.data import columnar

    rng = np.random.default_rng(4)
    frame = pd.DataFrame(rng.standard_normal((5, 300)), columns=[f"g{j}" for j in range(300)])
    frame["n"] = pd.array([1, None, 3, 4, 5], dtype="Int64")  # nullable integers: the null is missing
    frame.index = [f"s{i}" for i in range(5)]  # unnamed: stored as __index_level_0__
    csv, *parquets = _csv_and_parquet(tmp_path, frame)
    ref = read(csv, na="mean")
    monkeypatch.setattr(pd, "read_parquet", None)  # the numbers-only path never calls pandas
    monkeypatch.setattr(columnar, "PARQUET_BATCH", 7)  # columns in batches, the last one short
    for path in parquets:
        ds = read(path, na="mean")
        np.testing.assert_array_equal(ds.matrix, ref.matrix)
        assert list(ds.sample_ids) == list(ref.sample_ids) and list(ds.feature_ids) == list(ref.feature_ids)


def test_parquet_without_ids_numbers_samples(tmp_path):
    pytest.importorskip("pyarrow")
    pd.DataFrame(X, columns=FEATURES).to_parquet(tmp_path / "x.parquet", index=False)
    ds = read(tmp_path / "x.parquet")
    np.testing.assert_array_equal(ds.matrix, X)
    assert list(ds.sample_ids) == ["1", "2", "3", "4"]


def _csv_and_parquet(tmp_path, frame, name="x"):
    """The frame written as CSV (missing values as NA) and as parquet with its index and with ids in a column."""
    frame.to_csv(tmp_path / f"{name}.csv", na_rep="NA")
    frame.to_parquet(tmp_path / f"{name}.parquet")
    frame.reset_index().to_parquet(tmp_path / f"{name}_column.parquet", index=False)
    return [tmp_path / f"{name}{s}" for s in (".csv", ".parquet", "_column.parquet")]


def test_parquet_reads_as_the_same_csv(tmp_path):
    pytest.importorskip("pyarrow")
    rng = np.random.default_rng(3)
    frame = pd.DataFrame(
        rng.standard_normal((6, 4)) * 10.0 ** rng.integers(-5, 5, (6, 4)),
        index=pd.Index([f"s{i}" for i in range(6)], name="sample"),
        columns=["a", "b", "c", "d"],
    )
    frame.iloc[2, 1] = np.nan
    frame["counts"] = rng.integers(0, 100, 6)  # an integer column
    frame["text"] = ["1.5", "NA", None, "-2e3", " 7 ", "nan"]  # numbers and missing values stored as text
    csv, *parquets = _csv_and_parquet(tmp_path, frame)
    for na in ("mean", "drop-rows"):
        ref = read(csv, na=na)
        for path in parquets:
            ds = read(path, na=na)
            np.testing.assert_array_equal(ds.matrix, ref.matrix)
            assert list(ds.sample_ids) == list(ref.sample_ids) and list(ds.feature_ids) == list(ref.feature_ids)


@pytest.mark.parametrize(
    ("column", "words"),
    [
        (["1", "oops", "2", "x"], "'oops' in row 's2', column 'b' (2 non-numeric cells in all)"),
        ([True, False, True, True], "'True' in row 's1', column 'b' (4 non-numeric cells in all)"),
    ],
    ids=["text", "booleans"],
)
def test_parquet_non_numeric_cells_get_the_csv_message(tmp_path, column, words):
    pytest.importorskip("pyarrow")
    frame = pd.DataFrame({"a": [1.0, 2.0, 3.0, 4.0], "b": column}, index=pd.Index(SAMPLES, name="sample"))
    messages = set()
    for path in _csv_and_parquet(tmp_path, frame):
        with pytest.raises(InputError) as exc:
            read(path)
        messages.add(message(exc).replace(path.name, "FILE"))
    assert len(messages) == 1
    (text,) = messages
    assert f"non-numeric value {words}" in text


def test_npz_round_trip(tmp_path):
    np.savez(tmp_path / "x.npz", X=X, feature_ids=np.array(FEATURES), sample_ids=np.array(SAMPLES))
    ds = read(tmp_path / "x.npz")
    np.testing.assert_array_equal(ds.matrix, X)
    assert list(ds.feature_ids) == FEATURES and list(ds.sample_ids) == SAMPLES


def test_npz_single_array_and_defaults(tmp_path):
    np.savez(tmp_path / "x.npz", anything=X.astype(np.uint8), other=np.arange(3))
    ds = read(tmp_path / "x.npz")
    np.testing.assert_array_equal(ds.matrix, X)
    assert list(ds.feature_ids) == ["V1", "V2", "V3"] and list(ds.sample_ids) == ["1", "2", "3", "4"]


def test_npz_image_shape_gives_pixel_ids(tmp_path):
    np.savez(tmp_path / "img.npz", a=np.zeros((3, 6)), b=np.ones((3, 6)), image_shape=np.array([2, 3]))
    ds = read(tmp_path / "img.npz", key="b")
    assert ds.image_shape == (2, 3)
    assert list(ds.feature_ids) == ["r01c01", "r01c02", "r01c03", "r02c01", "r02c02", "r02c03"]
    with pytest.raises(InputError) as exc:
        read(tmp_path / "img.npz")
    assert "several 2-D arrays" in message(exc) and "a, b" in message(exc)


# ------------------------------------------------------------ bad inputs
def test_missing_file(tmp_path):
    with pytest.raises(InputError) as exc:
        read(tmp_path / "nope.csv")
    assert "not found" in message(exc) and "nope.csv" in message(exc)


def test_empty_file(tmp_path):
    with pytest.raises(InputError) as exc:
        read(write(tmp_path / "x.csv", "\n\n"))
    assert "empty" in message(exc)


def test_header_only(tmp_path):
    with pytest.raises(InputError) as exc:
        read(write(tmp_path / "x.csv", "sample,a,b\n"))
    assert "no data rows" in message(exc)


def test_wrong_delimiter_is_named(tmp_path):
    with pytest.raises(InputError) as exc:
        read(write(tmp_path / "x.csv", table_text(sep=";")))
    assert "delimiter" in message(exc)


def test_ragged_rows(tmp_path):
    with pytest.raises(InputError) as exc:
        read(write(tmp_path / "x.csv", "sample,a,b\ns1,1,2\ns2,3\n"))
    assert "row 2" in message(exc) and "same number of columns" in message(exc)


def test_non_numeric_cell_names_row_column_and_count(tmp_path):
    text = "sample,a,b,c\ns1,1,2,3\ns2,4,oops,6\ns3,x,8,y\n"
    with pytest.raises(InputError) as exc:
        read(write(tmp_path / "x.csv", text))
    msg = message(exc)
    assert "'oops'" in msg and "row 's2'" in msg and "column 'b'" in msg and "3 non-numeric" in msg


def test_nan_and_inf_are_reported_with_the_na_option(tmp_path):
    text = "sample,a,b,c\ns1,1,,3\ns2,4,5,inf\ns3,7,8,9\n"
    with pytest.raises(InputError) as exc:
        read(write(tmp_path / "x.csv", text))
    msg = message(exc)
    assert "2 missing or infinite" in msg and "s1, s2" in msg and "b, c" in msg
    assert "na=drop-rows|drop-cols|mean" in msg  # the command line says --na (tests/test_cli.py)


NA_TEXT = "sample,a,b,c\ns1,1,NA,3\ns2,4,6,-inf\ns3,7,8,9\ns4,2,4,5\n"


def test_na_drop_rows(tmp_path):
    ds = read(write(tmp_path / "x.csv", NA_TEXT), na="drop-rows")
    assert list(ds.sample_ids) == ["s3", "s4"] and ds.shape == (2, 3)
    np.testing.assert_array_equal(ds.matrix, [[7, 8, 9], [2, 4, 5]])
    assert ds.preprocessing["na"] == {"method": "drop-rows", "cells": 2, "dropped": ["s1", "s2"]}


def test_na_drop_cols(tmp_path):
    ds = read(write(tmp_path / "x.csv", NA_TEXT), na="drop-cols")
    assert list(ds.feature_ids) == ["a"] and ds.shape == (4, 1)
    np.testing.assert_array_equal(ds.matrix[:, 0], [1, 4, 7, 2])


def test_na_mean_fills_column_means_of_finite_values(tmp_path):
    ds = read(write(tmp_path / "x.csv", NA_TEXT), na="mean")
    assert ds.shape == (4, 3)
    assert ds.matrix[0, 1] == pytest.approx((6 + 8 + 4) / 3)
    assert ds.matrix[1, 2] == pytest.approx((3 + 9 + 5) / 3)
    assert np.isfinite(ds.matrix).all()


def test_na_mean_on_an_all_missing_feature(tmp_path):
    with pytest.raises(InputError) as exc:
        read(write(tmp_path / "x.csv", "sample,a,b\ns1,1,NA\ns2,2,NA\n"), na="mean")
    assert "no finite value" in message(exc) and "drop-cols" in message(exc)


def test_unknown_na_option(tmp_path):
    with pytest.raises(InputError) as exc:
        read(write(tmp_path / "x.csv", table_text()), na="zero")
    assert "drop-rows" in message(exc)


def test_duplicate_feature_ids(tmp_path):
    with pytest.raises(InputError) as exc:
        read(write(tmp_path / "x.csv", table_text(features=["g1", "g2", "g1"])))
    assert "duplicate feature ids" in message(exc) and "g1" in message(exc)


def test_duplicate_sample_ids(tmp_path):
    with pytest.raises(InputError) as exc:
        read(write(tmp_path / "x.csv", table_text(samples=["s1", "s2", "s2", "s4"])))
    assert "duplicate sample ids" in message(exc) and "s2" in message(exc)


def test_unnamed_feature(tmp_path):
    with pytest.raises(InputError) as exc:
        read(write(tmp_path / "x.csv", table_text(features=["g1", "", "g3"])))
    assert "no name" in message(exc)


def test_too_few_samples(tmp_path):
    with pytest.raises(InputError) as exc:
        read(write(tmp_path / "x.csv", "sample,a,b,c\ns1,1,2,3\n"))
    assert "at least 2" in message(exc) and "transpose=True" in message(exc)


def test_binary_file_is_not_text(tmp_path):
    (tmp_path / "x.xlsx").write_bytes(b"PK\x03\x04\xff\xfe\x00\x81")
    with pytest.raises(InputError) as exc:
        read(tmp_path / "x.xlsx")
    assert "as text" in message(exc)


# ------------------------------------------------------------ covariance
def test_pitprops_covariance_matches_published_eigenvalues():
    ds = read(PITPROPS, covariance=True)
    assert ds.is_covariance and ds.shape == (13, 13) and ds.sample_ids is None
    assert list(ds.feature_ids[:3]) == ["topdiam", "length", "moist"]
    np.testing.assert_array_equal(ds.matrix, ds.matrix.T)
    np.testing.assert_array_equal(np.diag(ds.matrix), 1.0)
    eig = np.linalg.eigvalsh(ds.matrix)[::-1]
    np.testing.assert_allclose(eig, PITPROPS_EIGENVALUES, atol=1e-4)
    assert ds.problem().eigenvalues()[0] == pytest.approx(4.2186, abs=1e-4)


def cov_text(C, ids, id_column=True) -> str:
    head = (["variable"] if id_column else []) + ids
    rows = [([i] if id_column else []) + [repr(float(v)) for v in row] for i, row in zip(ids, C)]
    return "\n".join(",".join(r) for r in [head, *rows]) + "\n"


C3 = np.array([[2.0, 0.5, 0.1], [0.5, 1.0, 0.2], [0.1, 0.2, 3.0]])


def test_covariance_without_id_column(tmp_path):
    ds = read(write(tmp_path / "c.csv", cov_text(C3, FEATURES, id_column=False)), covariance=True)
    np.testing.assert_array_equal(ds.matrix, C3)
    assert list(ds.feature_ids) == FEATURES


def test_covariance_rows_in_another_order_are_aligned(tmp_path):
    order = [2, 0, 1]
    text = cov_text(C3, FEATURES).splitlines()
    shuffled = "\n".join([text[0]] + [text[1 + i] for i in order]) + "\n"
    ds = read(write(tmp_path / "c.csv", shuffled), covariance=True)
    np.testing.assert_array_equal(ds.matrix, C3)


def test_covariance_not_square(tmp_path):
    with pytest.raises(InputError) as exc:
        read(write(tmp_path / "c.csv", cov_text(C3[:2], FEATURES)), covariance=True)
    assert "not square" in message(exc) and "2 rows × 3 columns" in message(exc)


def test_covariance_not_symmetric(tmp_path):
    C = C3.copy()
    C[0, 2] = 0.4
    with pytest.raises(InputError) as exc:
        read(write(tmp_path / "c.csv", cov_text(C, FEATURES)), covariance=True)
    msg = message(exc)
    assert "not symmetric" in msg and "g1" in msg and "g3" in msg and "0.3" in msg


def test_covariance_tiny_asymmetry_is_accepted_and_symmetrised(tmp_path):
    C = C3.copy()
    C[0, 1] += 1e-12
    ds = read(write(tmp_path / "c.csv", cov_text(C, FEATURES)), covariance=True)
    np.testing.assert_array_equal(ds.matrix, ds.matrix.T)


def test_covariance_not_psd(tmp_path):
    C = np.array([[1.0, 0.9, -0.9], [0.9, 1.0, 0.9], [-0.9, 0.9, 1.0]])
    smallest = np.linalg.eigvalsh(C)[0]
    with pytest.raises(InputError) as exc:
        read(write(tmp_path / "c.csv", cov_text(C, FEATURES)), covariance=True)
    assert "not positive semidefinite" in message(exc) and f"{smallest:.4g}" in message(exc)


def test_covariance_row_ids_must_match_columns(tmp_path):
    text = cov_text(C3, FEATURES).replace("\ng3,", "\nzz,")
    with pytest.raises(InputError) as exc:
        read(write(tmp_path / "c.csv", text), covariance=True)
    assert "do not match" in message(exc) and "zz" in message(exc)


def test_covariance_with_na_option(tmp_path):
    with pytest.raises(InputError) as exc:
        read(PITPROPS, covariance=True, na="mean")
    assert "covariance" in message(exc)


def test_covariance_scale_gives_correlation():
    cov = Dataset(
        "c",
        np.diag([2.0, 3.0]) @ np.array([[1.0, 0.5], [0.5, 1.0]]) @ np.diag([2.0, 3.0]),
        pd.Index(["a", "b"]),
        None,
        None,
        is_covariance=True,
    )
    corr = prepare(cov, scale=True)
    np.testing.assert_allclose(corr.matrix, [[1.0, 0.5], [0.5, 1.0]])
    assert corr.preprocessing["scale"] is True and corr.preprocessing["center"] is False


def test_covariance_log2_is_refused():
    with pytest.raises(InputError) as exc:
        prepare(read(PITPROPS, covariance=True), log2=1.0)
    assert "log2" in message(exc) and "covariance" in message(exc)


# --------------------------------------------------------------- prepare
def raw_dataset(values, features=None) -> Dataset:
    values = np.asarray(values, dtype=float)
    features = features or [f"f{j}" for j in range(values.shape[1])]
    return Dataset("t", values, pd.Index(features), pd.Index([f"s{i}" for i in range(len(values))]), None)


def test_center_and_scale():
    ds = prepare(raw_dataset(X), scale=True)
    np.testing.assert_allclose(ds.matrix.mean(axis=0), 0, atol=1e-12)
    np.testing.assert_allclose(ds.matrix.std(axis=0, ddof=1), 1)
    expected = (X - X.mean(axis=0)) / X.std(axis=0, ddof=1)
    np.testing.assert_allclose(ds.matrix, expected)
    assert ds.preprocessing == {"center": True, "scale": True, "log2_floor": None, "dropped_constant": []}


def test_no_centering_keeps_values():
    np.testing.assert_array_equal(prepare(raw_dataset(X), center=False).matrix, X)


def test_log2_floor():
    raw = raw_dataset([[-5.0, 100.0], [8.0, 1.0], [40.0, 64.0]])
    ds = prepare(raw, center=False, log2=20)
    np.testing.assert_allclose(ds.matrix, np.log2([[20, 100], [20, 20], [40, 64]]))
    assert ds.preprocessing["log2_floor"] == 20


@pytest.mark.parametrize("floor", [0, -1])
def test_log2_floor_must_be_positive(floor):
    with pytest.raises(InputError) as exc:
        prepare(raw_dataset(X), log2=floor)
    assert "positive" in message(exc)


def test_constant_features_are_dropped_with_a_warning():
    values = np.column_stack([X, np.full(4, 0.1), np.full(4, 7.0)])
    with pytest.warns(UserWarning, match="dropped 2 constant features.*c1, c2"):
        ds = prepare(raw_dataset(values, FEATURES + ["c1", "c2"]))
    assert list(ds.feature_ids) == FEATURES
    assert ds.preprocessing["dropped_constant"] == ["c1", "c2"]


def test_log2_floor_can_make_features_constant():
    raw = raw_dataset([[1.0, 5.0], [3.0, 50.0], [10.0, 60.0]], ["low", "high"])
    with pytest.warns(UserWarning, match="low"):
        ds = prepare(raw, log2=20)
    assert list(ds.feature_ids) == ["high"]


def test_constant_features_with_scale_are_an_error():
    values = np.column_stack([X, np.full(4, 2.0)])
    with pytest.raises(InputError) as exc:
        prepare(raw_dataset(values, FEATURES + ["flat"]), scale=True)
    assert "flat" in message(exc) and "do not scale" in message(exc)


def test_prepare_without_constant_features_warns_nothing():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        prepare(raw_dataset(X), scale=True)


def test_problem_from_prepared_data():
    ds = prepare(raw_dataset(X))
    expected = np.cov(X, rowvar=False)
    np.testing.assert_allclose(ds.problem().dense(), expected)


# ------------------------------------------------------------------ load
def test_load_reads_and_prepares_a_file(tmp_path):
    ds = load(write(tmp_path / "x.csv", table_text()), scale=True)
    np.testing.assert_allclose(ds.matrix.std(axis=0, ddof=1), 1)
    assert ds.preprocessing["transposed"] is False and ds.preprocessing["na"] is None


def test_load_labels_aligned_by_sample_id(tmp_path):
    path = write(tmp_path / "x.csv", table_text())
    labels = write(tmp_path / "labels.csv", "sample,label\ns3,b\ns1,a\ns4,b\ns2,a\nextra,c\n")
    ds = load(path, labels=labels)
    assert ds.labels.tolist() == ["a", "a", "b", "b"]
    assert list(ds.labels.index) == SAMPLES


def test_load_labels_from_first_two_columns(tmp_path):
    path = write(tmp_path / "x.csv", table_text())
    labels = write(tmp_path / "labels.csv", "id,class,batch\ns1,a,1\ns2,a,1\ns3,b,2\ns4,b,2\n")
    assert load(path, labels=labels).labels.tolist() == ["a", "a", "b", "b"]


def test_load_labels_missing_ids(tmp_path):
    path = write(tmp_path / "x.csv", table_text())
    labels = write(tmp_path / "labels.csv", "sample,label\ns1,a\ns2,b\n")
    with pytest.raises(InputError) as exc:
        load(path, labels=labels)
    assert "2 sample ids" in message(exc) and "s3, s4" in message(exc)


def test_load_unknown_name_lists_bundled_sets():
    with pytest.raises(InputError) as exc:
        load("no_such_thing")
    msg = message(exc)
    assert "no file or bundled data set named 'no_such_thing'" in msg
    assert "leukemia" in msg and "pitprops" in msg and "certpca data list" in msg


def test_load_bundled_name():
    ds = load("pitprops", scale=True)
    assert ds.source == "bundled:pitprops" and ds.is_covariance


def test_load_bundled_refuses_transpose():
    with pytest.raises(InputError) as exc:
        load("pitprops", transpose=True)
    assert "transpose" in message(exc)


def test_npz_with_object_ids_is_refused_without_pickle(tmp_path):
    np.savez(tmp_path / "x.npz", X=X, feature_ids=np.array(FEATURES, dtype=object))
    with pytest.raises(InputError) as exc:
        read(tmp_path / "x.npz")
    assert "object arrays" in message(exc) and "string arrays" in message(exc)


@pytest.mark.parametrize("suffix", [".npz", ".parquet"])
def test_corrupt_binary_files(tmp_path, suffix):
    path = tmp_path / f"x{suffix}"
    path.write_bytes(b"this is not a binary table at all")
    with pytest.raises(InputError) as exc:
        read(path)
    assert "cannot read x" in message(exc)


def test_parquet_without_pyarrow_says_how_to_install(tmp_path, monkeypatch):
    def no_engine(*args, **kwargs):
        raise ImportError("Unable to find a usable engine")

    monkeypatch.setattr(pd, "read_parquet", no_engine)
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)  # import pyarrow.parquet raises ImportError
    path = tmp_path / "x.parquet"
    path.write_bytes(b"PAR1")
    with pytest.raises(InputError) as exc:
        read(path)
    assert "pip install pyarrow" in message(exc)


def test_na_drop_cols_when_every_feature_has_a_gap(tmp_path):
    with pytest.raises(InputError) as exc:
        read(write(tmp_path / "x.csv", "sample,a,b\ns1,1,NA\ns2,NA,2\ns3,3,4\n"), na="drop-cols")
    assert "leaves nothing" in message(exc)


def test_crlf_and_byte_order_mark(tmp_path):
    path = tmp_path / "x.csv"
    path.write_bytes(b"\xef\xbb\xbf" + table_text().replace("\n", "\r\n").encode())
    ds = read(path)
    np.testing.assert_array_equal(ds.matrix, X)
    assert list(ds.feature_ids) == FEATURES


# ------------------------------------------- the C readers agree with the Python one
#: the text readers, fastest first (certpca/data/readers.py: _parse_text)
TEXT_READERS = ("_parse_numbers", "_parse_missing")


def full_precision_table(rng, sep=",", quote_ids=False, na_cells=()):
    """(text, values, ids): random doubles written with repr, so the exact values are known here."""
    values = rng.standard_normal((5, 4)) * 10.0 ** rng.integers(-30, 30, (5, 4))
    ids = [f'"s{i},x"' if quote_ids else f"s{i}" for i in range(5)]
    cells = [[repr(float(v)) for v in row] for row in values]
    for (i, j), token in na_cells:
        cells[i][j] = token
        values[i, j] = np.nan
    lines = [sep.join(["id", "a", "b", "c", "d"])] + [sep.join([s, *row]) for s, row in zip(ids, cells)]
    return "\n".join(lines) + "\n", values, [s.strip('"') for s in ids]


def reader_used(monkeypatch, path, **kw):
    """(dataset, name of the text reader that returned it; "_parse_python" when neither did)."""
    from certpca.data import readers

    used = []
    for name in TEXT_READERS:
        original = getattr(readers, name)

        def spy(*args, original=original, name=name):
            table = original(*args)
            if table is not None:
                used.append(name)
            return table

        monkeypatch.setattr(readers, name, spy)
    ds = readers.read(path, **kw)
    return ds, (used or ["_parse_python"])[0]


@pytest.mark.parametrize(
    ("suffix", "sep", "quote_ids", "na_cells", "expected"),
    [
        (".csv", ",", False, (), "_parse_numbers"),
        (".csv", ",", True, (), "_parse_numbers"),  # R's write.csv quotes ids
        (".tsv", "\t", False, (), "_parse_numbers"),
        (".txt", " ", False, (), "_parse_numbers"),
        (".csv", ",", False, (((1, 2), "NA"), ((3, 0), "")), "_parse_missing"),
        (".csv", ",", False, (((2, 1), "nUlL"),), "_parse_missing"),
        (".csv", ",", False, (((2, 1), " NA "),), "_parse_python"),  # spaces around a token: Python only
    ],
)
def test_text_readers_give_exact_values_and_ids(tmp_path, monkeypatch, suffix, sep, quote_ids, na_cells, expected):
    text, values, ids = full_precision_table(np.random.default_rng(7), sep, quote_ids, na_cells)
    ds, used = reader_used(monkeypatch, write(tmp_path / f"x{suffix}", text), na="mean" if na_cells else None)
    assert used == expected
    want = np.where(np.isnan(values), np.nanmean(values, axis=0), values)
    np.testing.assert_array_equal(ds.matrix, want)  # bit for bit: every reader rounds as float() does
    assert list(ds.sample_ids) == ids and list(ds.feature_ids) == ["a", "b", "c", "d"]


def test_gzip_and_blank_lines_take_the_fast_reader(tmp_path, monkeypatch):
    text, values, ids = full_precision_table(np.random.default_rng(8))
    path = tmp_path / "x.csv.gz"
    path.write_bytes(gzip.compress(("\n" + text.replace("\n", "\n   \n", 2)).encode()))
    ds, used = reader_used(monkeypatch, path)
    assert used == "_parse_numbers"
    np.testing.assert_array_equal(ds.matrix, values)


@pytest.mark.parametrize(
    ("body", "words"),
    [
        ("s1,1,2\ns2,3,4,5\ns3,6,7\n", "data row 2 has 4 fields but row 1 has 3"),  # long row: loadtxt would drop it
        ("s1,1,2\ns2,3\ns3,6,7\n", "data row 2 has 2 fields but row 1 has 3"),
        ("s1,1,2\ns2,3,NA\ns3,6\n", "data row 3 has 2 fields but row 1 has 3"),  # short row beside a missing value
        ("s1,1,2\ns2,True,4\ns3,6,7\n", "non-numeric value 'True' in row 's2', column 'a'"),
    ],
)
def test_faults_the_c_readers_would_miss_get_the_python_message(tmp_path, body, words):
    with pytest.raises(InputError) as exc:
        read(write(tmp_path / "x.csv", "id,a,b\n" + body))
    assert words in message(exc)


def test_covariance_without_ids_with_a_bad_first_column_cell(tmp_path):
    # the C reader takes the first column for ids; a square body makes it values again, with the Python message
    text = "a,b,c\n1,0.1,0.2\noops,1,0.3\n0.2,0.3,1\n"
    with pytest.raises(InputError) as exc:
        read(write(tmp_path / "c.csv", text), covariance=True)
    assert "non-numeric value 'oops' in data row 2, column 'a' (1 non-numeric cells in all)" in message(exc)


@pytest.mark.parametrize("id_column", [True, False])
def test_covariance_files_take_the_c_reader(tmp_path, monkeypatch, id_column):
    # a square body under D names (no id column) is told apart by its row count, as the Python reader does
    C = C3 + np.array([[1 / 3, 1e-17, 0], [1e-17, 0, 0], [0, 0, 2 / 7]])
    path = write(tmp_path / "c.csv", cov_text(C, FEATURES, id_column=id_column))
    ds, used = reader_used(monkeypatch, path, covariance=True)
    assert used == "_parse_numbers"
    np.testing.assert_array_equal(ds.matrix, C)
    assert list(ds.feature_ids) == FEATURES


def test_wide_data_are_copied_once_on_loading_and_fitting():
    # counted allocations, not time: load keeps its own prepared copy (the user's array stays theirs) and
    # fitting one component adds the operator's factor but no deflated copy of it
    import tracemalloc

    import certpca

    rng = np.random.default_rng(0)
    X = rng.standard_normal((100, 4000)) * rng.uniform(0.5, 2.0, 4000)  # ids small beside the values
    certpca.fit(X[:5, :8], k=2)  # the modules a first fit imports are not counted
    tracemalloc.start()
    try:
        ds = load(X)
        after_load = tracemalloc.get_traced_memory()[1]
        tracemalloc.reset_peak()
        # EM named: the default auto also runs the rank-2 spannogram, whose own arrays peak at about 3 × the
        # matrix on this shape (no copy of the data; measured with tracemalloc)
        certpca.fit(ds, k=5, method="em")
        after_fit = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert after_load < 2.3 * X.nbytes  # the raw copy and the prepared one, never both with temporaries
    assert after_fit < ds.matrix.nbytes * 3  # the prepared matrix, the factor and D × N temporaries (not 4.5)
    np.testing.assert_allclose(ds.matrix, X - X.mean(axis=0), rtol=0, atol=1e-14)
    X[0, 0] = 1e6  # the dataset does not share the user's array
    assert abs(ds.matrix[0, 0]) < 100 and not ds.matrix.flags.writeable


def test_reading_a_csv_of_numbers_keeps_one_copy_of_the_matrix(tmp_path):
    """The C reader's array becomes the Dataset's matrix (read-only, not copied again): tracemalloc, which
    sees numpy's allocations, puts the peak of reading well below two matrices (it was 2.4 × before)."""
    import tracemalloc

    X = np.random.default_rng(0).standard_normal((200, 3000))
    path = tmp_path / "wide.csv"
    pd.DataFrame(X, index=[f"s{i}" for i in range(200)], columns=[f"g{j}" for j in range(3000)]).to_csv(
        path, float_format="%.6g"
    )
    tracemalloc.start()
    try:
        ds = read(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert not ds.matrix.flags.writeable and ds.matrix.base is None
    np.testing.assert_allclose(ds.matrix, X, rtol=1e-5)
    assert peak < 1.7 * X.nbytes
