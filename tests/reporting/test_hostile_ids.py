"""Ids from a user's file are text in every output format, never markup that runs."""

import re

import numpy as np
import pandas as pd

from certpca.cli import main

HOSTILE = [
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(2)>",
    'quote"s',
    "a & b",
    "50%_$x#{y}",
    "pipe|star*`tick`",
    "back\\slash",
]


def test_hostile_feature_ids_are_escaped_in_html_markdown_and_latex(tmp_path, capsys):
    rng = np.random.default_rng(3)
    ids = HOSTILE + [f"g{j}" for j in range(8 - len(HOSTILE) + 5)]
    X = rng.standard_normal((20, len(ids)))
    X[:, : len(HOSTILE)] += rng.standard_normal((20, 1)) * 4  # the hostile ids carry the component
    pd.DataFrame(X, index=[f"s{i}" for i in range(20)], columns=ids).to_csv(tmp_path / "evil.csv")
    code = main(
        [
            "report",
            str(tmp_path / "evil.csv"),
            "--k",
            "5",
            "--method",
            "em,threshold",
            "--path",
            "1:13:3",
            "-o",
            str(tmp_path / "r.html"),
            "--tables",
            str(tmp_path / "tabs"),
        ]
    )
    assert code == 0, capsys.readouterr().err
    html = (tmp_path / "r.html").read_text()
    assert (
        "<script" not in html.lower()
        and "<img" not in html.lower()
        and "onerror=alert" not in html.replace("onerror=alert(2)&gt;", "")
    )
    assert re.search(r"<td[^>]*>&lt;img src=x onerror=alert\(2\)&gt;</td>", html)  # a table cell, as text
    assert "Content-Security-Policy" in html and "default-src 'none'" in html
    md = "".join(p.read_text() for p in (tmp_path / "tabs").glob("*.md"))
    assert "<img" not in md and "&lt;img src=x onerror=alert(2)&gt;" in md and "a &amp; b" in md
    tex = "".join(p.read_text() for p in (tmp_path / "tabs").glob("*.tex"))
    assert r"a \& b" in tex
