"""Writeback: evidence with hashed artifacts, quota, todos, continuation,
no-progress pauses, and --input documents from a file or stdin."""

from __future__ import annotations

import hashlib
import json

import pytest

from .conftest import events, held, kinds, refused, worked


@pytest.fixture
def turn(team):
    team.ok("card", "add", "one")
    held(team, "LX-1", "a1")
    return team


def test_writeback_records_evidence_with_hashed_artifacts(turn):
    report = turn.root / "out" / "report.md"
    report.parent.mkdir()
    report.write_bytes(b"# findings\n" * 100)
    res = turn.ok(
        "writeback",
        "LX-1",
        "--summary",
        "wrote the report",
        "--artifact",
        "out/report.md",
        "--artifact",
        str(report),
        "--artifact",
        "out/missing.txt",
        "--next",
        "review it",
        "--tokens",
        "1200",
        "--usd",
        "0.05",
        agent="a1",
    )
    ev = res["evidence"]
    assert ev["id"] == "E-1" and ev["card"] == "LX-1" and ev["agent"] == "a1" and ev["source"] == "cli"
    assert ev["summary"] == "wrote the report" and ev["next"] == "review it"
    digest = hashlib.sha256(report.read_bytes()).hexdigest()
    # The same file by relative and absolute path is one artifact, kept project-relative.
    assert ev["artifacts"] == [
        {"path": "out/report.md", "size": 1100, "sha256": digest},
        {"path": "out/missing.txt", "size": None, "sha256": None, "missing": True},
    ]
    assert ev["usage"] == {"tokens_in": 0, "tokens_out": 0, "tokens": 1200, "usd": 0.05}
    c = res["card"]
    assert c["next"] == "review it" and c["evidence_count"] == 1
    assert c["quota"] == {
        "turns": {"used": 1, "limit": None},
        "tokens": {"used": 1200, "limit": None},
        "usd": {"used": 0.05, "limit": None},
    }
    e = events(turn, "LX-1")[-1]
    assert e["kind"] == "evidence_added" and e["data"]["artifacts"] == 2 and e["data"]["progress"] is True


def test_a_missing_artifact_is_a_warning_the_agent_sees(turn):
    """`writeback --artifact README.md` where there is none: recorded (exit 0),
    and the agent is told on stderr and, with --json, in a "warnings" field."""
    assert not (turn.root / "README.md").exists()
    res = turn.cli("writeback", "LX-1", "--summary", "documented it", "--artifact", "README.md", agent="a1")
    assert res.code == 0, res
    assert res.data["evidence"]["artifacts"] == [{"path": "README.md", "size": None, "sha256": None, "missing": True}]
    assert len(res.data["warnings"]) == 1 and "README.md" in res.data["warnings"][0]
    assert res.err.startswith("loopx: warning: ") and "README.md" in res.err
    text = turn.cli(
        "writeback", "LX-1", "--summary", "again", "--artifact", "docs/README.md", agent="a1", json_out=False
    )
    assert text.code == 0 and "loopx: warning: " in text.err and "docs/README.md" in text.err
    (turn.root / "README.md").write_text("# here\n")
    found = turn.cli("writeback", "LX-1", "--summary", "now it exists", "--artifact", "README.md", agent="a1")
    assert found.code == 0 and found.data["warnings"] == [] and found.err == ""


def test_an_artifact_outside_the_project_is_refused(turn, tmp_path):
    outside = tmp_path / "elsewhere.txt"
    outside.write_text("x")
    err = refused(turn, 3, "writeback", "LX-1", "--summary", "s", "--artifact", str(outside), agent="a1")
    assert "outside the project" in err["message"]
    refused(turn, 3, "writeback", "LX-1", "--summary", "s", "--artifact", "../../escape.txt", agent="a1")


def test_writeback_renews_the_lease_and_charges_usage(turn, clock):
    clock.advance(25 * 60)
    out = worked(turn, "LX-1", "a1", "step", "--tokens", "10", "--usd", "0.1", "--todo-add", "a")
    assert out["card"]["lease"]["expires_at"] == "2027-01-15T08:55:00Z"
    out = worked(turn, "LX-1", "a1", "step", "--tokens", "5", "--usd", "0.2", "--todo-add", "b")
    q = out["card"]["quota"]
    assert q["turns"]["used"] == 2 and q["tokens"]["used"] == 15 and q["usd"]["used"] == pytest.approx(0.3)


def test_todos_are_added_and_done(turn):
    out = worked(turn, "LX-1", "a1", "plan", "--todo-add", "parse", "--todo-add", "emit", "--todo-add", "test")
    assert out["card"]["todos"] == [
        {"id": 1, "text": "parse", "done": False},
        {"id": 2, "text": "emit", "done": False},
        {"id": 3, "text": "test", "done": False},
    ]
    out = worked(turn, "LX-1", "a1", "parsed", "--todo-done", "1", "--todo-done", "#3", "--todo-add", "docs")
    assert [(t["id"], t["done"]) for t in out["card"]["todos"]] == [(1, True), (2, False), (3, True), (4, False)]
    assert out["evidence"]["todos_done"] == [1, 3] and out["evidence"]["todos_added"] == ["docs"]


def test_an_unknown_todo_is_invalid_input(turn):
    worked(turn, "LX-1", "a1", "plan", "--todo-add", "only one")
    err = refused(turn, 3, "writeback", "LX-1", "--summary", "s", "--todo-done", "5", agent="a1")
    assert "no todo 5" in err["message"] and "1" in err["message"]
    refused(turn, 3, "writeback", "LX-1", "--summary", "s", "--todo-done", "first", agent="a1")


@pytest.mark.parametrize(
    "argv",
    [
        ["--summary", ""],
        ["--summary", "   "],
        ["--summary", "x" * 4001],
        ["--summary", "s", "--tokens", "-1"],
        ["--summary", "s", "--usd", "-0.5"],
        ["--summary", "s", "--usd", "inf"],
        ["--summary", "s", "--usd", "nan"],
        ["--summary", "s", "--turn-id", "has space"],
        ["--summary", "s", "--todo-add", "two\nlines"],
        ["--summary", "s\x00"],
    ],
)
def test_writeback_refuses_invalid_input(turn, argv):
    refused(turn, 3, "writeback", "LX-1", *argv, agent="a1")


def test_writeback_usage_errors(turn):
    err = refused(turn, 2, "writeback", "LX-1", agent="a1")
    assert "--summary" in err["message"]
    refused(turn, 2, "writeback", "LX-1", "--summary", "s", "--tokens", "many", agent="a1")


def test_writeback_by_someone_without_the_lease(turn):
    err = refused(turn, 5, "writeback", "LX-1", "--summary", "mine now", agent="a2")
    assert err["code"] == "not_holder" and err["card"]["lease"]["holder"] == "a1"
    refused(turn, 4, "writeback", "LX-9", "--summary", "s", agent="a1")


def test_a_budget_limit_pauses_the_card(team):
    team.ok("card", "add", "one", "--max-tokens", "1000")
    held(team, "LX-1", "a1")
    out = worked(team, "LX-1", "a1", "cheap", "--tokens", "400", "--todo-add", "x")
    assert out["card"]["status"] == "active"
    out = worked(team, "LX-1", "a1", "expensive", "--tokens", "700", "--todo-add", "y")
    assert out["card"]["status"] == "paused" and out["card"]["paused_reason"] == "budget"
    assert out["card"]["quota"]["tokens"] == {"used": 1100, "limit": 1000}
    assert kinds(team, "LX-1")[-1] == "paused"


def test_three_turns_without_progress_pause_the_card(turn):
    worked(turn, "LX-1", "a1", "plan", "--todo-add", "a")  # progress resets the count
    for i in range(2):
        assert worked(turn, "LX-1", "a1", f"hmm {i}")["card"]["status"] == "active"
    worked(turn, "LX-1", "a1", "progress", "--next", "a new next action")  # resets
    for i in range(2):
        assert worked(turn, "LX-1", "a1", f"hmm again {i}")["card"]["status"] == "active"
    out = worked(turn, "LX-1", "a1", "still nothing")
    assert out["card"]["status"] == "paused" and out["card"]["paused_reason"] == "no_progress"
    ev = events(turn, "LX-1")[-1]
    assert ev["kind"] == "paused" and ev["data"]["reason"] == "no_progress" and ev["data"]["stalls"] == 3
    # A person moves it back to ready: another agent may pick it up.
    assert turn.ok("card", "move", "LX-1", "--to", "ready")["card"]["status"] == "ready"


def test_asking_a_gate_counts_as_progress(turn):
    worked(turn, "LX-1", "a1", "hmm")
    worked(turn, "LX-1", "a1", "hmm")
    turn.cli("gate", "ask", "LX-1", "--question", "which way?", agent="a1")
    turn.ok("gate", "answer", "G-1", "approve", tty=True)
    out = worked(turn, "LX-1", "a1", "asked")
    assert out["card"]["status"] == "active" and out["evidence"]["id"] == "E-3"


def test_writeback_release_gives_the_card_back(turn):
    out = worked(turn, "LX-1", "a1", "handing back", "--release")
    assert out["card"]["status"] == "ready" and out["card"]["lease"] is None
    assert kinds(turn, "LX-1")[-2:] == ["evidence_added", "released"]


def test_input_document_from_a_file(turn):
    (turn.root / "art.txt").write_text("hello")
    doc = {
        "card": "LX-1",
        "agent": "a1",
        "summary": "from a file",
        "artifacts": ["art.txt"],
        "next": "n",
        "todos_added": ["t"],
        "tokens_in": 100,
        "tokens_out": 50,
        "usd": 0.01,
        "turn_id": "turn-1",
    }
    path = turn.root / "ev.json"
    path.write_text(json.dumps(doc))
    ev = turn.ok("writeback", "LX-1", "--input", str(path), agent="a1")["evidence"]
    assert ev["summary"] == "from a file" and ev["turn_id"] == "turn-1" and ev["artifacts"][0]["size"] == 5
    assert ev["usage"] == {"tokens_in": 100, "tokens_out": 50, "tokens": 150, "usd": 0.01}


def test_input_document_from_stdin(turn):
    doc = {"summary": "from stdin", "todos_added": ["a", "b"]}
    out = turn.ok("writeback", "LX-1", "--input", "-", "--release", agent="a1", stdin=json.dumps(doc))
    assert out["evidence"]["summary"] == "from stdin" and len(out["card"]["todos"]) == 2
    assert out["card"]["status"] == "ready"


@pytest.mark.parametrize(
    "text,why",
    [
        ("{not json", "not valid JSON"),
        ("[1, 2]", "JSON object"),
        ('{"summary": "x", "colour": "red"}', "colour"),
        ('{"summary": "x", "card": "LX-2"}', "LX-2"),
        ('{"summary": "x", "agent": "a2"}', "a2"),
        ('{"summary": 5}', "summary"),
        ('{"summary": "x", "usd": NaN}', "usd"),
        ('{"summary": "x", "tokens": 1.5}', "tokens"),
        ("", "not valid JSON"),
    ],
)
def test_bad_input_documents_are_invalid(turn, text, why):
    err = refused(turn, 3, "writeback", "LX-1", "--input", "-", agent="a1", stdin=text)
    assert why in err["message"], err


def test_an_unreadable_input_file_is_invalid(turn):
    err = refused(turn, 3, "writeback", "LX-1", "--input", "no/such.json", agent="a1")
    assert "no/such.json" in err["message"]
    (turn.root / "bin.json").write_bytes(b"\xff\xfe{")
    refused(turn, 3, "writeback", "LX-1", "--input", "bin.json", agent="a1")
