"""Result objects: Component, Fit and their R-style Summary.

Modelled on R's ``prcomp``/``nsprcomp`` (``sdev``, ``rotation``, ``center``,
``scale``; ``summary()`` prints the importance of components) and on
statsmodels (``summary()`` renders as text, HTML and LaTeX; ``str(fit)`` is it).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from certpca import text

from .status import Convergence, Status


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


@dataclass
class Fit:
    """Several components of one data set, with variance accounting.

    ``additional_variance[l]`` is what component l adds beyond the span of the
    earlier ones (the variance of the data projected on the l-th Gram–Schmidt
    direction of the loadings), so non-orthogonal components are not counted
    twice; for orthogonal components it equals wᵀCw.
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

    # R-style accessors --------------------------------------------------
    @property
    def rotation(self) -> pd.DataFrame:
        """Loadings as a features × components DataFrame (R's ``rotation``)."""
        return pd.concat({f"PC{i + 1}": c.loadings for i, c in enumerate(self.components)}, axis=1)

    loadings = rotation

    @property
    def sdev(self) -> np.ndarray:
        """Standard deviations of the additional variances (nsprcomp's ``sdev``)."""
        return np.sqrt(np.maximum(self.additional_variance, 0.0))

    @property
    def pev(self) -> np.ndarray:
        """Proportion of the total variance each component adds."""
        return self.additional_variance / self.total_variance

    @property
    def cumulative(self) -> np.ndarray:
        return np.cumsum(self.pev)

    def importance(self) -> pd.DataFrame:
        """The importance table of ``summary()``: one column per component."""
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
        for i, cert in enumerate(self.certificates):
            notes.append(f"PC{i + 1} {str(cert).splitlines()[0]}")
        return Summary(title, self.importance(), notes)

    def _status_notes(self) -> list[str]:
        """One line when every component reached k and converged, else one line per component."""
        if all(c.status.ok for c in self.components):
            return ["Status: every component reached k and converged"]
        return [f"Status PC{i + 1}: {c.status}" for i, c in enumerate(self.components)]

    def __str__(self) -> str:
        return str(self.summary())

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


class Summary:
    """An importance table with a title and notes, rendered as text, HTML or LaTeX."""

    def __init__(self, title: str, table: pd.DataFrame, notes: list[str]):
        self.title, self.table, self.notes = title, table, notes

    def _formatted(self) -> pd.DataFrame:
        t = self.table.astype(object)
        for row in t.index:
            fmt = "{:d}" if row == "Cardinality" else "{:.4f}"
            t.loc[row] = [fmt.format(int(v) if row == "Cardinality" else float(v)) for v in self.table.loc[row]]
        return t

    def as_text(self) -> str:
        t = self._formatted()
        label_w = max(len(str(i)) for i in t.index)
        widths = [max(len(c), *(len(v) for v in t[c])) for c in t.columns]
        lines = [
            self.title,
            "",
            "Importance of components:",
            " " * label_w + "".join(f" {c:>{w}}" for c, w in zip(t.columns, widths)),
        ]
        for row in t.index:
            lines.append(f"{row:<{label_w}}" + "".join(f" {v:>{w}}" for v, w in zip(t.loc[row], widths)))
        return "\n".join(lines + [""] + self.notes)

    def as_html(self) -> str:
        table = self._formatted().to_html(classes="importance", border=0, escape=True)
        notes = "".join(f"<li>{text.html(n)}</li>" for n in self.notes)
        return f"<div class='summary'><h3>{text.html(self.title)}</h3>{table}<ul>{notes}</ul></div>"

    def as_latex(self) -> str:
        styler = self._formatted().style
        return styler.to_latex(hrules=True, caption=text.latex(self.title))

    _repr_html_ = as_html

    def __str__(self) -> str:
        return self.as_text()


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
