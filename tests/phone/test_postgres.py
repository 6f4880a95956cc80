"""The phone on a team board (PostgreSQL): pairing, an option chosen on the
page, the device's signature verified, the device revoked."""

from __future__ import annotations

import pytest

from tests.conftest import person_ok

from .conftest import pair, serving, tap
from .test_attacks import ask, status


@pytest.fixture
def backend() -> str:
    return "postgresql"  # (skipped, saying why, without a server: tests/conftest.py)


def test_a_phone_answers_on_a_postgresql_board(team, page):
    device = pair(team, page)
    ask(team, "which one?", "--option", "left", "--option", "right")
    with serving(team) as server:
        page.goto(server.url)
        assert tap(page, 'button.opt[data-gate="G-1"][data-choice="1"]') == "G-1 approved ✓"
    gate = team.cli("gate", "status", "G-1", agent="a1").data["gate"]
    assert gate["status"] == "approved" and gate["choice"] == "left" and "answered on phone" in gate["note"]
    assert team.ok("verify")["verify"]["ok"]
    person_ok(team, "phone", "revoke", device["device"])
    ask(team, "and now?")
    with serving(team) as server:
        page.goto(server.url)
        assert "no device is paired" in tap(page, 'button.yes[data-gate="G-2"]')
    assert status(team, "G-2") == "pending"
