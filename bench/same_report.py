"""Are two reports the same but for their timings?  The saved runs (``--json``) without their seconds
(:func:`bench_report.timeless`) and the pages byte for byte (a page shows no timings unless asked).

    python bench/same_report.py BEFORE_DIR AFTER_DIR [AFTER_DIR ...]

Each folder holds ``run.json`` (the report's ``--json`` output) and ``out.html`` (its ``-o`` page).  Prints
one line per AFTER_DIR and exits 1 when any differs from BEFORE_DIR.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from bench_report import timeless


def differences(before: Path, after: Path) -> list[str]:
    """What differs between the reports in two folders: the saved run's top-level keys, and the page."""
    a, b = (timeless(json.loads((d / "run.json").read_text())) for d in (before, after))
    out = [f"run.json: {key}" for key in sorted(set(a) | set(b)) if a.get(key) != b.get(key)]
    if (before / "out.html").read_bytes() != (after / "out.html").read_bytes():
        out.append("out.html")
    return out


def main() -> None:
    before, *afters = (Path(p) for p in sys.argv[1:])
    if not afters:
        sys.exit(__doc__)
    bad = False
    for after in afters:
        diff = differences(before, after)
        bad |= bool(diff)
        print(f"{after}: {'the same as ' + str(before) if not diff else 'differs in ' + ', '.join(diff)}")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
