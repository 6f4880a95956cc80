"""docs/cli.md, the CLI reference, written from the verb table (``shapes/verbs.py``)
— the one source of the parser, the MCP tools and completion — so the page
cannot drift from the commands. ``./dev docs`` rewrites it;
``tests/test_docs.py`` fails when the page and the table disagree."""

from __future__ import annotations

import sys
from pathlib import Path

from ..shapes import verbs
from .parser import EPILOG

PAGE = Path(__file__).resolve().parents[2] / "docs" / "cli.md"

INTRO = """\
# The `loopx` command line

Generated from the verb table (`loopx_core/shapes/verbs.py`) by `./dev docs`;
do not edit by hand. `loopx VERB --help` prints the same, and
`loopx completion bash|zsh|fish` completes it.

Every command takes `--json` (exactly one JSON object on stdout) and `--db
PATH|URL` (the board; default `LOOPX_DB`, else the nearest `.loopx/board.db`).
**person** marks a verb only a person may run: it is signed with the person's
key, and refused to agents (exit 10) — by the CLI and by the PreToolUse hook.
**MCP** names the tool `loopx mcp` offers agents for the same verb.
"""


def _cell(text: object) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _name(names: tuple, options: dict) -> str:
    if names[0].startswith("-"):
        shown = ", ".join(f"`{n}`" for n in names)
        metavar = options.get("metavar")
        if options.get("choices") and not metavar:
            metavar = "{" + ",".join(options["choices"]) + "}"
        return shown + (
            f" {_cell(metavar)}"
            if metavar and options.get("action") not in ("store_true", "store_false", "count")
            else ""
        )
    metavar = options.get("metavar") or names[0]
    if options.get("choices"):
        metavar = "{" + ",".join(options["choices"]) + "}"
    return f"`{_cell(metavar)}`"


def _arguments(args: tuple) -> list[str]:
    if not args:
        return []
    lines = ["", "| argument | meaning |", "|---|---|"]
    for names, options in args:
        more = []
        if options.get("required"):
            more.append("required")
        if options.get("action") == "append":
            more.append("may be repeated")
        if (
            options.get("nargs") in ("*", "...")
            or options.get("nargs") is not None
            and not isinstance(options.get("nargs"), int)
        ):
            more.append("the rest of the line" if options.get("nargs") == "..." else "any number")
        tail = f" ({', '.join(more)})" if more else ""
        lines.append(f"| {_name(names, options)} | {_cell(options.get('help', ''))}{tail} |")
    return lines


def _verb(spec: verbs.Verb) -> list[str]:
    title = f"loopx {spec.verb}" + (f" {spec.sub}" if spec.sub else "")
    marks = (["**person**"] if spec.human else []) + ([f"**MCP** `{spec.tool.name}`"] if spec.tool else [])
    lines = [
        f"### `{title}`",
        "",
        _cell(spec.help[0].upper() + spec.help[1:]) + "." + (f" {' · '.join(marks)}" if marks else ""),
    ]
    return lines + _arguments(spec.args) + [""]


def markdown() -> str:
    """The whole page, verbs in the order `loopx --help` lists them."""
    out = [INTRO, "## Contents", ""]
    out += [f"- [`{name}`](#{name}){' — ' + verbs.GROUPS[name] if name in verbs.GROUPS else ''}" for name in verbs.TOP]
    out += ["", "## Exit codes", "", EPILOG.removeprefix("Exit codes: "), ""]
    for name in verbs.TOP:
        out += [f"## {name}", ""]
        if name in verbs.GROUPS:
            out += [_cell(verbs.GROUPS[name][0].upper() + verbs.GROUPS[name][1:]) + ".", ""]
            out += [line for (verb, _sub), spec in verbs.VERBS.items() if verb == name for line in _verb(spec)]
        else:
            out += _verb(verbs.VERBS[(name, None)])
    return "\n".join(out).rstrip() + "\n"


def main(argv: list[str]) -> int:
    """``--check``: exit 1 when docs/cli.md is not what the table makes; else write it."""
    text = markdown()
    if argv[:1] == ["--check"]:
        current = PAGE.read_text() if PAGE.exists() else ""
        if current != text:
            print(f"{PAGE} is out of date: run ./dev docs", file=sys.stderr)
            return 1
        return 0
    PAGE.write_text(text)
    print(f"wrote {PAGE}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
