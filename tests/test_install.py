"""A plain (non-editable) install still finds the bundled data.

The package-dir mapping in pyproject.toml installs top-level ``data/`` as
``certpca._data``; a source checkout is the only other place
:func:`certpca.datasets.data_dir` looks, so this runs the installed copy from
a folder where the checkout is not importable.
"""

import importlib.util
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("pip") is None, reason="pip is not installed, so the package cannot be installed"
)

CHECK = textwrap.dedent("""
    import sys
    from pathlib import Path
    import certpca.datasets as d
    target = Path(sys.argv[1]).resolve()
    folder = d.data_dir()
    assert target in folder.parents, (folder, target)
    assert Path(d.__file__).resolve().is_relative_to(target), d.__file__
    ds = d.load("pitprops")
    assert ds.shape == (13, 13), ds.shape
    assert d.verify() == [], d.verify()
    # every subpackage and the report templates made it into the install
    import importlib, certpca
    for name in sys.argv[2].split(","):  # the source tree's modules, each importable here
        module = importlib.import_module(name)
        assert Path(module.__file__).resolve().is_relative_to(target), module.__file__
    from certpca.reporting.html import render  # noqa: F401  (loads templates from the package)
    templates = Path(certpca.__file__).parent / "_templates"
    assert (templates / "report.html.j2").is_file(), list(templates.iterdir())
    print(folder)
""")


def _source_modules() -> list[str]:
    """Every module of the source package except __main__ (importing it runs the CLI)."""
    names = []
    for path in sorted((REPO / "certpca").rglob("*.py")):
        parts = path.relative_to(REPO).with_suffix("").parts
        if parts[-1] == "__main__":
            continue
        names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names


def test_plain_install_finds_bundled_data(tmp_path):
    # pip builds a local directory in place (build/, *.egg-info): build from a copy so
    # the work tree stays clean and no stale build/lib leaks into the wheel.
    source = tmp_path / "src"
    shutil.copytree(
        REPO,
        source,
        ignore=shutil.ignore_patterns(
            ".git", "build", "*.egg-info", "__pycache__", ".pytest_cache", "reports", "bench"
        ),
    )
    target = tmp_path / "site"
    build = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
            "--quiet",
            "--target",
            str(target),
            str(source),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PIP_NO_CACHE_DIR": "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1"},
    )
    if "invalid command 'bdist_wheel'" in build.stderr:
        pytest.fail("setuptools here cannot build wheels offline: pip install wheel (or setuptools>=70.1)")
    assert build.returncode == 0, build.stderr[-2000:]
    assert (target / "certpca" / "_data" / "pitprops.csv").is_file()

    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    run = subprocess.run(
        [sys.executable, "-c", CHECK, str(target), ",".join(_source_modules())],
        cwd=tmp_path,
        env={**env, "PYTHONPATH": str(target)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert Path(run.stdout.strip()) == (target / "certpca" / "_data").resolve()
