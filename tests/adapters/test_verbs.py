"""Each verb is declared once (loopx_core/shapes/verbs.py) and everything else is
derived from that declaration: the parser's commands, the dispatch, the MCP
tools, the human-only verbs, the input hints. A verb added to the table alone
parses, runs, is listed and served over MCP, and — declared human-only — is
refused to agents by the CLI and the PreToolUse hook. Building the parser
imports no handler, pydantic or peewee."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from loopx_core.adapters import mcp_server
from loopx_core.cli.parser import build
from loopx_core.shapes import verbs
from loopx_core.shapes.human_verbs import HUMAN_VERBS
from loopx_core.shapes.inputs import HINTS
from loopx_core.shapes.schemas import MODELS

REPO = Path(__file__).resolve().parents[2]


def _commands(parser) -> set[tuple[str, str | None]]:
    """Every (verb, subcommand) the parser accepts."""
    found = set()
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                subs = [a for a in sub._actions if isinstance(a, argparse._SubParsersAction)]
                if subs:
                    found |= {(name, s) for s in subs[0].choices}
                else:
                    found.add((name, None))
    return found


def test_every_surface_comes_from_the_one_declaration():
    declared = set(verbs.VERBS)
    assert _commands(build()) == declared
    for verb in verbs.VERBS.values():
        assert callable(verbs.resolve(verb.handler)), verb  # the dispatch: each handler, by name
    assert [t["name"] for t in mcp_server.TOOLS] == [v.tool.name for v in verbs.VERBS.values() if v.tool]
    assert {t["name"] for t in mcp_server.TOOLS} == {
        "next",
        "claim",
        "writeback",
        "gate_ask",
        "gate_status",
        "handoff",
        "context",
        "cards",
        "done",
    }
    for verb in verbs.VERBS.values():
        if verb.tool:
            assert callable(verbs.resolve(verb.tool.call)), verb
    assert HUMAN_VERBS == {key for key, v in verbs.VERBS.items() if v.human}
    assert not any(verbs.VERBS[key].tool for key in HUMAN_VERBS)  # no tool lets an agent do a person's part
    shapes = [v.shape for v in verbs.VERBS.values() if v.shape]
    assert len(shapes) == len(set(shapes))  # a shape is owned (and its hint said) by one verb
    assert set(HINTS) == set(shapes)
    assert set(MODELS) == set(shapes) | {"text"}  # "text": the one shape several verbs share
    assert all(MODELS[kind].kind == kind for kind in MODELS)


PROBE = r"""
import io, json, os, sys
from loopx_core.shapes import verbs
from loopx_core.shapes.verbs import Group, Tool, Verb, arg

def cmd_hello(ctx):
    from loopx_core.cli import Outcome
    return Outcome({"hello": ctx.args.name, "loud": ctx.args.loud}, 0, "hello " + ctx.args.name)

def tool_hello(tools, name):
    return "hello " + name

def cmd_greet_all(ctx):
    from loopx_core.cli import Outcome
    return Outcome({"greeted": "all"}, 0, "greeted")

verbs.DECLARED += (
    Verb("hello", None, "say hello to someone", (arg("name", metavar="NAME"), arg("--loud", action="store_true", help="shout it")), "__main__:cmd_hello",
         tool=Tool("hello", "Say hello", "Say hello to someone.", {"name": {"type": "string", "description": "Who."}}, "__main__:tool_hello", ("name",))),
    Group("greet", "greet people"),
    Verb("greet", "all", "greet everyone (a person only)", (), "__main__:cmd_greet_all", human=True),
)
verbs.redeclare()

from loopx_core.cli.main import main
from loopx_core.adapters import mcp_server
from loopx_core.shapes.human_verbs import is_human_verb

out = {}
real = sys.stdout
for name, argv, agent in (("hello", ["hello", "Ada", "--loud", "--json"], None), ("help", ["--help"], None),
                          ("greet", ["greet", "all", "--json"], None), ("greet_agent", ["greet", "all", "--json"], "a1")):
    if agent:
        os.environ["LOOPX_AGENT"] = agent
    sys.stdout = io.StringIO()
    try:
        code = main(argv)
    except SystemExit as exc:
        code = exc.code
    out[name] = [code, sys.stdout.getvalue()]
    sys.stdout = real
    os.environ.pop("LOOPX_AGENT", None)
tools = mcp_server.Tools(None)
out["listed"] = [t["name"] for t in mcp_server.handle({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, tools)["result"]["tools"]]
out["called"] = mcp_server.handle({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "hello", "arguments": {"name": "Ada"}}}, tools)["result"]
out["human"] = [is_human_verb("greet", "all"), is_human_verb("hello")]
print("RESULT " + json.dumps(out))
"""


def test_a_verb_added_to_the_declarations_alone_parses_runs_and_is_served(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "LOOPX_AGENT"}
    env["PYTHONPATH"] = os.pathsep.join(sys.path)
    res = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60
    )
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout.split("RESULT ", 1)[1])
    assert out["hello"] == [0, '{"hello":"Ada","loud":true}\n']  # parsed and dispatched
    assert "say hello to someone" in out["help"][1] and "greet people" in out["help"][1]
    assert out["greet"][0] == 0 and json.loads(out["greet"][1]) == {"greeted": "all"}
    code, text = out["greet_agent"]
    assert code == 10 and json.loads(text)["error"]["code"] == "person_only"  # human-only: refused to an agent
    assert out["human"] == [True, False]  # ... and by the PreToolUse hook's list
    assert "hello" in out["listed"] and "greet" not in out["listed"]
    assert out["called"] == {"content": [{"type": "text", "text": "hello Ada"}], "isError": False}


HEAVY = (
    "pydantic",
    "peewee",
    "psycopg",
    "loopx_core.shapes.schemas",
    "loopx_core.cli.board_commands",
    "loopx_core.cli.agent_commands",
    "loopx_core.cli.card_commands",
    "loopx_core.cli.price_commands",
    "loopx_core.cli.gate_commands",
    "loopx_core.cli.turn_commands",
    "loopx_core.cli.trust_commands",
    "loopx_core.cli.workspace_commands",
    "loopx_core.cli.runner_commands",
    "loopx_core.cli.surfaces",
    "loopx_core.adapters",
    "loopx_core.store",
    "loopx_core.ops",
)


def test_building_the_whole_parser_imports_no_handler():
    probe = (
        "import json, sys\n"
        "from loopx_core.cli.parser import build\n"
        "build(); build(['next'])\n"
        f"print(json.dumps(sorted(m for m in sys.modules if any(m == h or m.startswith(h + '.') for h in {HEAVY!r}))))\n"
    )
    res = subprocess.run([sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout) == []


def _placeholder(action) -> list[str]:
    """Values that satisfy ``action`` (a positional or a required option)."""
    value = str(next(iter(action.choices))) if action.choices else ("1" if action.type is not None else "LX-1")
    if action.nargs in ("*", "?"):
        return []
    if isinstance(action.nargs, int):
        return [value] * action.nargs
    return [value]


def _verb_parsers():
    """(argv prefix, subparser) for every verb of the table, built as the CLI builds it."""
    for (verb, sub), _spec in verbs.VERBS.items():
        argv = [verb] + ([sub] if sub else [])
        parser = build(argv)
        for name in argv:
            action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
            parser = action.choices[name]
        yield argv, parser


def test_no_verb_accepts_an_abbreviated_option():
    """argparse takes a unique prefix of a long option for the option (`--ag z1`
    for `--agent z1`); the hook reads words and refuses only `--agent`, so
    every verb of the table must refuse the prefix instead."""
    from loopx_core.shapes.errors import UsageError

    tried = 0
    for argv, parser in _verb_parsers():
        base = []
        for action in parser._actions:
            if not action.option_strings:
                base += _placeholder(action)
            elif action.required:
                base += [action.option_strings[0], *_placeholder(action)]
        longs = {o for a in parser._actions for o in a.option_strings if o.startswith("--")}
        for action in parser._actions:
            for option in action.option_strings:
                short = option[:-1]
                if not option.startswith("--") or len(short) < 3 or short in longs:
                    continue
                with pytest.raises(UsageError) as refused:
                    build(argv).parse_args(argv + [short] + base)
                assert f"unrecognized arguments: {short}" in refused.value.message, (argv, short, refused.value.message)
                tried += 1
    assert tried > 100  # every verb's options, not a few


def test_handing_over_another_agents_card_by_an_abbreviated_option_is_refused(team):
    """The attack: `loopx handoff LX-1 --ag a1 --to z1 --summary …` from a2's shell speaks as
    a1 (the hook refuses `--agent a1` only). It is a usage error, the board unchanged."""
    team.ok("agent", "add", "z1")
    team.ok("card", "add", "a1's work")
    team.ok("next", "--claim", agent="a1")
    before = team.snapshot()
    proc = team.spawn("handoff", "LX-1", "--ag", "a1", "--to", "z1", "--summary", "yours now", agent="a2")
    assert proc.returncode == 2, proc.stderr
    assert "unrecognized arguments: --ag" in proc.stderr
    assert team.snapshot() == before


def test_every_argument_of_every_verb_says_what_it_is_for():
    missing = [
        (verb, sub, names)
        for (verb, sub), spec in verbs.VERBS.items()
        for names, options in spec.args
        if not options.get("help")
    ]
    assert not missing, f"arguments without help text: {missing}"


def test_the_help_lists_the_commands_as_a_person_meets_them():
    """`loopx --help` starts with setting up (init) and ends with the plumbing; every
    command has its place in ``HELP_ORDER`` (a new one must be placed deliberately)."""
    assert set(verbs.TOP) == set(verbs.HELP_ORDER) and len(verbs.HELP_ORDER) == len(set(verbs.HELP_ORDER))
    from loopx_core.cli.parser import build

    listed = [
        line.split()[0]
        for line in build().format_help().split("COMMAND\n", 1)[1].split("\noptions:")[0].splitlines()
        if line.startswith("    ") and not line.startswith("     ")
    ]
    assert listed == list(verbs.HELP_ORDER)
    assert listed[0] == "init" and listed.index("migrate") > listed.index("init")
