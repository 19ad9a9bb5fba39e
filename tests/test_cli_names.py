"""The command line's names: one name per concept, former spellings that still work and warn, errors
that name the flag given, and the size of the command-line package."""

from __future__ import annotations

import argparse
import ast
import json
import re
from pathlib import Path

import numpy as np
import pytest

import certpca
from certpca.cli import build_parser, main
from certpca.cli.options import long_flag, visible_options
from certpca.errors import InputError

CLI = Path(certpca.__file__).parent / "cli"

#: every former spelling, its subcommand and the option that replaces it (README, "Renamed options")
FORMER = [
    ("report", "--methods", "--method"),
    ("report", "--path-methods", "--path-method"),
    ("report", "--output", "--out"),
    ("genes", "--k", "--gene-k"),
    ("genes", "--sizes", "--gene-sizes"),
]


def commands() -> dict[str, argparse.ArgumentParser]:
    """Every subparser that runs a command, by its name (``data list`` included)."""
    found = {}

    def walk(parser, prefix):
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, child in action.choices.items():
                    if not walk(child, f"{prefix} {name}".strip()):
                        found[f"{prefix} {name}".strip()] = child
                return True
        return False

    walk(build_parser(), "")
    return found


def _alternatives(parser) -> set[str]:
    """Dests of a mutually exclusive group of constants (report's --nonneg/--plain): one option's values."""
    return {
        a.dest
        for g in parser._mutually_exclusive_groups
        for a in g._group_actions
        if isinstance(a, argparse._StoreConstAction)
    }


def test_every_command_is_found():
    assert set(commands()) == {
        "fit",
        "certify",
        "path",
        "report",
        "genes",
        "table",
        "data list",
        "solvers",
        "reproduce",
        "stability",
    }


@pytest.mark.parametrize("name", sorted(commands()))
def test_no_two_options_of_a_command_share_a_concept(name):
    parser = commands()[name]
    dests = [a.dest for a in visible_options(parser) if a.dest not in _alternatives(parser)]
    assert len(dests) == len(set(dests)), sorted(d for d in dests if dests.count(d) > 1)


def test_one_flag_per_concept_across_commands():
    """A Python parameter is fed by the same flag in every subcommand (``--out`` wherever a command writes)."""
    flags: dict[str, set[str]] = {}
    for parser in [build_parser(), *commands().values()]:
        for action in visible_options(parser):
            if action.dest not in _alternatives(parser) and action.dest != "help":
                flags.setdefault(action.dest, set()).add(long_flag(action))
    assert {d: f for d, f in flags.items() if len(f) > 1} == {}
    assert flags["output"] == flags["out"] == {"--out"} and flags["gene_k"] == {"--gene-k"}
    assert flags["methods"] == flags["method"] == {"--method"} and flags["gene_sizes"] == {"--gene-sizes"}


@pytest.mark.parametrize("command, old, new", FORMER)
def test_former_spellings_are_not_in_the_help(command, old, new):
    text = commands()[command].format_help()
    assert re.search(rf"(?<![\w-]){re.escape(old)}(?![\w-])", text) is None, old
    assert new in text


def test_the_top_help_lists_every_command(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    assert all(name.split()[0] in out for name in commands())


@pytest.mark.parametrize("command, old, new", FORMER)
def test_former_spellings_still_work_and_warn(command, old, new, capsys):
    value = {"--k": "5", "--sizes": "2,4", "--output": "r.html"}.get(old, "em")
    head = [command, "pitprops"] + (["--k", "3"] if command == "report" else [])
    parser = build_parser()
    current = parser.parse_args([*head, new, value])
    assert capsys.readouterr().err == ""
    former = parser.parse_args([*head, old, value])
    err = capsys.readouterr().err
    assert vars(former) == vars(current)
    assert err == (f"certpca: warning: {old} is deprecated and will be removed in the next version; use {new}\n")


def _labelled(tmp_path) -> tuple[Path, Path]:
    X = np.random.default_rng(1).normal(size=(16, 8))
    X[::2, :3] += 3.0  # class a is far from b on three features
    data, labels = tmp_path / "x.csv", tmp_path / "y.csv"
    data.write_text(
        "sample,"
        + ",".join(f"g{j}" for j in range(8))
        + "\n"
        + "".join(f"s{i}," + ",".join(f"{v:.6f}" for v in r) + "\n" for i, r in enumerate(X))
    )
    labels.write_text("sample,label\n" + "".join(f"s{i},{'ab'[i % 2]}\n" for i in range(16)))
    return data, labels


def test_genes_under_its_former_spellings_gives_the_same_run(tmp_path, capsys):
    data, labels = _labelled(tmp_path)
    base = ["genes", str(data), "--labels", str(labels), "--n-init", "3", "--json"]
    assert main([*base, "--gene-k", "4", "--gene-sizes", "2,4"]) == 0
    out, err = capsys.readouterr()
    assert main([*base, "--k", "4", "--sizes", "2,4"]) == 0
    out_former, err_former = capsys.readouterr()
    assert json.loads(out_former) == json.loads(out) and "deprecated" not in err
    assert err_former.count("is deprecated") == 2 and "use --gene-k" in err_former and "use --gene-sizes" in err_former


def test_gene_sizes_are_the_one_grid_syntax(tmp_path, capsys):
    """FROM:TO:COUNT is COUNT geometric sizes, as --path and path --k (it was an arithmetic step): 2:8:3 is 2, 4, 8."""
    data, labels = _labelled(tmp_path)
    argv = ["genes", str(data), "--labels", str(labels), "--n-init", "3", "--gene-k", "4", "--json"]
    assert main([*argv, "--gene-sizes", "2:8:3"]) == 0
    out, err = capsys.readouterr()
    assert {r["size"] for r in json.loads(out)["rows"][1:]} == {2, 4, 8}
    assert "--gene-sizes 2:8:3 means geometrically spaced sizes" in err and "0.1.0" in err
    assert main([*argv, "--gene-sizes", "0:8:3"]) == 2
    assert capsys.readouterr().err.endswith("certpca: error: --gene-sizes '0:8:3' needs FROM >= 1 and COUNT >= 1\n")


@pytest.mark.parametrize(
    "argv, message",
    [
        (["report", "pitprops", "--k", "3", "--path", "0:10"], "--path '0:10' needs FROM >= 1"),
        (["report", "pitprops", "--k", "3", "--budget", "-1"], "--budget is out of range: got -1"),
        (["report", "pitprops", "--k", "3", "--gene-k", "0"], "--gene-k is out of range: got 0"),
        (["report", "pitprops", "--k", "3", "--method", ","], "--method is empty"),
        (["path", "pitprops", "--k", "0:3"], "--k '0:3' needs FROM >= 1"),
        (["fit", "pitprops", "--k", "3", "--components", "0"], "--components is out of range: got 0"),
        (["fit", "pitprops", "--k", "3", "--min-angle", "91"], "--min-angle is out of range"),
        (["fit", "pitprops", "--k", "3", "--log2", "0"], "--log2 floor must be positive (got 0.0); e.g. --log2 20 "),
        (["fit", "pitprops", "--k", "3", "--transpose"], "drop --transpose and --na"),
        (["fit", "pitprops", "--k", "3", "--chunked"], "--chunked applies to .h5ad files"),
        (["certify", "pitprops", "--k", "3", "--budget", "-1"], "--budget is out of range: got -1"),
        (["--threads", "0", "solvers"], "--threads is out of range: got 0"),
        (["reproduce", "--out", "README.md"], "--out README.md is a file; give a folder"),
    ],
)
def test_an_error_names_the_flag_given(capsys, argv, message):
    code = main(argv)
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and err.count("\n") == 1
    assert err.startswith("certpca: error: ") and message in err, err


def test_an_error_in_python_names_the_parameter(tmp_path):
    """The same checks from Python speak of parameters, never of flags."""
    with pytest.raises(InputError) as err:
        certpca.load("pitprops", transpose=True)
    assert str(err.value) == "bundled data set 'pitprops' is ready to use; drop transpose and na"
    bad = tmp_path / "x.csv"
    bad.write_text("sample,a,b\ns1,1,\ns2,2,3\ns3,4,5\n")
    with pytest.raises(InputError) as err:
        certpca.load(bad)
    assert "na=drop-rows|drop-cols|mean handles them" in str(err.value) and "--" not in str(err.value)
    assert err.value.renamed({"na": "--na"}.get).endswith("--na drop-rows|drop-cols|mean handles them")
    with pytest.raises(InputError) as err:
        certpca.path("pitprops", "0:3")
    assert str(err.value).startswith("ks '0:3' needs FROM >= 1") and err.value.param == "ks"


def test_no_library_message_speaks_in_flags():
    """Library InputError messages name Python parameters; only certpca/cli (and the reproduce notes) say flags."""
    package = Path(certpca.__file__).parent
    offenders = []
    for path in sorted(package.rglob("*.py")):
        if path.is_relative_to(CLI):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", "")) in (
                "InputError",
                "bad_argument",
            ):
                text = ast.unparse(node)
                if re.search(r"(?<![\w-])--[a-z]", text) and "certpca " not in text:
                    offenders.append(f"{path.relative_to(package)}:{node.lineno}")
    assert offenders == []


def _functions(tree):
    return [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]


@pytest.mark.parametrize("path", sorted(CLI.glob("*.py")), ids=lambda p: p.name)
def test_the_command_line_modules_are_small(path):
    text = path.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 600
    for fn in _functions(ast.parse(text)):
        a = fn.args
        count = len(a.posonlyargs) + len(a.args) + len(a.kwonlyargs) + bool(a.vararg) + bool(a.kwarg)
        assert count <= 10, f"{fn.name} takes {count} parameters"


def test_the_report_records_its_command_in_the_current_spellings(capsys):
    """The command line a report page shows is rebuilt from the parser's visible options."""
    from certpca.cli.reports import _command

    args = build_parser().parse_args(["report", "pitprops", "--k", "3", "--methods", "em", "--output", "x.html"])
    capsys.readouterr()
    assert _command(args, "report") == "certpca report pitprops --k 3 --method em --out x.html"
