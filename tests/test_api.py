"""The public namespace: what `import certpca` offers and what it keeps to itself."""

import subprocess
import sys

import certpca


def test_certify_and_report_are_subpackages_and_callable(tmp_path):
    import certpca.certify as certify_module
    import certpca.report as report_module

    assert certify_module.__name__ == "certpca.certify" and certpca.certify is certify_module
    assert report_module.__name__ == "certpca.report" and certpca.report is report_module
    fit = certpca.fit("pitprops", 4)
    assert certpca.certify(fit).optimal
    run = certpca.report("pitprops", k=4, output=tmp_path / "p.html", path="1:13:4", nonneg_modes=(True,))
    assert (tmp_path / "p.html").read_text().startswith("<!DOCTYPE html>")
    assert run["settings"]["k"] == 4 and sorted(p.name for p in tmp_path.iterdir()) == ["p.html"]


def test_the_namespace_holds_only_the_public_api():
    public = {
        "fit",
        "certify",
        "path",
        "report",
        "load",
        "datasets",
        "Certificate",
        "Dataset",
        "Problem",
        "Fit",
        "Component",
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
