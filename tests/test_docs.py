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
    for needed in (
        "## Two commands",
        "./dev demo",
        "./dev test",
        "## Install",
        "## A day with agents",
        "## Where to go next",
    ):
        assert needed in text, needed


def test_design_describes_the_system_in_a_readable_size():
    size = len((REPO / "docs" / "DESIGN.md").read_bytes())
    assert size <= 60_000, (
        f"docs/DESIGN.md is {size} bytes: fold what was appended into its section, move the why to docs/decisions/"
    )


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
    missing = [
        f"{v} {s or ''}".strip() for (v, s) in verbs.VERBS if f"### `loopx {v}{' ' + s if s else ''}`" not in page
    ]
    assert not missing, missing


def _unplaced_verbs(architecture: str) -> list[str]:
    """The verbs ARCHITECTURE.md's "Where each verb's handler lives" does not
    place in the module their handler is in (the verb table's ``"module:function"``)."""
    from loopx_core.shapes import verbs

    section = architecture.split("## Where each verb's handler lives", 1)[-1].split("\n## ", 1)[0]
    rows = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 2 and cells[1].endswith(".py`"):
            rows[cells[1].strip("`")] = cells[0]
    unplaced = []
    for (verb, sub), spec in verbs.VERBS.items():
        module = spec.handler.split(":", 1)[0]
        named = module.removeprefix("loopx_core.cli.") + ".py"
        if not module.startswith("loopx_core.cli.") or f"`{verb}`" not in rows.get(named, ""):
            unplaced.append(f"{verb} {sub or ''}".strip() + f" ({module})")
    return unplaced


def test_a_newcomer_finds_each_verbs_handler_from_the_architecture_page():
    text = (REPO / "docs" / "ARCHITECTURE.md").read_text()
    assert not _unplaced_verbs(text), "docs/ARCHITECTURE.md does not say where these verbs' handlers are: " + ", ".join(
        _unplaced_verbs(text)
    )
    # and the check bites: a verb group the table puts in the wrong module is reported
    moved = text.replace(
        "| `gate` (ask, status, list, answer) | `gate_commands.py`",
        "| `gate` (ask, status, list, answer) | `card_commands.py`",
    )
    assert "gate ask (loopx_core.cli.gate_commands)" in _unplaced_verbs(moved)
