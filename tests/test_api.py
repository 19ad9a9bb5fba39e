"""The public namespace: what `import certpca` offers and what it keeps to itself."""

import importlib
import inspect
import subprocess
import sys
from pathlib import Path

import pytest

import certpca


def test_certify_and_report_are_plain_functions(tmp_path):
    """The public entry points are functions with their real signatures, not callable modules."""

    for function in (certpca.fit, certpca.certify, certpca.path, certpca.report, certpca.stability, certpca.choose_k):
        assert inspect.isfunction(function), function
    assert list(inspect.signature(certpca.certify).parameters)[0] == "obj"
    assert list(inspect.signature(certpca.report).parameters)[:2] == ["data", "k"]
    importlib.import_module("certpca.certification.exact")  # importing the layers below shadows nothing
    importlib.import_module("certpca.reporting.html")
    assert inspect.isfunction(certpca.certify) and inspect.isfunction(certpca.report)
    fit = certpca.fit("pitprops", 4)
    assert certpca.certify(fit).optimal
    run = certpca.report("pitprops", k=4, output=tmp_path / "p.html", path="1:13:4", nonneg_modes=(True,))
    assert (tmp_path / "p.html").read_text().startswith("<!DOCTYPE html>")
    assert run.settings.k == 4 and sorted(p.name for p in tmp_path.iterdir()) == ["p.html"]


def test_no_module_is_named_like_a_public_name():
    """Importing a submodule binds its name on the package, which would shadow a public function."""
    package = Path(certpca.__file__).parent
    modules = {p.stem for p in package.glob("*.py")} | {p.name for p in package.iterdir() if p.is_dir()}
    assert not (set(certpca.__all__) - {"datasets"}) & modules


def test_a_user_script_type_checks(tmp_path):
    """The package ships py.typed, so mypy checks a user's calls against the real signatures."""
    api = pytest.importorskip("mypy.api")
    script = tmp_path / "use.py"
    script.write_text(
        "import certpca\n"
        "fit = certpca.fit('pitprops', 4, nonneg=True)\n"
        "cert = certpca.certify(fit)\n"
        "print(cert.certified_fraction, cert.upper_bound, fit.rotation)\n"
        "certpca.report('pitprops', k=4, output='p.html')\n"
    )
    # the cache starts empty (tmp_path); the second run reuses what the first wrote for certpca and its imports,
    # and checks bad.py itself afresh
    out, err, status = api.run([str(script), "--cache-dir", str(tmp_path / "cache")])
    assert status == 0, out + err
    bad = tmp_path / "bad.py"
    bad.write_text("import certpca\ncertpca.certify(1, problem=None, budget='soon')\n")
    out, _, status = api.run([str(bad), "--cache-dir", str(tmp_path / "cache")])
    assert status == 1 and "budget" in out, out


def test_the_namespace_holds_only_the_public_api():
    public = {
        "fit",
        "certify",
        "path",
        "report",
        "stability",
        "choose_k",
        "load",
        "datasets",
        "Certificate",
        "Dataset",
        "Problem",
        "Fit",
        "Component",
        "Stability",
        "InputError",
        "ConvergenceWarning",
        "SparsePCA",
        "__version__",
    }
    assert set(certpca.__all__) == public
    for name in public:
        assert getattr(certpca, name) is not None
    for leaked in ("fit_path", "parse_grid", "path_table", "fit_components"):
        assert not hasattr(certpca, leaked), leaked


def test_import_is_light():
    """`import certpca` loads no numerical library: names load on first use."""
    heavy = "('numpy', 'scipy', 'pandas', 'cvxpy', 'sklearn')"
    code = f"import sys, certpca; print(sorted(m for m in {heavy} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
