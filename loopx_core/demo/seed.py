"""A fixed board in a known state, built with the real operators under a
frozen clock: the TUI's snapshot tests and ``screenshots/make.py`` draw it, so
the same data gives the same pixels on every run and every machine.

It shows one card in each interesting state: done with evidence and
artifacts, a handoff waiting to be accepted, a pending permission gate,
paused by budget, paused for no progress, active with a running lease,
blocked by a dependency, blocked by a rejected gate, ready, backlog and
cancelled."""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

from ..ops import cards, claims, gates, handoffs
from ..ops import done as done_ops
from ..ops.agents import add_agent
from ..ops.board import init_board
from ..ops.writeback import writeback
from ..rules import clock
from ..shapes.inputs import validate
from ..store.discovery import BoardLocation, parse_target

TYPE_CHECKING = False  # (annotations only; checkers read this as typing's)
if TYPE_CHECKING:
    from ..authority.keys import Person

T0 = 1767603600.0  # 2026-01-05 09:00:00 UTC
# The seeded board's person: a fixed, public key — the board is a picture, not a real board.
PERSON_NAME = "seed"
PERSON_SEED = b"loopx-seeded-board-v1"
KEY_FILE = "seed-person.key.json"


class Seeded(NamedTuple):
    location: BoardLocation
    root: Path
    now: float  # "now" for the screens: a little after the last write
    gate: int  # the pending gate's id
    person: object  # the board's person (keys.Person): what the board decides as in tests


def seed_person() -> Person:
    from ..authority.keys import ephemeral

    return ephemeral(PERSON_NAME, PERSON_SEED)


def save(path: Path, person: Person) -> None:
    from ..authority.keys import save as save_key

    save_key(path, person)


class _Clock:
    def __init__(self, start: float):
        self.t = start

    def __call__(self) -> float:
        return self.t

    def tick(self, seconds: float = 60.0) -> float:
        self.t += seconds
        return self.t


def _files(root: Path, files: dict[str, str]) -> list[str]:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return list(files)


def seed_board(root: Path, *, keep_clock: bool = False) -> Seeded:
    """Build the board in ``root/.loopx/board.db``. The clock is restored to
    the real one afterwards unless ``keep_clock``."""
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    tick = _Clock(T0)
    clock.set_clock(tick)
    location = parse_target(str(root / ".loopx" / "board.db"), "flag")
    HUMAN = seed_person()
    save(root / ".loopx" / KEY_FILE, HUMAN)  # so another process can act as the seeded board's person
    store, _ = init_board(location, "Ship the login page", HUMAN, test_board=True, pin=False)
    try:
        for spec in (
            ("claude-1", "claude-code", ["git:push"]),
            ("codex-1", "codex", []),
            ("cursor-1", "cursor", []),
            ("shell-1", "shell", []),
        ):
            add_agent(store, validate("agent", {"id": spec[0], "runtime": spec[1], "can": spec[2]}), HUMAN)

        def card(title: str, **data: object) -> int:
            tick.tick(30)
            return cards.add_card(store, validate("card", {"title": title, **data}), HUMAN).id

        def write(card_id: int, agent: str, summary: str, files: dict[str, str] | None = None, **data: object) -> None:
            tick.tick(90)
            payload = validate("evidence", {"summary": summary, "artifacts": _files(root, files or {}), **data})
            writeback(store, card_id, agent, payload, base=root)

        login = card("Write the login form", owner="claude-1", priority=1, max_turns=8, next="sketch the form")
        tests = card("Add form tests", owner="codex-1", priority=1, next="cover the happy path")
        deploy = card("Deploy to staging", owner="codex-1", priority=1, next="build the bundle")
        buttons = card(
            "Tune the button styles", owner="cursor-1", max_turns=3, max_usd=0.5, next="make the submit button pop"
        )
        flaky = card("Investigate the flaky CI job", owner="shell-1", next="reproduce the failure")
        oauth = card("Choose the OAuth provider", owner="claude-1", next="compare providers")
        limiter = card("Add rate limiting to login", priority=1, next="pick a limiter")
        card("Write the README section", after=[f"LX-{limiter}"], next="describe the login flow")
        card("Refactor the session store", backlog=True, priority=3)
        keys = card("Rotate the API keys", needs=["secrets:rotate"], priority=0)
        idea = card("Try a magic-link login", priority=4)

        # Done, with three turns of evidence and real artifacts.
        claims.claim(store, login, "claude-1")
        write(
            login,
            "claude-1",
            "Sketched the form markup",
            {
                "src/login.html": '<form id="login" method="post">\n  <input type="email" name="email" required>\n  <input type="password" name="password" minlength="12" required>\n  <button type="submit">Sign in</button>\n</form>\n'
            },
            next="style it",
            todos_added=["style the form", "client-side validation"],
            tokens=5400,
            usd=0.03,
            turn_id="t1",
        )
        write(
            login,
            "claude-1",
            "Styled the form",
            {"src/login.css": "#login { display: grid; gap: .75rem; max-width: 22rem; }\n"},
            next="client-side validation",
            todos_done=[1],
            tokens=4100,
            usd=0.02,
            turn_id="t2",
        )
        write(
            login,
            "claude-1",
            "Added client-side validation",
            {"src/login.js": "export function validate(form) {\n  return form.password.value.length >= 12;\n}\n"},
            next="ship it",
            todos_done=[2],
            tokens=6200,
            usd=0.04,
            turn_id="t3",
        )
        tick.tick(60)
        done_ops.done(store, login, "claude-1", "Login form done: markup, styles, validation")

        # A handoff from codex-1 to claude-1, not accepted yet.
        claims.claim(store, tests, "codex-1")
        write(
            tests,
            "codex-1",
            "Wrote the happy-path test",
            {
                "tests/test_login.py": "def test_accepts_a_good_login():\n    assert validate('ada@example.com', 'correct horse battery')\n"
            },
            next="cover the refusals",
            todos_added=["refusal cases", "run in CI"],
            tokens=3900,
            usd=0.02,
        )
        tick.tick(60)
        handoffs.handoff(
            store,
            tests,
            "codex-1",
            {
                "to": "claude-1",
                "summary": "Tests written; please wire them into CI.",
                "done": [],
                "pending": ["refusal cases", "run in CI"],
            },
        )

        # A pending gate: codex-1 built the bundle and asks before deploying (it lacks deploy:staging).
        claims.claim(store, deploy, "codex-1")
        write(
            deploy,
            "codex-1",
            "Built the bundle for staging",
            {"dist/build.log": "build 42: 14 modules, 38.2 kB gzip\nsmoke tests: 12 passed\n"},
            next="deploy build 42",
            tokens=2100,
            usd=0.01,
        )
        tick.tick(60)
        gate, _, _ = gates.ask(
            store,
            deploy,
            "codex-1",
            validate("gate_ask", {"question": "Deploy build 42 to staging?", "scope": "deploy:staging"}),
        )
        gate_id = gate.id

        # Paused by its budget: three turns of a three-turn card.
        claims.claim(store, buttons, "cursor-1")
        for i, text in enumerate(
            ("Tried three button palettes", "Adjusted contrast for accessibility", "Polished the hover states")
        ):
            write(
                buttons,
                "cursor-1",
                text,
                {"src/buttons.css": f"button {{ background: #1d4e{i}8; }}\n"},
                next=f"review {i}",
                tokens=9000,
                usd=0.14,
            )

        # Paused for no progress: three turns that changed nothing.
        claims.claim(store, flaky, "shell-1")
        for text in ("Re-ran the CI job; it passed", "Re-ran it again", "Re-ran it a third time"):
            write(flaky, "shell-1", text, next="reproduce the failure", tokens=1500)

        # Blocked by a rejected gate.
        claims.claim(store, keys, "shell-1")
        tick.tick(60)
        g, _, _ = gates.ask(
            store,
            keys,
            "shell-1",
            validate("gate_ask", {"question": "Rotate the production API keys now?", "scope": "secrets:rotate"}),
        )
        tick.tick(120)
        gates.answer(store, g.id, "reject", HUMAN, note="wait for the Friday window")

        # Cancelled by a person.
        tick.tick(30)
        cards.move_card(store, idea, "cancelled", HUMAN)

        # Active, with its lease running (claimed last, so the lease shows time left).
        claims.claim(store, oauth, "claude-1")
        write(
            oauth,
            "claude-1",
            "Compared GitHub and Google sign-in",
            {"notes/oauth.md": "GitHub: developers already have accounts.\nGoogle: broader reach.\n"},
            next="ask which one",
            tokens=3600,
            usd=0.02,
        )
        now = tick.tick(300)
    finally:
        store.close()
        if not keep_clock:
            clock.set_clock(None)
    return Seeded(location, root, now, gate_id, HUMAN)
