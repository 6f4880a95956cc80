"""The docs are pages a newcomer can use: the README stays a short first page,
every link between the pages lands on a file that exists, and the CLI
reference is what the verb table makes (``./dev docs`` rewrites it)."""

from __future__ import annotations

import re
from pathlib import Path

from loopx_core.cli import reference

REPO = Path(__file__).resolve().parent.parent
LINK = re.compile(r"\]\(([^)\s]+)\)")


def _pages() -> list[Path]:
    return [REPO / "README.md", REPO / "CHANGELOG.md", *sorted((REPO / "docs").rglob("*.md"))]


def test_the_readme_is_a_first_page_not_a_reference():
    lines = (REPO / "README.md").read_text().splitlines()
    assert len(lines) <= 200, f"README.md has {len(lines)} lines: move reference into docs/"
    text = "\n".join(lines)
    for needed in ("## Two commands", "./dev demo", "./dev test", "## Install", "## A day with agents", "## Where to go next"):
        assert needed in text, needed


def test_design_describes_the_system_in_a_readable_size():
    size = len((REPO / "docs" / "DESIGN.md").read_bytes())
    assert size <= 60_000, f"docs/DESIGN.md is {size} bytes: fold what was appended into its section, move the why to docs/decisions/"


def test_every_link_between_the_pages_lands_on_a_file():
    broken = []
    for page in _pages():
        for target in LINK.findall(page.read_text(encoding="utf-8")):
            if target.startswith(("http://", "https://", "mailto:", "#")):
                continue
            path = target.split("#", 1)[0]
            if not (page.parent / path).exists():
                broken.append(f"{page.relative_to(REPO)}: {target}")
    assert not broken, "links to files that do not exist:\n" + "\n".join(broken)


def test_the_cli_reference_is_the_verb_table(tmp_path, monkeypatch):
    current = reference.PAGE.read_text()
    assert current == reference.markdown(), "docs/cli.md is out of date: run ./dev docs"
    # and the check bites: a page that differs from the table is reported
    monkeypatch.setattr(reference, "PAGE", tmp_path / "cli.md")
    (tmp_path / "cli.md").write_text(current.replace("### `loopx done`", "### `loopx finish`"))
    assert reference.main(["--check"]) == 1


def test_every_verb_is_on_the_reference_page():
    from loopx_core.shapes import verbs

    page = reference.PAGE.read_text()
    missing = [f"{v} {s or ''}".strip() for (v, s) in verbs.VERBS if f"### `loopx {v}{' ' + s if s else ''}`" not in page]
    assert not missing, missing
