"""Attacks run the way an agent's runtime runs the hook: a cold `loopx hook
RUNTIME EVENT` process with the runtime's own JSON on stdin, and the board
checked afterwards. SQLite boards (the hook's checks do not depend on the
backend; the PostgreSQL-only case builds its own board)."""

from __future__ import annotations

import pytest

from tests.adapters.conftest import hooks, working  # noqa: F401 - fixtures shared with the adapter tests


@pytest.fixture(params=["sqlite"])
def backend(request) -> str:
    return request.param
