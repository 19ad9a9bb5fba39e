"""Every table of a report, from a saved run (or a fit/certify ``--json`` object).

Each table is a :class:`Table`: a caption, a frame of *display strings*
(formatted here, once, by :func:`fmt` — the HTML, LaTeX and Markdown all show
these very strings) and a frame of raw numbers for the CSV.  Numbers in the
report therefore equal the JSON's numbers formatted by :func:`fmt`.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

# ----------------------------------------------------------------- formats
FORMATS = {
    "value": "{:.6g}",       # variances, bounds
    "fraction": "{:.4f}",    # certified fraction, Jaccard
    "percent": "{:.2%}",     # shares of variance
    "p": "{:.3g}",           # p-values
    "loading": "{:+.4f}",
    "seconds": "{:.2f}",
    "int": "{:d}",
}


def fmt(x, kind: str = "value") -> str:
    """The one formatting function of the report (HTML, LaTeX, Markdown, text)."""
    if x is None:
        return "–"
    if isinstance(x, bool):
        return "yes" if x else "no"
    if kind == "int":
        return f"{int(x):d}"
    x = float(x)
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "∞" if x > 0 else "−∞"
    return FORMATS[kind].format(x)


@dataclass
class Table:
    name: str          # file stem under --tables
    caption: str
    display: pd.DataFrame
    raw: pd.DataFrame

    def to_html(self) -> str:
        styler = self.display.style.hide(axis="index")
        styler.format(escape="html").format_index(escape="html", axis=1)   # ids come from the user's file
        styler.set_uuid(self.name)
        html = styler.to_html(exclude_styles=True, doctype_html=False)   # no ids, no style block
        return html.replace("<table>", '<table class="tbl">', 1)          # (exclude_styles drops attributes)

    def to_latex(self) -> str:
        styler = self.display.style.hide(axis="index")
        styler.format(escape="latex").format_index(escape="latex", axis=1)
        caption = _latex_escape(self.caption)
        cols = "l" + "".join("r" if _numeric(self.raw, c) else "l" for c in list(self.raw.columns)[1:])
        cols = cols[: self.display.shape[1]].ljust(self.display.shape[1], "l")
        return _latex_symbols(styler.to_latex(hrules=True, caption=caption, label=f"tab:{self.name}",
                                              column_format=cols, position="htbp"))

    def to_markdown(self) -> str:
        cols = [str(c) for c in self.display.columns]
        lines = [f"Table: {self.caption}", "", "| " + " | ".join(_md(c) for c in cols) + " |",
                 "|" + "|".join(" --- " for _ in cols) + "|"]
        for row in self.display.itertuples(index=False):
            lines.append("| " + " | ".join(_md(str(v)) for v in row) + " |")
        return "\n".join(lines) + "\n"

    def to_csv(self) -> str:
        return self.raw.to_csv(index=False, lineterminator="\n")


_LATEX_SYMBOLS = (("wᵀCw", r"$w^\top C w$"), ("λ1", r"$\lambda_1$"), ("≥", r"$\geq$"), ("≤", r"$\leq$"),
                  ("✓", r"$\checkmark$"), ("±", r"$\pm$"), ("×", r"$\times$"), ("∞", r"$\infty$"),
                  ("−", "-"), ("–", "--"), ("α", r"$\alpha$"), ("§", r"\S{}"))


def _latex_symbols(tex: str) -> str:
    """Unicode symbols as LaTeX commands, so the tables compile with pdflatex too."""
    for a, b in _LATEX_SYMBOLS:
        tex = tex.replace(a, b)
    return tex


def _numeric(frame: pd.DataFrame, column) -> bool:
    return pd.api.types.is_numeric_dtype(frame[column]) and not pd.api.types.is_bool_dtype(frame[column])


#: Markdown specials (backslash first) and the HTML a Markdown renderer would pass through.
_MD_ESCAPES = (("\\", "\\\\"), ("&", "&amp;"), ("<", "&lt;"), (">", "&gt;"), ("|", "\\|"), ("*", "\\*"),
               ("_", "\\_"), ("`", "\\`"), ("[", "\\["), ("]", "\\]"), ("\n", " "))


def _md(s: str) -> str:
    """A table cell as Markdown text: specials escaped, so ids from a file render as written."""
    for a, b in _MD_ESCAPES:
        s = s.replace(a, b)
    return s


def _latex_escape(s: str) -> str:
    out = s
    for a, b in (("\\", r"\textbackslash{}"), ("&", r"\&"), ("%", r"\%"), ("$", r"\$"), ("#", r"\#"),
                 ("_", r"\_"), ("{", r"\{"), ("}", r"\}"), ("~", r"\textasciitilde{}"), ("^", r"\^{}")):
        if a in ("{", "}") and "textbackslash" in out:
            continue
        out = out.replace(a, b)
    return out


def _table(name, caption, rows_display, rows_raw) -> Table:
    return Table(name, caption, pd.DataFrame(rows_display), pd.DataFrame(rows_raw))


def mode_name(nonneg: bool) -> str:
    return "nonnegative sparse" if nonneg else "sparse"


# ------------------------------------------------------------------ tables
def data_table(run: dict) -> Table:
    d = run["data"]
    prep = d.get("preprocessing", {})
    from certpca.results import _describe_preprocessing
    items = [
        ("data set", d.get("name"), d.get("name")),
        ("source", d.get("source"), d.get("source")),
        ("samples", fmt(d["n_samples"], "int") if d.get("n_samples") is not None else "– (covariance)",
         d.get("n_samples")),
        ("features", fmt(d["n_features"], "int"), d["n_features"]),
        ("preprocessing", _describe_preprocessing(prep), _describe_preprocessing(prep)),
        ("total variance (trace)", fmt(d["total_variance"]), d["total_variance"]),
        ("λ1 (largest eigenvalue)", fmt(d["lambda1"]), d["lambda1"]),
        ("λ1 share of the total", fmt(d["lambda1_share"], "percent"), d["lambda1_share"]),
    ]
    if d.get("class_counts"):
        counts = " / ".join(f"{k} {v}" for k, v in d["class_counts"].items())
        items.append(("classes", counts, counts))
    if d.get("image_shape"):
        shape = " × ".join(str(s) for s in d["image_shape"])
        items.append(("image shape", shape, shape))
    return _table("data", "The data", {"quantity": [i[0] for i in items], "value": [i[1] for i in items]},
                  {"quantity": [i[0] for i in items], "value": [i[2] for i in items]})


def results_table(run: dict, nonneg: bool, timings: bool = False) -> Table | None:
    fits = [f for f in run["fits"] if f["nonneg"] == nonneg]
    if not fits:
        return None
    k = run["settings"]["k"]
    total = run["data"]["total_variance"]
    disp, raw = [], []
    for f in fits:
        c0, cert = f["fit"]["components"][0], f["certificate"]
        r = {"method": f["method"], "variance": c0["value"], "explained": c0["value"] / total,
             "of_lambda1": c0["value"] / run["data"]["lambda1"], "cardinality": c0["cardinality"],
             "iterations": c0["iterations"], "seconds": f["fit"]["seconds"],
             "upper_bound": cert["upper_bound"], "certified_fraction": cert["certified_fraction"],
             "optimal": cert["optimal"]}
        if not timings:
            r.pop("seconds")
        raw.append(r)
        dr = {"method": r["method"], "variance": fmt(r["variance"]), "explained": fmt(r["explained"], "percent"),
              "of λ1": fmt(r["of_lambda1"], "percent"), "cardinality": fmt(r["cardinality"], "int"),
              "iterations": fmt(r["iterations"], "int")}
        if timings:
            dr["time (s)"] = fmt(r["seconds"], "seconds")
        dr.update({"upper bound": fmt(r["upper_bound"]), "certified": fmt(r["certified_fraction"], "percent"),
                   "optimal": fmt(r["optimal"])})
        disp.append(dr)
    winner = fits[0]["certificate"]["winner"]
    caption = (f"{mode_name(nonneg).capitalize()} PCA, k = {k}: variance wᵀCw of the first component, its share "
               f"of the total variance and of λ1, and the certificate (upper bound on OPT from {winner}; "
               "certified = variance / upper bound)")
    return _table(f"results-{'nonneg' if nonneg else 'sparse'}", caption, disp, raw)


def bounds_table(run: dict, nonneg: bool, timings: bool = False) -> Table | None:
    fits = [f for f in run["fits"] if f["nonneg"] == nonneg]
    if not fits:
        return None
    cert = fits[0]["certificate"]
    disp, raw = [], []
    for b in sorted(cert["bounds"], key=lambda b: (b["value"], b["name"])):
        r = {"bound": b["name"], "upper_bound": b["value"], "winner": b["name"] == cert["winner"]}
        d = {"bound": b["name"], "upper bound on OPT": fmt(b["value"]), "best": "✓" if r["winner"] else ""}
        if timings:
            r["seconds"] = b.get("seconds")
            d["time (s)"] = fmt(b.get("seconds"), "seconds")
        disp.append(d)
        raw.append(r)
    for name, why in sorted(cert.get("skipped", {}).items()):
        raw.append({"bound": name, "upper_bound": None, "winner": False, **({"seconds": None} if timings else {})})
        disp.append({"bound": name, "upper bound on OPT": f"skipped: {why}", "best": "",
                     **({"time (s)": ""} if timings else {})})
    caption = (f"Upper bounds on OPT({run['settings']['k']}{', w ≥ 0' if nonneg else ''}) computed for the "
               f"{mode_name(nonneg)} problem; every one is valid, the smallest is the certificate")
    return _table(f"bounds-{'nonneg' if nonneg else 'sparse'}", caption, disp, raw)


def path_table(run: dict, nonneg: bool) -> Table | None:
    band = next((b for b in run["bands"] if b["nonneg"] == nonneg), None)
    if band is None:
        return None
    paths = [p for p in run["paths"] if p["nonneg"] == nonneg]
    disp, raw = [], []
    for i, pt in enumerate(band["points"]):
        r, d = {"k": pt["k"]}, {"k": fmt(pt["k"], "int")}
        for p in paths:
            v = p["points"][i]["value"]
            r[p["method"]] = v
            d[p["method"]] = fmt(v)
        r.update({"upper_bound": pt["upper_bound"], "bound": pt["winner"],
                  "certified_fraction": pt["certified_fraction"]})
        d.update({"upper bound": fmt(pt["upper_bound"]), "bound": pt["winner"],
                  "certified": fmt(pt["certified_fraction"], "percent")})
        raw.append(r)
        disp.append(d)
    caption = (f"Variance–cardinality path, {mode_name(nonneg)}: best variance of each method at each k, and the "
               f"upper bound on OPT(k) from {', '.join(band['bounds'])} (certified = best variance / upper bound)")
    return _table(f"path-{'nonneg' if nonneg else 'sparse'}", caption, disp, raw)


def best_fit(run: dict, nonneg: bool) -> dict | None:
    fits = [f for f in run["fits"] if f["nonneg"] == nonneg]
    return max(fits, key=lambda f: f["fit"]["components"][0]["value"]) if fits else None


def features_table(run: dict, nonneg: bool) -> Table | None:
    best = best_fit(run, nonneg)
    if best is None:
        return None
    fits = [f for f in run["fits"] if f["nonneg"] == nonneg]
    disp, raw = [], []
    for j, comp in enumerate(best["fit"]["components"]):
        order = sorted(comp["loadings"].items(), key=lambda kv: (-abs(kv[1]), kv[0]))
        for rank, (fid, w) in enumerate(order, 1):
            found = [f["method"] for f in fits if fid in f["fit"]["components"][0]["loadings"]] if j == 0 else []
            raw.append({"component": j + 1, "rank": rank, "feature": fid, "loading": w,
                        "first_component_of": ";".join(found)})
            disp.append({"PC": fmt(j + 1, "int"), "rank": fmt(rank, "int"), "feature": fid,
                         "loading": fmt(w, "loading"), "also selected by (PC1)": ", ".join(found)})
    caption = (f"Selected features of the {mode_name(nonneg)} fit by {best['method']} (the best variance), by "
               "decreasing |loading|; the last column lists the methods whose first component contains the feature")
    return _table(f"features-{'nonneg' if nonneg else 'sparse'}", caption, disp, raw)


def genes_table(run: dict) -> Table | None:
    g = run.get("genes")
    if not g:
        return None
    disp, raw = [], []
    for r in g["rows"]:
        raw.append({"selector": r["selector"], "size": r["size"], "n_features": r["n_features"],
                    "mean": r["mean"], "sd": r["sd"], "min": r["min"], "max": r["max"]})
        disp.append({"features from": r["selector"], "size": fmt(r["size"], "int"),
                     "used": fmt(r["n_features"], "int"), "Jaccard mean": fmt(r["mean"], "fraction"),
                     "sd": fmt(r["sd"], "fraction"), "min": fmt(r["min"], "fraction"),
                     "max": fmt(r["max"], "fraction")})
    caption = (f"Gene selection (Sigg & Buhmann 2008, §5.3): pair-counting Jaccard of k-means (k = "
               f"{g['n_clusters']}) against the classes over {g['n_init']} random initialisations, mean, sd, range")
    return _table("genes", caption, disp, raw)


def tests_table(run: dict) -> Table | None:
    g = run.get("genes")
    if not g:
        return None
    disp, raw = [], []
    for t in g["tests"]:
        a, b = t["names"]
        raw.append({"a": a, "b": b, "mean_a": t["mean_a"], "sd_a": t["sd_a"], "mean_b": t["mean_b"],
                    "sd_b": t["sd_b"], "p_welch": t["p_welch"], "p_mannwhitney": t["p_mannwhitney"],
                    "significant": t["significant"]})
        disp.append({"A": a, "A mean ± sd": f"{fmt(t['mean_a'], 'fraction')} ± {fmt(t['sd_a'], 'fraction')}",
                     "B": b, "B mean ± sd": f"{fmt(t['mean_b'], 'fraction')} ± {fmt(t['sd_b'], 'fraction')}",
                     "Welch p": fmt(t["p_welch"], "p"), "Mann–Whitney p": fmt(t["p_mannwhitney"], "p"),
                     f"significant (α = {t['alpha']})": fmt(t["significant"])})
    caption = (f"Is the {g['featured']}-feature nonnegative sparse component better? Two-sided Welch t-test and "
               f"Mann–Whitney U over the {g['n_init']} k-means runs")
    return _table("genes-tests", caption, disp, raw)


# ------------------------------------------------------- fit / certify JSON
def fit_tables(obj: dict) -> list[Table]:
    """Tables of a ``certpca fit --json`` object: importance and loadings."""
    disp, raw = [], []
    for j, c in enumerate(obj["components"]):
        raw.append({"component": j + 1, "method": c["method"], "k": c["k"], "nonneg": c["nonneg"],
                    "variance": c["value"], "additional_variance": c["additional_variance"],
                    "pev": c["pev"], "cumulative_pev": obj["cumulative_pev"][j], "cardinality": c["cardinality"]})
        disp.append({"PC": fmt(j + 1, "int"), "method": c["method"], "variance": fmt(c["value"]),
                     "additional variance": fmt(c["additional_variance"]), "share": fmt(c["pev"], "percent"),
                     "cumulative": fmt(obj["cumulative_pev"][j], "percent"),
                     "cardinality": fmt(c["cardinality"], "int")})
    name = obj.get("data", {}).get("name", "")
    tables = [_table("fit", f"Sparse principal components of {name}", disp, raw)]
    ld, lr = [], []
    for j, c in enumerate(obj["components"]):
        for rank, (fid, w) in enumerate(sorted(c["loadings"].items(), key=lambda kv: (-abs(kv[1]), kv[0])), 1):
            lr.append({"component": j + 1, "rank": rank, "feature": fid, "loading": w})
            ld.append({"PC": fmt(j + 1, "int"), "rank": fmt(rank, "int"), "feature": fid,
                       "loading": fmt(w, "loading")})
    tables.append(_table("fit-loadings", "Nonzero loadings by decreasing |loading|", ld, lr))
    if obj.get("certificates"):
        tables.append(certificate_table(obj["certificates"][0], "fit-certificate"))
    return tables


def certificate_table(cert: dict, name: str = "certificate") -> Table:
    disp, raw = [], []
    for b in sorted(cert["bounds"], key=lambda b: (b["value"], b["name"])):
        raw.append({"bound": b["name"], "upper_bound": b["value"], "winner": b["name"] == cert["winner"]})
        disp.append({"bound": b["name"], "upper bound on OPT": fmt(b["value"]),
                     "best": "✓" if b["name"] == cert["winner"] else ""})
    caption = (f"Certificate, k = {cert['k']}{', nonnegative' if cert['nonneg'] else ''}: value "
               f"{fmt(cert['value'])} ≤ OPT ≤ {fmt(cert['upper_bound'])}, certified "
               f"{fmt(cert['certified_fraction'], 'percent')}{', optimal' if cert['optimal'] else ''}")
    return _table(name, caption, disp, raw)


def saved_path_table(obj: dict) -> Table:
    """The table of a ``certpca path --json`` object."""
    disp = []
    for p in obj["points"]:
        row = {"k": fmt(p["k"], "int"), "variance": fmt(p["variance"]), "of λ1": fmt(p["of_lambda1"], "percent"),
               "explained": fmt(p["pev"], "percent"), "cardinality": fmt(p["cardinality"], "int")}
        if "upper_bound" in p:
            row.update({"upper bound": fmt(p["upper_bound"]), "certified": fmt(p["certified"], "percent"),
                        "optimal": fmt(p["optimal"])})
        disp.append(row)
    caption = (f"{mode_name(obj['nonneg']).capitalize()} PCA path by {obj['method']} on {obj['data']['name']}"
               + (f"; certificates from {', '.join(obj['bounds'])}" if obj.get("bounds") else ""))
    return _table("path", caption, disp, obj["points"])


# ------------------------------------------------------------------ all
def report_tables(run: dict, timings: bool = False) -> list[Table]:
    out = [data_table(run)]
    for nonneg in run["settings"]["nonneg"]:
        out += [results_table(run, nonneg, timings), bounds_table(run, nonneg, timings), path_table(run, nonneg),
                features_table(run, nonneg)]
    out += [genes_table(run), tests_table(run)]
    return [t for t in out if t is not None]


def tables_for(obj: dict, timings: bool = False) -> list[Table]:
    """Tables of any saved JSON: a report run, or a ``fit``, ``certify`` or ``path --json`` object."""
    from certpca.errors import InputError
    if obj.get("format", "").startswith("certpca-run/"):
        return report_tables(obj, timings)
    if "components" in obj and "cumulative_pev" in obj:
        return fit_tables(obj)
    if "upper_bound" in obj and "bounds" in obj:
        return [certificate_table(obj)]
    if "points" in obj and "method" in obj:
        return [saved_path_table(obj)]
    raise InputError("the JSON is not the output of certpca report, fit, certify or path --json; give one of those")


def write_tables(tables: list[Table], folder: Path, *, force: bool = False, writer=None) -> list[Path]:
    """``NAME.tex``, ``NAME.md`` and ``NAME.csv`` for every table, written atomically."""
    from certpca.errors import InputError
    folder = Path(folder)
    files = {}
    for t in tables:
        files[folder / f"{t.name}.tex"] = t.to_latex()
        files[folder / f"{t.name}.md"] = t.to_markdown()
        files[folder / f"{t.name}.csv"] = t.to_csv()
    if folder.exists() and not folder.is_dir():
        raise InputError(f"--tables {folder} is a file; give a folder")
    existing = [p for p in files if p.exists()]
    if existing and not force:
        raise InputError(f"{existing[0]} exists ({len(existing)} table file(s) would be overwritten); "
                         "pass --force to overwrite")
    folder.mkdir(parents=True, exist_ok=True)
    for path, text in files.items():
        writer(path, text)
    return list(files)
