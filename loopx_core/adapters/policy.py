"""Which authority scopes a tool call needs: the hooks' policy.

Pure functions over the runtime's tool call, no board access, standard library
only (it runs before every tool call). What it decides:

- shell-running tools — Claude Code ``Bash``, ``PowerShell``, ``Monitor`` (its
  ``command``), skill shell commands (``PreSkillShellCommand``); Codex ``Bash``
  (its ``exec_command`` and ``shell_command``) — are read by the shell reader (``loopx_core/shell``: ``checker``, with the
  built-in rules of ``builtin_rules``: ``git push`` → ``git:push``, deploys →
  ``deploy:<tool>``, publishing → ``publish:<registry>``; a recursive ``rm``
  outside the project → ``fs:delete-outside``; a redirection into a file
  outside it → ``fs:write-outside``; what it cannot read → ``shell:opaque`` or
  ``shell:interactive``);
- file tools (Claude Code ``Write``/``Edit``/``NotebookEdit``, whose
  ``file_path`` is absolute; Codex ``apply_patch``, whose ``tool_input.command``
  is the patch text with ``*** Add/Update/Delete File:`` headers) writing
  outside the project → ``fs:write-outside`` (deleting: ``fs:delete-outside``);
- LoopX's own ground (``ground``) through any tool and any path field:
  refused, never grantable (``Need.scope is None``).

Tool payload shapes: Claude Code hooks reference, "PreToolUse input"
(https://code.claude.com/docs/en/hooks) and the SDK's ``sdk-tools.d.ts``;
Codex ``codex-rs/hooks/schema/generated/pre-tool-use.command.input.schema.json``,
``codex-rs/core/src/tools/hook_names.rs`` and ``handlers/apply_patch.rs`` in
github.com/openai/codex. Each runtime's tool names, by what is read in them,
are the registry's (``runtimes.HOOK_TOOLS``).

The board's own rules live in ``.loopx/policy.json`` next to the board::

    {
      "rules": [
        {"command": "^make release\\\\b", "scope": "publish:release"},
        {"tool": "mcp__github__create_release", "scope": "publish:github"},
        {"tool": "mcp__db__.*", "input": "DROP TABLE", "scope": "db:drop"}
      ],
      "allow": ["^git push origin agent/"],
      "outside_ok": ["/tmp"]
    }

``rules`` add scopes (``command``: a regex searched in each simple shell
command; ``tool``: a regex the tool name must match in full; ``input``: a regex
searched in the tool input's JSON) and always apply. ``allow`` regexes exempt
a simple shell command from the built-in rules, and ``outside_ok`` lists
folders that count as inside the project: both loosen the rules, so they apply
only when ``loosening_allowed`` says a person signed the file — until LoopX has
the human key, never (DESIGN §11).
"""

from __future__ import annotations

import json
import os
import re
from collections import namedtuple

from .. import runtimes
from ..shell.checker import Checker
from ..shell.vocabulary import INTERACTIVE, OPAQUE, Need  # noqa: F401 - Need and the scopes are this module's API
from .ground import Ground

POLICY_FILE = "policy.json"
# The tools of every hooked runtime, by what is read in them: each runtime's,
# with their sources, in the registry (``runtimes.HOOK_TOOLS``, which the cold
# hook has loaded already). Whichever runtime calls, a tool any of them names
# is read (a name is never checked less for coming from the other runtime).
_HOOKED = tuple(runtimes.HOOK_TOOLS.values())
SHELL_TOOLS = frozenset(tool for tools in _HOOKED for tool in tools.shell)
POWERSHELL_TOOLS = frozenset(tool for tools in _HOOKED for tool in tools.powershell)
FILE_TOOLS = {tool: field for tools in _HOOKED for tool, field in tools.files.items()}  # -> the field naming the file
PATCH_TOOLS = frozenset(tool for tools in _HOOKED for tool in tools.patch)
SEARCH_TOOLS = {tool: field for tools in _HOOKED for tool, field in tools.search.items()}  # -> the pattern's field
# Any tool's input field that names a file or folder (Read, Grep, Glob, Codex's
# view_image, MCP tools): checked against LoopX's ground.
PATH_KEYS = ("file_path", "notebook_path", "path", "paths", "directory", "dir", "filename", "workdir", "cwd")
SANDBOX_OFF = "sandbox:off"  # Claude Code's Bash `dangerouslyDisableSandbox: true`: a person decides
MAX_COMMAND = 1_000_000  # characters of shell text checked; a longer command is refused
MAX_POLICY = 1_000_000  # characters of .loopx/policy.json read

Rule = namedtuple("Rule", "scope tool command input")  # compiled regexes or None
Policy = namedtuple("Policy", "rules allow outside_ok problems", defaults=((), (), (), ()))


DEFAULT = Policy()


# -- the board's policy file ---------------------------------------------------


def load(root: str | None) -> Policy:
    """The board's rules from ``<root>/.loopx/policy.json`` (defaults when absent).
    A malformed file never raises: its problems are reported and the built-in
    rules still apply."""
    if not root:
        return DEFAULT
    path = os.path.join(root, ".loopx", POLICY_FILE)
    from ..rules.given_paths import Refused, read_regular

    try:  # (a FIFO put there never blocks the hook: rules/given_paths.py)
        found = read_regular(path, MAX_POLICY * 4, "the policy", "", missing_ok=True, error=Refused)
        if found is None:
            return DEFAULT
        raw = found.decode("utf-8")[: MAX_POLICY + 1]
    except Refused as exc:
        return Policy(problems=(exc.message,))
    except ValueError as exc:
        return Policy(problems=(f"cannot read {path}: {exc}",))
    try:
        doc = json.loads(raw)
    except (ValueError, RecursionError) as exc:
        return Policy(problems=(f"{path} is not valid JSON ({type(exc).__name__}); only the built-in rules apply",))
    return parse(doc, path)


def digest(doc: dict) -> str:
    """What a person signs of a policy file: its parsed content, canonically."""
    import hashlib

    from ..authority.chain import data_text

    return hashlib.sha256(data_text(doc).encode("utf-8")).hexdigest()


def loosening_allowed(path: str, doc: dict) -> bool:
    """May the ``allow`` and ``outside_ok`` entries of the policy file at
    ``path`` loosen the rules? Only when a person signed exactly this content
    (``loopx policy sign``: the board's signed setting ``policy`` holds its
    digest): an agent that can write the file could otherwise allow itself
    everything. Anything uncertain — no board, no signature, an error — is no."""
    try:
        return signed_policy(os.path.dirname(path)) == digest(doc)
    except Exception:
        return False


def signed_policy(board_dir: str) -> str | None:
    """The policy digest a person signed on the board in ``board_dir`` (its
    ``.loopx`` folder), or on the board ``LOOPX_DB`` names."""
    board = os.path.join(board_dir, "board.db")
    if os.path.exists(board) and not os.environ.get("LOOPX_DB", "").startswith(("postgresql://", "postgres://")):
        import sqlite3

        from ..authority import trust

        con = sqlite3.connect(f"file:{board}?mode=ro", uri=True, timeout=10)
        try:
            return trust.signed_setting(lambda sql, params=(): con.execute(sql, params).fetchall(), "policy")
        finally:
            con.close()
    from ..store.backends import Store
    from ..store.discovery import discover

    store = Store.open(discover())
    try:
        return store.signed_setting("policy")
    finally:
        store.close()


def parse(doc: object, where: str = "policy", *, signed: bool | None = None) -> Policy:
    """``signed``: whether a person signed ``doc`` (None: ask the board)."""
    from ..rules import limits

    problems: list[str] = []
    if not isinstance(doc, dict):
        return Policy(problems=(f"{where} must be a JSON object",))
    rules: list[Rule] = []
    for i, item in enumerate(doc.get("rules") or []):
        if (
            not isinstance(item, dict)
            or not isinstance(item.get("scope"), str)
            or not limits.SCOPE.fullmatch(item["scope"])
        ):
            problems.append(f'{where}: rules[{i}] needs a valid "scope" (e.g. deploy:prod); skipped')
            continue
        compiled: dict[str, re.Pattern[str] | None] = {}
        invalid = False
        for key in ("tool", "command", "input"):
            value = item.get(key)
            if value is None:
                compiled[key] = None
                continue
            try:
                compiled[key] = re.compile(value) if isinstance(value, str) else None
            except (re.error, RecursionError, OverflowError) as exc:
                problems.append(f"{where}: rules[{i}].{key} is not a valid regex ({exc}); skipped")
                invalid = True
                break
        if invalid:
            continue
        if compiled["tool"] is None and compiled["command"] is None and compiled["input"] is None:
            problems.append(f"{where}: rules[{i}] matches nothing (give tool, command or input); skipped")
            continue
        rules.append(Rule(item["scope"], compiled["tool"], compiled["command"], compiled["input"]))
    if (doc.get("allow") or doc.get("outside_ok")) and not (
        loosening_allowed(where, doc) if signed is None else signed
    ):
        problems.append(
            f'{where}: its "allow" and "outside_ok" entries were ignored: they loosen LoopX\'s rules, and only a '
            "policy file a person signed may do that (a person runs `loopx policy sign`). "
            'Its "rules" still apply.'
        )
        return Policy(tuple(rules), (), (), tuple(problems))
    allow: list[re.Pattern] = []
    for i, pattern in enumerate(doc.get("allow") or []):
        try:
            allow.append(re.compile(pattern))
        except (re.error, TypeError, RecursionError, OverflowError) as exc:
            problems.append(f"{where}: allow[{i}] is not a valid regex ({exc}); skipped")
    outside_ok = tuple(
        os.path.realpath(os.path.expanduser(p))
        for p in (doc.get("outside_ok") or [])
        if isinstance(p, str) and os.path.isabs(os.path.expanduser(p))
    )
    return Policy(tuple(rules), tuple(allow), outside_ok, tuple(problems))


# -- classification ------------------------------------------------------------


def classify(
    tool: str,
    tool_input: object,
    cwd: str,
    root: str,
    policy: Policy = DEFAULT,
    *,
    ground: Ground | None = None,
    agent: str | None = None,
) -> list[Need]:
    """What this tool call needs: scopes to hold (or have a human grant), and
    refusals no scope lifts (``Need.scope is None``: LoopX's own ground, a
    person's command, a call too large to check). Empty: nothing LoopX guards."""
    cwd = cwd or root
    ground = ground or Ground(root)
    tool_input = tool_input if isinstance(tool_input, dict) else {}
    checker = Checker(root, ground, rules=policy.rules, allow=policy.allow, outside_ok=policy.outside_ok, agent=agent)
    checker.in_workspace(cwd)
    if tool in SHELL_TOOLS or tool in POWERSHELL_TOOLS:
        command = tool_input.get("command")
        if command is None:
            command = tool_input.get("cmd")  # older Codex builds' exec_command
        if tool_input.get("dangerouslyDisableSandbox") is True:
            checker.need(
                SANDBOX_OFF,
                f"{tool} outside the sandbox",
                "it asks to run outside the runtime's sandbox, the wall that keeps agents off LoopX's ground",
            )
        if isinstance(command, list):
            import shlex

            command = shlex.join(str(c) for c in command)
        if isinstance(command, str):
            if len(command) > MAX_COMMAND:
                checker.forbid(
                    command,
                    f"it is {len(command):,} characters long; LoopX checks commands up to {MAX_COMMAND:,}: write it to a script file and run that",
                )
            else:
                checker.shell(command, cwd, powershell=tool in POWERSHELL_TOOLS)
    elif tool in FILE_TOOLS:
        path = tool_input.get(FILE_TOOLS[tool]) or tool_input.get("file_path")
        if isinstance(path, str) and path:
            installed = checker.ground.installed(os.path.expanduser(path), cwd)
            if installed:
                checker.forbid(f"{tool} {path}", installed)
            elif checker.workspace_write(f"{tool} {path}", os.path.expanduser(path), cwd):
                pass
            elif not _ground_path(checker, f"{tool} {path}", path, cwd) and not checker.inside(path, cwd, strict=False):
                checker.need("fs:write-outside", f"{tool} {path}")
    elif tool in PATCH_TOOLS:
        patch = tool_input.get("command") or tool_input.get("input") or tool_input.get("patch")
        if isinstance(patch, str):
            from ..shell.guarded import patch_needs

            for need in patch_needs(patch, cwd, checker):
                checker.need(need.scope, need.what, need.why)
    for key in PATH_KEYS:
        value = tool_input.get(key)
        for path in value if isinstance(value, list) else [value]:
            if isinstance(path, str) and path:
                _ground_path(checker, f"{tool} {path}", path, cwd)
    if tool in SEARCH_TOOLS:
        _search(checker, tool, tool_input, cwd)
    for rule in policy.rules:
        if rule.command is not None and (rule.tool is None or rule.tool.fullmatch(tool)):
            continue  # shell-command rules are applied per simple command
        if rule.tool is None or not rule.tool.fullmatch(tool):
            continue
        if rule.input is not None and not rule.input.search(json.dumps(tool_input, sort_keys=True, ensure_ascii=False)):
            continue
        checker.need(rule.scope, tool)
    return checker.found


def _search(checker: Checker, tool: str, tool_input: dict, cwd: str) -> None:
    """Claude Code's Grep and Glob search a folder and all below it (ripgrep
    with ``--hidden``: dotfiles too): refused from a folder above the person's
    LoopX folder or another of LoopX's places outside the project, and when
    their pattern (Glob's ``pattern``, Grep's ``glob``) names the ground."""
    base = tool_input.get("path") if isinstance(tool_input.get("path"), str) and tool_input.get("path") else cwd
    base = os.path.expanduser(base or "")
    why = checker.ground.searches(base, cwd)
    if why:
        checker.forbid(f"{tool} {base}", f"it searches every file below {base}: {why}. Search a narrower folder")
    pattern = tool_input.get(SEARCH_TOOLS[tool])
    if isinstance(pattern, str) and pattern:
        _ground_path(checker, f"{tool} {pattern}", os.path.join(base, os.path.expanduser(pattern)), cwd)


def _ground_path(checker: Checker, what: str, path: str, cwd: str | None) -> bool:
    why = checker.ground.path(os.path.expanduser(path), cwd) or checker.ground.resolved(os.path.expanduser(path), cwd)
    if why:
        checker.forbid(what, why)
    return why is not None
