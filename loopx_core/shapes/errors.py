"""Errors every operator may raise, each tied to a documented exit code (DESIGN §6)."""

from __future__ import annotations

OK = 0
INTERNAL = 1
USAGE = 2
INVALID = 3
NOT_FOUND = 4
CONFLICT = 5
WAITING = 6
REJECTED = 7
PAUSED = 8
NOTHING = 9
FORBIDDEN = 10
ALTERED = 11  # loopx verify: the history was altered
STORAGE = 12  # the board's storage: full disk, read-only, damaged file


class LoopxError(Exception):
    """A refusal with a stable code, a message, a hint for the next step and
    optionally the current state (``data``) so a caller can react without a
    second query."""

    exit_code = INTERNAL
    code = "internal"

    def __init__(self, message: str, hint: str = "", *, code: str | None = None, data: dict | None = None):
        super().__init__(message)
        self.message = message
        self.hint = hint
        if code:
            self.code = code
        self.data = data or {}

    def to_json(self) -> dict:
        err = {"code": self.code, "message": self.message, "hint": self.hint}
        err.update(self.data)
        return {"error": err}


class UsageError(LoopxError):
    exit_code = USAGE
    code = "usage"


class InvalidInput(LoopxError):
    exit_code = INVALID
    code = "invalid_input"


class NotFound(LoopxError):
    exit_code = NOT_FOUND
    code = "not_found"


class Conflict(LoopxError):
    exit_code = CONFLICT
    code = "conflict"


class Paused(LoopxError):
    exit_code = PAUSED
    code = "paused"


class Forbidden(LoopxError):
    exit_code = FORBIDDEN
    code = "forbidden"


class BoardBusy(LoopxError):
    """Another process holds the board so that it cannot even be read (SQLite's
    exclusive locking mode): said at once, naming it (``store/holder``)."""

    exit_code = CONFLICT
    code = "board_busy"


class Altered(LoopxError):
    """The board is not the one this machine saw: its log went backwards, or
    another board stands where a pinned one was (SECURITY.md "Witnesses")."""

    exit_code = ALTERED
    code = "altered"


class BoardError(LoopxError):
    """The board cannot be opened or is from a newer LoopX."""

    exit_code = NOT_FOUND
    code = "no_board"


class StorageError(LoopxError):
    """The board's storage refuses: its disk is full, its file or file system is
    read-only, or the file is damaged (store/failures.py). Reads keep working
    where the storage lets them."""

    exit_code = STORAGE
    code = "storage"
