"""The real data sets bundled in ``data/`` (installed as ``certpca._data``).

Facts below (shapes, class counts, sources) are those stated and checked in
``data/README.md``; ``tests/test_datasets.py`` checks the files against them.
Values are read raw, as the README describes them, and then go through
:func:`certpca.data.prepare` like any user file.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

import pandas as pd

from certpca.data import Dataset, data_format, prepare, read, read_h5ad, read_labels, with_labels
from certpca.errors import InputError


def data_dir() -> Path:
    """The bundled data folder: ``certpca/_data`` when installed, ``<repo>/data`` in a source checkout."""
    here = Path(__file__).resolve().parent
    for folder in (here / "_data", here.parent / "data"):
        if (folder / "SHA256SUMS").is_file():
            return folder
    raise FileNotFoundError(f"bundled data not found in {here / '_data'} or {here.parent / 'data'}; reinstall certpca")


# ------------------------------------------------------------------ readers
def _with_label_file(file: str, labels_file: str) -> Callable[[Path], Dataset]:
    """Reader for a samples × features CSV with a ``sample,label`` file beside it."""

    def reader(folder: Path) -> Dataset:
        return with_labels(read(folder / file), read_labels(folder / labels_file))

    return reader


def _read_lrs(folder: Path) -> Dataset:
    """The 93 flux columns as features and ``lrs_class`` as the label (README section c)."""
    ds = read(folder / "lrs.csv.gz")
    flux = ds.feature_ids.str.fullmatch(r"(blue|red)_[0-9.]+um")
    classes = ds.matrix[:, ds.feature_ids.get_loc("lrs_class")].astype(int).astype(str)
    return replace(
        ds,
        matrix=ds.matrix[:, flux],
        feature_ids=ds.feature_ids[flux],
        labels=pd.Series(classes, index=ds.sample_ids, name="label"),
    )


def _read_cbcl(folder: Path) -> Dataset:
    """The raw faces (uint8) divided by 255, so pixels lie in [0, 1]."""
    ds = read(folder / "cbcl_faces.npz", key="faces")
    return replace(ds, matrix=ds.matrix / 255, preprocessing={**ds.preprocessing, "divided_by": 255})


H5AD_LABELS = {"pbmc": "bulk_labels"}  # default obs label column of each bundled AnnData set


def _read_pbmc(folder: Path) -> Dataset:
    """The sparse log-normalised ``raw.X`` (README section h) with ``bulk_labels`` as labels."""
    return read_h5ad(folder / "pbmc68k_reduced.h5ad", use_raw=True, labels=H5AD_LABELS["pbmc"])


def _read_pitprops(folder: Path) -> Dataset:
    return read(folder / "pitprops.csv", covariance=True)


@dataclass(frozen=True)
class _Entry:
    name: str
    file: str
    kind: str  # "samples" or "covariance"
    shape: tuple[int, int]
    classes: dict[str, int] | None  # class counts, when few enough to list
    n_classes: int
    source: str
    reader: Callable[[Path], Dataset]
    note: str = ""

    @property
    def alias(self) -> str:
        return self.file.split(".")[0]


_ENTRIES = (
    _Entry(
        "leukemia",
        "leukemia_armstrong.csv.gz",
        "samples",
        (72, 12582),
        {"ALL": 24, "MLL": 20, "AML": 28},
        3,
        "Armstrong et al. 2002, Nature Genetics 30:41-47 (MLL leukemia, HG-U95Av2)",
        _with_label_file("leukemia_armstrong.csv.gz", "leukemia_armstrong_labels.csv"),
        "raw MAS average-difference signals, negatives included; log2 floor 20 is common",
    ),
    _Entry(
        "golub",
        "leukemia_golub.csv.gz",
        "samples",
        (72, 7129),
        {"ALL": 47, "AML": 25},
        2,
        "Golub et al. 1999, Science 286:531-537 (via R datamicroarray 0.2.3)",
        _with_label_file("leukemia_golub.csv.gz", "leukemia_golub_labels.csv"),
        "stored test-then-train; the train/test split is in leukemia_golub_labels.csv",
    ),
    _Entry(
        "khan",
        "srbct_khan.csv.gz",
        "samples",
        (63, 2308),
        {"EWS": 23, "RMS": 20, "NB": 12, "BL": 8},
        4,
        "Khan et al. 2001, Nature Medicine 7:673-679 (SRBCT; via R datamicroarray 0.2.3)",
        _with_label_file("srbct_khan.csv.gz", "srbct_khan_labels.csv"),
        "training samples only; values already on a log-ratio scale",
    ),
    _Entry(
        "alon",
        "colon_alon.csv.gz",
        "samples",
        (62, 2000),
        {"t": 40, "n": 22},
        2,
        "Alon et al. 1999, PNAS 96:6745-6750 (colon; via R datamicroarray 0.2.3)",
        _with_label_file("colon_alon.csv.gz", "colon_alon_labels.csv"),
        "raw intensities",
    ),
    _Entry(
        "lrs",
        "lrs.csv.gz",
        "samples",
        (531, 93),
        None,
        48,
        "UCI Low Resolution Spectrometer (IRAS LRS, NASA Ames 1988; Bache & Lichman 2013)",
        _read_lrs,
        "features are the 93 flux bands; labels are lrs_class (tens digit = base class)",
    ),
    _Entry(
        "cbcl",
        "cbcl_faces.npz",
        "samples",
        (2429, 361),
        None,
        0,
        "CBCL Face Database #1, MIT CBCL (Sung 1996)",
        _read_cbcl,
        "19 × 19 faces, raw uint8 divided by 255; pixel ids rRRcCC",
    ),
    _Entry(
        "pbmc",
        "pbmc68k_reduced.h5ad",
        "samples",
        (700, 765),
        None,
        10,
        "Zheng et al. 2017, Nature Communications 8:14049 (10x 68k PBMCs, reduced; from scanpy 1.11.5)",
        _read_pbmc,
        "log-normalised raw.X (sparse) of 765 variable genes; labels are obs bulk_labels (10 cell types)",
    ),
    _Entry(
        "pitprops",
        "pitprops.csv",
        "covariance",
        (13, 13),
        None,
        0,
        "Jeffers 1967, Applied Statistics 16:225-236 (from R elasticnet 1.3)",
        _read_pitprops,
        "correlation matrix of 13 variables from n = 180 pit props",
    ),
)
_BY_NAME = {e.name: e for e in _ENTRIES} | {e.alias: e for e in _ENTRIES}


def _entry(name: str) -> _Entry:
    try:
        return _BY_NAME[name.lower()]
    except KeyError:
        raise InputError(
            f"no bundled data set named {name!r}; choose one of {', '.join(names())} (certpca data list)"
        ) from None


# ------------------------------------------------------------------- public
def names(include_aliases: bool = False) -> list[str]:
    """Names of the bundled data sets (with their file-stem aliases if asked)."""
    return list(_BY_NAME) if include_aliases else [e.name for e in _ENTRIES]


def info(name: str) -> dict:
    """Facts about one bundled set: file, kind, shape, labels and class counts, source."""
    e = _entry(name)
    return {
        "name": e.name,
        "alias": e.alias,
        "file": e.file,
        "kind": e.kind,
        "shape": e.shape,
        "labels": e.n_classes > 0,
        "n_classes": e.n_classes,
        "class_counts": None if e.classes is None else dict(e.classes),
        "source": e.source,
        "note": e.note,
    }


def table() -> pd.DataFrame:
    """One row per bundled set (what ``certpca data list`` prints)."""
    rows = []
    for e in _ENTRIES:
        if e.classes is not None:
            labels = " / ".join(f"{k} {v}" for k, v in e.classes.items())
        else:
            labels = f"{e.n_classes} classes" if e.n_classes else "none"
        rows.append(
            {
                "name": e.name,
                "kind": e.kind,
                "shape": f"{e.shape[0]} × {e.shape[1]}",
                "labels": labels,
                "source": e.source,
            }
        )
    return pd.DataFrame(rows)


def raw(name: str) -> Dataset:
    """A bundled set's values as the README describes them (plus labels), not yet prepared."""
    e = _entry(name)
    ds = e.reader(data_dir())
    return replace(ds, name=e.name, source=f"bundled:{e.name}")


def h5ad(name: str) -> tuple[Path, str] | None:
    """For a bundled AnnData set: its file and default obs label column (so layers and obs columns can be chosen)."""
    e = _BY_NAME.get(name.lower())
    if e is None or data_format(e.file) != "h5ad":
        return None
    return data_dir() / e.file, H5AD_LABELS[e.name]


def load(name: str, *, center: bool = True, scale: bool = False, log2: float | None = None) -> Dataset:
    """A bundled set, prepared by :func:`certpca.data.prepare`."""
    return prepare(raw(name), center=center, scale=scale, log2=log2)


def verify() -> list[str]:
    """Check every file against ``SHA256SUMS``; returns the problems found (empty when all is well)."""
    folder = data_dir()
    problems = []
    listed = set()
    for line in (folder / "SHA256SUMS").read_text().splitlines():
        if not line.strip():
            continue
        expected, file = line.split(maxsplit=1)
        file = file.lstrip("*")
        listed.add(file)
        path = folder / file
        if not path.is_file():
            problems.append(f"{file}: missing")
            continue
        actual = hashlib.sha256(path.read_bytes()).hexdigest()
        if actual != expected:
            problems.append(f"{file}: checksum {actual[:12]}... differs from SHA256SUMS {expected[:12]}...")
    problems += [f"{e.file}: not listed in SHA256SUMS" for e in _ENTRIES if e.file not in listed]
    return problems
