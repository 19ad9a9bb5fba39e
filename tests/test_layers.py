"""The layers of docs/ARCHITECTURE.md, enforced by reading every module's imports.

A module may import modules of its own layer or of layers below it, never above;
the import graph between modules has no cycle; an import inside a function is
allowed only where a comment on that line (or the line above) says why.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "certpca"

#: Lowest first; a module belongs to the first entry that is its name or a prefix of it.
LAYERS: list[tuple[str, ...]] = [
    (
        "certpca.errors",
        "certpca.status",
        "certpca.messages",
        "certpca.version",
        "certpca.validation",
        "certpca.text",
        "certpca.clock",
    ),
    ("certpca.problem", "certpca.sparse_factor", "certpca.dask_factor", "certpca.margins"),
    ("certpca.results", "certpca.summary", "certpca.data", "certpca.datasets"),
    ("certpca.io",),
    ("certpca.solvers",),
    ("certpca.certification",),
    ("certpca.components", "certpca.paths"),
    ("certpca.evaluate", "certpca.stability_selection", "certpca.crossval", "certpca._secular", "certpca._lloyd"),
    ("certpca.reporting", "certpca.reproduce"),
    ("certpca.api", "certpca.estimator", "certpca"),  # the public API and the package's __init__
    ("certpca.cli", "certpca.__main__"),
]


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def layer_of(module: str) -> int:
    best, index = -1, None
    for i, names in enumerate(LAYERS):
        for name in names:
            if (module == name or module.startswith(name + ".")) and len(name) > best:
                best, index = len(name), i
    if index is None:
        raise AssertionError(f"{module} is in no layer: add it to LAYERS and docs/ARCHITECTURE.md")
    return index


def resolve(importer: str, node: ast.ImportFrom | ast.Import) -> list[str]:
    """The certpca modules an import statement loads (a name that is a submodule counts as one)."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names if a.name.split(".")[0] == "certpca"]
    package = importer if MODULES[importer].name == "__init__.py" else importer.rpartition(".")[0]
    if node.level:
        base = package.split(".")
        base = base[: len(base) - node.level + 1]
        target = ".".join(base + ([node.module] if node.module else []))
    else:
        target = node.module or ""
    if target.split(".")[0] != "certpca":
        return []
    out = []
    for alias in node.names:
        sub = f"{target}.{alias.name}"
        out.append(sub if sub in MODULES else target)
    return out


def imports(module: str) -> list[tuple[str, int, bool]]:
    """(imported module, line, inside a function) for every certpca import of ``module``."""
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    found = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                found.extend((t, child.lineno, in_function) for t in resolve(module, child))
            visit(child, in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)))

    visit(tree, False)
    return found


GRAPH = {m: imports(m) for m in MODULES}


def test_every_module_has_a_layer():
    for module in MODULES:
        layer_of(module)


def test_no_import_points_up_a_layer():
    upward = [
        f"{m}:{line} imports {t} (layer {layer_of(t)} above {layer_of(m)})"
        for m, found in GRAPH.items()
        for t, line, _ in found
        if t in MODULES and layer_of(t) > layer_of(m)
    ]
    assert not upward, "\n".join(upward)


def test_no_import_cycle():
    edges = {m: sorted({t for t, _, _ in found if t in MODULES and t != m}) for m, found in GRAPH.items()}
    state: dict[str, int] = {}
    stack: list[str] = []

    def dfs(m: str) -> list[str] | None:
        state[m] = 1
        stack.append(m)
        for t in edges[m]:
            if t.startswith(m + "."):  # a package importing its own submodules is not a cycle
                continue
            if state.get(t) == 1 and not m.startswith(t + "."):
                return stack[stack.index(t) :] + [t]
            if t not in state:
                cycle = dfs(t)
                if cycle:
                    return cycle
        stack.pop()
        state[m] = 2
        return None

    for m in edges:
        if m not in state:
            cycle = dfs(m)
            assert cycle is None, " -> ".join(cycle)


def test_imports_inside_functions_say_why():
    unexplained: dict[str, list[int]] = {}
    for m, found in GRAPH.items():
        lines = MODULES[m].read_text(encoding="utf-8").splitlines()
        for _, line, inside in found:
            if inside and "#" not in lines[line - 1] and not lines[line - 2].strip().startswith("#"):
                unexplained.setdefault(str(MODULES[m].relative_to(PACKAGE.parent)), []).append(line)
    assert not unexplained, f"imports inside functions without a comment saying why: {unexplained}"


@pytest.mark.parametrize(
    "source, expected",
    [
        ("from certpca.cli import main\n", "upward"),
        ("import certpca.reporting.html\n", "upward"),
    ],
)
def test_the_check_catches_an_upward_import(tmp_path, monkeypatch, source, expected):
    """A module of the solver layer that imported the CLI or the report would fail the check."""
    victim = "certpca.solvers.baselines"
    tree = ast.parse(source)
    found = [(t, 1, False) for node in tree.body for t in resolve(victim, node)]
    monkeypatch.setitem(GRAPH, victim, GRAPH[victim] + found)
    with pytest.raises(AssertionError, match="imports"):
        test_no_import_points_up_a_layer()


#: the most parameters a function of the report wing or the command line takes (issue 26): more options
#: travel as one object (certpca.reporting.options.ReportOptions)
MAX_PARAMETERS = 10


def too_many_parameters(tree: ast.AST) -> list[str]:
    """Functions of ``tree`` with more than MAX_PARAMETERS parameters (``*args`` and ``**kwargs`` count)."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            a = node.args
            n = len(a.posonlyargs) + len(a.args) + len(a.kwonlyargs) + (a.vararg is not None) + (a.kwarg is not None)
            if n > MAX_PARAMETERS:
                out.append(f"{node.name} ({n})")
    return out


def test_report_functions_take_at_most_ten_parameters():
    found = {
        m: bad
        for m, path in MODULES.items()
        if m.startswith(("certpca.reporting", "certpca.cli"))
        and (bad := too_many_parameters(ast.parse(path.read_text(encoding="utf-8"))))
    }
    assert not found, f"functions with more than {MAX_PARAMETERS} parameters: {found}"
    assert too_many_parameters(ast.parse("def f(a, *, b, c, d, e, f, g, h, i, j, **more): pass")) == ["f (11)"]
