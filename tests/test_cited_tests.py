"""Every test file the docs and the code cite exists: a docstring or a design
note that names ``tests/…py`` as the proof of a claim names a real file."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CITED = re.compile(r"\btests/[\w/]+\.py\b")


def _citing_files():
    yield from (REPO / "docs").rglob("*.md")
    yield REPO / "README.md"
    yield REPO / "CHANGELOG.md"
    for package in ("loopx_core", "loopx_tui", "bench"):
        # (the demo's strings are the files of the demo's own project, not citations)
        yield from (p for p in (REPO / package).rglob("*.py") if "demo" not in p.relative_to(REPO).parts)
    yield from (REPO / "tests").rglob("*.py")


def test_every_cited_test_file_exists():
    missing = sorted(
        f"{path.relative_to(REPO)}: {cited}"
        for path in _citing_files()
        for cited in set(CITED.findall(path.read_text(encoding="utf-8")))
        if not (REPO / cited).exists()
    )
    assert not missing, "cited test files that do not exist:\n" + "\n".join(missing)
