"""The demo's story: a board, five agents, and what each does on each card.

Within about a minute a newcomer sees every mechanism: claims, evidence with
real artifact files, a permission gate and a question gate to answer, a card
paused by its budget, one paused for making no progress, a handoff between
agents, a dependency unblocking, and cards finishing. Afterwards the agents
keep taking whatever becomes ready (a card you add, or drag to Ready)."""

from __future__ import annotations

from typing import NamedTuple

OBJECTIVE = "Ship the login page"


class AgentSpec(NamedTuple):
    id: str
    runtime: str
    can: tuple[str, ...] = ()


AGENTS = (
    AgentSpec("claude-1", "claude-code", ("git:push",)),
    AgentSpec("codex-1", "codex"),
    AgentSpec("cursor-1", "cursor"),
    AgentSpec("shell-1", "shell"),
    AgentSpec("gemini-1", "gemini"),
)


class CardSpec(NamedTuple):
    title: str
    data: dict


# In creation order: LX-1 … LX-9.
CARDS = (
    CardSpec("Write the login form", {"owner": "claude-1", "priority": 1, "max_turns": 8, "next": "sketch the form"}),
    CardSpec("Add form tests", {"owner": "codex-1", "priority": 1, "next": "cover the happy path"}),
    CardSpec("Deploy to staging", {"owner": "codex-1", "priority": 1, "needs": ["deploy:staging"], "after": [1]}),
    CardSpec(
        "Tune the button styles",
        {"owner": "cursor-1", "max_turns": 3, "max_usd": 0.5, "next": "make the submit button pop"},
    ),
    CardSpec("Investigate the flaky CI job", {"owner": "shell-1", "next": "reproduce the failure"}),
    CardSpec("Choose the OAuth provider", {"owner": "claude-1", "next": "compare providers"}),
    CardSpec("Write the README section", {"after": [1], "next": "describe the login flow"}),
    CardSpec("Add rate limiting to login", {"priority": 3, "next": "pick a limiter"}),
    CardSpec("Refactor the session store", {"backlog": True, "priority": 3}),
)


# A person's quota windows (`loopx card window`): this card runs two turns, then
# sleeps until its window refills and resumes by itself — no one presses anything.
WINDOWS = {"Write the README section": {"every": "45s", "turns": 2}}


class Step(NamedTuple):
    kind: str  # write | stall | ask | handoff | done
    summary: str = ""
    files: tuple[tuple[str, str], ...] = ()  # (path, content) written before the writeback
    next: str | None = None
    todos_added: tuple[str, ...] = ()
    done_todos: int = 0  # how many open todos this turn ticks off
    tokens: int = 0
    usd: float = 0.0
    question: str = ""
    options: tuple[str, ...] = ()
    to: str = ""


LOGIN_HTML = """<form id="login" method="post" action="/session">
  <label>Email <input type="email" name="email" required></label>
  <label>Password <input type="password" name="password" minlength="12" required></label>
  <button type="submit">Sign in</button>
</form>
"""

LOGIN_CSS = """#login { display: grid; gap: .75rem; max-width: 22rem; }
#login button { background: #3b82f6; color: white; border-radius: .4rem; }
"""

LOGIN_JS = """export function validate(form) {
  const email = form.email.value.trim();
  const ok = /.+@.+\\..+/.test(email) && form.password.value.length >= 12;
  form.querySelector("button").disabled = !ok;
  return ok;
}
"""

TEST_PY = """from login import validate


def test_accepts_a_good_login():
    assert validate("ada@example.com", "correct horse battery")


def test_refuses_a_short_password():
    assert not validate("ada@example.com", "short")
"""

# Keyed by (card title, agent); ("*", "*") is what any agent does on any other card.
PLANS: dict[tuple[str, str], tuple[Step, ...]] = {
    ("Write the login form", "claude-1"): (
        Step(
            "write",
            "Sketched the form markup",
            (("src/login.html", LOGIN_HTML),),
            "style it",
            ("style the form", "client-side validation"),
            tokens=5400,
            usd=0.03,
        ),
        Step(
            "write",
            "Styled the form",
            (("src/login.css", LOGIN_CSS),),
            "client-side validation",
            done_todos=1,
            tokens=4100,
            usd=0.02,
        ),
        Step(
            "write",
            "Added client-side validation",
            (("src/login.js", LOGIN_JS),),
            "ship it",
            done_todos=1,
            tokens=6200,
            usd=0.04,
        ),
        Step("done", "Login form done: markup, styles, validation"),
    ),
    ("Add form tests", "codex-1"): (
        Step(
            "write",
            "Wrote the happy-path test",
            (("tests/test_login.py", TEST_PY),),
            "cover the refusals",
            ("refusal cases", "run in CI"),
            tokens=3900,
            usd=0.02,
        ),
        Step(
            "write",
            "Covered the refusal cases",
            (
                (
                    "tests/test_login.py",
                    TEST_PY
                    + "\n\ndef test_refuses_a_bad_email():\n    assert not validate('nope', 'correct horse battery')\n",
                ),
            ),
            "run them in CI",
            done_todos=1,
            tokens=3300,
            usd=0.02,
        ),
        Step("handoff", "Tests written; I am needed on the deploy. Please wire them into CI.", to="claude-1"),
    ),
    ("Add form tests", "claude-1"): (
        Step(
            "write",
            "Accepted the handoff; wired the tests into CI",
            (("ci/login.yml", "test:\n  script: pytest tests/test_login.py\n"),),
            "watch one green run",
            done_todos=1,
            tokens=2800,
            usd=0.02,
        ),
        Step("done", "Tests run in CI and pass"),
    ),
    ("Deploy to staging", "codex-1"): (
        Step(
            "write",
            "Deployed build 42 to staging",
            (("deploy/staging.log", "build 42 -> staging: ok\nsmoke test /login: 200\n"),),
            "smoke-test staging",
            tokens=2100,
            usd=0.01,
        ),
        Step("done", "Staging is live"),
    ),
    ("Tune the button styles", "cursor-1"): (
        Step(
            "write",
            "Tried three button palettes",
            (("src/buttons.css", "button { background: #2563eb; }\n"),),
            "pick one with the team",
            tokens=9000,
            usd=0.14,
        ),
        Step(
            "write",
            "Adjusted contrast for accessibility",
            (("src/buttons.css", "button { background: #1d4ed8; color: #fff; }\n"),),
            "check hover states",
            tokens=9500,
            usd=0.15,
        ),
        Step(
            "write",
            "Polished the hover and focus states",
            (
                (
                    "src/buttons.css",
                    "button { background: #1d4ed8; color: #fff; }\nbutton:hover { background: #1e40af; }\n",
                ),
            ),
            "final review",
            tokens=8800,
            usd=0.14,
        ),
        Step(
            "write",
            "Final review of the buttons",
            (("docs/buttons.md", "Submit buttons use #1d4ed8 with a #1e40af hover.\n"),),
            "done",
            tokens=3000,
            usd=0.04,
        ),
        Step("done", "Buttons tuned"),
    ),
    ("Investigate the flaky CI job", "shell-1"): (
        Step("stall", "Re-ran the CI job; it passed this time", next="reproduce the failure", tokens=1500),
        Step("stall", "Re-ran the CI job again; still cannot reproduce", next="reproduce the failure", tokens=1500),
        Step("stall", "Re-ran the CI job a third time", next="reproduce the failure", tokens=1500),
        Step(
            "write",
            "Found it: the test depends on the wall clock",
            (("notes/flaky-ci.md", "The login test reads time.time(); freeze the clock in the fixture.\n"),),
            "freeze the clock in the test",
            tokens=2500,
            usd=0.01,
        ),
        Step("done", "Flaky test fixed by freezing the clock"),
    ),
    ("Choose the OAuth provider", "claude-1"): (
        Step(
            "write",
            "Compared GitHub and Google sign-in",
            (("notes/oauth.md", "GitHub: devs already have accounts.\nGoogle: broader reach.\n"),),
            "ask which one",
            tokens=3600,
            usd=0.02,
        ),
        Step("ask", question="OK to offer GitHub sign-in first (Google later)? Reject with a note to change it."),
        Step(
            "write",
            "Wired the chosen provider's sign-in button",
            (("src/oauth.js", "export const PROVIDER = 'github'; // approved at the gate\n"),),
            "done",
            tokens=4200,
            usd=0.03,
        ),
        Step("done", "OAuth sign-in in place"),
    ),
    ("*", "*"): (
        Step(
            "write",
            "Read the card and made a plan",
            (("notes/{key}.md", "# {title}\n\nPlan: small steps, evidence each turn.\n"),),
            "do the first step",
            ("first step", "check it"),
            tokens=2500,
            usd=0.01,
        ),
        Step(
            "write",
            "Did the first step",
            (("notes/{key}.md", "# {title}\n\nPlan: small steps, evidence each turn.\n\n- first step: done\n"),),
            "check it",
            done_todos=1,
            tokens=3100,
            usd=0.02,
        ),
        Step("write", "Checked it", (), "wrap up", done_todos=1, tokens=1800, usd=0.01),
        Step("done", "Done"),
    ),
}


def plan_for(title: str, agent: str) -> tuple[Step, ...]:
    return PLANS.get((title, agent)) or PLANS[("*", "*")]
