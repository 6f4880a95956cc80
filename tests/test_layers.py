"""The layers of docs/ARCHITECTURE.md hold, checked by a maintained tool:
import-linter's contracts in pyproject.toml ([tool.importlinter]) — the kernel
never imports the board or an adapter, adapters and the watcher never import
the models or the ORM, the rules are standard library only, the hook's cold
path imports no pydantic, Textual or SQL builder. And a cold process that
imports the hook's cold path really loads none of them."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
LINT = [
    sys.executable,
    "-c",
    "import sys; from importlinter.cli import lint_imports_command; sys.exit(lint_imports_command())",
    "--no-cache",
]


def lint(root: Path) -> subprocess.CompletedProcess:
    """lint-imports over the packages under ``root`` (first on the path)."""
    return subprocess.run(
        [*LINT, str(REPO / "pyproject.toml")],
        cwd=root,
        env={**os.environ, "PYTHONPATH": str(root)},
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_the_import_contracts_hold():
    res = lint(REPO)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "0 broken" in res.stdout and " kept" in res.stdout


def test_a_broken_layer_fails_the_contracts(tmp_path):
    """The contracts catch the shortcuts they exist for: an adapter or the runner
    reading the models, the watcher writing events itself, the cold path
    importing pydantic, the board's reads building SQL with the models, the
    authority reading the store, a rule importing the verbs' table, the
    leases reaching up to the budget rule, a verb importing another verb (the
    operators' tiers), a shared step reaching up to the verb that calls it, a
    board screen importing the app, a
    shell reader importing the checker that calls it, the shell reader
    reaching up to the hook's ground, the board's gate queue naming the app
    again (if only for its type: the old circle) and its actions reaching into
    the gate queue beside them, a runtime's module asking an operator or
    reaching up to the hooks, the runtimes' registry importing anything, the
    verb table importing a runtime's module rather than the registry."""
    for pkg in ("loopx_core", "loopx_tui"):
        shutil.copytree(REPO / pkg, tmp_path / pkg, ignore=shutil.ignore_patterns("__pycache__"))
    shortcuts = {
        "adapters/fastcheck.py": "from ..shapes import schemas",
        "adapters/hooks.py": "from ..store.models import Card",
        "runner/loop.py": "from ..store.models import Agent",
        "watch/ingest.py": "from ..store import events",
        "ops/board_pages.py": "from ..store.models import Card as _Card",
        "authority/trust.py": "from ..store import records",
        "rules/ids.py": "from ..shapes import verbs",
        "ops/leases.py": "from . import quota",
        "ops/cards.py": "from . import claims",
        "ops/gate_rows.py": "from . import gates",
        "shell/guarded.py": "from . import checker",
        "shell/posix_words.py": "from ..adapters import ground",
        "runtimes/codex.py": "from ..ops import gates",
        "runtimes/base.py": "from ..adapters import charge",
        "runtimes/__init__.py": "from ..rules import ids",
        "shapes/values.py": "from ..runtimes import claude_code",
    }
    for path, line in shortcuts.items():
        module = tmp_path / "loopx_core" / path
        module.write_text(module.read_text() + f"\n{line}  # noqa\n")
    screen = tmp_path / "loopx_tui" / "screens" / "card.py"  # a screen calling the app again, if only for its type
    screen.write_text(
        screen.read_text()
        + "\nfrom typing import TYPE_CHECKING  # noqa\n\nif TYPE_CHECKING:\n    from ..app import LoopxApp  # noqa\n"
    )
    queue = tmp_path / "loopx_tui" / "gate_queue.py"
    queue.write_text(queue.read_text() + "\nif TYPE_CHECKING:\n    from .app import LoopxApp  # noqa\n")
    actions = tmp_path / "loopx_tui" / "actions.py"
    actions.write_text(actions.read_text() + "\nfrom . import gate_queue  # noqa\n")
    res = lint(tmp_path)
    assert res.returncode != 0
    assert "loopx_core.adapters.hooks -> loopx_core.store.models" in res.stdout, res.stdout
    assert "loopx_core.adapters.fastcheck -> loopx_core.shapes.schemas" in res.stdout, res.stdout
    assert "loopx_core.runner.loop -> loopx_core.store.models" in res.stdout, (
        res.stdout
    )  # the runner calls operators too
    assert "loopx_core.watch.ingest -> loopx_core.store.events" in res.stdout, (
        res.stdout
    )  # events are written by operators
    assert "loopx_core.ops.board_pages -> loopx_core.store.models" in res.stdout, (
        res.stdout
    )  # the board's reads are plain SQL
    assert "loopx_core.authority.trust -> loopx_core.store.records" in res.stdout, (
        res.stdout
    )  # the store builds on authority, never back
    assert "loopx_core.rules.ids -> loopx_core.shapes.verbs" in res.stdout, res.stdout  # rules: only shapes.errors
    assert "loopx_core.ops.leases -> loopx_core.ops.quota" in res.stdout, res.stdout  # no lifecycle circle
    assert "loopx_core.ops.cards -> loopx_core.ops.claims" in res.stdout, res.stdout  # no verb imports another
    assert "loopx_core.ops.gate_rows -> loopx_core.ops.gates" in res.stdout, (
        res.stdout
    )  # the shared steps are below the verbs
    assert "loopx_tui.screens.card -> loopx_tui.app" in res.stdout, res.stdout  # screens post messages to the app
    assert "loopx_tui.gate_queue -> loopx_tui.app" in res.stdout, (
        res.stdout
    )  # the services see the app as host.py's protocols
    assert "loopx_tui.actions -> loopx_tui.gate_queue" in res.stdout, res.stdout  # the app's services are independent
    assert "loopx_core.shell.guarded -> loopx_core.shell.checker" in res.stdout, (
        res.stdout
    )  # no reader imports the checker
    assert "loopx_core.shell.posix_words -> loopx_core.adapters.ground" in res.stdout, (
        res.stdout
    )  # the shell reader is below the hook
    assert "loopx_core.runtimes.codex -> loopx_core.ops.gates" in res.stdout, (
        res.stdout
    )  # a runtime knows its runtime, not the board
    assert "loopx_core.runtimes.base -> loopx_core.adapters.charge" in res.stdout, (
        res.stdout
    )  # the hooks and init ask the runtimes, never back
    assert "loopx_core.runtimes -> loopx_core.rules.ids" in res.stdout, (
        res.stdout
    )  # the registry imports nothing (the cold hook reads it)
    assert "loopx_core.shapes.values -> loopx_core.runtimes.claude_code" in res.stdout, (
        res.stdout
    )  # shapes read the registry's names only


HEAVY = (
    "pydantic",
    "peewee",
    "psycopg",
    "textual",
    "rich",
    "watchfiles",
    "platformdirs",
    "mcp",
    "loopx_core.store",
    "loopx_core.ops",
    "loopx_core.shapes.schemas",
    "loopx_tui",
)


def test_the_cold_path_loads_nothing_heavy():
    """A fresh process importing the hook's entry, its sqlite3 reader, every
    rule module and every module of the shell reader loads no pydantic, Textual, SQL builder, store or operator."""
    rules = sorted(p.stem for p in (REPO / "loopx_core" / "rules").glob("*.py") if p.stem != "__init__")
    shell = sorted(p.stem for p in (REPO / "loopx_core" / "shell").glob("*.py") if p.stem != "__init__")
    modules = [
        "loopx_core.adapters.hook_entry",
        "loopx_core.adapters.fastcheck",
        *(f"loopx_core.rules.{r}" for r in rules),
        *(f"loopx_core.shell.{m}" for m in shell),
    ]
    probe = (
        "import importlib, json, sys\n"
        f"for m in {modules!r}: importlib.import_module(m)\n"
        f"print(json.dumps(sorted(m for m in sys.modules if any(m == h or m.startswith(h + '.') for h in {HEAVY!r}))))\n"
    )
    res = subprocess.run([sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout) == [], res.stdout
    assert len(rules) >= 10 and len(shell) >= 8  # the probe really imported the rules and the shell reader
