"""The shapes every input must have. One table, read by the pydantic models
(``schemas.py``) and by the cold-path pre-check (``inputs.py``)."""

from __future__ import annotations

import re

AGENT_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
SCOPE = re.compile(r"[a-z0-9][a-z0-9_.-]*(:[a-z0-9*_./-]+)*")
TOKEN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:@/+-]{0,127}")  # --turn-id / --op-id
RUNTIME = re.compile(r"[a-z0-9][a-z0-9_.-]{0,31}")
# Scopes LoopX itself names (the shell rules' scopes, shell/builtin_rules.py, and
# the common families): a person's colon-less near miss of one is a typo.
WELL_KNOWN_SCOPES = (
    "git:push",
    "git:commit",
    "git:merge",
    "git:tag",
    "deploy:prod",
    "deploy:staging",
    "deploy:aws",
    "deploy:gcloud",
    "deploy:heroku",
    "deploy:vercel",
    "publish:github",
    "publish:npm",
    "publish:nuget",
    "db:drop",
    "db:migrate",
)

TITLE_MAX = 200
BODY_MAX = 20_000
SUMMARY_MAX = 4_000
NEXT_MAX = 1_000
TODO_MAX = 500
QUESTION_MAX = 2_000
NOTE_MAX = 2_000
OPTION_MAX = 100
OPTIONS_MAX = 10
PATH_MAX = 1_024
ARTIFACTS_MAX = 200
LIST_MAX = 100
SCOPE_MAX = 128
VERIFY_MAX = 2_000
PRIORITY_MIN, PRIORITY_MAX = 0, 4
TOKENS_MAX = 10**12
USD_MAX = 1_000_000.0
RATE_MAX = 100_000.0  # dollars per million tokens
MODEL = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:/@+-]{0,127}")
TURNS_MAX = 1_000_000
PAGE_DEFAULT = 50  # rows a list returns unless --limit says otherwise (DESIGN §6)
PAGE_MAX = 1_000


def text_problem(value: str, *, max_len: int, allow_empty: bool = False, multiline: bool = True) -> str | None:
    """Why ``value`` is not acceptable free text, or None. Shared by both validators."""
    if not allow_empty and not value.strip():
        return "must not be empty"
    if len(value) > max_len:
        return f"is too long ({len(value)} characters, at most {max_len})"
    if "\x00" in value:
        return "must not contain NUL characters"
    if not multiline and ("\n" in value or "\r" in value):
        return "must be a single line"
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return "is not valid UTF-8 text"
    return None
