"""Regenerate the report screenshots in reports/screenshots/ (the README and docs show them).

    python scripts/screenshots.py

Writes leukemia (labels, 3 components) and, when bundled, pbmc reports into a
temporary folder with ``certpca report``, then photographs each page in headless
Chromium (Debian's, driven by playwright) at 1200 px wide: the first screen and the
whole page.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from playwright.sync_api import sync_playwright

from certpca import datasets

OUT = Path(__file__).resolve().parent.parent / "reports" / "screenshots"
REPORTS = {
    "leukemia": ["leukemia", "--k", "50", "--components", "3"],
    "pbmc": ["pbmc", "--k", "30", "--labels", "bulk_labels"],
}


def main() -> int:
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if exe is None:
        print("chromium not found: apt-get install chromium", file=sys.stderr)
        return 2
    OUT.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=exe, args=["--no-sandbox"])
        for name, args in REPORTS.items():
            if name not in datasets.names():
                print(f"{name}: not bundled, skipped")
                continue
            page_file = Path(tmp) / f"{name}.html"
            subprocess.run(["certpca", "report", *args, "-o", str(page_file)], check=True)
            tab = browser.new_page(viewport={"width": 1200, "height": 1400})
            tab.goto(page_file.as_uri())
            tab.screenshot(path=str(OUT / f"{name}-first-screen.png"))
            tab.screenshot(path=str(OUT / f"{name}-page.jpg"), full_page=True, type="jpeg", quality=70)
            tab.close()
            print(f"{name}: {OUT / (name + '-first-screen.png')}, {OUT / (name + '-page.jpg')}")
        browser.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
