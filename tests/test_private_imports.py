"""The dependencies' public APIs only, but for the private modules
docs/ARCHITECTURE.md lists with their reason ("Private imports: the whole
list"): a private import not listed there fails here."""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def _private_imports() -> dict[str, str]:
    found = {}
    for package in ("loopx_core", "loopx_tui"):
        for path in (REPO / package).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    names = [node.module]
                elif isinstance(node, ast.Import):
                    names = [alias.name for alias in node.names]
                else:
                    continue
                for name in names:
                    if name != "__future__" and any(part.startswith("_") for part in name.split(".")):
                        found[name] = str(path.relative_to(REPO))
    return found


def test_every_private_import_is_listed_with_its_reason():
    listed = (
        (REPO / "docs" / "ARCHITECTURE.md")
        .read_text(encoding="utf-8")
        .split("## Private imports", 1)[1]
        .split("\n## ", 1)[0]
    )
    found = _private_imports()
    assert "_sqlite3" in found  # (the scan sees them)
    unlisted = sorted(f"{name} ({where})" for name, where in found.items() if f"`{name}`" not in listed)
    assert not unlisted, "private imports not listed in docs/ARCHITECTURE.md: " + ", ".join(unlisted)
