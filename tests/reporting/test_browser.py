"""The report opens in headless Chromium with no console errors and no network request, and fits the page.

CI installs Debian's chromium (.ci/run); where no chromium can be found the test is
skipped with that reason, visibly (pytest -ra).  The layout checks drive that same
chromium through playwright (its Python package only; no browser download).
"""

from __future__ import annotations

import re
import shutil
import subprocess

import numpy as np
import pandas as pd
import pytest

FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--enable-logging=stderr",
    "--v=0",
    "--host-resolver-rules=MAP * ~NOTFOUND",
]


def _chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome", "chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    from certpca.data import Dataset, prepare
    from certpca.reporting import ReportOptions, compute_run, render

    rng = np.random.default_rng(3)
    classes = np.repeat(["x", "y"], 12)
    X = rng.normal(size=(24, 30))
    X[:, :5] += 2.5 * (classes == "x")[:, None]
    ids = pd.Index([f"s{i}" for i in range(24)])
    ds = prepare(
        Dataset("browser", X, pd.Index([f"f{j}" for j in range(30)]), ids, pd.Series(classes, index=ids, name="label"))
    )
    run = compute_run(
        ds,
        ReportOptions(
            k=5,
            methods="em,threshold",
            path="1:30:4",
            gene_sizes=(5, 10),
            gene_k=5,
            n_init=10,
            components=2,
            progress=False,
            command="certpca report browser.csv --k 5 " + "--long-option " * 30,
        ),
    )
    out = tmp_path_factory.mktemp("browser") / "report.html"
    out.write_text(render(run), encoding="utf-8")
    return out


def test_no_external_resources(page):
    html = page.read_text(encoding="utf-8")
    assert "<script" not in html and "<link" not in html and "@import" not in html
    refs = re.findall(r'(?:src|href)="([^"]*)"', html)
    inline = ("#", "data:image/png;base64,")  # links within the page; the heatmaps' pixels, inline
    assert all(r.startswith(inline) for r in refs), [r[:40] for r in refs if not r.startswith(inline)][:5]
    assert any(r.startswith("data:image/png;base64,") for r in refs)  # the heatmaps are there
    assert "url(http" not in html


def test_opens_in_headless_chromium(page, tmp_path):
    exe = _chromium()
    if exe is None:
        pytest.skip("chromium not found on PATH (apt-get install chromium; .ci/run installs it in CI)")
    base = [exe, *FLAGS, f"--user-data-dir={tmp_path / 'profile'}"]
    dom = subprocess.run(base + ["--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=120)
    assert dom.returncode == 0, dom.stderr[-2000:]
    for section in ("data", "results", "samples", "path", "loadings", "stability", "genes", "reproduce", "references"):
        assert f'<section id="{section}">' in dom.stdout
    assert dom.stdout.count("<svg") == 11  # as test_report counts them, the two stability plots and heatmaps included
    log = dom.stderr
    assert "Uncaught" not in log and "ERROR:CONSOLE" not in log and ":CONSOLE(" not in log, log[-2000:]
    assert "net::ERR" not in log, log[-2000:]
    shot = tmp_path / "shot.png"
    run = subprocess.run(
        base + ["--hide-scrollbars", "--window-size=1200,2000", f"--screenshot={shot}", page.as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0 and shot.stat().st_size > 10_000, run.stderr[-2000:]


#: elements whose right edge lies beyond the viewport (an overflowing table, figure or code line); inside a
#: box that scrolls sideways (a wide table on a phone) an element is reachable, and counts only in print,
#: where content wider than its own box (clipped or scrolled) counts too
_OVERFLOWING = """(print) => { const w = document.documentElement.clientWidth;
  const scrolls = e => { if (print) return false; for (let a = e.parentElement; a; a = a.parentElement) {
      if (['auto', 'scroll'].includes(getComputedStyle(a).overflowX)) return true; } return false; };
  return [...document.querySelectorAll('body *')]
    .filter(e => (e.getBoundingClientRect().right > w + 1 && !scrolls(e))
                 || (print && e.scrollWidth > e.clientWidth + 1 && !(e instanceof SVGElement)))
    .map(e => e.tagName + '#' + e.id).slice(0, 10) }"""


@pytest.mark.parametrize("medium, width", [("screen", 1000), ("screen", 420), ("print", 700), ("print", 740)])
def test_fits_the_page_on_screen_and_in_print(page, tmp_path, medium, width):
    """Nothing wider than the page: a phone-width screen, and A4 (700 px) and Letter (740 px) print areas."""
    exe = _chromium()
    if exe is None:
        pytest.skip("chromium not found on PATH (apt-get install chromium; .ci/run installs it in CI)")
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright (the test extra) drives chromium")
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=exe, args=["--no-sandbox"])
        tab = browser.new_page(viewport={"width": width, "height": 900})
        messages: list[str] = []
        tab.on("console", lambda m: messages.append(f"{m.type}: {m.text}"))
        tab.on("pageerror", lambda e: messages.append(f"error: {e}"))
        tab.emulate_media(media=medium)
        tab.goto(page.as_uri())
        wide = tab.evaluate(_OVERFLOWING, medium == "print")
        scroll = tab.evaluate("document.documentElement.scrollWidth")
        present = tab.evaluate(
            "['fig-scores-sparse', 'tab-importance-sparse', 'tab-importance-nonneg']"
            ".map(id => document.getElementById(id) !== null)"
        )
        if medium == "print":
            pdf = tab.pdf(format="A4" if width == 700 else "Letter")
        browser.close()
    assert wide == [] and scroll <= width, (wide, scroll)
    assert all(present), present
    assert not [m for m in messages if m.startswith(("error", "warning"))], messages
    if medium == "print":
        assert pdf[:5] == b"%PDF-" and len(pdf) > 20_000


#: pbmc's bulk_labels: long names on the strip plot's axis leave its panel narrow
PBMC_CLASSES = [
    "CD14+ Monocyte",
    "CD19+ B",
    "CD34+",
    "CD4+/CD25 T Reg",
    "CD4+/CD45RA+/CD25- Naive T",
    "CD4+/CD45RO+ Memory",
    "CD56+ NK",
    "CD8+ Cytotoxic T",
    "CD8+/CD45RA+ Naive Cytotoxic",
    "Dendritic",
]


@pytest.fixture(scope="module")
def ten_classes(tmp_path_factory):
    """A report on pbmc's ten classes with gpower-l0 at k = 30: the long panel titles, long class names
    and the many classes of the pbmc report."""
    from certpca.data import Dataset, prepare
    from certpca.reporting import ReportOptions, compute_run, render

    rng = np.random.default_rng(10)
    classes = np.repeat(PBMC_CLASSES, 6)
    X = rng.normal(size=(60, 40))
    for i, c in enumerate(sorted(set(classes))):
        X[:, 3 * i : 3 * i + 3] += 3.0 * (classes == c)[:, None]
    ids = pd.Index([f"c{i}" for i in range(60)])
    ds = prepare(
        Dataset("ten", X, pd.Index([f"g{j}" for j in range(40)]), ids, pd.Series(classes, index=ids, name="type"))
    )
    options = ReportOptions(
        k=30, methods="gpower-l0", bounds="trace,lambda1", path="", genes=False, stability=0, progress=False
    )
    out = tmp_path_factory.mktemp("ten") / "report.html"
    out.write_text(render(compute_run(ds, options)), encoding="utf-8")
    return out


#: per score plot: the legend's entries as (label, fill colour, marker outline) and every text's box
_SCORE_PLOTS = """() => [...document.querySelectorAll('figure[id^="fig-scores-"] svg')].map(svg => {
  const entries = []; let handle = null;
  const legend = svg.querySelector('g[id*="legend_"]');
  for (const el of legend.querySelectorAll('g[id*="PathCollection"], text')) {
    if (el.tagName === 'g') {
      const use = el.querySelector('use');
      const ref = use.getAttribute('xlink:href') || use.getAttribute('href');
      handle = [getComputedStyle(use).fill, svg.querySelector(ref).getAttribute('d')];
    } else if (handle) { entries.push([el.textContent.trim(), ...handle]); handle = null; }
  }
  const boxes = [...svg.querySelectorAll('text')].filter(t => t.textContent.trim())
    .map(t => { const r = t.getBoundingClientRect();
                return [t.textContent.trim(), r.left, r.top, r.right, r.bottom]; });
  return {id: svg.closest('figure').id, entries, boxes};
})"""


def test_score_plots_tell_ten_classes_apart_and_no_text_overlaps(ten_classes):
    """Every class its own (colour, marker) pair in the legend, and no two texts of a score plot (titles,
    tick labels, legend) overlapping as chromium lays them out."""
    exe = _chromium()
    if exe is None:
        pytest.skip("chromium not found on PATH (apt-get install chromium; .ci/run installs it in CI)")
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright (the test extra) drives chromium")
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=exe, args=["--no-sandbox"])
        tab = browser.new_page(viewport={"width": 1000, "height": 900})
        tab.goto(ten_classes.as_uri())
        plots = tab.evaluate(_SCORE_PLOTS)
        tab.emulate_media(media="print")
        whole = tab.evaluate(
            "[...document.querySelectorAll('figure.table, figure.plot, .keyfacts, p.note')]"
            ".map(e => getComputedStyle(e).breakInside)"
        )
        browser.close()
    assert whole and set(whole) == {"avoid"}  # printed tables, figures and boxes are not split across pages
    assert [p["id"] for p in plots] == ["fig-scores-sparse", "fig-scores-nonneg"]
    for plot in plots:
        labels = [e[0] for e in plot["entries"]]
        assert labels == sorted(PBMC_CLASSES), labels
        styles = [tuple(e[1:]) for e in plot["entries"]]
        assert len(set(styles)) == len(styles), [e for e in plot["entries"] if styles.count(tuple(e[1:])) > 1]
        assert len({colour for colour, _ in styles}) == 10  # ten colours: the markers only help
        boxes = plot["boxes"]
        overlapping = [
            (a[0], b[0])
            for i, a in enumerate(boxes)
            for b in boxes[i + 1 :]
            if min(a[3], b[3]) - max(a[1], b[1]) > 0.5 and min(a[4], b[4]) - max(a[2], b[2]) > 0.5
        ]
        assert overlapping == [], (plot["id"], overlapping)
        texts = [b[0] for b in boxes]  # the titles are among them (a text element a line)
        assert any("gpower-l0" in t for t in texts) and any("ordinary PCA" in t for t in texts), texts
