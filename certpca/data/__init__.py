"""Input data: everything a user hands to certpca passes through here once.

- :mod:`.dataset`: :class:`Dataset` (matrix, ids, labels, preprocessing record) and the id checks;
- :mod:`.readers`: :func:`read` for CSV/TSV(.gz), parquet, npz and covariance files;
- :mod:`.columnar`: parquet and npz files parsed into the :class:`~.cells.Table` that :mod:`.readers` validates;
- :mod:`.cells`: that parsed table, and the one conversion of text cells to numbers;
- :mod:`.convert`: :func:`from_object` for arrays, DataFrames, sparse matrices, AnnData;
- :mod:`.prepare`: :func:`prepare` (log floor, centring, scaling) and class labels;
- :mod:`.loadings`: :func:`read_loadings`, one column of a loadings CSV aligned to the data's features;
- :mod:`.annotation`: gene symbols and descriptions beside feature ids;
- :mod:`.chunked`: dask arrays, zarr stores and lazily read .h5ad files, in blocks of rows (D ≤ N) or
  whole columns (D > N; imports dask only when used).
"""

from .annotation import read_annotation, with_annotation
from .convert import KINDS, from_object, is_anndata, is_in_memory, read_h5ad
from .dataset import Dataset, pixel_ids
from .loadings import read_loadings
from .prepare import clustering_classes, prepare, read_labels, with_labels
from .readers import NA_OPTIONS, data_format, read, read_labelled

__all__ = [
    "KINDS",
    "NA_OPTIONS",
    "Dataset",
    "clustering_classes",
    "data_format",
    "from_object",
    "is_anndata",
    "is_in_memory",
    "pixel_ids",
    "prepare",
    "read_annotation",
    "read",
    "read_h5ad",
    "read_labelled",
    "read_loadings",
    "read_labels",
    "with_annotation",
    "with_labels",
]
