"""Input data: everything a user hands to certpca passes through here once.

- :mod:`.dataset`: :class:`Dataset` (matrix, ids, labels, preprocessing record) and the id checks;
- :mod:`.readers`: :func:`read` for CSV/TSV(.gz), parquet, npz and covariance files;
- :mod:`.prepare`: :func:`prepare` (log floor, centring, scaling) and class labels.
"""
from .dataset import Dataset, pixel_ids
from .prepare import clustering_classes, prepare, read_labels, with_labels
from .readers import NA_OPTIONS, read

__all__ = ["Dataset", "NA_OPTIONS", "clustering_classes", "pixel_ids", "prepare", "read", "read_labels",
           "with_labels"]
