"""Every verb of ``loopx``, declared once: its help and arguments, its handler,
the input shape its flags validate as (and the hint a refusal prints), its MCP
tool if agents get one, and whether only a person may run it.

Everything else is derived from this table: the argument parser
(``cli/parser.py``), the dispatch (``cli/main.py``), the MCP server's tools
(``adapters/mcp_server.py``), the hints of ``shapes/inputs.py`` and the
human-only verbs (``shapes/human_verbs.py``, which the PreToolUse hook reads
cold). So this module is plain data and the standard library only: handlers
and tool functions are named ``"module:function"`` and imported when a verb
runs, never when the parser is built (tests/adapters/test_verbs.py).

Adding a verb: one ``Verb(...)`` below (a verb with subcommands also needs its
``Group``), its handler ``handler(ctx) -> Outcome | None | int``, and — when it
validates a new shape — a pydantic model with that ``kind`` in
``shapes/schemas.py`` (plus a cold pre-check in ``shapes/inputs.py`` if agents
send it every turn).
"""

from __future__ import annotations

from .. import runtimes  # the registry of runtime names: imports nothing
from . import evidence as evidence_shape

TYPE_CHECKING = False  # (annotations only: the parser of every cold call reads this; checkers read this as typing's)
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from typing import Any

# (Plain classes, not NamedTuples: building typing.NamedTuple classes costs more
# than the rest of this table, and the parser of every cold call reads it.)


def arg(*names: str, **options: Any) -> tuple[tuple[str, ...], dict[str, Any]]:  # (argparse's keyword arguments)
    """One argparse argument as plain data, ``(names, options)``: ``type`` is
    named ("int", "float", "count" — a whole number >= 0), never a function."""
    return names, options


class Tool:
    """An MCP tool (``loopx mcp``): its JSON schema, and ``call``, the function
    ``call(tools, **arguments) -> str`` that answers it."""

    __slots__ = (
        "name",
        "title",
        "description",
        "properties",
        "call",
        "required",
        "read_only",
        "destructive",
        "idempotent",
    )

    def __init__(
        self,
        name: str,
        title: str,
        description: str,
        properties: dict,
        call: str,
        required: tuple = (),
        *,
        read_only: bool = False,
        destructive: bool = False,
        idempotent: bool = False,
    ):
        self.name, self.title, self.description, self.properties, self.call = name, title, description, properties, call
        self.required, self.read_only, self.destructive, self.idempotent = required, read_only, destructive, idempotent


class Verb:
    """A command: ``loopx VERB`` or ``loopx VERB SUB``."""

    __slots__ = ("verb", "sub", "help", "args", "handler", "shape", "hint", "tool", "human", "probe")

    def __init__(
        self,
        verb: str,
        sub: str | None,
        help: str,
        args: tuple,
        handler: str,
        *,
        shape: str | None = None,
        hint: str | None = None,
        tool: Tool | None = None,
        human: bool = False,
        probe: bool | None = None,
    ):
        self.verb, self.sub, self.help, self.args = verb, sub, help, args
        self.handler = handler  # "module:function", function(ctx) -> Outcome | None | int (an exit code)
        self.shape = shape  # the input kind its flags validate as (a model of that kind in shapes/schemas.py)
        self.hint = hint  # what a refusal of that shape says; default: see `loopx VERB SUB --help`
        self.tool = tool  # its MCP tool, if agents get one
        self.human = human  # only a person may run it: the CLI and the PreToolUse hook refuse it to agents
        # Check before asking: a person's run is first tried with a stand-in for
        # their key, up to its first signature (cli/main.py), so bad input and
        # unknown ids are said before the passphrase. False for a verb that acts
        # outside the board before it signs (runs a program, touches git).
        self.probe = human if probe is None else probe

    def __repr__(self) -> str:
        return f"Verb({self.verb!r}, {self.sub!r})"


class Group:
    """A verb with subcommands (``loopx card …``): its help; its subcommands are the Verbs named after it."""

    __slots__ = ("verb", "help")

    def __init__(self, verb: str, help: str):
        self.verb, self.help = verb, help


# -- argument groups many verbs share -------------------------------------------------------

_IN_PROJECT = arg(
    "--in-project",
    action="store_true",
    help="when the card's workspace cannot be made, work in the project folder anyway (by default the claim is refused: exit 5, no_workspace)",
)


def _agent(lease_token: bool = True) -> tuple:
    found: tuple = (
        arg("--agent", metavar="ID", help="agent identity (default: $LOOPX_AGENT)"),
        arg("--op-id", metavar="ID", help="idempotency key: a retry with the same id returns the first result"),
    )
    if lease_token:
        found += (
            arg("--lease-token", type="int", metavar="N", help="fencing token of your lease; a stale one is refused"),
        )
    return found


def _listen(port: int) -> tuple:
    """Where the phone's page listens (``serve``, ``phone pair``): loopback by default."""
    return (
        arg("--host", default="127.0.0.1", metavar="ADDR", help="the address to listen on (default 127.0.0.1)"),
        arg("--port", type="count", default=port, metavar="N", help=f"the port (default {port}; 0: any free one)"),
        arg(
            "--origin",
            metavar="URL",
            help="the page's address as the phone reaches it (https://…; default http://localhost:PORT)",
        ),
    )


def _page(cursor: str, example: str) -> tuple:
    """A list's page: --limit rows (default and ceiling: limits.PAGE_DEFAULT/PAGE_MAX) after a cursor."""
    return (
        arg("--limit", type="count", metavar="N", help="at most N rows (default 50, at most 1000)"),
        arg("--after", metavar=cursor, help=f"the page after {cursor} (the JSON's next_after), e.g. {example}"),
    )


_CARD = (arg("card", metavar="CARD", help="the card, e.g. LX-7"),)
_OP_ID = arg("--op-id", metavar="ID", help="idempotency key: a retry with the same id returns the first result")

# -- MCP schema fragments ------------------------------------------------------------------------

_TOOL_CARD = {"type": "string", "description": "A card id like LX-12."}
_YOUR_CARD = {"type": "string", "description": "Your card, like LX-12."}
_TEXT = {"type": "string"}
_LIST = {"type": "array", "items": {"type": "string"}}

_BOARDS = "loopx_core.cli.board_commands:"
_AGENTS = "loopx_core.cli.agent_commands:"
_CARDS = "loopx_core.cli.card_commands:"
_PRICES = "loopx_core.cli.price_commands:"
_GATES = "loopx_core.cli.gate_commands:"
_TURN = "loopx_core.cli.turn_commands:"
_TRUST = "loopx_core.cli.trust_commands:"
_RUNNER = "loopx_core.cli.runner_commands:"
_SURFACE = "loopx_core.cli.surfaces:"
_PHONE = "loopx_core.cli.phone_commands:"
_MCP = "loopx_core.adapters.mcp_server:"
_WORKSPACE = "loopx_core.cli.workspace_commands:"

_RUNNER_CONTROLS = (
    ("pause", "no new turn starts (the one in flight ends normally)"),
    ("resume", "lift a pause or a stop"),
    ("stop", "the runner ends its turn, releases its card and exits"),
)

DECLARED: tuple = (
    Verb(
        "migrate",
        None,
        "copy this board (events included) into another board, verified by counts and checksums",
        (
            arg(
                "--to",
                required=True,
                metavar="PATH|URL",
                help="an empty board to copy into: a SQLite path or postgresql://…",
            ),
        ),
        _BOARDS + "cmd_migrate",
    ),
    Verb(
        "init",
        None,
        "create a board in ./.loopx/ (or at --db) and optionally set up a runtime",
        (
            arg("--objective", metavar="T", help="what this board is for"),
            arg("--for", dest="runtime", choices=list(runtimes.HOOKED), help="also set up this runtime's hooks"),
            arg("--agent", metavar="ID", help="with --for: the agent id to register"),
            arg("--can", action="append", default=[], metavar="SCOPE", help="with --for: a capability of that agent"),
            arg(
                "--no-sandbox",
                dest="sandbox",
                action="store_false",
                help="with --for: leave the runtime's OS sandbox off (the agent's shell may then write the board)",
            ),
            arg(
                "--dry-run", action="store_true", help="show what would change (board, agent, files) and write nothing"
            ),
            arg(
                "--test-board", action="store_true", help="a board for tests and demos: LOOPX_NOW may freeze its clock"
            ),
            arg(
                "--name",
                metavar="NAME",
                help="your name on the board, if this makes your key (default: $LOOPX_HUMAN or your login)",
            ),
        ),
        _BOARDS + "cmd_init",
    ),
    Verb("where", None, "print which board this folder uses and why", (), _BOARDS + "cmd_where"),
    Verb(
        "boards",
        None,
        "list your boards (every board `loopx init` made or the board opened here) and what needs you on each",
        (
            arg("action", nargs="?", choices=["forget"], help="forget: remove PATH from your list (the board is kept)"),
            arg("path", nargs="?", metavar="PATH", help="with forget: the board's file, project folder, URL or name"),
            arg("--wait", type="float", default=2.0, metavar="S", help="seconds to wait for slow boards (default 2)"),
        ),
        _BOARDS + "cmd_boards",
        human=True,
        probe=False,
    ),
    Verb(
        "completion",
        None,
        "print the shell completion script for bash, zsh or fish (see README: Shell completion)",
        (arg("shell", choices=["bash", "zsh", "fish"], help="the shell to complete in"),),
        "loopx_core.cli.completion:cmd_completion",
    ),
    Verb(
        "board",
        None,
        "open the live board (text when not in a terminal)",
        (arg("--text", action="store_true", help="print the board as text instead of opening the TUI"),),
        _BOARDS + "cmd_board",
    ),
    Verb(
        "demo",
        None,
        "open the board on a throwaway demo with simulated agents at work",
        (
            arg(
                "--script", action="store_true", help="no TUI: run a scripted agent turn cycle and print what happened"
            ),
            arg("--keep", metavar="DIR", help="keep the demo board in DIR"),
        ),
        _SURFACE + "demo",
    ),
    Verb(
        "watch",
        None,
        "ingest evidence files from agents' watch folders (headless)",
        (arg("--once", action="store_true", help="catch up on existing files, then exit"),),
        _SURFACE + "watch",
        shape="document",
        hint="an evidence document needs card, agent and summary (DESIGN §7)",
    ),
    Verb("mcp", None, "serve the MCP tools over stdio (agent id from LOOPX_AGENT)", (), _SURFACE + "mcp"),
    Verb(
        "hook",
        None,
        "what runtime hooks call (reads the runtime's hook JSON on stdin)",
        (
            arg("runtime", choices=list(runtimes.HOOKED), help="the runtime calling (as `loopx init --for` wrote it)"),
            arg(
                "event",
                choices=[
                    "session-start",
                    "pre-tool-use",
                    "stop",
                    "session-end",
                    "permission-request",
                    "pre-skill-shell-command",
                    "question",
                    "notification",
                ],
                help="the hook event",
            ),
        ),
        _SURFACE + "hook",
    ),
    Group("agent", "register and list agents"),
    Verb(
        "agent",
        "add",
        "register an agent (or update it)",
        (
            arg("id", metavar="ID", help="the agent's id, e.g. claude-1 (letters, digits, - _ .)"),
            arg("--runtime", metavar="R", help=", ".join(runtimes.NAMES) + ", …"),
            arg(
                "--can",
                action="append",
                default=[],
                metavar="SCOPE",
                help="a capability (scope) it holds, e.g. git:push",
            ),
            arg("--watch", action="append", default=[], metavar="DIR", help="an output folder to take evidence from"),
            arg("--tokens", type="int", metavar="N", help="tokens per window, e.g. 2000000"),
            arg("--usd", type="float", metavar="X", help="dollars per window, e.g. 20"),
            arg("--turns", type="int", metavar="N", help="turns per window"),
            arg("--window", metavar="DUR", help="the rolling window's length, e.g. 5h or 1d"),
        ),
        _AGENTS + "cmd_agent_add",
        shape="agent",
        human=True,
    ),
    Verb("agent", "list", "list agents", _page("ID", "claude-1"), _AGENTS + "cmd_agent_list"),
    Verb(
        "agent", "show", "show one agent", (arg("id", metavar="ID", help="the agent's id"),), _AGENTS + "cmd_agent_show"
    ),
    Group("card", "add, list, show, move, assign, budget and window cards; tries of one card"),
    Verb(
        "card",
        "add",
        "add a card (ready; blocked while an --after card is open; --backlog to park it)",
        (
            arg("title", metavar="TITLE", help="what the card is for, in a line"),
            arg("--body", metavar="T", help="the objective in detail"),
            arg(
                "--needs", action="append", default=[], metavar="SCOPE", help="a scope the work needs, e.g. deploy:prod"
            ),
            arg("--after", action="append", default=[], metavar="CARD", help="a card that must be done first"),
            arg("--priority", type="int", default=2, metavar="0-4", help="0 is most urgent (default 2)"),
            arg("--owner", metavar="A", help="only this agent may claim it"),
            arg("--next", metavar="T", help="the first next action"),
            arg("--verify", metavar="CMD", help="a command that must pass before done (run in the project folder)"),
            arg("--max-turns", type="int", metavar="N", help="budget: at most N turns (a person's card add signs it)"),
            arg("--max-tokens", type="int", metavar="N", help="budget: at most N tokens"),
            arg("--max-usd", type="float", metavar="X", help="budget: at most X dollars"),
            arg("--backlog", action="store_true", help="park it in the backlog"),
            arg(
                "--tries",
                type="int",
                metavar="N",
                help="give it to N agents at once: the card and N-1 tries of it, each its own workspace (a person only)",
            ),
            arg("--op-id", metavar="ID", help="idempotency key"),
        ),
        _CARDS + "cmd_card_add",
        shape="card",
        probe=True,
    ),  # (a person's card add signs)
    Verb(
        "card",
        "list",
        "list cards, a page at a time (id order)",
        (
            arg("--status", metavar="S", help="only cards in this status (ready, active, waiting, done …)"),
            arg("--owner", metavar="A", help="only this agent's cards"),
            *_page("CARD", "LX-50"),
            arg(
                "--full",
                action="store_true",
                help="each card's whole record (todos, quota, lease …), as `card show` prints it",
            ),
        ),
        _CARDS + "cmd_card_list",
        tool=Tool(
            "cards",
            "List cards",
            "Cards a page at a time, in id order, one short row each. Pass next_after back as after for the next page.",
            {
                "status": {
                    **_TEXT,
                    "description": "Only cards in this status: backlog, ready, active, waiting, monitoring, paused, blocked, handoff, done or cancelled.",
                },
                "limit": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": 1000,
                    "default": 50,
                    "description": "At most this many cards (1-1000).",
                },
                "after": {
                    **_TEXT,
                    "description": "The card id after which this page starts: the previous page's next_after.",
                },
            },
            _MCP + "tool_cards",
            read_only=True,
        ),
    ),
    Verb("card", "show", "show one card", _CARD, _CARDS + "cmd_card_show"),
    Verb(
        "card",
        "move",
        "a person's move: to backlog, ready or cancelled",
        (
            *_CARD,
            arg("--to", required=True, choices=["backlog", "ready", "cancelled"], help="where the card goes"),
            _OP_ID,
        ),
        _CARDS + "cmd_card_move",
        human=True,
    ),
    Verb(
        "card",
        "assign",
        "give a card to an agent (a held card is reassigned with a handoff packet)",
        (
            *_CARD,
            arg("--to", required=True, metavar="A", help="the agent that gets the card"),
            arg("--summary", metavar="T", help="what the receiver should know"),
            _OP_ID,
        ),
        _CARDS + "cmd_card_assign",
        human=True,
    ),
    Verb(
        "card",
        "try",
        "give a card to one more agent: a try of it, a card of its own with its own workspace",
        (
            *_CARD,
            arg("--to", metavar="A", help="the agent this try is for (default: any agent may claim it)"),
            _OP_ID,
        ),
        _CARDS + "cmd_card_try",
        human=True,
    ),
    Verb(
        "card",
        "tries",
        "a card's tries side by side: status, diff size, verify, turns, tokens, dollars",
        _CARD,
        _CARDS + "cmd_card_tries",
    ),
    Verb(
        "card",
        "keep",
        "keep one try of a card: the other tries are archived (refs/loopx/…) and cancelled",
        (
            *_CARD,
            arg(
                "--head",
                metavar="SHA",
                help="the try's commit you compared (`card tries` shows it): refused if its branch moved since",
            ),
            _OP_ID,
        ),
        _CARDS + "cmd_card_keep",
        human=True,
        probe=False,
    ),
    Verb(
        "card",
        "unassign",
        "take a card back from its agent (its lease is revoked)",
        (*_CARD, _OP_ID),
        _CARDS + "cmd_card_unassign",
        human=True,
    ),
    Verb(
        "card",
        "budget",
        "raise a card's budget (a person only; resumes a paused card)",
        (
            *_CARD,
            arg("--add-turns", type="int", metavar="N", help="turns to add to the budget"),
            arg("--add-tokens", type="int", metavar="N", help="tokens to add"),
            arg("--add-usd", type="float", metavar="X", help="dollars to add"),
            _OP_ID,
        ),
        _CARDS + "cmd_card_budget",
        shape="budget",
        hint="give at least one of --add-turns, --add-tokens, --add-usd",
        human=True,
    ),
    Verb(
        "card",
        "edit",
        "rewrite a card's title, objective, next action or verify command (a person only)",
        (
            *_CARD,
            arg("--title", metavar="T", help="the new title"),
            arg("--body", metavar="T", help="the new objective in detail"),
            arg("--next", metavar="T", help="the new next action ('' clears it)"),
            arg("--verify", metavar="CMD", help="the new verify command ('' clears it)"),
            _OP_ID,
        ),
        _CARDS + "cmd_card_edit",
        shape="edit",
        hint="e.g. `loopx card edit LX-3 --verify 'pytest -q'` (and/or --title, --body, --next)",
        human=True,
    ),
    Verb(
        "card",
        "window",
        "give a card a rolling window: so much per so long (a person only); a spent one pauses the card until it refills",
        (
            *_CARD,
            arg("--every", metavar="DUR", help="the window's length, e.g. 5h or 1d"),
            arg("--tokens", type="int", metavar="N", help="tokens per window"),
            arg("--usd", type="float", metavar="X", help="dollars per window"),
            arg("--turns", type="int", metavar="N", help="turns per window"),
            arg("--clear", action="store_true", help="remove the card's window"),
            _OP_ID,
        ),
        _CARDS + "cmd_card_window",
        shape="window",
        hint="e.g. `loopx card window LX-3 --every 5h --tokens 2000000` (or --usd X, --turns N; --clear removes it)",
        human=True,
    ),
    Group("price", "token prices per model, for charging the usage hooks measure"),
    Verb(
        "price",
        "set",
        "price a model's tokens (dollars per million), so hook-measured usage is charged in dollars",
        (
            arg(
                "model",
                metavar="MODEL",
                help="a model name, or a prefix of names (claude-sonnet-4 prices claude-sonnet-4-6)",
            ),
            arg("--input", type="float", required=True, metavar="$", help="per million input tokens"),
            arg("--output", type="float", required=True, metavar="$", help="per million output tokens"),
            arg(
                "--cache-read",
                type="float",
                metavar="$",
                help="per million cached input tokens read (default: the input price)",
            ),
            arg(
                "--cache-write",
                type="float",
                metavar="$",
                help="per million input tokens written to the cache (default: the input price)",
            ),
        ),
        _PRICES + "cmd_price_set",
        shape="price",
        hint="dollars per million tokens, e.g. `loopx price set claude-sonnet-4 --input 3 --output 15`",
        human=True,
    ),
    Verb("price", "list", "the board's token prices", (), _PRICES + "cmd_price_list"),
    Verb(
        "price",
        "remove",
        "remove a model's price",
        (arg("model", metavar="MODEL", help="the model name (or prefix) as `price list` shows it"),),
        _PRICES + "cmd_price_remove",
        human=True,
    ),
    Group("key", "your human key: make it, show it, change its passphrase, pin a board"),
    Verb(
        "key",
        "init",
        "make your human key (asks a passphrase in a terminal)",
        (
            arg("--name", metavar="NAME", help="your name on boards (default: $LOOPX_HUMAN or your login)"),
            arg(
                "--no-passphrase",
                action="store_true",
                help="store it unsealed: only safe where agents run in their sandbox",
            ),
            arg("--force", action="store_true", help="replace an existing key"),
        ),
        _TRUST + "cmd_key_init",
        human=True,
        probe=False,
    ),
    Verb(
        "key",
        "show",
        "your key's fingerprint and public half (give it to a person who adds you to a board)",
        (),
        _TRUST + "cmd_key_show",
    ),
    Verb(
        "key",
        "lock",
        "end your unlock now, on every terminal: the next signed verb asks your passphrase again (LOOPX_UNLOCK_FOR sets how long one lasts, default 15m)",
        (),
        _TRUST + "cmd_key_lock",
    ),
    Verb(
        "key",
        "passphrase",
        "change your key's passphrase",
        (arg("--none", action="store_true", help="remove the passphrase"),),
        _TRUST + "cmd_key_passphrase",
        human=True,
        probe=False,
    ),
    Verb(
        "key",
        "trust",
        "pin this board's root key on this machine (a second machine or a team board)",
        (
            arg("fingerprint", metavar="FINGERPRINT", help="the root fingerprint a person on the board read to you"),
            arg(
                "--replace",
                action="store_true",
                help="accept this board where this machine knew another, or its log as it is now (signed with your key)",
            ),
        ),
        _TRUST + "cmd_key_trust",
        human=True,
        probe=False,
    ),
    Group("person", "the people whose signed decisions this board honours"),
    Verb(
        "person",
        "add",
        "add a person to this board (their decisions count once signed with their key)",
        (
            arg("name", metavar="NAME", help="the name their decisions are recorded under"),
            arg("public_key", metavar="PUBLIC_KEY", help="what `loopx key show` prints on their machine"),
        ),
        _TRUST + "cmd_person_add",
        human=True,
    ),
    Verb("person", "list", "the board's people and whether this machine trusts them", (), _TRUST + "cmd_person_list"),
    Verb(
        "person",
        "revoke",
        "revoke a person's key (its later signatures count for nothing)",
        (arg("fingerprint", metavar="FINGERPRINT", help="the key's fingerprint, as `person list` shows it"),),
        _TRUST + "cmd_person_revoke",
        human=True,
    ),
    Group("policy", "the hook policy: show it, or sign it so its loosening entries apply"),
    Verb(
        "policy",
        "show",
        "the hook policy (.loopx/policy.json) and whether a person signed it",
        (),
        _TRUST + "cmd_policy_show",
    ),
    Verb(
        "policy",
        "sign",
        "sign the hook policy as it is now: its allow/outside_ok entries then apply",
        (),
        _TRUST + "cmd_policy_sign",
        human=True,
    ),
    Group("dangerous", "scopes whose gates take a second key to approve in the board"),
    Verb("dangerous", "list", "the scope patterns a person marked dangerous", (), _TRUST + "cmd_dangerous_list"),
    Verb(
        "dangerous",
        "set",
        "mark scopes dangerous (replaces the list): in the board, y then Y approves their gates",
        (
            arg(
                "patterns",
                nargs="*",
                metavar="SCOPE",
                help="a scope (db:drop) or a family ('db:*'); quote the * in the shell",
            ),
            arg("--none", action="store_true", help="no scope is dangerous"),
        ),
        _TRUST + "cmd_dangerous_set",
        human=True,
    ),
    Group("notify", "the command that tells you, wherever you are, when something needs you"),
    Verb(
        "notify",
        "show",
        "the notification command a person signed, and what it last did",
        (),
        _TRUST + "cmd_notify_show",
    ),
    Verb(
        "notify",
        "set",
        "set the command run when something needs you (a gate, a pause, a failed verify, a silent runner)",
        (
            arg(
                "--shell",
                metavar="CMD",
                help="a shell command you wrote (run by /bin/sh -c; the message comes as $1 $2 and JSON on stdin)",
            ),
            arg(
                "--timeout",
                default="10s",
                metavar="DUR",
                help="the command is killed past this (default 10s, at most 2m)",
            ),
            arg(
                "--every",
                default="5m",
                metavar="DUR",
                help="at most one message per gate, pause or runner in this long (default 5m)",
            ),
            arg("--none", action="store_true", help="run no command"),
            arg(
                "argv",
                nargs="...",
                metavar="-- PROGRAM ARG",
                help="the program by its absolute path and its arguments; the message follows as two more (title, body) and as JSON on stdin",
            ),
        ),
        _TRUST + "cmd_notify_set",
        human=True,
    ),
    Verb(
        "notify",
        "test",
        "run the notification command once now, and record what it did",
        (),
        _TRUST + "cmd_notify_test",
        human=True,
        probe=False,
    ),
    Group("phone", "answer gates from your phone: a passkey paired as one of your devices"),
    Verb(
        "phone",
        "pair",
        "pair a phone: show a QR code whose page makes a passkey that joins the board as your device (signed)",
        _listen(8766)
        + (arg("--expires", default="5m", metavar="DUR", help="the one-time code is void past this (default 5m)"),),
        _PHONE + "cmd_phone_pair",
        human=True,
        probe=False,
    ),
    Verb("phone", "list", "the devices paired on this board", (), _PHONE + "cmd_phone_list"),
    Verb(
        "phone",
        "revoke",
        "revoke a device: its later answers count for nothing (signed)",
        (arg("device", metavar="DEVICE", help="its fingerprint (wa:…) or label, as `phone list` shows it"),),
        _PHONE + "cmd_phone_revoke",
        human=True,
    ),
    Verb(
        "serve",
        None,
        "serve the phone's page: what needs you, answered with your paired passkey",
        _listen(8765),
        _PHONE + "cmd_serve",
        human=True,
        probe=False,
    ),
    Verb(
        "verify",
        None,
        "check the event log's hash chain and every person's signature (exit 11 if altered)",
        (
            arg("--file", metavar="EXPORT", help="verify an exported board (loopx export) instead of this one"),
            arg("--root", metavar="FINGERPRINT", help="with --file: the root key you expect"),
        ),
        _TRUST + "cmd_verify",
    ),
    Verb("log", None, "a card with its evidence and observed artifacts", _CARD, _BOARDS + "cmd_log"),
    Verb(
        "events",
        None,
        "the event log",
        (
            arg("--since", type="count", default=0, metavar="SEQ", help="only events after this sequence number"),
            arg("--card", metavar="CARD", help="only this card's events"),
            arg("--follow", action="store_true", help="keep streaming, one JSON object per line"),
            arg(
                "--limit",
                type="count",
                metavar="N",
                help="at most N events (default 1000); page on with --since NEXT_SINCE",
            ),
        ),
        _BOARDS + "cmd_events",
    ),
    Verb("export", None, "the whole board as one JSON document", (), _BOARDS + "cmd_export"),
    Verb(
        "next",
        None,
        "the pre-turn check: work, wait, accept, paused or idle",
        (
            *_agent(lease_token=False),
            arg("--claim", action="store_true", help="claim the best ready card when holding none"),
            arg("--lease", metavar="DUR", help="lease length for a claim (default 30m)"),
            _IN_PROJECT,
        ),
        _TURN + "cmd_next",
        shape="next",
        tool=Tool(
            "next",
            "What to do this turn",
            "What to do this turn: resume your card, accept a handoff, wait, or (claim=true) take the best ready card.",
            {
                "claim": {
                    "type": "boolean",
                    "default": False,
                    "description": "Take the best ready card (priority, then age) if you hold none.",
                }
            },
            _MCP + "tool_next",
        ),
    ),
    Verb(
        "claim",
        None,
        "claim a ready card",
        (
            *_CARD,
            *_agent(lease_token=False),
            arg("--lease", metavar="DUR", help="lease length (default 30m)"),
            _IN_PROJECT,
        ),
        _TURN + "cmd_claim",  # (validates as `next`'s shape)
        tool=Tool(
            "claim",
            "Claim a card",
            "Claim a ready card (LX-n).",
            {"card": _TOOL_CARD},
            _MCP + "tool_claim",
            ("card",),
            idempotent=True,
        ),
    ),
    Verb("heartbeat", None, "renew your lease", (*_CARD, *_agent()), _TURN + "cmd_heartbeat"),
    Verb(
        "writeback",
        None,
        "record what this turn did (evidence), charge its usage, update the continuation",
        (
            *_CARD,
            *_agent(),
            arg("--summary", metavar="S", help="what the turn did (required unless --input)"),
            arg("--artifact", action="append", default=[], metavar="PATH", help="a file the turn produced"),
            arg("--next", metavar="T", help="the next action"),
            arg("--todo-add", action="append", default=[], metavar="T", help="a new todo"),
            arg("--todo-done", action="append", default=[], metavar="ID", help="a todo finished (its number)"),
            arg("--tokens", type="int", metavar="N", help="tokens this turn used"),
            arg("--usd", type="float", metavar="X", help="dollars this turn cost"),
            arg("--turn-id", metavar="ID", help="idempotency key for this turn"),
            arg("--release", action="store_true", help="release the card after writing"),
            arg("--input", metavar="FILE|-", help="read an evidence JSON document instead of flags"),
        ),
        _TURN + "cmd_writeback",
        shape="evidence",
        tool=Tool(
            "writeback",
            "Record this turn",
            "Record what this turn did on your card: summary, artifact paths, next action, todos, usage.",
            {
                "card": _YOUR_CARD,
                **evidence_shape.mcp_properties(),
                "lease_token": {"type": "integer", "description": "Lease token (default $LOOPX_LEASE_TOKEN)."},
                "op_id": {**_TEXT, "description": "Idempotency key: a retry returns the first result."},
            },
            _MCP + "tool_writeback",
            ("card", "summary"),
        ),
    ),
    Group("gate", "ask, check and answer human gates"),
    Verb(
        "gate",
        "ask",
        "ask a human (exit 6 while pending, 0 if a grant approves at once)",
        (
            *_CARD,
            *_agent(),
            arg("--question", required=True, metavar="Q", help="what a person should decide, in a sentence"),
            arg("--scope", metavar="S", help="the permission asked for, e.g. git:push"),
            arg(
                "--option", action="append", default=[], metavar="O", help="an answer to choose from (repeat for each)"
            ),
            arg("--deadline", metavar="DUR", help="unanswered by then counts as rejected"),
            arg(
                "--wait",
                nargs="?",
                const="30m",
                metavar="DUR",
                help="block until answered (default 30m): exit 0 approved, 7 rejected, 6 still waiting",
            ),
        ),
        _GATES + "cmd_gate_ask",
        shape="gate_ask",
        tool=Tool(
            "gate_ask",
            "Ask a person",
            "Ask a human (returns at once; poll gate_status). With a scope a grant may approve it at once.",
            {
                "card": _YOUR_CARD,
                "question": {"type": "string", "description": "What a person should decide, in a sentence."},
                "scope": {
                    **_TEXT,
                    "description": "The permission it is about, like git:push or deploy:prod (lowercase words joined by colons).",
                },
                "options": {**_LIST, "description": "Answers to choose from, when not just approve or reject."},
            },
            _MCP + "tool_gate_ask",
            ("card", "question"),
            idempotent=True,
        ),
    ),
    Verb(
        "gate",
        "status",
        "a gate's status (exit 0 approved, 6 pending, 7 rejected)",
        (arg("gate", metavar="GATE", help="the gate, e.g. G-3"),),
        _GATES + "cmd_gate_status",
        tool=Tool(
            "gate_status",
            "A gate's answer",
            "A gate's status and answer (G-n).",
            {"gate": {"type": "string", "description": "A gate id like G-7, from gate_ask or a hook's denial."}},
            _MCP + "tool_gate_status",
            ("gate",),
            read_only=True,
        ),
    ),
    Verb(
        "gate",
        "list",
        "list gates, a page at a time (id order)",
        (
            arg("--pending", action="store_true", help="only gates still waiting for a person"),
            arg("--card", metavar="CARD", help="only this card's gates"),
            *_page("GATE", "G-50"),
        ),
        _GATES + "cmd_gate_list",
    ),
    Verb(
        "gate",
        "answer",
        "answer a gate — a person with their key only",
        (
            arg("gate", metavar="GATE", help="the gate, e.g. G-3"),
            arg(
                "decision",
                nargs="?",
                choices=["approve", "reject"],
                help="your answer (approve when --choose or --text says more)",
            ),
            arg(
                "--choose",
                metavar="OPTION",
                help="approve with one of the gate's options (its text or number, 1 = the first)",
            ),
            arg("--text", metavar="T", help="approve with your answer in words (the agent reads it in its next turn)"),
            arg("--note", metavar="T", help="why, for the agent (it reads it in its next turn)"),
            arg(
                "--remember",
                choices=["card", "agent", "board", "session"],
                help="approve as a standing grant (session: a runtime's question, that exact call for the rest of its runner's session)",
            ),
            arg("--for", dest="for_", metavar="DUR", help="how long the grant lasts"),
            arg(
                "--confirm-ground",
                action="store_true",
                help="(a merge that changes the repository's ground: .claude/, CI, git's own files) the second key: you read those files",
            ),
            _OP_ID,
        ),
        _GATES + "cmd_gate_answer",
        shape="gate_answer",
        human=True,
    ),  # (no MCP tool: only a person answers a gate)
    Verb(
        "monitor",
        None,
        "sleep on a card; `next` returns it when due",
        (
            *_CARD,
            *_agent(),
            arg("--every", required=True, metavar="DUR", help="how often `next` returns the card, e.g. 10m"),
        ),
        _TURN + "cmd_monitor",
        shape="monitor",
    ),
    Verb(
        "handoff",
        None,
        "hand a card to another agent with a verifiable packet",
        (
            *_CARD,
            *_agent(),
            arg("--to", required=True, metavar="B", help="the agent that takes it over"),
            arg("--summary", required=True, metavar="S", help="where the work stands, for the next agent"),
            arg("--done", action="append", default=[], metavar="T", help="a thing finished (repeat)"),
            arg("--pending", action="append", default=[], metavar="T", help="a thing that remains (repeat)"),
        ),
        _TURN + "cmd_handoff",
        shape="handoff",
        tool=Tool(
            "handoff",
            "Hand the card over",
            "Hand your card to another agent with a summary, done and pending lists.",
            {
                "card": _YOUR_CARD,
                "to": {"type": "string", "description": "The agent id that takes it over."},
                "summary": {"type": "string", "description": "Where the work stands, for the next agent."},
                "done": {**_LIST, "description": "What is finished."},
                "pending": {**_LIST, "description": "What remains."},
            },
            _MCP + "tool_handoff",
            ("card", "to", "summary"),
            destructive=True,
        ),
    ),
    Verb(
        "accept",
        None,
        "accept a handoff addressed to you",
        (
            *_CARD,
            *_agent(lease_token=False),
            arg("--digest", metavar="SHA", help="refuse unless the packet has this digest"),
        ),
        _TURN + "cmd_accept",
    ),
    Verb("release", None, "give a card back to the ready column", (*_CARD, *_agent()), _TURN + "cmd_release"),
    Verb(
        "done",
        None,
        "finish a card (needs evidence, no pending gate, a passing verify)",
        (
            *_CARD,
            *_agent(),
            arg("--summary", required=True, metavar="S", help="what the card achieved"),
            arg("--verify-timeout", metavar="DUR", help="how long the card's verify command may run (default 10m)"),
        ),
        _TURN + "cmd_done",
        shape="done",
        # A sandboxed turn's shell cannot write the board: it finishes its card with this
        # tool, whose server runs the verify command confined (adapters/confine, #39).
        tool=Tool(
            "done",
            "Finish your card",
            "Finish your card after writeback: runs its verify command (sandboxed); commits then wait for a person's merge.",
            {
                "card": _YOUR_CARD,
                "summary": {"type": "string", "description": "What the card achieved, in a sentence."},
            },
            _MCP + "tool_done",
            ("card", "summary"),
        ),
    ),
    Verb(
        "context",
        None,
        "the continuation packet for the start of a turn",
        (*_CARD, arg("--format", choices=["md", "json"], default="md", help="Markdown for a prompt (default) or JSON")),
        _TURN + "cmd_context",
        tool=Tool(
            "context",
            "A card's continuation",
            "The card's continuation packet as Markdown: objective, next action, todos, last evidence, gates.",
            {"card": _TOOL_CARD},
            _MCP + "tool_context",
            ("card",),
            read_only=True,
        ),
    ),
    Verb(
        "run",
        None,
        "drive one agent's turns for as long as it runs: sleeps, wakes and resumes (a person starts it)",
        (
            # (--agent names the agent to drive, not the caller: an agent identity is refused.)
            arg(
                "--agent",
                dest="drive",
                required=True,
                metavar="ID",
                help="the agent this runner drives (registered with `loopx agent add`)",
            ),
            arg("--runtime", required=True, choices=list(runtimes.NAMES), help="what runs each turn"),
            arg("--turn-limit", default="30m", metavar="DUR", help="a turn running longer is stopped (default 30m)"),
            arg("--lease", metavar="DUR", help="lease length of the cards it claims (default: the board's, 30m)"),
            arg(
                "--grace",
                default="30s",
                metavar="DUR",
                help="on SIGTERM or a person's stop, how long the turn in flight may take to finish (default 30s)",
            ),
            arg(
                "--turns", type="count", default=0, metavar="N", help="stop after N turns (default: run until stopped)"
            ),
            arg("--bin", metavar="PATH", help="the runtime's executable (default: claude / codex on PATH)"),
            arg("--log-file", metavar="PATH", help="also append the log to PATH (reopened when rotated)"),
            arg("--quiet", action="store_true", help="log only warnings and errors"),
            arg("--verbose", action="store_true", help="log each batch of events the runner reads too"),
            arg(
                "rest",
                nargs="...",
                metavar="-- ARG",
                help="shell: the command to run each turn; claude-code/codex: extra arguments for it",
            ),
        ),
        _RUNNER + "cmd_run",
        human=True,
        probe=False,
    ),  # a runner is the person's process: an agent's turn never starts one
    Group("runner", "the agents' runners: list them; a person pauses, resumes or stops one"),
    Verb(
        "runner",
        "list",
        "every agent's runner: what it is doing, and a person's control of it",
        (),
        _RUNNER + "cmd_list",
    ),
    *(
        Verb(
            "runner",
            name,
            f"{name} an agent's runner — a person only: {what}",
            (
                arg("target", metavar="AGENT", help="the agent whose runner it is"),
            ),  # (not "agent": that would read as the caller's identity)
            _RUNNER + "cmd_control",
            human=True,
        )
        for name, what in _RUNNER_CONTROLS
    ),
    Group(
        "workspace",
        "each card's git worktree (when the project is a git repository): open, start a runtime there, list, archive, clean up",
    ),
    Verb(
        "workspace",
        "open",
        "make the card's workspace now (a worktree on branch loopx/CARD; a runner makes it at the card's first turn)",
        (
            *_CARD,
            arg("--base", metavar="BRANCH", help="the branch to start from (default: the main checkout's)"),
        ),
        _WORKSPACE + "cmd_open",
    ),
    Verb(
        "workspace",
        "start",
        "start Claude Code or Codex by hand in the card's workspace, as the runner starts its turns there: the main checkout's hooks and loopx server, the agent's identity, the sandbox bounded to the workspace, nothing the workspace says — a person only",
        (
            *_CARD,
            arg(
                "--agent",
                dest="drive",
                required=True,
                metavar="ID",
                help="the agent the session works as (its hooks and MCP server act as it)",
            ),
            arg("--runtime", required=True, choices=list(runtimes.HOOKED), help="the runtime to start"),
            arg("--bin", metavar="PATH", help="its executable (default: claude / codex on PATH)"),
            arg(
                "--print",
                dest="print_only",
                action="store_true",
                help="print the command, folder and environment instead of starting it (--json implies it)",
            ),
            arg(
                "rest",
                nargs="*",
                metavar="-- ARG",
                help='more arguments for the runtime, after -- (e.g. -- exec "…" for a headless Codex turn)',
            ),
        ),
        _WORKSPACE + "cmd_start",
        human=True,
        probe=False,
    ),  # the person's terminal: an agent never starts an unbounded session
    Verb(
        "workspace",
        "list",
        "every card's workspace: folder, branch, card status, merged?, size, age",
        (),
        _WORKSPACE + "cmd_list",
    ),
    Verb(
        "workspace",
        "archive",
        "keep the card's work (commits and uncommitted files) under a LoopX ref, so gc may remove its folder — a person only",
        (*_CARD,),
        _WORKSPACE + "cmd_archive",
        human=True,
        probe=False,
    ),
    Verb(
        "workspace",
        "setup",
        "the command run once in every new workspace (install dependencies), bounded in time — a person only",
        (
            arg(
                "setup_command",
                nargs="?",
                metavar="COMMAND",
                help="a shell command, e.g. 'npm ci'; none: show the current one",
            ),
            arg("--timeout", default="10m", metavar="DUR", help="a setup running longer is stopped (default 10m)"),
            arg("--clear", action="store_true", help="no setup command any more"),
        ),
        _WORKSPACE + "cmd_setup",
        human=True,
    ),
    Verb(
        "workspace",
        "gc",
        "remove the folders of workspaces that are merged into their base or archived (never a commit or an edit) — a person only",
        (arg("--dry-run", action="store_true", help="say what would be removed, remove nothing"),),
        _WORKSPACE + "cmd_gc",
        human=True,
        probe=False,
    ),
    Verb(
        "workspace",
        "cap",
        "cap the total size of the board's workspaces (e.g. 20G; none lifts it): past it, removable folders go first, then new ones are refused — a person only",
        (arg("size", metavar="SIZE", help="20G, 500M, 1.5GB, bytes, or none"),),
        _WORKSPACE + "cmd_cap",
        human=True,
    ),
)


# The order `loopx --help` lists the commands in: as a person meets them (set up,
# look, decide, drive), then an agent's turn in its order, then the history, the
# trust, and the plumbing. A verb missing here is listed after these.
HELP_ORDER = (
    "init",
    "where",
    "board",
    "boards",
    "demo",
    "agent",
    "card",
    "gate",
    "run",
    "runner",
    "workspace",
    "next",
    "claim",
    "context",
    "heartbeat",
    "writeback",
    "monitor",
    "handoff",
    "accept",
    "release",
    "done",
    "log",
    "events",
    "verify",
    "export",
    "key",
    "person",
    "policy",
    "dangerous",
    "notify",
    "phone",
    "serve",
    "price",
    "watch",
    "mcp",
    "hook",
    "migrate",
    "completion",
)


def _index(
    declared: Iterable[Verb | Group],
) -> tuple[dict[tuple[str, str | None], Verb], dict[str, str], dict[str, None]]:
    verbs: dict[tuple[str, str | None], Verb] = {}
    groups: dict[str, str] = {}
    top: dict[str, None] = {}  # every top-level word
    for item in declared:
        top.setdefault(item.verb, None)
        if isinstance(item, Group):
            groups[item.verb] = item.help
        else:
            verbs[(item.verb, item.sub)] = item
    rank = {name: n for n, name in enumerate(HELP_ORDER)}
    ordered = dict.fromkeys(sorted(top, key=lambda name: rank.get(name, len(rank))))  # the help lists them so
    return verbs, groups, ordered


VERBS, GROUPS, TOP = _index(DECLARED)


def redeclare() -> None:
    """Rebuild the indexes after ``DECLARED`` changed (tests add a verb this way)."""
    global VERBS, GROUPS, TOP
    VERBS, GROUPS, TOP = _index(DECLARED)


def resolve(ref: str) -> Callable[..., Any]:
    """The function named ``"module:function"`` (imported now, not when the table is built)."""
    import importlib

    module, _, name = ref.partition(":")
    return getattr(importlib.import_module(module), name)


def hint_of(verb: Verb) -> str:
    if verb.hint is not None:
        return verb.hint
    return f"see `loopx {verb.verb}{' ' + verb.sub if verb.sub else ''} --help`"
