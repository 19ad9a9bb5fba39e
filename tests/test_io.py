"""The output policy of certpca/io.py, through the library and the command line."""

from __future__ import annotations

import os
import signal

import numpy as np
import pandas as pd
import pytest

from certpca.cli import main
from certpca.errors import InputError
from certpca.io import Outputs, write_atomically


def good_csv(path):
    rng = np.random.default_rng(1)
    pd.DataFrame(
        rng.standard_normal((8, 6)), index=[f"s{i}" for i in range(8)], columns=[f"g{j}" for j in range(6)]
    ).to_csv(path)
    return path


def snapshot(folder):
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("command", [["fit", "--k", "2"], ["path", "--k", "1:3:2"]])
@pytest.mark.parametrize("force", [False, True])
def test_an_input_is_never_overwritten(capsys, tmp_path, command, force):
    data = good_csv(tmp_path / "good.csv")
    before = snapshot(tmp_path)
    argv = [command[0], data, *command[1:], "--out", data] + (["--force"] if force else [])
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert "is an input of this command" in err and err.count("\n") == 1
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize("command", [["fit", "--k", "2"], ["path", "--k", "1:3:2"]])
def test_an_existing_output_needs_force(capsys, tmp_path, command):
    data = good_csv(tmp_path / "good.csv")
    target = tmp_path / "out.csv"
    target.write_text("keep me")
    code, _, err = run(capsys, command[0], data, *command[1:], "--out", target)
    assert code == 2 and "exists; pass --force" in err and target.read_text() == "keep me"
    code, _, err = run(capsys, command[0], data, *command[1:], "--out", target, "--force")
    assert code == 0, err
    assert target.read_text().startswith(("feature,", "k,"))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["good.csv", "out.csv"]  # no temporary left


def test_a_read_only_folder_is_refused_before_computing(capsys, tmp_path, monkeypatch):
    """Permissions cannot stop root (who runs CI), so the folder refuses files the way a
    read-only mount does: creating one raises PermissionError."""
    import certpca.io

    data = good_csv(tmp_path / "good.csv")
    locked = tmp_path / "locked"
    locked.mkdir()
    real = certpca.io.tempfile.TemporaryFile

    def refuse(*args, dir=None, **kw):
        if dir is not None and os.path.samefile(dir, locked):
            raise PermissionError(13, "Permission denied")
        return real(*args, dir=dir, **kw)

    monkeypatch.setattr(certpca.io.tempfile, "TemporaryFile", refuse)
    loaded = []
    monkeypatch.setattr("certpca.cli.fitting.open_data", lambda *a, **kw: loaded.append(a))
    code, out, err = run(capsys, "fit", data, "--k", "2", "--out", locked / "x.csv")
    assert code == 2 and out == "" and not loaded  # refused before the data were even read
    assert err == f"certpca: error: cannot write --out into {locked}: permission denied; choose a writable folder\n"
    assert list(locked.iterdir()) == []


def test_a_folder_as_output_and_a_missing_folder(capsys, tmp_path):
    data = good_csv(tmp_path / "good.csv")
    code, _, err = run(capsys, "fit", data, "--k", "2", "--out", tmp_path)
    assert code == 2 and "is a folder" in err
    code, _, err = run(capsys, "fit", data, "--k", "2", "--out", tmp_path / "nowhere" / "x.csv")
    assert code == 2 and "does not exist" in err


def test_group_write_is_all_or_nothing(tmp_path):
    (tmp_path / "a.txt").write_text("old a")
    out = Outputs(force=True)
    a, b = out.claim(tmp_path / "a.txt"), out.claim(tmp_path / "b.txt")
    with pytest.raises(RuntimeError, match="boom"), out.writing():
        out.write(a, "new a")
        raise RuntimeError("boom")
    assert snapshot(tmp_path) == {"a.txt": b"old a"}  # old output kept, no temporary files
    with out.writing():
        out.write(a, "new a")
        out.write(b, "new b")
    assert snapshot(tmp_path) == {"a.txt": b"new a", "b.txt": b"new b"}


def test_ctrl_c_during_the_renames_is_held_until_all_are_in_place(tmp_path):
    # Python's own SIGINT handler, as a command line starts with: a library used earlier in the same test
    # session may have left another one installed
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        _interrupted_writes(tmp_path)
    finally:
        signal.signal(signal.SIGINT, previous)


def _interrupted_writes(tmp_path):
    out = Outputs()
    paths = [out.claim(tmp_path / f"{i}.txt") for i in range(3)]
    with pytest.raises(KeyboardInterrupt), out.writing():
        for p in paths:
            out.write(p, p.name)
        os.kill(os.getpid(), signal.SIGINT)  # delivered before the renames: the block is interrupted
    assert snapshot(tmp_path) == {}
    original = os.replace

    def replace_then_interrupt(src, dst):
        original(src, dst)
        os.kill(os.getpid(), signal.SIGINT)  # an interrupt in the middle of the renames

    out = Outputs()
    paths = [out.claim(tmp_path / f"{i}.txt") for i in range(3)]
    try:
        os.replace = replace_then_interrupt
        with pytest.raises(KeyboardInterrupt), out.writing():
            for p in paths:
                out.write(p, p.name)
    finally:
        os.replace = original
    assert snapshot(tmp_path) == {f"{i}.txt": f"{i}.txt".encode() for i in range(3)}


def test_the_same_output_twice_and_unclaimed_writes(tmp_path):
    out = Outputs()
    out.claim(tmp_path / "x.csv", "loadings")
    with pytest.raises(InputError, match="also the loadings"):
        out.claim(tmp_path / "x.csv", "scores")
    write_atomically(tmp_path / "y.txt", "text")
    with pytest.raises(InputError, match="exists"):
        write_atomically(tmp_path / "y.txt", "again")
    assert (tmp_path / "y.txt").read_text() == "text"
