"""The saved run: what ``certpca report --json`` prints and ``certpca table`` reads back.

Typed dataclasses with one serialisation (:meth:`Saved.to_json`) and one loader
(:meth:`Saved.from_json`).  The fit and the certificate of each method are typed records
(:class:`SavedFit`, :class:`SavedCertificate`) made from ``Fit.to_dict()`` and
``Certificate.to_dict()``, the dicts of ``certpca fit --json`` and ``certpca certify --json``, so
their fields have one owner.

Format ``certpca-run/3`` is ``certpca-run/2`` without the fit's copy of the data description (the
run's ``data`` holds it) and its ``certificates`` list (always empty in a report: the certificates are
beside the fit); ``certpca-run/2`` is ``certpca-run/1`` with every data field always present
(``class_counts``, ``n_classes``: null without labels).  All three are read.
"""

from __future__ import annotations

import dataclasses
import json
import types
import typing
from dataclasses import dataclass, field
from typing import Any, TypeVar

from typing_extensions import Self

from certpca.certification import Certificate
from certpca.errors import InputError
from certpca.results import Fit, jsonable

FORMAT = "certpca-run/3"
#: formats :meth:`ReportRun.from_dict` reads (the fields a newer one dropped are ignored)
READABLE = ("certpca-run/1", "certpca-run/2", FORMAT)

S = TypeVar("S", bound="Saved")


class Saved:
    """Base of the saved dataclasses: JSON out and back in."""

    def to_dict(self) -> dict:
        """Plain JSON-able dict (numbers as numbers, keys as strings)."""
        return jsonable(dataclasses.asdict(self))  # type: ignore[call-overload]

    def to_json(self) -> str:
        """One JSON object, keys sorted: the same bytes for the same run."""
        return json.dumps(self.to_dict(), sort_keys=True, allow_nan=True)

    @classmethod
    def from_dict(cls, obj: dict) -> Self:
        """Rebuild from :meth:`to_dict` output; keys this version does not know are dropped."""
        hints = typing.get_type_hints(cls)
        known = {f.name for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
        return cls(**{name: _build(hints[name], value) for name, value in obj.items() if name in known})

    @classmethod
    def from_json(cls, text: str) -> Self:
        """Rebuild from :meth:`to_json` output."""
        return cls.from_dict(json.loads(text))


def _build(tp: Any, value: Any) -> Any:
    """``value`` (parsed JSON) as type ``tp``: Saved classes rebuilt, lists and optionals followed."""
    if value is None:
        return None
    if isinstance(tp, type) and issubclass(tp, Saved):
        return tp.from_dict(value)
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin in (typing.Union, types.UnionType):
        inner = [a for a in args if a is not type(None)]
        return _build(inner[0], value) if len(inner) == 1 else value
    if origin is list and args:
        return [_build(args[0], v) for v in value]
    return value


# ------------------------------------------------------------------ pieces
@dataclass
class DataSummary(Saved):
    """The data section: ``Dataset.describe()`` plus the spectrum."""

    name: str
    source: str | None
    n_samples: int | None
    n_features: int
    is_covariance: bool
    labelled: bool
    preprocessing: dict
    total_variance: float
    lambda1: float
    lambda1_share: float
    eigenvalues: list[float]
    image_shape: list[int] | None = None
    class_counts: dict[str, int] | None = None
    n_classes: int | None = None
    units: list[str] = field(default_factory=lambda: ["samples", "features"])  # ["cells", "genes"] for AnnData


@dataclass
class Settings(Saved):
    """The resolved options of the run (what the page and the tables say was done)."""

    k: int
    nonneg: list[bool]
    methods: list[str]
    components: int
    seed: int
    path: list[int]
    path_methods: list[str]
    bounds: dict[str, list[str]]  # "sparse" / "nonneg" -> bound names of the certificate at k
    path_bounds: list[str]
    genes: bool
    budget: float | None = None  # seconds of estimated work for the certificates and the band (--budget)


@dataclass
class SavedBound(Saved):
    """One upper bound of a certificate (``Bound.to_dict()``); ``params`` are the bound's own."""

    value: float
    name: str
    params: dict = field(default_factory=dict)
    seconds: float = 0.0
    validity: str = ""


@dataclass
class SavedCertificate(Saved):
    """A certificate as ``certpca certify --json`` gives it (``Certificate.to_dict()``); None: not finite."""

    value: float | None
    lower_bound: float | None
    upper_bound: float | None
    winner: str
    certified_fraction: float | None
    gap: float | None
    relative_gap: float | None
    optimal: bool
    tol: float
    k: int
    nonneg: bool
    bounds: list[SavedBound]
    skipped: dict[str, str] = field(default_factory=dict)

    @classmethod
    def of(cls, cert: Certificate) -> SavedCertificate:
        return cls.from_dict(cert.to_dict())


@dataclass
class SavedComponent(Saved):
    """One component of a fit (``Component.to_dict()`` with the variance it adds and its share)."""

    method: str
    k: int
    nonneg: bool
    value: float  # variance wᵀCw
    cardinality: int
    support: list[str]
    loadings: dict[str, float]  # nonzero loadings by feature id
    iterations: int
    converged: bool
    seconds: float
    options: dict
    extras: dict
    status: dict
    additional_variance: float
    pev: float


@dataclass
class SavedFit(Saved):
    """A fit as ``certpca fit --json`` gives it (``Fit.to_dict()``), less the data description and the
    certificates, which the run holds elsewhere."""

    options: dict
    total_variance: float
    lambda1: float
    components: list[SavedComponent]
    cumulative_pev: list[float]
    seconds: float

    @classmethod
    def of(cls, fit: Fit) -> SavedFit:
        return cls.from_dict(fit.to_dict())


@dataclass
class MethodFit(Saved):
    """One method at k: its fit and its certificate."""

    method: str
    nonneg: bool
    fit: SavedFit
    certificate: SavedCertificate
    #: certificates of components 2.. (each against the problem it solved; None: no nonzero loading)
    later_certificates: list[SavedCertificate | None] = field(default_factory=list)

    @property
    def components(self) -> list[SavedComponent]:
        return self.fit.components

    @property
    def value(self) -> float:
        """Variance wᵀCw of the first component."""
        return self.fit.components[0].value


@dataclass
class Scores(Saved):
    """The samples on the components of one sign constraint's best fit, and on ordinary PCA's first two."""

    nonneg: bool
    method: str
    sample_ids: list[str]
    labels: list[str] | None
    components: list[list[float]]  # one list of N scores per component
    pca: list[list[float]]  # PC1 and PC2 of ordinary PCA (fewer when the rank is lower)
    #: the prepared values of the selected features (any component), feature id -> N values: the heatmap
    selected: dict[str, list[float]] = field(default_factory=dict)


@dataclass
class PathPoint(Saved):
    k: int
    value: float
    cardinality: int
    iterations: int
    seconds: float


@dataclass
class MethodPath(Saved):
    """One method's warm-started path over the grid."""

    method: str
    nonneg: bool
    points: list[PathPoint]


@dataclass
class BandPoint(Saved):
    k: int
    best_value: float
    best_method: str
    upper_bound: float
    winner: str
    certified_fraction: float


@dataclass
class Band(Saved):
    """The certified band of one sign constraint: best value found .. best upper bound (reporting/band.py)."""

    nonneg: bool
    bounds: list[str]
    points: list[BandPoint]


@dataclass
class GeneRow(Saved):
    """Jaccard scores of one feature subset (``features`` is None for the full data)."""

    selector: str
    size: int
    n_features: int
    mean: float
    sd: float
    min: float
    max: float
    scores: list[float]
    features: list[str] | None


@dataclass
class GeneSetTest(Saved):
    """:func:`certpca.evaluate.gene_set_test` of the featured genes (the random sets' scores summarised)."""

    statistic: float
    p_value: float
    n_sets: int
    null_mean: float
    null_q95: float
    top_variance: float
    all_features: float
    size: int
    n_init: int
    seed: int


@dataclass
class GeneSelection(Saved):
    """The gene-selection evaluation (``certpca genes --json``); ``tests`` are ``evaluate.compare`` dicts."""

    sizes: list[int]
    featured: int
    method: str
    n_init: int
    seed: int
    alpha: float
    n_clusters: int
    selectors: list[str]
    preprocessing: dict
    rows: list[GeneRow]
    tests: list[dict]  # runs saved before the gene-set test: Welch and Mann–Whitney over k-means restarts
    conclusion: str
    notes: list[str]
    set_test: GeneSetTest | None = None

    def row(self, selector: str, size: int) -> GeneRow | None:
        return next((r for r in self.rows if r.selector == selector and r.size == size), None)


@dataclass
class StabilityRow(Saved):
    """One feature of the first component: how often the halves of the samples selected it."""

    feature: str
    frequency: float
    loading: float
    selected: bool


@dataclass
class SavedStability(Saved):
    """Stability selection of the best fit's first component (:func:`certpca.stability`)."""

    nonneg: bool
    method: str
    k: int
    n_subsamples: int
    threshold: float
    expected_false: float | None
    rows: list[StabilityRow]

    def frequency(self, feature: str) -> float:
        """The feature's selection frequency (0 when no half selected it)."""
        return next((r.frequency for r in self.rows if r.feature == feature), 0.0)


@dataclass
class ReportRun(Saved):
    """Everything a report shows; deterministic for fixed inputs and seed except the seconds."""

    command: str
    versions: dict[str, str]
    settings: Settings
    data: DataSummary
    methods_skipped: dict[str, str]
    path_skipped: dict[str, str]
    fits: list[MethodFit]
    paths: list[MethodPath]
    bands: list[Band]
    genes: GeneSelection | None
    notes: list[str]
    references: list[str]
    step_seconds: dict[str, float] = field(default_factory=dict)
    format: str = FORMAT
    scores: list[Scores] = field(default_factory=list)
    advice: list[str] = field(default_factory=list)  # preprocessing advice (raw intensities, counts, controls)
    annotation: dict[str, list[str]] = field(default_factory=dict)  # selected feature id → [symbol, description]
    stability: list[SavedStability] = field(default_factory=list)

    def feature_label(self, fid: str) -> str:
        """``id (SYMBOL)`` when the run's annotation names the feature's gene, else the id."""
        symbol = self.annotation.get(fid, ["", ""])[0]
        return f"{fid} ({symbol})" if symbol and symbol != fid else fid

    def fits_of(self, nonneg: bool) -> list[MethodFit]:
        return [f for f in self.fits if f.nonneg == nonneg]

    def best_fit(self, nonneg: bool) -> MethodFit | None:
        """The fit of largest first-component variance (first in method order on ties)."""
        fits = self.fits_of(nonneg)
        return max(fits, key=lambda f: f.value) if fits else None

    def band(self, nonneg: bool) -> Band | None:
        return next((b for b in self.bands if b.nonneg == nonneg), None)

    def scores_of(self, nonneg: bool) -> Scores | None:
        return next((s for s in self.scores if s.nonneg == nonneg), None)

    def stability_of(self, nonneg: bool) -> SavedStability | None:
        return next((s for s in self.stability if s.nonneg == nonneg), None)

    def paths_of(self, nonneg: bool) -> list[MethodPath]:
        return [p for p in self.paths if p.nonneg == nonneg]

    @classmethod
    def from_dict(cls, obj: dict) -> ReportRun:
        if obj.get("format") not in READABLE:
            raise InputError(
                f"saved run format {obj.get('format')!r} is not one this certpca reads "
                f"({', '.join(READABLE)}); rerun certpca report --json"
            )
        run = super().from_dict(obj)
        run.format = FORMAT
        return run


def is_run(obj: dict) -> bool:
    """True for the JSON of a saved run (any version, so an unknown one gets a clear error)."""
    return str(obj.get("format", "")).startswith("certpca-run/")


__all__ = [
    "FORMAT",
    "READABLE",
    "Band",
    "BandPoint",
    "DataSummary",
    "GeneRow",
    "GeneSelection",
    "GeneSetTest",
    "MethodFit",
    "MethodPath",
    "PathPoint",
    "ReportRun",
    "Saved",
    "SavedBound",
    "SavedCertificate",
    "SavedComponent",
    "SavedFit",
    "SavedStability",
    "Scores",
    "Settings",
    "StabilityRow",
    "is_run",
]
