"""Handoff + accept (a packet with a digest) and done (evidence, no pending
gate, a verify command that must pass and whose output is kept)."""

from __future__ import annotations

import hashlib
import json
import os
import threading

import pytest

from tests.polling import until

from .conftest import card, held, kinds, refused, worked


def canonical_digest(packet: dict) -> str:
    text = json.dumps(packet, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@pytest.fixture
def handed(team):
    team.ok("card", "add", "one", "--needs", "git:push")
    held(team, "LX-1", "a1")
    (team.root / "notes.md").write_text("notes")
    worked(
        team,
        "LX-1",
        "a1",
        "first half",
        "--artifact",
        "notes.md",
        "--todo-add",
        "a",
        "--todo-add",
        "b",
        "--next",
        "do b",
    )
    worked(team, "LX-1", "a1", "did a", "--todo-done", "1")
    out = team.ok(
        "handoff", "LX-1", "--to", "a2", "--summary", "a is done, b is left", "--pending", "b, carefully", agent="a1"
    )
    return team, out


def test_handoff_builds_an_immutable_packet_with_a_digest(handed):
    team, out = handed
    h, c = out["handoff"], out["card"]
    assert h["id"] == "H-1" and h["card"] == "LX-1" and h["from"] == "a1" and h["to"] == "a2"
    p = h["packet"]
    assert p["summary"] == "a is done, b is left" and p["done"] == ["a"] and p["pending"] == ["b, carefully"]
    assert p["needs"] == ["git:push"] and p["next"] == "do b" and p["open_gates"] == []
    assert [a["path"] for a in p["last_artifacts"]] == ["notes.md"] and p["last_artifacts"][0]["sha256"]
    assert set(p) >= {
        "card",
        "from",
        "to",
        "summary",
        "done",
        "pending",
        "needs",
        "open_gates",
        "last_artifacts",
        "next",
        "created_at",
    }
    assert h["digest"] == canonical_digest(p)
    assert c["status"] == "handoff" and c["handoff_to"] == "a2" and c["owner"] == "a2" and c["lease"] is None
    # The giver is fenced off at once.
    refused(team, 5, "writeback", "LX-1", "--summary", "one more thing", agent="a1")


def test_accept_by_the_receiver_with_the_digest(handed):
    team, out = handed
    digest = out["handoff"]["digest"]
    res = team.ok("accept", "LX-1", "--digest", digest, agent="a2")
    assert res["handoff"]["accepted_digest"] == digest and res["handoff"]["accepted_at"]
    c = res["card"]
    assert (
        c["status"] == "active" and c["lease"]["holder"] == "a2" and c["lease"]["token"] == 2 and c["assignee"] == "a2"
    )
    assert kinds(team, "LX-1")[-1] == "handoff_accepted"
    assert worked(team, "LX-1", "a2", "did b", "--todo-done", "2")["card"]["todos"][1]["done"] is True


def test_accept_refusals(handed):
    team, out = handed
    team.ok("agent", "add", "a3")
    err = refused(team, 10, "accept", "LX-1", agent="a3")
    assert "a2" in err["message"]
    err = refused(team, 5, "accept", "LX-1", "--digest", "0" * 64, agent="a2")
    assert out["handoff"]["digest"] in err["hint"]
    team.ok("accept", "LX-1", agent="a2")
    refused(team, 5, "accept", "LX-1", agent="a2")  # nothing waiting any more


def test_handoff_refusals(team):
    team.ok("card", "add", "one")
    refused(team, 5, "handoff", "LX-1", "--to", "a2", "--summary", "s", agent="a1")  # not held
    held(team, "LX-1", "a1")
    refused(team, 5, "handoff", "LX-1", "--to", "a1", "--summary", "s", agent="a2")  # not the holder
    refused(team, 3, "handoff", "LX-1", "--to", "a1", "--summary", "s", agent="a1")  # to yourself
    err = refused(team, 4, "handoff", "LX-1", "--to", "ghost", "--summary", "s", agent="a1")
    assert "loopx agent add ghost" in err["hint"]
    refused(team, 3, "handoff", "LX-1", "--to", "a2", "--summary", " ", agent="a1")
    refused(team, 2, "handoff", "LX-1", "--to", "a2", agent="a1")


def test_a_handoff_carries_the_open_gates_and_accept_keeps_waiting(team):
    team.ok("card", "add", "one")
    held(team, "LX-1", "a2")
    team.cli("gate", "ask", "LX-1", "--question", "which region?", agent="a2")
    h = team.ok("handoff", "LX-1", "--to", "a1", "--summary", "waiting on a human", agent="a2")["handoff"]
    assert h["packet"]["open_gates"] == [{"id": "G-1", "question": "which region?", "scope": None}]
    c = team.ok("accept", "LX-1", agent="a1")["card"]
    assert c["status"] == "waiting" and c["lease"]["holder"] == "a1"
    assert team.cli("next", agent="a1").data["action"] == "wait"


# -- done -------------------------------------------------------------------


def test_done_needs_evidence_first(team):
    team.ok("card", "add", "one")
    held(team, "LX-1", "a1")
    err = refused(team, 5, "done", "LX-1", "--summary", "finished", agent="a1")
    assert err["code"] == "no_evidence" and "loopx writeback LX-1" in err["hint"]


def test_done_finishes_the_card(team):
    team.ok("card", "add", "one")
    held(team, "LX-1", "a1")
    worked(team, "LX-1", "a1")
    res = team.ok("done", "LX-1", "--summary", "all finished", agent="a1")
    c, ev = res["card"], res["evidence"]
    assert c["status"] == "done" and c["lease"] is None and c["done_at"] == "2027-01-15T08:00:00Z"
    assert ev["summary"] == "all finished" and ev["source"] == "cli"
    assert c["evidence_count"] == 2
    assert kinds(team, "LX-1")[-1] == "done"
    refused(team, 5, "done", "LX-1", "--summary", "again", agent="a1")
    refused(team, 5, "writeback", "LX-1", "--summary", "after done", agent="a1")


def test_done_with_a_pending_gate_is_refused(team):
    team.ok("card", "add", "one")
    held(team, "LX-1", "a1")
    worked(team, "LX-1", "a1")
    team.cli("gate", "ask", "LX-1", "--question", "ship it?", agent="a1")
    err = refused(team, 5, "done", "LX-1", "--summary", "shipped", agent="a1")
    assert err["code"] == "gate_pending" and "G-1" in err["message"]


def test_done_by_someone_else_is_refused(team):
    team.ok("card", "add", "one")
    held(team, "LX-1", "a1")
    worked(team, "LX-1", "a1")
    refused(team, 5, "done", "LX-1", "--summary", "mine", agent="a2")
    refused(team, 5, "done", "LX-1", "--summary", "mine", "--lease-token", "3", agent="a1")


def test_a_passing_verify_is_kept_as_evidence(team):
    team.ok("card", "add", "one", "--verify", "echo checking $LOOPX_CARD for $LOOPX_AGENT; test -f built.txt")
    held(team, "LX-1", "a1")
    worked(team, "LX-1", "a1")
    (team.root / "built.txt").write_text("ok")  # the verify runs in the project folder
    res = team.ok("done", "LX-1", "--summary", "built", agent="a1")
    assert res["card"]["status"] == "done"
    ev = res["evidence"]
    assert ev["source"] == "verify"
    v = ev["extra"]["verify"]
    assert v["passed"] is True and v["exit_code"] == 0 and v["timed_out"] is False
    assert "checking LX-1 for a1" in v["output"]


def test_a_failing_verify_keeps_the_card_active_and_its_output(team):
    team.ok("card", "add", "one", "--verify", "echo 3 tests failed; exit 3")
    held(team, "LX-1", "a1")
    worked(team, "LX-1", "a1")
    res = team.cli("done", "LX-1", "--summary", "I think it works", agent="a1")
    assert res.code == 5
    err = res.data["error"]
    assert err["code"] == "verify_failed" and "exited 3" in err["message"] and "3 tests failed" in err["hint"]
    assert err["card"]["status"] == "active"
    v = err["evidence"]["extra"]["verify"]
    assert v["passed"] is False and v["exit_code"] == 3 and "3 tests failed" in v["output"]
    c = card(team, "LX-1")
    assert c["status"] == "active" and c["lease"]["holder"] == "a1" and c["evidence_count"] == 2
    log = team.ok("log", "LX-1")["evidence"]
    assert log[-1]["source"] == "verify" and log[-1]["extra"]["verify"]["exit_code"] == 3
    assert kinds(team, "LX-1")[-1] == "verify_failed"


def test_a_verify_that_runs_too_long_times_out(team):
    # It starts a grandchild that never ends by itself and outlives the shell
    # unless the whole group is killed: `done` returns only if the timeout killed it.
    team.ok("card", "add", "one", "--verify", "sleep 100000 & echo $! > sleeper.pid; wait")
    held(team, "LX-1", "a1")
    worked(team, "LX-1", "a1")
    answer = []
    call = threading.Thread(
        target=lambda: answer.append(
            team.cli("done", "LX-1", "--summary", "done?", "--verify-timeout", "0.5s", agent="a1")
        ),
        daemon=True,
    )
    call.start()
    try:
        until(lambda: answer, what="`done` to return once its verify timed out (did it wait for the verify's child?)")
    finally:
        if not answer and (team.root / "sleeper.pid").exists():
            os.kill(int((team.root / "sleeper.pid").read_text()), 9)  # let the stuck call end
    res = answer[0]
    assert res.code == 5 and "timed out" in res.data["error"]["message"]
    v = res.data["error"]["evidence"]["extra"]["verify"]
    assert v["timed_out"] is True and v["passed"] is False
    assert card(team, "LX-1")["status"] == "active"
    pid = int((team.root / "sleeper.pid").read_text())
    until(lambda: _gone(pid), what="the verify command's child to be gone (it outlived its timeout?)")


def _gone(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return True
    return state in ("Z", "X")


def test_verify_timeout_must_be_a_duration(team):
    team.ok("card", "add", "one", "--verify", "true")
    held(team, "LX-1", "a1")
    worked(team, "LX-1", "a1")
    refused(team, 3, "done", "LX-1", "--summary", "s", "--verify-timeout", "soon", agent="a1")
