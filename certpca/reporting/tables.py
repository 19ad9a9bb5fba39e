"""Every table of a report, from a saved run (or a fit/certify ``--json`` object).

Each table is a :class:`Table`: a caption, a frame of *display strings*
(formatted here, once, by :func:`fmt` — the HTML, LaTeX and Markdown all show
these very strings) and a frame of raw numbers for the CSV.  Numbers in the
report therefore equal the JSON's numbers formatted by :func:`fmt`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from pathlib import Path

from certpca import text
from certpca.certification.certificate import STOPPED_NOTE
from certpca.data.advice import is_control
from certpca.errors import InputError
from certpca.io import Outputs
from certpca.reporting.formats import Table, Units, fmt, make_table, mode_name, mode_slug, proven
from certpca.reporting.saved import ReportRun, is_run


# ------------------------------------------------------------------ tables
def data_table(run: ReportRun) -> Table:
    d, u = run.data, Units.of(run.data.units)
    prep = text.describe_preprocessing(d.preprocessing)
    items = [
        ("data set", d.name, d.name),
        ("source", d.source, d.source),
        (u.rows, fmt(d.n_samples, "int") if d.n_samples is not None else "– (covariance)", d.n_samples),
        (u.cols, fmt(d.n_features, "int"), d.n_features),
        ("preprocessing", prep, prep),
        ("total variance (trace)", fmt(d.total_variance), d.total_variance),
        ("λ1 (largest eigenvalue)", fmt(d.lambda1), d.lambda1),
        ("λ1 share of the total", fmt(d.lambda1_share, "percent"), d.lambda1_share),
    ]
    if d.class_counts:
        counts = " / ".join(f"{k} {v}" for k, v in d.class_counts.items())
        items.append(("classes", counts, counts))
    if d.image_shape:
        shape = " × ".join(str(s) for s in d.image_shape)
        items.append(("image shape", shape, shape))
    return make_table(
        "data",
        "The data",
        {"quantity": [i[0] for i in items], "value": [i[1] for i in items]},
        {"quantity": [i[0] for i in items], "value": [i[2] for i in items]},
    )


def results_table(run: ReportRun, nonneg: bool, timings: bool = False) -> Table | None:
    fits = run.fits_of(nonneg)
    if not fits:
        return None
    total, lam1 = run.data.total_variance, run.data.lambda1
    disp, raw = [], []
    for f in fits:
        c0, cert = f.components[0], f.certificate
        r = {
            "method": f.method,
            "variance": c0.value,
            "explained": c0.value / total,
            "of_lambda1": c0.value / lam1,
            "cardinality": c0.cardinality,
            "iterations": c0.iterations,
            "seconds": f.fit.seconds,
            "upper_bound": cert.upper_bound,
            "certified_fraction": cert.certified_fraction,
            "optimal": cert.optimal,
        }
        if not timings:
            r.pop("seconds")
        raw.append(r)
        dr = {
            "method": r["method"],
            "variance": fmt(r["variance"]),
            "explained": fmt(r["explained"], "percent"),
            "of λ1": fmt(r["of_lambda1"], "percent"),
            "cardinality": fmt(r["cardinality"], "int"),
            "iterations": fmt(r["iterations"], "int"),
        }
        if timings:
            dr["time (s)"] = fmt(r["seconds"], "seconds")
        dr.update(
            {
                "upper bound": fmt(r["upper_bound"]),
                "certified": fmt(r["certified_fraction"], "percent"),
                "optimality": proven(cert.optimal),
            }
        )
        disp.append(dr)
    winner = fits[0].certificate.winner
    caption = (
        f"{mode_name(nonneg).capitalize()} PCA, k = {run.settings.k}: variance wᵀCw of the first component, "
        f"its share of the total variance and of λ1, and the certificate (upper bound on OPT from {winner}; "
        "certified = variance / upper bound, a guaranteed fraction of the best possible)"
    )
    return make_table(f"results-{mode_slug(nonneg)}", caption, disp, raw)


def bounds_table(run: ReportRun, nonneg: bool, timings: bool = False) -> Table | None:
    fits = run.fits_of(nonneg)
    if not fits:
        return None
    cert = fits[0].certificate
    disp, raw = [], []
    for b in sorted(cert.bounds, key=lambda b: (b.value, b.name)):
        r = {"bound": b.name, "upper_bound": b.value, "winner": b.name == cert.winner}
        shown = fmt(b.value) + (f" ({STOPPED_NOTE})" if b.params.get("stopped_at_target") else "")
        d = {"bound": b.name, "upper bound on OPT": shown, "best": "✓" if r["winner"] else ""}
        if timings:
            r["seconds"] = b.seconds
            d["time (s)"] = fmt(b.seconds, "seconds")
        disp.append(d)
        raw.append(r)
    for name, why in sorted(cert.skipped.items()):
        raw.append({"bound": name, "upper_bound": None, "winner": False, **({"seconds": None} if timings else {})})
        disp.append(
            {
                "bound": name,
                "upper bound on OPT": f"skipped: {why}",
                "best": "",
                **({"time (s)": ""} if timings else {}),
            }
        )
    caption = (
        f"Upper bounds on OPT({run.settings.k}{', w ≥ 0' if nonneg else ''}) computed for the "
        f"{mode_name(nonneg)} problem; every one is valid, the smallest is the certificate"
    )
    return make_table(f"bounds-{mode_slug(nonneg)}", caption, disp, raw)


def path_table(run: ReportRun, nonneg: bool) -> Table | None:
    band = run.band(nonneg)
    if band is None:
        return None
    paths = run.paths_of(nonneg)
    disp, raw = [], []
    for i, pt in enumerate(band.points):
        r: dict = {"k": pt.k}
        d = {"k": fmt(pt.k, "int")}
        for p in paths:
            v = p.points[i].value
            r[p.method] = v
            d[p.method] = fmt(v)
        r.update({"upper_bound": pt.upper_bound, "bound": pt.winner, "certified_fraction": pt.certified_fraction})
        d.update(
            {"upper bound": fmt(pt.upper_bound), "bound": pt.winner, "certified": fmt(pt.certified_fraction, "percent")}
        )
        raw.append(r)
        disp.append(d)
    caption = (
        f"Variance–cardinality path, {mode_name(nonneg)}: best variance of each method at each k, and the "
        f"upper bound on OPT(k) from {', '.join(band.bounds)} (certified = best variance / upper bound)"
    )
    return make_table(f"path-{mode_slug(nonneg)}", caption, disp, raw)


def features_table(run: ReportRun, nonneg: bool) -> Table | None:
    best = run.best_fit(nonneg)
    if best is None:
        return None
    fits, stable, u = run.fits_of(nonneg), run.stability_of(nonneg), Units.of(run.data.units)
    disp, raw = [], []
    for j, comp in enumerate(best.components):
        order = sorted(comp.loadings.items(), key=lambda kv: (-abs(kv[1]), kv[0]))
        for rank, (fid, w) in enumerate(order, 1):
            found = [f.method for f in fits if fid in f.components[0].loadings] if j == 0 else []
            raw.append(
                {
                    "component": j + 1,
                    "rank": rank,
                    u.col: fid,
                    "loading": w,
                    "first_component_of": ";".join(found),
                    "control": is_control(fid),
                    "symbol": run.annotation.get(fid, ["", ""])[0],
                    "description": run.annotation.get(fid, ["", ""])[1],
                }
            )
            disp.append(
                {
                    "PC": fmt(j + 1, "int"),
                    "rank": fmt(rank, "int"),
                    u.col: run.feature_label(fid) + (" (control)" if is_control(fid) else ""),
                    "loading": fmt(w, "loading"),
                    "methods": f"{len(found)}/{len(fits)}" if j == 0 else "",
                    **({"stability": fmt(stable.frequency(fid), "fraction") if j == 0 else ""} if stable else {}),
                }
            )
            raw[-1].update({"stability": stable.frequency(fid)} if stable and j == 0 else {})
    controls = any(r["control"] for r in raw)
    caption = (
        f"Selected {u.cols} of the {mode_name(nonneg)} fit by {best.method} (the best variance), by "
        f"decreasing |loading|; methods: how many of the {len(fits)} methods' first components contain "
        f"the {u.col} (the CSV names them)"
        + ("; (control): an Affymetrix control probe or ERCC spike-in" if controls else "")
        + (f"; stability: how often the halves of the {u.rows} selected it" if stable else "")
        + ("; in brackets: the gene symbol of the annotation (its description is in the CSV)" if run.annotation else "")
    )
    return make_table(f"features-{mode_slug(nonneg)}", caption, disp, raw)


def importance_table(run: ReportRun, nonneg: bool) -> Table | None:
    """R's ``summary.prcomp`` importance rows for every component of the best fit, with its certificate.

    Standard deviation and proportion are of the variance each component adds beyond
    the earlier ones (so non-orthogonal components are not counted twice); the
    certificate of component j ≥ 2 is against the problem it solved (the covariance
    deflated by the earlier components, or the unused features for disjoint supports).
    """
    best = run.best_fit(nonneg)
    if best is None:
        return None
    certs = [best.certificate, *best.later_certificates]
    cumulative = best.fit.cumulative_pev
    disp, raw = [], []
    for j, comp in enumerate(best.components):
        cert = certs[j] if j < len(certs) else None
        r = {
            "component": j + 1,
            "sdev": math.sqrt(max(comp.additional_variance, 0.0)),
            "proportion": comp.pev,
            "cumulative": cumulative[j],
            "cardinality": comp.cardinality,
            "upper_bound": cert.upper_bound if cert else None,
            "certified_fraction": cert.certified_fraction if cert else None,
            "optimal": cert.optimal if cert else None,
        }
        raw.append(r)
        disp.append(
            {
                "": f"PC{j + 1}",
                "standard deviation": fmt(r["sdev"]),
                "proportion of variance": fmt(r["proportion"], "percent"),
                "cumulative proportion": fmt(r["cumulative"], "percent"),
                "cardinality": fmt(r["cardinality"], "int"),
                "certified": fmt(r["certified_fraction"], "percent") if cert else "–",
                "optimality": proven(cert.optimal) if cert else "not certified",
            }
        )
    caption = (
        f"Importance of the {mode_name(nonneg)} components ({best.method}), as R's summary of prcomp, "
        "with each component's certificate: standard deviation and proportion of the variance it adds "
        "beyond the earlier components; component j ≥ 2 is certified on the problem it solved "
        "(the covariance deflated by the earlier components)"
    )
    return make_table(f"importance-{mode_slug(nonneg)}", caption, disp, raw)


def scores_table(run: ReportRun, nonneg: bool) -> Table | None:
    """The samples' scores on the best fit's components and on ordinary PCA's first two (R's ``x``)."""
    sc = run.scores_of(nonneg)
    if sc is None:
        return None
    disp, raw, u = [], [], Units.of(run.data.units)
    for i, sid in enumerate(sc.sample_ids):
        r: dict = {u.row: sid}
        if sc.labels is not None:
            r["class"] = sc.labels[i]
        r.update({f"PC{j + 1}": col[i] for j, col in enumerate(sc.components)})
        r.update({f"PCA{j + 1}": col[i] for j, col in enumerate(sc.pca)})
        raw.append(r)
        disp.append({c: (v if isinstance(v, str) else fmt(v)) for c, v in r.items()})
    caption = (
        f"Scores of the {u.rows} on the {mode_name(nonneg)} components ({sc.method}; PC1, PC2, ...) and on "
        "ordinary PCA's first two (PCA1, PCA2): the prepared data times the loadings"
    )
    return make_table(f"scores-{mode_slug(nonneg)}", caption, disp, raw)


def genes_table(run: ReportRun) -> Table | None:
    g = run.genes
    if not g:
        return None
    disp, raw, u = [], [], Units.of(run.data.units)
    for r in g.rows:
        raw.append(
            {
                "selector": r.selector,
                "size": r.size,
                "n_features": r.n_features,
                "mean": r.mean,
                "sd": r.sd,
                "min": r.min,
                "max": r.max,
            }
        )
        disp.append(
            {
                f"{u.cols} from": r.selector,
                "size": fmt(r.size, "int"),
                "used": fmt(r.n_features, "int"),
                "Jaccard mean": fmt(r.mean, "fraction"),
                "sd": fmt(r.sd, "fraction"),
                "min": fmt(r.min, "fraction"),
                "max": fmt(r.max, "fraction"),
            }
        )
    caption = (
        f"Gene selection (Sigg & Buhmann 2008, §5.3): pair-counting Jaccard of k-means (k = "
        f"{g.n_clusters}) against the classes over {g.n_init} random initialisations, mean, sd, range"
    )
    return make_table("genes", caption, disp, raw)


def tests_table(run: ReportRun) -> Table | None:
    """The gene-set test: the featured genes against random gene sets, the top-variance genes, all genes
    (a run saved before it: the tests it holds)."""
    t = run.genes.set_test if run.genes else None
    if t is None:
        return _saved_tests_table(run)
    rows = [
        ("the nonnegative sparse component's genes", t.size, t.statistic, t.p_value),
        (f"random gene sets: mean of {t.n_sets}", t.size, t.null_mean, None),
        (f"random gene sets: 95th percentile of {t.n_sets}", t.size, t.null_q95, None),
        ("the genes of largest variance", t.size, t.top_variance, None),
        ("all genes", run.data.n_features, t.all_features, None),
    ]
    raw = [{"genes": g, "n": n, "jaccard": j, "p_value": p} for g, n, j, p in rows]
    disp = [{"genes": g, "n": fmt(n, "int"), "Jaccard": fmt(j, "fraction"), "p": fmt(p, "p")} for g, n, j, p in rows]
    caption = (
        f"Do the {t.size} selected genes separate the classes better than {t.size} genes drawn at random? "
        f"Jaccard of the best of {t.n_init} k-means runs with the classes; Monte Carlo p-value over {t.n_sets} "
        "random gene sets (null: the selected genes are no better than a random set of the same size)"
    )
    return make_table("genes-tests", caption, disp, raw)


def _saved_tests_table(run: ReportRun) -> Table | None:
    """The Welch and Mann–Whitney tests over k-means runs that runs saved before certpca-run/3 hold, shown as
    they were (``certpca table`` of an old run gives its old tables); new runs make no such test."""
    g = run.genes
    if not g or not g.tests:
        return None
    raw = [
        {k: t[k] for k in ("mean_a", "sd_a", "mean_b", "sd_b", "p_welch", "p_mannwhitney", "significant")}
        for t in g.tests
    ]
    for row, t in zip(raw, g.tests):
        row.update(a=t["names"][0], b=t["names"][1])
    raw = [
        {k: r[k] for k in ("a", "b", "mean_a", "sd_a", "mean_b", "sd_b", "p_welch", "p_mannwhitney", "significant")}
        for r in raw
    ]
    disp = [
        {
            "A": r["a"],
            "A mean ± sd": f"{fmt(r['mean_a'], 'fraction')} ± {fmt(r['sd_a'], 'fraction')}",
            "B": r["b"],
            "B mean ± sd": f"{fmt(r['mean_b'], 'fraction')} ± {fmt(r['sd_b'], 'fraction')}",
            "Welch p": fmt(r["p_welch"], "p"),
            "Mann–Whitney p": fmt(r["p_mannwhitney"], "p"),
            f"significant (α = {g.alpha})": fmt(r["significant"]),
        }
        for r in raw
    ]
    caption = (
        f"Is the {g.featured}-feature nonnegative sparse component better? Two-sided Welch t-test and "
        f"Mann–Whitney U over the {g.n_init} k-means runs"
    )
    return make_table("genes-tests", caption, disp, raw)


# ------------------------------------------------------- fit / certify JSON
def fit_tables(obj: dict) -> list[Table]:
    """Tables of a ``certpca fit --json`` object: importance and loadings."""
    disp, raw = [], []
    for j, c in enumerate(obj["components"]):
        raw.append(
            {
                "component": j + 1,
                "method": c["method"],
                "k": c["k"],
                "nonneg": c["nonneg"],
                "variance": c["value"],
                "additional_variance": c["additional_variance"],
                "pev": c["pev"],
                "cumulative_pev": obj["cumulative_pev"][j],
                "cardinality": c["cardinality"],
            }
        )
        disp.append(
            {
                "PC": fmt(j + 1, "int"),
                "method": c["method"],
                "variance": fmt(c["value"]),
                "additional variance": fmt(c["additional_variance"]),
                "share": fmt(c["pev"], "percent"),
                "cumulative": fmt(obj["cumulative_pev"][j], "percent"),
                "cardinality": fmt(c["cardinality"], "int"),
            }
        )
    name = obj.get("data", {}).get("name", "")
    tables = [make_table("fit", f"Sparse principal components of {name}", disp, raw)]
    ld, lr = [], []
    for j, c in enumerate(obj["components"]):
        for rank, (fid, w) in enumerate(sorted(c["loadings"].items(), key=lambda kv: (-abs(kv[1]), kv[0])), 1):
            lr.append({"component": j + 1, "rank": rank, "feature": fid, "loading": w})
            ld.append({"PC": fmt(j + 1, "int"), "rank": fmt(rank, "int"), "feature": fid, "loading": fmt(w, "loading")})
    tables.append(make_table("fit-loadings", "Nonzero loadings by decreasing |loading|", ld, lr))
    if obj.get("certificates"):
        tables.append(certificate_table(obj["certificates"][0], "fit-certificate"))
    return tables


def certificate_table(cert: dict, name: str = "certificate") -> Table:
    disp, raw = [], []
    for b in sorted(cert["bounds"], key=lambda b: (b["value"], b["name"])):
        raw.append({"bound": b["name"], "upper_bound": b["value"], "winner": b["name"] == cert["winner"]})
        disp.append(
            {
                "bound": b["name"],
                "upper bound on OPT": fmt(b["value"]),
                "best": "✓" if b["name"] == cert["winner"] else "",
            }
        )
    caption = (
        f"Certificate, k = {cert['k']}{', nonnegative' if cert['nonneg'] else ''}: value "
        f"{fmt(cert['value'])} ≤ OPT ≤ {fmt(cert['upper_bound'])}, certified "
        f"{fmt(cert['certified_fraction'], 'percent')}, {proven(cert['optimal'])}"
    )
    return make_table(name, caption, disp, raw)


def saved_path_table(obj: dict) -> Table:
    """The table of a ``certpca path --json`` object."""
    disp = []
    for p in obj["points"]:
        row = {
            "k": fmt(p["k"], "int"),
            "variance": fmt(p["variance"]),
            "of λ1": fmt(p["of_lambda1"], "percent"),
            "explained": fmt(p["pev"], "percent"),
            "cardinality": fmt(p["cardinality"], "int"),
        }
        if "upper_bound" in p:
            row.update(
                {
                    "upper bound": fmt(p["upper_bound"]),
                    "certified": fmt(p["certified"], "percent"),
                    "optimality": proven(p["optimal"]),
                }
            )
        disp.append(row)
    caption = f"{mode_name(obj['nonneg']).capitalize()} PCA path by {obj['method']} on {obj['data']['name']}" + (
        f"; certificates from {', '.join(obj['bounds'])}" if obj.get("bounds") else ""
    )
    return make_table("path", caption, disp, obj["points"])


# ------------------------------------------------------------------ all
#: the files of one table
EXTENSIONS = ("tex", "md", "csv")


def report_tables(run: ReportRun, timings: bool = False) -> list[Table]:
    """Every table of a report, in page order."""
    out: list[Table | None] = [data_table(run)]
    for nonneg in run.settings.nonneg:
        out += [
            results_table(run, nonneg, timings),
            importance_table(run, nonneg),
            bounds_table(run, nonneg, timings),
            path_table(run, nonneg),
            features_table(run, nonneg),
            scores_table(run, nonneg),
        ]
    out += [genes_table(run), tests_table(run)]
    return [t for t in out if t is not None]


def report_table_names(
    nonneg_modes: Iterable[bool], *, path: bool, genes: bool, scores: bool, stability: bool = False
) -> list[str]:
    """The names :func:`report_tables` may give, known before computing (so the files can be claimed)."""
    names = ["data"]
    for nonneg in nonneg_modes:
        slug = mode_slug(nonneg)
        names += (
            [f"results-{slug}", f"importance-{slug}", f"bounds-{slug}"]
            + ([f"path-{slug}"] if path else [])
            + [f"features-{slug}"]
            + ([f"stability-{slug}"] if stability else [])
            + ([f"scores-{slug}"] if scores else [])
        )
    return names + (["genes", "genes-tests"] if genes else [])


def file_names(table_names: Iterable[str]) -> list[str]:
    """``NAME.tex``, ``NAME.md`` and ``NAME.csv`` for every table name."""
    return [f"{n}.{ext}" for n in table_names for ext in EXTENSIONS]


def table_files(tables: list[Table]) -> dict[str, str]:
    """File name -> content of every table."""
    files = {}
    for t in tables:
        files[f"{t.name}.tex"] = t.to_latex()
        files[f"{t.name}.md"] = t.to_markdown()
        files[f"{t.name}.csv"] = t.to_csv()
    return files


def tables_for(obj: dict | ReportRun, timings: bool = False) -> list[Table]:
    """Tables of any saved JSON: a report run, or a ``fit``, ``certify`` or ``path --json`` object."""
    if isinstance(obj, ReportRun):
        return report_tables(obj, timings)
    if is_run(obj):
        return report_tables(ReportRun.from_dict(obj), timings)
    if "components" in obj and "cumulative_pev" in obj:
        return fit_tables(obj)
    if "upper_bound" in obj and "bounds" in obj:
        return [certificate_table(obj)]
    if "points" in obj and "method" in obj:
        return [saved_path_table(obj)]
    raise InputError("the JSON is not the output of certpca report, fit, certify or path --json; give one of those")


def write_tables(tables: list[Table], folder: str | Path, *, force: bool = False, writer=None) -> list[Path]:
    """Write every table's files into ``folder`` under the output policy of :mod:`certpca.io`.

    ``writer(path, text)`` replaces the staged, renamed-together writing after the
    same checks (``certpca reproduce`` writes plainly into a folder of its own).
    """
    files = table_files(tables)
    out = Outputs(force=force)
    paths = out.claim_folder(folder, files, flag="--tables")
    if writer is not None:
        for path, content in zip(paths, files.values()):
            writer(path, content)
        return paths
    with out.writing():
        for path, content in zip(paths, files.values()):
            out.write(path, content)
    return paths
