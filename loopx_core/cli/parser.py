"""The argument parser. Kept free of loopx_core imports so building it is cheap."""

from __future__ import annotations

import argparse

EPILOG = "Exit codes: 0 ok · 1 internal · 2 usage · 3 invalid input · 4 not found · 5 conflict · 6 waiting for a human · 7 rejected · 8 paused · 9 nothing to do · 10 forbidden · 11 history altered"


class _Formatter(argparse.HelpFormatter):
    # A fixed width: argparse otherwise imports shutil (and bz2, lzma) on every
    # parser build just to ask the terminal size, even when no help is printed.
    def __init__(self, prog):
        super().__init__(prog, width=100, max_help_position=28)


class Parser(argparse.ArgumentParser):
    """argparse that raises instead of exiting, so errors share one printer (and --json)."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("formatter_class", _Formatter)
        super().__init__(*args, **kwargs)

    def error(self, message):  # noqa: D401 - argparse API
        from ..shapes.errors import UsageError

        raise UsageError(message, _did_you_mean(message) or f"see `{self.prog} --help`")


def _did_you_mean(message: str) -> str | None:
    """For a mistyped verb: the closest real one (only on this error path)."""
    import re

    found = re.search(r"invalid choice: '?([^'\s]*)'? \(choose from (.*)\)", message)
    if not found:
        return None
    import difflib

    choices = [c.strip().strip("'\"") for c in found.group(2).split(",")]
    close = difflib.get_close_matches(found.group(1), choices, n=1, cutoff=0.5)
    return f"did you mean {close[0]!r}?" if close else None


def count(text: str) -> int:
    """A whole number >= 0 (an event seq, a limit): refused at parse time, not by the database."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text[:40]!r}") from None
    if not 0 <= value < 1 << 63:  # the database's integers are 64-bit
        raise argparse.ArgumentTypeError(f"must be between 0 and {(1 << 63) - 1}, got {text[:40]}")
    return value


def _common(p: argparse.ArgumentParser) -> None:
    # Accepted after the verb too (`loopx next --json`): agents write it both ways.
    p.add_argument("--json", action="store_true", default=argparse.SUPPRESS, help="print exactly one JSON object")
    p.add_argument("--db", default=argparse.SUPPRESS, metavar="PATH|URL", help="board to use (default: LOOPX_DB, nearest .loopx/, user board)")


def _page(p: argparse.ArgumentParser, cursor: str, example: str) -> None:
    """A list's page: --limit rows (default and ceiling: limits.PAGE_DEFAULT/PAGE_MAX) after a cursor."""
    p.add_argument("--limit", type=count, metavar="N", help="at most N rows (default 50, at most 1000)")
    p.add_argument("--after", metavar=cursor, help=f"the page after {cursor} (the JSON's next_after), e.g. {example}")


def _agent(p: argparse.ArgumentParser, lease_token: bool = True) -> None:
    p.add_argument("--agent", metavar="ID", help="agent identity (default: $LOOPX_AGENT)")
    p.add_argument("--op-id", metavar="ID", help="idempotency key: a retry with the same id returns the first result")
    if lease_token:
        p.add_argument("--lease-token", type=int, metavar="N", help="fencing token of your lease; a stale one is refused")


def cmd(name: str, help_text: str, parent) -> Parser:
    p = parent.add_parser(name, help=help_text, description=help_text, epilog=EPILOG)
    _common(p)
    return p


def build(argv: list[str] | None = None) -> Parser:
    """The parser. Given ``argv``, only the verb being run is defined: a cold
    agent call should not pay for sixty subparsers it never uses."""
    root = Parser(prog="loopx", description="LoopX — the state kernel for long-running AI coding agents.", epilog=EPILOG)
    root.add_argument("--db", metavar="PATH|URL", help="board to use (default: LOOPX_DB, nearest .loopx/board.db, user board)")
    root.add_argument("--json", action="store_true", help="print exactly one JSON object")
    root.add_argument("--version", action="store_true", help="print the version")
    sub = root.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)

    wanted = _verb(argv) if argv is not None else None
    for name, (help_text, define) in VERBS.items():
        if wanted is None or wanted == name:
            define(cmd(name, help_text, sub))
    return root


def _verb(argv: list[str]) -> str | None:
    """The verb in ``argv`` (skipping global options), or None to build everything."""
    skip = False
    for token in argv:
        if skip:
            skip = False
            continue
        if token == "--db":
            skip = True
            continue
        if token.startswith("-"):
            if token in ("-h", "--help"):
                return None
            continue
        return token if token in VERBS else None
    return None

def _verb_init(p):
    p.add_argument("--objective", metavar="T", help="what this board is for")
    p.add_argument("--for", dest="runtime", choices=["claude-code", "codex"], help="also set up this runtime's hooks")
    p.add_argument("--agent", metavar="ID", help="with --for: the agent id to register")
    p.add_argument("--can", action="append", default=[], metavar="SCOPE", help="with --for: a capability of that agent")
    p.add_argument("--no-sandbox", dest="sandbox", action="store_false", help="with --for: leave the runtime's OS sandbox off (the agent's shell may then write the board)")
    p.add_argument("--dry-run", action="store_true", help="show what would change (board, agent, files) and write nothing")
    p.add_argument("--test-board", action="store_true", help="a board for tests and demos: LOOPX_NOW may freeze its clock")
    p.add_argument("--name", metavar="NAME", help="your name on the board, if this makes your key (default: $LOOPX_HUMAN or your login)")


def _verb_where(p):
    pass


def _verb_board(board):
    board.add_argument("--text", action="store_true", help="print the board as text instead of opening the TUI")


def _verb_demo(p):
    p.add_argument("--script", action="store_true", help="no TUI: run a scripted agent turn cycle and print what happened")
    p.add_argument("--keep", metavar="DIR", help="keep the demo board in DIR")


def _verb_watch(p):
    p.add_argument("--once", action="store_true", help="catch up on existing files, then exit")


def _verb_mcp(p):
    pass


def _verb_hook(p):
    p.add_argument("runtime", choices=["claude-code", "codex"])
    p.add_argument("event", choices=["session-start", "pre-tool-use", "stop", "pre-skill-shell-command"])


def _verb_agent(agent):
    asub = agent.add_subparsers(dest="subcommand", metavar="SUBCOMMAND", parser_class=Parser, required=True)
    p = cmd("add", "register an agent (or update it)", asub)
    p.add_argument("id", metavar="ID")
    p.add_argument("--runtime", metavar="R", help="claude-code, codex, shell, …")
    p.add_argument("--can", action="append", default=[], metavar="SCOPE", help="a capability (scope) it holds, e.g. git:push")
    p.add_argument("--watch", action="append", default=[], metavar="DIR", help="an output folder to take evidence from")
    p.add_argument("--tokens", type=int, metavar="N", help="tokens per window, e.g. 2000000")
    p.add_argument("--usd", type=float, metavar="X", help="dollars per window, e.g. 20")
    p.add_argument("--turns", type=int, metavar="N", help="turns per window")
    p.add_argument("--window", metavar="DUR", help="the rolling window's length, e.g. 5h or 1d")
    p = cmd("list", "list agents", asub)
    _page(p, "ID", "claude-1")
    p = cmd("show", "show one agent", asub)
    p.add_argument("id", metavar="ID")


def _verb_card(card):
    csub = card.add_subparsers(dest="subcommand", metavar="SUBCOMMAND", parser_class=Parser, required=True)
    p = cmd("add", "add a card (ready; blocked while an --after card is open; --backlog to park it)", csub)
    p.add_argument("title", metavar="TITLE")
    p.add_argument("--body", metavar="T", help="the objective in detail")
    p.add_argument("--needs", action="append", default=[], metavar="SCOPE", help="a scope the work needs, e.g. deploy:prod")
    p.add_argument("--after", action="append", default=[], metavar="CARD", help="a card that must be done first")
    p.add_argument("--priority", type=int, default=2, metavar="0-4", help="0 is most urgent (default 2)")
    p.add_argument("--owner", metavar="A", help="only this agent may claim it")
    p.add_argument("--next", metavar="T", help="the first next action")
    p.add_argument("--verify", metavar="CMD", help="a command that must pass before done (run in the project folder)")
    p.add_argument("--max-turns", type=int, metavar="N")
    p.add_argument("--max-tokens", type=int, metavar="N")
    p.add_argument("--max-usd", type=float, metavar="X")
    p.add_argument("--backlog", action="store_true", help="park it in the backlog")
    p.add_argument("--op-id", metavar="ID", help="idempotency key")
    p = cmd("list", "list cards, a page at a time (id order)", csub)
    p.add_argument("--status", metavar="S")
    p.add_argument("--owner", metavar="A")
    _page(p, "CARD", "LX-50")
    p.add_argument("--full", action="store_true", help="each card's whole record (todos, quota, lease …), as `card show` prints it")
    p = cmd("show", "show one card", csub)
    p.add_argument("card", metavar="CARD")
    p = cmd("move", "a person's move: to backlog, ready or cancelled", csub)
    p.add_argument("card", metavar="CARD")
    p.add_argument("--to", required=True, choices=["backlog", "ready", "cancelled"])
    p.add_argument("--op-id", metavar="ID")
    p = cmd("assign", "give a card to an agent (a held card is reassigned with a handoff packet)", csub)
    p.add_argument("card", metavar="CARD")
    p.add_argument("--to", required=True, metavar="A")
    p.add_argument("--summary", metavar="T", help="what the receiver should know")
    p.add_argument("--op-id", metavar="ID")
    p = cmd("unassign", "take a card back from its agent (its lease is revoked)", csub)
    p.add_argument("card", metavar="CARD")
    p.add_argument("--op-id", metavar="ID")
    p = cmd("budget", "raise a card's budget (a person only; resumes a paused card)", csub)
    p.add_argument("card", metavar="CARD")
    p.add_argument("--add-turns", type=int, metavar="N")
    p.add_argument("--add-tokens", type=int, metavar="N")
    p.add_argument("--add-usd", type=float, metavar="X")
    p.add_argument("--op-id", metavar="ID")
    p = cmd("window", "give a card a rolling window: so much per so long (a person only); a spent one pauses the card until it refills", csub)
    p.add_argument("card", metavar="CARD")
    p.add_argument("--every", metavar="DUR", help="the window's length, e.g. 5h or 1d")
    p.add_argument("--tokens", type=int, metavar="N", help="tokens per window")
    p.add_argument("--usd", type=float, metavar="X", help="dollars per window")
    p.add_argument("--turns", type=int, metavar="N", help="turns per window")
    p.add_argument("--clear", action="store_true", help="remove the card's window")
    p.add_argument("--op-id", metavar="ID")


def _verb_key(key):
    ksub = key.add_subparsers(dest="subcommand", metavar="SUBCOMMAND", parser_class=Parser, required=True)
    p = cmd("init", "make your human key (asks a passphrase in a terminal)", ksub)
    p.add_argument("--name", metavar="NAME", help="your name on boards (default: $LOOPX_HUMAN or your login)")
    p.add_argument("--no-passphrase", action="store_true", help="store it unsealed: only safe where agents run in their sandbox")
    p.add_argument("--force", action="store_true", help="replace an existing key")
    cmd("show", "your key's fingerprint and public half (give it to a person who adds you to a board)", ksub)
    p = cmd("passphrase", "change your key's passphrase", ksub)
    p.add_argument("--none", action="store_true", help="remove the passphrase")
    p = cmd("trust", "pin this board's root key on this machine (a second machine or a team board)", ksub)
    p.add_argument("fingerprint", metavar="FINGERPRINT", help="the root fingerprint a person on the board read to you")


def _verb_person(person):
    psub = person.add_subparsers(dest="subcommand", metavar="SUBCOMMAND", parser_class=Parser, required=True)
    p = cmd("add", "add a person to this board (their decisions count once signed with their key)", psub)
    p.add_argument("name", metavar="NAME")
    p.add_argument("public_key", metavar="PUBLIC_KEY", help="what `loopx key show` prints on their machine")
    cmd("list", "the board's people and whether this machine trusts them", psub)
    p = cmd("revoke", "revoke a person's key (its later signatures count for nothing)", psub)
    p.add_argument("fingerprint", metavar="FINGERPRINT")


def _verb_policy(policy):
    psub = policy.add_subparsers(dest="subcommand", metavar="SUBCOMMAND", parser_class=Parser, required=True)
    cmd("show", "the hook policy (.loopx/policy.json) and whether a person signed it", psub)
    cmd("sign", "sign the hook policy as it is now: its allow/outside_ok entries then apply", psub)


def _verb_verify(p):
    p.add_argument("--file", metavar="EXPORT", help="verify an exported board (loopx export) instead of this one")
    p.add_argument("--root", metavar="FINGERPRINT", help="with --file: the root key you expect")


def _verb_migrate(p):
    p.add_argument("--to", required=True, metavar="PATH|URL", help="an empty board to copy into: a SQLite path or postgresql://…")


def _verb_price(price):
    psub = price.add_subparsers(dest="subcommand", metavar="SUBCOMMAND", parser_class=Parser, required=True)
    p = cmd("set", "price a model's tokens (dollars per million), so hook-measured usage is charged in dollars", psub)
    p.add_argument("model", metavar="MODEL", help="a model name, or a prefix of names (claude-sonnet-4 prices claude-sonnet-4-6)")
    p.add_argument("--input", type=float, required=True, metavar="$", help="per million input tokens")
    p.add_argument("--output", type=float, required=True, metavar="$", help="per million output tokens")
    p.add_argument("--cache-read", type=float, metavar="$", help="per million cached input tokens read (default: the input price)")
    p.add_argument("--cache-write", type=float, metavar="$", help="per million input tokens written to the cache (default: the input price)")
    cmd("list", "the board's token prices", psub)
    p = cmd("remove", "remove a model's price", psub)
    p.add_argument("model", metavar="MODEL")


def _verb_log(p):
    p.add_argument("card", metavar="CARD")


def _verb_events(p):
    p.add_argument("--since", type=count, default=0, metavar="SEQ")
    p.add_argument("--card", metavar="CARD")
    p.add_argument("--follow", action="store_true", help="keep streaming, one JSON object per line")
    p.add_argument("--limit", type=count, metavar="N", help="at most N events (default 1000); page on with --since NEXT_SINCE")


def _verb_export(p):
    pass


def _verb_next(p):
    _agent(p, lease_token=False)
    p.add_argument("--claim", action="store_true", help="claim the best ready card when holding none")
    p.add_argument("--lease", metavar="DUR", help="lease length for a claim (default 30m)")


def _verb_claim(p):
    p.add_argument("card", metavar="CARD")
    _agent(p, lease_token=False)
    p.add_argument("--lease", metavar="DUR", help="lease length (default 30m)")


def _verb_heartbeat(p):
    p.add_argument("card", metavar="CARD")
    _agent(p)


def _verb_writeback(p):
    p.add_argument("card", metavar="CARD")
    _agent(p)
    p.add_argument("--summary", metavar="S", help="what the turn did (required unless --input)")
    p.add_argument("--artifact", action="append", default=[], metavar="PATH", help="a file the turn produced")
    p.add_argument("--next", metavar="T", help="the next action")
    p.add_argument("--todo-add", action="append", default=[], metavar="T", help="a new todo")
    p.add_argument("--todo-done", action="append", default=[], metavar="ID", help="a todo finished (its number)")
    p.add_argument("--tokens", type=int, metavar="N", help="tokens this turn used")
    p.add_argument("--usd", type=float, metavar="X", help="dollars this turn cost")
    p.add_argument("--turn-id", metavar="ID", help="idempotency key for this turn")
    p.add_argument("--release", action="store_true", help="release the card after writing")
    p.add_argument("--input", metavar="FILE|-", help="read an evidence JSON document instead of flags")


def _verb_gate(gate):
    gsub = gate.add_subparsers(dest="subcommand", metavar="SUBCOMMAND", parser_class=Parser, required=True)
    p = cmd("ask", "ask a human (exit 6 while pending, 0 if a grant approves at once)", gsub)
    p.add_argument("card", metavar="CARD")
    _agent(p)
    p.add_argument("--question", required=True, metavar="Q")
    p.add_argument("--scope", metavar="S", help="the permission asked for, e.g. git:push")
    p.add_argument("--option", action="append", default=[], metavar="O")
    p.add_argument("--deadline", metavar="DUR", help="unanswered by then counts as rejected")
    p.add_argument("--wait", nargs="?", const="30m", metavar="DUR", help="block until answered (default 30m): exit 0 approved, 7 rejected, 6 still waiting")
    p = cmd("status", "a gate's status (exit 0 approved, 6 pending, 7 rejected)", gsub)
    p.add_argument("gate", metavar="GATE")
    p = cmd("list", "list gates, a page at a time (id order)", gsub)
    p.add_argument("--pending", action="store_true")
    p.add_argument("--card", metavar="CARD")
    _page(p, "GATE", "G-50")
    p = cmd("answer", "answer a gate — a person with their key only", gsub)
    p.add_argument("gate", metavar="GATE")
    p.add_argument("decision", choices=["approve", "reject"])
    p.add_argument("--note", metavar="T")
    p.add_argument("--remember", choices=["card", "agent", "board"], help="approve as a standing grant")
    p.add_argument("--for", dest="for_", metavar="DUR", help="how long the grant lasts")
    p.add_argument("--op-id", metavar="ID")


def _verb_monitor(p):
    p.add_argument("card", metavar="CARD")
    _agent(p)
    p.add_argument("--every", required=True, metavar="DUR")


def _verb_handoff(p):
    p.add_argument("card", metavar="CARD")
    _agent(p)
    p.add_argument("--to", required=True, metavar="B")
    p.add_argument("--summary", required=True, metavar="S")
    p.add_argument("--done", action="append", default=[], metavar="T")
    p.add_argument("--pending", action="append", default=[], metavar="T")


def _verb_accept(p):
    p.add_argument("card", metavar="CARD")
    _agent(p, lease_token=False)
    p.add_argument("--digest", metavar="SHA", help="refuse unless the packet has this digest")


def _verb_release(p):
    p.add_argument("card", metavar="CARD")
    _agent(p)


def _verb_done(p):
    p.add_argument("card", metavar="CARD")
    _agent(p)
    p.add_argument("--summary", required=True, metavar="S")
    p.add_argument("--verify-timeout", metavar="DUR")


def _verb_run(p):
    # (--agent names the agent to drive, not the caller: an agent identity is refused.)
    p.add_argument("--agent", dest="drive", required=True, metavar="ID", help="the agent this runner drives (registered with `loopx agent add`)")
    p.add_argument("--runtime", required=True, choices=["claude-code", "codex", "shell"], help="what runs each turn")
    p.add_argument("--turn-limit", default="30m", metavar="DUR", help="a turn running longer is stopped (default 30m)")
    p.add_argument("--lease", metavar="DUR", help="lease length of the cards it claims (default: the board's, 30m)")
    p.add_argument("--grace", default="30s", metavar="DUR", help="on SIGTERM or a person's stop, how long the turn in flight may take to finish (default 30s)")
    p.add_argument("--turns", type=count, default=0, metavar="N", help="stop after N turns (default: run until stopped)")
    p.add_argument("--bin", metavar="PATH", help="the runtime's executable (default: claude / codex on PATH)")
    p.add_argument("rest", nargs=argparse.REMAINDER, metavar="-- ARG", help="shell: the command to run each turn; claude-code/codex: extra arguments for it")


def _verb_runner(runner):
    rsub = runner.add_subparsers(dest="subcommand", metavar="SUBCOMMAND", parser_class=Parser, required=True)
    cmd("list", "every agent's runner: what it is doing, and a person's control of it", rsub)
    for name, what in (("pause", "no new turn starts (the one in flight ends normally)"), ("resume", "lift a pause or a stop"), ("stop", "the runner ends its turn, releases its card and exits")):
        p = cmd(name, f"{name} an agent's runner — a person only: {what}", rsub)
        p.add_argument("target", metavar="AGENT")  # (not "agent": that would read as the caller's identity)


def _verb_context(p):
    p.add_argument("card", metavar="CARD")
    p.add_argument("--format", choices=["md", "json"], default="md")


VERBS = {
    "migrate": ("copy this board (events included) into another board, verified by counts and checksums", _verb_migrate),
    "init": ("create a board in ./.loopx/ (or at --db) and optionally set up a runtime", _verb_init),
    "where": ("print which board this folder uses and why", _verb_where),
    "board": ("open the live board (text when not in a terminal)", _verb_board),
    "demo": ("open the board on a throwaway demo with simulated agents at work", _verb_demo),
    "watch": ("ingest evidence files from agents' watch folders (headless)", _verb_watch),
    "mcp": ("serve the MCP tools over stdio (agent id from LOOPX_AGENT)", _verb_mcp),
    "hook": ("what runtime hooks call (reads the runtime's hook JSON on stdin)", _verb_hook),
    "agent": ("register and list agents", _verb_agent),
    "card": ("add, list, show, move, assign, budget and window cards", _verb_card),
    "price": ("token prices per model, for charging the usage hooks measure", _verb_price),
    "key": ("your human key: make it, show it, change its passphrase, pin a board", _verb_key),
    "person": ("the people whose signed decisions this board honours", _verb_person),
    "policy": ("the hook policy: show it, or sign it so its loosening entries apply", _verb_policy),
    "verify": ("check the event log's hash chain and every person's signature (exit 11 if altered)", _verb_verify),
    "log": ("a card with its evidence and observed artifacts", _verb_log),
    "events": ("the event log", _verb_events),
    "export": ("the whole board as one JSON document", _verb_export),
    "next": ("the pre-turn check: work, wait, accept, paused or idle", _verb_next),
    "claim": ("claim a ready card", _verb_claim),
    "heartbeat": ("renew your lease", _verb_heartbeat),
    "writeback": ("record what this turn did (evidence), charge its usage, update the continuation", _verb_writeback),
    "gate": ("ask, check and answer human gates", _verb_gate),
    "monitor": ("sleep on a card; `next` returns it when due", _verb_monitor),
    "handoff": ("hand a card to another agent with a verifiable packet", _verb_handoff),
    "accept": ("accept a handoff addressed to you", _verb_accept),
    "release": ("give a card back to the ready column", _verb_release),
    "done": ("finish a card (needs evidence, no pending gate, a passing verify)", _verb_done),
    "context": ("the continuation packet for the start of a turn", _verb_context),
    "run": ("drive one agent's turns for as long as it runs: sleeps, wakes and resumes (a person starts it)", _verb_run),
    "runner": ("the agents' runners: list them; a person pauses, resumes or stops one", _verb_runner),
}
