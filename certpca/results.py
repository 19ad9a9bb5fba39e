"""Result objects: Component and Fit (their R-style Summary is :mod:`certpca.summary`).

Modelled on R's ``prcomp``/``nsprcomp``: a Fit of data has ``sdev``, ``rotation``,
``center``, ``scale``, the scores ``x`` and ``predict(newdata)``; ``print(fit)``
shows what R prints for a prcomp object (standard deviations, then the rotation)
and ``summary()`` the importance of components as ``summary.prcomp`` does, plus
the certificate rows.  Summaries render as text, HTML and LaTeX (as statsmodels'
do).  :class:`Projection` holds what new samples need to be prepared the same way.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from certpca import text
from certpca.clock import NET_NOTE

from .data.dataset import some_ids
from .errors import InputError
from .status import Convergence, Status
from .summary import PRINT_DIGITS, Summary, r_format, r_vector

#: print(fit) shows every rotation row up to this many features, else only the nonzero rows (at most this many)
PRINT_ROWS = 100


def anndata_keys(key_added: str | None) -> tuple[str, str, str]:
    """The ``obsm``, ``varm`` and ``uns`` keys of a fit stored under ``key_added``: certpca's own
    (``X_spca``, ``spca_loadings``, ``spca``) for None; scanpy's PCA keys (``X_pca``, ``PCs``,
    ``pca``) for ``"pca"``, so that ``sc.pl.pca*`` and ``sc.pp.neighbors`` read the sparse
    components; otherwise ``key_added`` for all three, as scanpy's ``sc.pp.pca(key_added=...)``."""
    if key_added is None:
        return "X_spca", "spca_loadings", "spca"
    if key_added == "pca":
        return "X_pca", "PCs", "pca"
    return key_added, key_added, key_added


@dataclass
class Component:
    """One sparse principal component.

    ``variance`` is wᵀCw on the covariance the user asked about (for deflated
    components: the original C, not the deflated one).  ``status`` says whether
    it reached k and whether its method converged (:mod:`certpca.status`);
    ``extras`` holds the method's own diagnostics.
    """

    loadings: pd.Series
    variance: float
    method: str
    k: int
    nonneg: bool
    options: dict = field(default_factory=dict)
    iterations: int = 0
    seconds: float = 0.0
    extras: dict = field(default_factory=dict)
    status: Status = field(default_factory=Status)

    @property
    def converged(self) -> bool:
        """False only when the method stopped at its iteration limit."""
        return self.status.convergence is not Convergence.ITERATION_LIMIT

    @property
    def weights(self) -> np.ndarray:
        return self.loadings.to_numpy()

    @property
    def support(self) -> list:
        """Feature ids of the nonzero loadings, in feature order."""
        return list(self.loadings.index[self.weights != 0])

    @property
    def cardinality(self) -> int:
        return int(np.count_nonzero(self.weights))

    def to_dict(self) -> dict:
        nz = self.loadings[self.weights != 0]
        return {
            "method": self.method,
            "k": self.k,
            "nonneg": self.nonneg,
            "value": self.variance,
            "cardinality": self.cardinality,
            "support": [str(s) for s in nz.index],
            "loadings": {str(i): float(v) for i, v in nz.items()},
            "iterations": self.iterations,
            "converged": self.converged,
            "seconds": self.seconds,
            "options": self.options,
            "extras": jsonable(self.extras),
            "status": self.status.to_dict(),
        }

    def __repr__(self) -> str:
        return (
            f"<Component {self.method} k={self.k}{' nonneg' if self.nonneg else ''}: "
            f"variance {self.variance:.6g}, cardinality {self.cardinality}>"
        )


@dataclass(frozen=True, eq=False)
class Projection:
    """How training samples were prepared, so that new samples can be prepared the same way.

    The steps of :func:`certpca.data.prepare`, in its order: ``log2(max(x, log2_floor))``,
    keeping ``feature_ids`` (constant features, ``dropped``, were removed), subtracting
    ``center`` and dividing by ``scale`` (each None when not applied), then by
    2^``unit_exponent`` when prepare rescaled extreme magnitudes.  This is what R's
    ``predict.prcomp`` does with the ``center`` and ``scale`` a prcomp object keeps,
    plus certpca's log floor and dropped features.
    """

    feature_ids: pd.Index
    center: pd.Series | None = None
    scale: pd.Series | None = None
    log2_floor: float | None = None
    dropped: tuple[str, ...] = ()
    unit_exponent: int = 0

    @classmethod
    def of(cls, ds) -> Projection:
        """The projection of a prepared samples × features :class:`~certpca.data.Dataset`."""
        p = ds.preprocessing
        return cls(
            feature_ids=ds.feature_ids,
            center=ds.center,
            scale=ds.scale,
            log2_floor=p.get("log2_floor"),
            dropped=tuple(p.get("dropped_constant") or ()),
            unit_exponent=int(p.get("unit_exponent", 0)),
        )

    def apply(self, newdata) -> tuple[np.ndarray, pd.Index]:
        """New raw samples as prepared values (samples × ``feature_ids``) and their sample ids.

        ``newdata`` is a DataFrame with a column per feature (matched by feature id, other
        columns ignored, as R's ``predict.prcomp`` matches by name), a Series (one sample),
        or a 2-D array whose columns are the features in ``feature_ids`` order.
        """
        values, index = self._values(newdata)
        if not np.all(np.isfinite(values)):
            bad = int(np.sum(~np.isfinite(values).all(axis=1)))
            raise InputError.bad_argument(
                "newdata", f"has missing or infinite values in {bad} sample(s); remove or impute them before predicting"
            )
        if self.log2_floor is not None:
            values = np.log2(np.maximum(values, self.log2_floor))
        if self.center is not None:
            values = values - self.center.to_numpy()
        if self.scale is not None:
            values = values / self.scale.to_numpy()
        if self.unit_exponent:
            values = np.ldexp(values, -self.unit_exponent)
        return values, index

    def _values(self, newdata) -> tuple[np.ndarray, pd.Index]:
        if isinstance(newdata, pd.Series):
            newdata = newdata.to_frame().T
        if isinstance(newdata, pd.DataFrame):
            frame = newdata.set_axis(newdata.columns.map(str), axis=1)
            if not frame.columns.is_unique:
                dup = frame.columns[frame.columns.duplicated()].unique()
                raise InputError.bad_argument(
                    "newdata", f"has duplicate feature columns ({some_ids(dup)}); give each feature once"
                )
            missing = self.feature_ids.difference(frame.columns, sort=False)
            if len(missing):
                raise InputError.bad_argument(
                    "newdata",
                    f"lacks {len(missing)} feature(s) the fit uses ({some_ids(missing)}); "
                    "give a column for every feature in fit.rotation.index",
                )
            try:
                return frame[self.feature_ids].to_numpy(dtype=float), frame.index
            except (TypeError, ValueError):
                raise InputError.bad_argument(
                    "newdata", "has non-numeric values in the fit's feature columns; give numbers"
                ) from None
        try:
            values = np.asarray(newdata, dtype=float)
        except (TypeError, ValueError):
            raise InputError.bad_argument(
                "newdata", f"must be a DataFrame or a 2-D numeric array, got {type(newdata).__name__}"
            ) from None
        d = len(self.feature_ids)
        if values.ndim != 2:
            raise InputError.bad_argument(
                "newdata", f"must be 2-D (samples x features), got {values.ndim}-D; for one sample use x.reshape(1, -1)"
            )
        if values.shape[1] != d:
            hint = (
                f"; {len(self.dropped)} constant feature(s) were dropped at fit time, so give a DataFrame "
                "with feature columns"
                if self.dropped and values.shape[1] == d + len(self.dropped)
                else ", in the order of fit.rotation.index"
            )
            raise InputError.bad_argument(
                "newdata", f"has {values.shape[1]} columns but the fit has {d} features{hint}"
            )
        return values, pd.RangeIndex(values.shape[0])


#: a component adds "more" variance than an earlier one beyond this relative margin (rounding aside)
ORDER_RTOL = 1e-9


@dataclass
class Fit:
    """Several components of one data set, with variance accounting, as R's prcomp object.

    ``additional_variance[l]`` is what component l adds beyond the span of the
    earlier ones (the variance of the data projected on the l-th Gram–Schmidt
    direction of the loadings), so non-orthogonal components are not counted
    twice; for orthogonal components it equals wᵀCw.  ``sdev`` is its square root
    and ``pev`` its share of the total variance tr C, so at full cardinality (the
    eigenvectors) they are exactly prcomp's ``sdev`` and summary.prcomp's
    "Proportion of Variance" (eigenvalue over the sum of all eigenvalues).

    A fit of data (not of a bare covariance) also carries ``scores`` (prcomp's ``x``,
    computed when it was fitted: N × m, the prepared data times the loadings) and
    the :class:`Projection` that ``predict`` applies to new samples.
    """

    components: list[Component]
    additional_variance: np.ndarray
    total_variance: float
    eigenvalues: np.ndarray
    data: dict
    options: dict
    seconds: float
    certificates: list = field(default_factory=list)
    problem: object = field(default=None, repr=False)  # the covariance operator, for certify()
    scores: pd.DataFrame | None = field(default=None, repr=False)
    projection: Projection | None = field(default=None, repr=False)
    annotation: pd.DataFrame | None = field(default=None, repr=False)  # feature id → symbol, description
    source: object = field(default=None, repr=False)  # the prepared Dataset, to score a component adopted later

    def attach_data(self, ds) -> Fit:
        """Record the scores, the preprocessing and the gene annotation of the prepared Dataset
        ``ds`` this fit came from.

        Keeps N × m scores, the D-vectors of ``center`` and ``scale``, and a reference to ``ds``
        (``source``, no copy: certifying may adopt a better component, whose scores are then
        computed from it).  A covariance Dataset has no samples: nothing is recorded.  Returns self.
        """
        if ds.is_covariance:
            return self
        self.source = ds
        W = self.rotation
        if not W.index.equals(ds.feature_ids):
            raise ValueError("the Dataset's features are not those of the fit")
        index = ds.sample_ids if ds.sample_ids is not None else pd.RangeIndex(ds.n_samples)
        self.scores = pd.DataFrame(ds.project(W.to_numpy()), index=index, columns=W.columns)
        self.projection = Projection.of(ds)
        if ds.annotation is not None:
            self.annotation = ds.annotation.reindex(W.index, fill_value="")
        return self

    def to_anndata(self, adata, key_added: str | None = None, *, params: dict | None = None) -> None:
        """Store the fit in an AnnData object as scanpy's ``sc.pp.pca`` stores PCA.

        The scores (cells × components, float32 as scanpy stores them) go to ``obsm``, the
        loadings (genes × components, float64, zero for genes not fitted, e.g. outside
        ``mask_var`` or dropped as constant) to ``varm``, and to ``uns`` the parameters, the
        additional variances and their ratios to the total, the cardinalities and, once
        certified, each component's upper bound, certified fraction and proof.  The keys
        follow scanpy's ``key_added`` (:func:`anndata_keys`).  Loadings over genes that are not
        ``adata.var_names`` (a fit of ``raw`` with more genes) go to ``uns[...]["loadings"]`` as
        a DataFrame.
        """
        obsm_key, varm_key, uns_key = anndata_keys(key_added)
        if self.scores is None:
            raise InputError("only a fit of samples x features data has scores to store in an AnnData")
        cells = pd.Index(adata.obs_names.astype(str))
        if len(cells) != len(self.scores) or not cells.isin(self.scores.index).all():
            raise InputError("the AnnData's cells are not those of the fit; store it in the AnnData it came from")
        x = self.scores.reindex(cells)
        W = self.rotation
        uns: dict = {
            "params": {
                "k": np.asarray([c.k for c in self.components])
                if isinstance(self.options.get("k"), list)
                else int(self.options.get("k", 0)),
                "nonneg": bool(self.options.get("nonneg", False)),
                "method": str(self.options.get("method")),
                "deflation": str(self.options.get("deflation")),
                "n_components": len(self.components),
                **{str(n): v for n, v in (params or {}).items() if v is not None},
                **{
                    str(n): v
                    for n, v in self.data.get("preprocessing", {}).items()
                    if isinstance(v, (bool, int, float, str))
                },
            },
            "variance": np.asarray(self.additional_variance, dtype=float),
            "variance_ratio": np.asarray(self.pev, dtype=float),
            "cardinality": np.array([c.cardinality for c in self.components]),
        }
        if self.certificates:
            certs = list(self.certificates) + [None] * (len(self.components) - len(self.certificates))
            uns["certificates"] = {
                "upper_bound": np.array([np.nan if c is None else c.upper_bound for c in certs], dtype=float),
                "certified_fraction": np.array(
                    [np.nan if c is None else c.certified_fraction for c in certs], dtype=float
                ),
                "optimal": np.array([c is not None and c.optimal for c in certs]),
                "bound": np.array(["" if c is None else c.winner for c in certs], dtype=object),
            }
        var_names = pd.Index(adata.var_names.astype(str))
        if W.index.isin(var_names).all():
            adata.varm[varm_key] = W.reindex(var_names, fill_value=0.0).to_numpy()
        else:
            uns["loadings"] = W.copy()
        adata.obsm[obsm_key] = x.to_numpy(dtype=np.float32)
        adata.uns[uns_key] = uns

    # R-style accessors --------------------------------------------------
    @property
    def rotation(self) -> pd.DataFrame:
        """Loadings as a features × components DataFrame (R's ``rotation``)."""
        return pd.concat({f"PC{i + 1}": c.loadings for i, c in enumerate(self.components)}, axis=1)

    loadings = rotation

    @property
    def x(self) -> pd.DataFrame | None:
        """Scores, samples × components (R's ``x``); None for a fit of a covariance or Problem."""
        return self.scores

    @property
    def center(self) -> pd.Series | bool | None:
        """The feature means subtracted (R's ``center``), False when not centred, None without data."""
        if self.projection is None:
            return None
        return False if self.projection.center is None else self.projection.center

    @property
    def scale(self) -> pd.Series | bool | None:
        """The divisors applied (R's ``scale``), False when not scaled, None without data."""
        if self.projection is None:
            return None
        return False if self.projection.scale is None else self.projection.scale

    def predict(self, newdata=None) -> pd.DataFrame:
        """Scores of new samples, prepared as the training data were (R's ``predict.prcomp``).

        ``newdata`` holds raw values (before log2, centring, scaling): a DataFrame with
        a column per feature id, a Series for one sample, or a 2-D array with the
        features in ``rotation.index`` order.  Without it, the training scores ``x``.
        """
        if self.projection is None or self.scores is None:
            raise InputError(
                "predict needs the preprocessing of the training data: fit samples x features "
                "data (a path, bundled name, Dataset), not a covariance or Problem"
            )
        if newdata is None:
            return self.scores
        values, index = self.projection.apply(newdata)
        W = self.rotation
        return pd.DataFrame(values @ W.to_numpy(), index=index, columns=W.columns)

    @property
    def sdev(self) -> np.ndarray:
        """Standard deviations of the additional variances (nsprcomp's ``sdev``; prcomp's at full k)."""
        return np.sqrt(np.maximum(self.additional_variance, 0.0))

    @property
    def pev(self) -> np.ndarray:
        """Proportion of the total variance tr C that each component adds beyond the earlier ones.

        The "Proportion of Variance" of ``summary()`` and of the report: additional
        variance over the variance of all features, as summary.prcomp divides each
        eigenvalue by the sum of all of them.
        """
        return self.additional_variance / self.total_variance

    @property
    def cumulative(self) -> np.ndarray:
        return np.cumsum(self.pev)

    def importance(self) -> pd.DataFrame:
        """summary.prcomp's importance matrix plus each component's cardinality: one column per component."""
        cols = [f"PC{i + 1}" for i in range(len(self.components))]
        rows = {
            "Standard deviation": self.sdev,
            "Proportion of Variance": self.pev,
            "Cumulative Proportion": self.cumulative,
            "Cardinality": [c.cardinality for c in self.components],
        }
        return pd.DataFrame(rows, index=cols).T

    def summary(self) -> Summary:
        o = self.options
        title = (
            f"{'Nonnegative sparse' if o.get('nonneg') else 'Sparse'} PCA by {o.get('method')}"
            f", k = {o.get('k')}, {len(self.components)} component(s)"
        )
        d = self.data
        shape = (
            f"{d.get('n_features')} x {d.get('n_features')} covariance"
            if d.get("n_samples") is None
            else f"{d.get('n_samples')} samples x {d.get('n_features')} features"
        )
        notes = [
            f"Data: {d.get('name')} ({shape}); {text.describe_preprocessing(d.get('preprocessing', {}))}",
            f"Total variance {self.total_variance:.6g}; lambda1 = {self.eigenvalues[0]:.6g} "
            f"({self.eigenvalues[0] / self.total_variance:.1%} of the total)",
        ]
        if len(self.components) > 1:
            notes.append(
                f"Deflation: {o.get('deflation')}; variance counted as additional "
                "(beyond the span of earlier components)"
            )
        notes.extend(self._status_notes())
        # what the method left out on these data (auto without GPower: solvers/auto.py), once
        notes.extend(
            f"Method: {note}" for note in dict.fromkeys(c.extras["auto"] for c in self.components if "auto" in c.extras)
        )
        if self.order_note():
            notes.append(str(self.order_note()))
        for i, cert in enumerate(self.certificates):
            if cert is not None:
                notes.append(f"PC{i + 1} {str(cert).splitlines()[0]}")
                notes.extend(f"PC{i + 1}: {remark}" for remark in cert.remarks())
        notes.extend(self._budget_notes())
        return Summary(title, self._with_certificate_rows(self.importance()), notes)

    def _budget_notes(self) -> list[str]:
        """What the certificates' budget was used for, once for all components, and whether the CPU safety net
        shortened their work (certpca/clock.py): then the result may depend on the machine and its load."""
        certs = [c for c in self.certificates if c is not None]
        if not certs or all(c.budget is None for c in certs):
            return []
        note = f"Certificates: {sum(c.budget_used for c in certs):.3g} s of estimated work used"
        if any(c.net_fired for c in certs):
            note += f"; {NET_NOTE}"
        return [note]

    def _with_certificate_rows(self, table: pd.DataFrame) -> pd.DataFrame:
        """The importance table and, when there are certificates, the rows "Upper bound" (on the
        variance OPT of the problem the component solved), "Certified fraction" (its variance over
        that bound) and "Optimal" (proven / not proven); "-" for a component without one."""
        if not self.certificates:
            return table
        table = table.astype(object)
        certs = list(self.certificates) + [None] * (table.shape[1] - len(self.certificates))
        table.loc["Upper bound"] = ["-" if c is None else float(c.upper_bound) for c in certs[: table.shape[1]]]
        table.loc["Certified fraction"] = [
            "-" if c is None else float(c.certified_fraction) for c in certs[: table.shape[1]]
        ]
        table.loc["Optimal"] = [
            "-" if c is None else ("proven" if c.optimal else "not proven") for c in certs[: table.shape[1]]
        ]
        return table

    def prcomp_text(self, max_rows: int = PRINT_ROWS) -> str:
        """What R prints for a prcomp object: the standard deviations, then the rotation.

        With more than ``max_rows`` features only the rows with a nonzero loading are
        shown (at most ``max_rows`` of them), and the header says so.
        """
        W = self.rotation
        d, m = W.shape
        lines = [f"Standard deviations (1, .., p={m}):", r_vector(self.sdev), "", f"Rotation (n x k) = ({d} x {m}):"]
        shown = W
        if d > max_rows:
            shown = W[(W != 0).any(axis=1)]
            n_nonzero = len(shown)
            shown = shown.iloc[:max_rows]
            said = (
                f"only the {n_nonzero} rows with a nonzero loading; the other {d - n_nonzero} are zero"
                if n_nonzero < d
                else "every row has a nonzero loading"
            )
            more = f"; the first {max_rows} shown" if n_nonzero > max_rows else ""
            lines.append(f"({said}{more})")
        formatted = pd.DataFrame(
            {c: r_format(shown[c].to_numpy(), PRINT_DIGITS) for c in shown.columns}, index=shown.index
        )
        lines.append(formatted.to_string())
        return "\n".join(lines)

    def order_note(self) -> str | None:
        """Which components add more variance than an earlier one (None when they decrease).

        Components stay in fitting order (docs/prcomp-and-sklearn.md): each later one is the best on
        the covariance deflated by, or the features left by, the earlier ones, and its certificate is
        on that problem, so ordering them by variance as prcomp does would change what they solve."""
        v = np.asarray(self.additional_variance, dtype=float)
        up = [j for j in range(1, len(v)) if v[j] > float(np.min(v[:j])) * (1 + ORDER_RTOL)]
        if not up:
            return None
        which = ", ".join(f"PC{j + 1} ({v[j]:.4g})" for j in up)
        return (
            f"Order: components are in fitting order, not by variance: {which} add(s) more than an earlier "
            "component; each later component is the best on the problem the earlier ones left"
        )

    def _status_notes(self) -> list[str]:
        """One line when every component reached k and converged, else one line per component."""
        if all(c.status.ok for c in self.components):
            return ["Status: every component reached k and converged"]
        return [f"Status PC{i + 1}: {c.status}" for i, c in enumerate(self.components)]

    def __str__(self) -> str:
        return self.prcomp_text()

    def __repr__(self) -> str:
        return f"<Fit {self.options.get('method')} k={self.options.get('k')}: {len(self.components)} component(s)>"

    def to_dict(self) -> dict:
        comps = []
        for c, add, pev in zip(self.components, self.additional_variance, self.pev):
            d = c.to_dict()
            d["additional_variance"] = float(add)
            d["pev"] = float(pev)
            comps.append(d)
        return {
            "data": jsonable(self.data),
            "options": jsonable(self.options),
            "total_variance": self.total_variance,
            "lambda1": float(self.eigenvalues[0]),
            "components": comps,
            "cumulative_pev": [float(x) for x in self.cumulative],
            "seconds": self.seconds,
            "certificates": [c.to_dict() for c in self.certificates],
        }


def jsonable(x):
    """Numbers as numbers, arrays as lists, keys as strings."""
    if isinstance(x, dict):
        return {str(k): jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [jsonable(v) for v in x]
    if isinstance(x, np.ndarray):
        return [jsonable(v) for v in x.tolist()]
    if isinstance(x, np.integer):
        return int(x)
    if isinstance(x, np.floating):
        return float(x)
    if isinstance(x, np.bool_):
        return bool(x)
    return x
