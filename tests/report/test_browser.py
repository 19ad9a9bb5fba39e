"""The report opens in headless Chromium with no console errors and no network request.

CI installs Debian's chromium (.ci/run); where no chromium can be found the test is
skipped with that reason, visibly (pytest -ra).
"""
from __future__ import annotations

import re
import shutil
import subprocess

import numpy as np
import pandas as pd
import pytest

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", "--enable-logging=stderr", "--v=0",
         "--host-resolver-rules=MAP * ~NOTFOUND"]


def _chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome", "chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    from certpca.data import Dataset, prepare
    from certpca.report import compute_run, render
    rng = np.random.default_rng(3)
    classes = np.repeat(["x", "y"], 12)
    X = rng.normal(size=(24, 30))
    X[:, :5] += 2.5 * (classes == "x")[:, None]
    ids = pd.Index([f"s{i}" for i in range(24)])
    ds = prepare(Dataset("browser", X, pd.Index([f"f{j}" for j in range(30)]), ids,
                         pd.Series(classes, index=ids, name="label")))
    run = compute_run(ds, k=5, methods="em,threshold", path="1:30:4", gene_sizes=(5, 10), gene_k=5, n_init=10,
                      progress=False)
    out = tmp_path_factory.mktemp("browser") / "report.html"
    out.write_text(render(run), encoding="utf-8")
    return out


def test_no_external_resources(page):
    html = page.read_text(encoding="utf-8")
    assert "<script" not in html and "<link" not in html and "@import" not in html
    refs = re.findall(r'(?:src|href)="([^"]*)"', html)
    assert all(r.startswith("#") for r in refs), [r for r in refs if not r.startswith("#")][:5]
    assert "url(http" not in html


def test_opens_in_headless_chromium(page, tmp_path):
    exe = _chromium()
    if exe is None:
        pytest.skip("chromium not found on PATH (apt-get install chromium; .ci/run installs it in CI)")
    base = [exe, *FLAGS, f"--user-data-dir={tmp_path / 'profile'}"]
    dom = subprocess.run(base + ["--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=120)
    assert dom.returncode == 0, dom.stderr[-2000:]
    for section in ("data", "results", "path", "loadings", "genes", "reproduce", "references"):
        assert f'<section id="{section}">' in dom.stdout
    assert dom.stdout.count("<svg") == 7
    log = dom.stderr
    assert "Uncaught" not in log and "ERROR:CONSOLE" not in log and ":CONSOLE(" not in log, log[-2000:]
    assert "net::ERR" not in log, log[-2000:]
    shot = tmp_path / "shot.png"
    run = subprocess.run(base + ["--hide-scrollbars", "--window-size=1200,2000", f"--screenshot={shot}",
                                 page.as_uri()], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0 and shot.stat().st_size > 10_000, run.stderr[-2000:]
