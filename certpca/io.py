"""Loading input and writing output, the same way for every command and the Python API.

Input: :func:`load` turns a file path or a bundled data set name into a prepared
:class:`~certpca.data.Dataset` (labels from a file or from a column of the data).

Output, one policy (README, "Files"):

- an existing file is refused unless ``force`` is given;
- an input of the same command is never written to, even with ``force``;
- every destination is checked (folder exists and is writable) *before* any
  computing starts;
- all outputs of one command are written to temporary files beside their
  destinations and renamed into place together at the end, with Ctrl-C held
  back during the renames: an interrupt leaves either the old files or the new.
"""

from __future__ import annotations

import os
import signal
import tempfile
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

from . import datasets
from .data import (
    KINDS,
    Dataset,
    data_format,
    from_object,
    is_anndata,
    is_in_memory,
    prepare,
    read,
    read_annotation,
    read_h5ad,
    read_labelled,
    read_labels,
    with_annotation,
    with_labels,
)
from .data.chunked import ChunkedData, connect, open_h5ad, open_parquet, open_zarr
from .errors import InputError


# ------------------------------------------------------------------ input
def load(
    path_or_name,
    *,
    transpose: bool = False,
    covariance: bool = False,
    na: str | None = None,
    center: bool = True,
    scale: bool = False,
    log2: float | None = None,
    labels: str | Path | None = None,
    layer: str | None = None,
    use_raw: bool = False,
    annotate=None,
    copy: bool = True,
) -> Dataset:
    """Read a file or a bundled data set by name, attach labels, then :func:`~certpca.data.prepare` it.

    ``labels`` is a CSV ``sample,label`` (or any first two columns) matched by
    sample id, or the name of a column of a samples-as-rows CSV/TSV data file;
    bundled sets carry their own labels.  ``path_or_name`` may also be a numpy
    array, a DataFrame (index = sample ids, columns = feature ids), a scipy.sparse
    matrix or an AnnData object (``layer``, ``use_raw``; ``labels`` names an obs column).
    ``annotate`` (a file, DataFrame or Series: :func:`~certpca.data.read_annotation`)
    gives the features' gene symbols and descriptions.  ``copy=False`` keeps dense values as given
    where prepare allows it (``Dataset.deferred``: centring applied inside the covariance operator,
    the columns and the scores), so wide data are held once; an in-memory array is then not copied
    at all, and the Dataset sees later changes made to it.
    """
    annotation = None if annotate is None else read_annotation(annotate)  # a bad file fails before the data load
    ds = _load_prepared(
        path_or_name,
        transpose=transpose,
        covariance=covariance,
        na=na,
        center=center,
        scale=scale,
        log2=log2,
        labels=labels,
        layer=layer,
        use_raw=use_raw,
        copy=copy,
    )
    return ds if annotation is None else with_annotation(ds, annotation)


def _load_prepared(
    path_or_name,
    *,
    transpose: bool,
    covariance: bool,
    na: str | None,
    center: bool,
    scale: bool,
    log2: float | None,
    labels: str | Path | None,
    layer: str | None,
    use_raw: bool,
    copy: bool,
) -> Dataset:
    """:func:`load` without the annotation."""
    if is_in_memory(path_or_name):
        if transpose or covariance or na is not None:
            raise InputError("`transpose`, `covariance` and `na` apply to files; drop them for in-memory data")
        in_anndata = labels is not None and not Path(str(labels)).is_file() and is_anndata(path_or_name)
        ds = from_object(path_or_name, layer=layer, use_raw=use_raw, labels=str(labels) if in_anndata else None)
        if labels is not None and not in_anndata:
            ds = with_labels(ds, read_labels(labels))
        return prepare(ds, center=center, scale=scale, log2=log2, copy=copy)
    if not isinstance(path_or_name, (str, Path)):
        raise InputError(f"data of type {type(path_or_name).__name__} is not supported; give {KINDS}")
    path = Path(path_or_name)
    bundled = None if path.exists() else datasets.h5ad(str(path_or_name))
    if bundled is not None or (path.is_file() and data_format(path) == "h5ad"):
        if transpose or covariance or na is not None:
            raise InputError("`transpose`, `covariance` and `na` do not apply to .h5ad files; drop them")
        obs_column = labels is not None and not Path(labels).is_file()
        column = str(labels) if obs_column else None
        if bundled is not None:  # a bundled AnnData: its own layer and labels unless others are asked for
            path, use_raw, column = bundled[0], use_raw or layer is None, column or bundled[1]
        ds = read_h5ad(path, layer=layer, use_raw=use_raw, labels=column)
        if bundled is not None:
            ds = replace(ds, name=str(path_or_name).lower(), source=f"bundled:{str(path_or_name).lower()}")
        if labels is not None and not obs_column:
            ds = with_labels(ds, read_labels(labels))
        return prepare(ds, center=center, scale=scale, log2=log2, copy=copy)
    if layer is not None or use_raw:
        raise InputError("`layer` and `use_raw` apply to AnnData objects and .h5ad files only; drop them")
    name = str(path_or_name)
    if path.is_dir():
        raise InputError(f"{name} is a folder; give a data file or a bundled data set name")
    label_column = labels is not None and not Path(labels).is_file() and path.is_file()
    if label_column:
        ds, found = read_labelled(path, str(labels), transpose=transpose, covariance=covariance, na=na)
        ds = with_labels(ds, found)
    elif path.is_file():
        ds = read(path, transpose=transpose, covariance=covariance, na=na)
    elif name.lower() in datasets.names(include_aliases=True):
        if transpose or na is not None:
            raise InputError(f"bundled data set {name!r} is ready to use; drop `transpose` and `na`")
        ds = datasets.raw(name)
        if covariance and not ds.is_covariance:
            raise InputError(f"bundled data set {name!r} holds samples, not a covariance; drop `covariance`")
    else:
        raise InputError(
            f"no file or bundled data set named {name!r}; bundled: {', '.join(datasets.names())} (certpca data list)"
        )
    if labels is not None and not label_column:
        ds = with_labels(ds, read_labels(labels))
    return prepare(ds, center=center, scale=scale, log2=log2, copy=copy)


def open_data(path_or_name, *, chunked: bool = False, scheduler: str | None = None, **options) -> Dataset | ChunkedData:
    """:func:`load`, or for data beyond memory a :class:`~certpca.data.chunked.ChunkedData` read in blocks.

    A ``.zarr`` store is always read in blocks; an ``.h5ad`` file or a parquet file (or a folder of them)
    with ``chunked`` (blocks of rows, or of whole columns when D > N), on the dask scheduler at
    ``scheduler`` (host:port) when given.  ``options`` are :func:`load`'s; data read in blocks take
    only ``center`` and ``scale`` (and an .h5ad file's ``layer``/``use_raw``, a parquet file's ``transpose``).
    """
    fmt = data_format(path_or_name) if isinstance(path_or_name, (str, Path)) else "in memory"
    if chunked and fmt not in ("h5ad", "parquet"):
        raise InputError(
            "`chunked` applies to .h5ad files and parquet files or directories "
            "(a .zarr store is always read in chunks); drop it"
        )
    if not (fmt == "zarr" or chunked):
        if scheduler is not None:
            raise InputError(
                "`scheduler` applies to data read in chunks (.zarr, or .h5ad or parquet with `chunked`); drop it"
            )
        return load(path_or_name, **options)
    allowed = {"h5ad": ("layer", "use_raw"), "parquet": ("transpose",)}.get(fmt, ())
    given = [f"`{n}`" for n in NOT_CHUNKED if n not in allowed and options.get(n) not in (None, False)]
    if given:
        raise InputError(
            f"{', '.join(given)} do(es) not apply to data read in chunks (centring and `scale` only); drop it"
        )
    prepare_options = {"center": options.get("center", True), "scale": options.get("scale", False)}
    prepare_options["client"] = None if scheduler is None else connect(scheduler)
    if fmt == "h5ad":
        layer, use_raw = options.get("layer"), options.get("use_raw", False)
        return open_h5ad(path_or_name, layer=layer, use_raw=use_raw, **prepare_options)
    if fmt == "parquet":
        return open_parquet(path_or_name, transpose=options.get("transpose", False), **prepare_options)
    return open_zarr(path_or_name, **prepare_options)


#: the options of :func:`load` that data read in chunks do not take (centring and scaling only)
NOT_CHUNKED = ("transpose", "covariance", "log2", "na", "layer", "use_raw", "labels", "annotate")


# ----------------------------------------------------------------- output
class Outputs:
    """The files one command writes, checked up front and put in place together.

    Usage::

        out = Outputs(force=args.force, inputs=[data_path])
        html = out.claim(Path("report.html"), "report")   # checks now, before computing
        ...compute...
        with out.writing():
            out.write(html, text)                        # to a temporary file
        # all renamed into place here; on any error or Ctrl-C, no temporary file is left
    """

    def __init__(self, *, force: bool = False, inputs: Iterable[str | Path | None] = ()):
        self.force = force
        self._inputs = [Path(p).resolve() for p in inputs if p is not None and Path(p).is_file()]
        self._claimed: dict[Path, str] = {}
        self._staged: dict[Path, Path] = {}

    def claim(self, path: str | Path, what: str = "output", *, flag: str = "") -> Path:
        """Check that ``path`` may be written; raise InputError naming ``flag`` (or ``what``) if not.

        ``flag`` is the parameter that gave the path (e.g. ``"output"``): messages name it as
        parameters are named (:class:`~certpca.errors.InputError`), so the command line says its flag."""
        path = Path(path)
        name = _named(flag) if flag else what
        target = path.resolve()
        if any(target == p for p in self._inputs):
            raise InputError(
                f"{name} {path} is an input of this command; choose another file name "
                "(inputs are never overwritten, even with `force`)"
            )
        if target in self._claimed:
            raise InputError(f"{name} {path} is also the {self._claimed[target]}; give each output its own name")
        if path.is_dir():
            raise InputError(f"{name} {path} is a folder; give a file name")
        if path.exists() and not self.force:
            raise InputError(f"{name} {path} exists; pass `force` to overwrite it or choose another name")
        _check_folder(path.parent, name)
        self._claimed[target] = what
        return path

    def claim_folder(
        self, folder: str | Path, names: Iterable[str], what: str = "tables", *, flag: str = ""
    ) -> list[Path]:
        """Claim every file ``names`` inside ``folder`` (created now if missing)."""
        folder = Path(folder)
        name = _named(flag) if flag else what
        if folder.exists() and not folder.is_dir():
            raise InputError(f"{name} {folder} is a file; give a folder")
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise InputError(
                f"cannot create folder {folder} for {name}: {err.strerror}; choose a writable place"
            ) from None
        return [self.claim(folder / n, what, flag=flag) for n in names]

    def write(self, path: str | Path, text: str) -> None:
        """Stage ``text`` for a claimed ``path`` in a temporary file beside it."""
        target = Path(path).resolve()
        if target not in self._claimed:
            raise RuntimeError(f"{path} was not claimed before writing")  # a programming error
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
        self._staged[target] = Path(tmp)
        with os.fdopen(fd, "w", newline="", encoding="utf-8") as fh:
            fh.write(text)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp's 0600 would hide the file from other users

    @contextmanager
    def writing(self) -> Iterator[Outputs]:
        """Stage inside the block; on success rename everything into place, else remove the staging."""
        try:
            yield self
            with _interrupts_held():
                for target, tmp in self._staged.items():
                    os.replace(tmp, target)
                self._staged.clear()
        finally:
            for tmp in self._staged.values():
                tmp.unlink(missing_ok=True)
            self._staged.clear()


def write_atomically(
    path: str | Path, text: str, *, force: bool = False, inputs: Iterable[str | Path | None] = ()
) -> Path:
    """Write one file under the output policy (see :class:`Outputs`)."""
    out = Outputs(force=force, inputs=inputs)
    target = out.claim(path)
    with out.writing():
        out.write(target, text)
    return target


def _named(param: str) -> str:
    """A parameter as messages name it (in backticks, see InputError); a flag given as such stays."""
    return f"`{param}`" if param.isidentifier() else param


def _check_folder(folder: Path, name: str) -> None:
    """The folder exists and a file can be created in it."""
    folder = folder if str(folder) else Path(".")
    if not folder.is_dir():
        raise InputError(f"cannot write {name}: folder {folder} does not exist; create it first")
    try:
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as err:
        raise InputError(
            f"cannot write {name} into {folder}: {(err.strerror or str(err)).lower()}; choose a writable folder"
        ) from None


@contextmanager
def _interrupts_held() -> Iterator[None]:
    """Defer Ctrl-C until the block ends (only possible in the main thread)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: caught.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        if caught:
            raise KeyboardInterrupt
