"""Human gates: ask (pending, reused, approved at once), status, list, answer,
grants, deadlines that fail closed, and who may answer."""

from __future__ import annotations

from ..conftest import NO_KEY
from .conftest import card, events, held, kinds, refused, worked

GATE_KEYS = {"id", "card", "agent", "question", "scope", "options", "status", "answer", "answered_by"}


def ask(board, agent, *extra, key="LX-1", question="may I push?"):
    return board.cli("gate", "ask", key, "--question", question, *extra, agent=agent)


def test_gate_ask_is_pending_with_exit_6(team):
    team.ok("card", "add", "one")
    held(team, "LX-1", "a2")
    res = ask(team, "a2", "--scope", "git:push", "--option", "yes", "--option", "no")
    assert res.code == 6
    g = res.data["gate"]
    assert GATE_KEYS <= set(g)
    assert g == {
        **g,
        "id": "G-1",
        "card": "LX-1",
        "agent": "a2",
        "question": "may I push?",
        "scope": "git:push",
        "options": ["yes", "no"],
        "status": "pending",
        "answer": None,
        "answered_by": None,
    }
    c = res.data["card"]
    assert c["status"] == "waiting" and c["pending_gate"] == "G-1"
    assert c["lease"]["holder"] == "a2" and c["lease"]["expires_at"] is None
    assert kinds(team, "LX-1")[-1] == "gate_asked"


def test_asking_again_reuses_the_pending_gate(team):
    team.ok("card", "add", "one")
    held(team, "LX-1", "a2")
    first = ask(team, "a2", "--scope", "git:push")
    n = len(kinds(team))
    again = ask(team, "a2", "--scope", "git:push", question="may I push now?")  # a retry, reworded
    assert again.code == 6 and again.data["gate"]["id"] == first.data["gate"]["id"]
    plain = ask(team, "a2", question="which branch?")
    assert plain.data["gate"]["id"] == "G-2"
    assert ask(team, "a2", question="which branch?").data["gate"]["id"] == "G-2"
    assert len(kinds(team)) == n + 1  # only G-2 was new
    assert [g["id"] for g in team.ok("gate", "list", "--pending")["gates"]] == ["G-1", "G-2"]


def test_a_capability_approves_at_once(team):
    team.ok("card", "add", "one")
    held(team, "LX-1", "a1")
    res = ask(team, "a1", "--scope", "git:push")
    assert res.code == 0
    assert res.data["gate"]["status"] == "approved" and res.data["gate"]["answered_by"] == "capability:a1"
    assert res.data["card"]["status"] == "active"
    assert team.ok("gate", "list", "--pending")["gates"] == []


def test_gate_ask_refusals(team):
    team.ok("card", "add", "one")
    refused(team, 5, "gate", "ask", "LX-1", "--question", "q", agent="a1")  # not held
    held(team, "LX-1", "a1")
    refused(team, 5, "gate", "ask", "LX-1", "--question", "q", agent="a2")
    refused(team, 3, "gate", "ask", "LX-1", "--question", "  ", agent="a1")
    refused(team, 3, "gate", "ask", "LX-1", "--question", "q", "--scope", "Git Push", agent="a1")
    refused(team, 3, "gate", "ask", "LX-1", "--question", "q", "--deadline=0s", agent="a1")
    refused(team, 2, "gate", "ask", "LX-1", agent="a1")
    refused(team, 4, "gate", "ask", "LX-2", "--question", "q", agent="a1")


def test_gate_status_and_list(team):
    team.ok("card", "add", "one")
    team.ok("card", "add", "two")
    held(team, "LX-1", "a2")
    held(team, "LX-2", "a1")
    ask(team, "a2")
    ask(team, "a1", "--scope", "git:push", key="LX-2")  # approved by capability
    st = team.cli("gate", "status", "G-1")
    assert st.code == 6 and st.data["gate"]["status"] == "pending"
    assert team.cli("gate", "status", "G-2").code == 0
    assert [g["id"] for g in team.ok("gate", "list")["gates"]] == ["G-1", "G-2"]
    assert [g["id"] for g in team.ok("gate", "list", "--pending")["gates"]] == ["G-1"]
    assert [g["id"] for g in team.ok("gate", "list", "--card", "LX-2")["gates"]] == ["G-2"]
    err = refused(team, 4, "gate", "status", "G-9")
    assert "gate list" in err["hint"]
    refused(team, 3, "gate", "status", "LX-1")


def test_approve_puts_the_card_back_to_work(team, clock):
    team.ok("card", "add", "one")
    held(team, "LX-1", "a2", "--lease", "10m")
    ask(team, "a2", "--scope", "git:push")
    clock.advance(3600)  # a human took an hour: the lease did not run out meanwhile
    res = team.cli("gate", "answer", "G-1", "approve", "--note", "go ahead", tty=True)
    assert res.code == 0
    g, c = res.data["gate"], res.data["card"]
    assert (
        g["status"] == "approved"
        and g["answer"] == "approved"
        and g["answered_by"] == "human:tester"
        and g["note"] == "go ahead"
    )
    assert c["status"] == "active" and c["lease"]["holder"] == "a2"
    assert c["lease"]["expires_at"] == "2027-01-15T09:10:00Z"  # renewed from the answer
    assert team.cli("gate", "status", "G-1").code == 0
    assert team.ok("next", agent="a2")["action"] == "work"
    # The approval covers its scope for the rest of this lease.
    again = ask(team, "a2", "--scope", "git:push")
    assert again.code == 0 and again.data["gate"]["answered_by"] == "gate:G-1"


def test_reject_blocks_the_card(team):
    team.ok("card", "add", "one")
    held(team, "LX-1", "a2")
    ask(team, "a2", "--scope", "deploy:prod")
    res = team.cli("gate", "answer", "G-1", "reject", "--note", "not on a Friday", tty=True)
    assert res.code == 0
    assert res.data["gate"]["status"] == "rejected"
    c = res.data["card"]
    assert c["status"] == "blocked" and "not on a Friday" in c["blocked_reason"] and c["lease"] is None
    st = team.cli("gate", "status", "G-1")
    assert st.code == 7 and st.data["gate"]["note"] == "not on a Friday"
    refused(team, 5, "writeback", "LX-1", "--summary", "pushed anyway", agent="a2")
    assert team.cli("next", agent="a2").code == 9


def test_remember_card_creates_a_grant_for_that_card_only(team):
    team.ok("card", "add", "one")
    team.ok("card", "add", "two")
    held(team, "LX-1", "a2")
    ask(team, "a2", "--scope", "deploy:prod")
    team.ok("gate", "answer", "G-1", "approve", "--remember", "card", tty=True)
    assert "grant_created" in kinds(team, "LX-1")
    team.ok("release", "LX-1", agent="a2")
    held(team, "LX-1", "a2")  # a new lease: only the grant can approve now
    res = ask(team, "a2", "--scope", "deploy:prod")
    assert res.code == 0 and res.data["gate"]["answered_by"].startswith("grant:")
    held(team, "LX-2", "a2")
    assert ask(team, "a2", "--scope", "deploy:prod", key="LX-2").code == 6  # another card: ask a human


def test_remember_agent_and_board_grants(team):
    team.ok("agent", "add", "a3")
    for title in ("one", "two", "three"):
        team.ok("card", "add", title)
    held(team, "LX-1", "a2")
    ask(team, "a2", "--scope", "deploy:staging")
    team.ok("gate", "answer", "G-1", "approve", "--remember", "agent", tty=True)
    held(team, "LX-2", "a2")
    assert ask(team, "a2", "--scope", "deploy:staging", key="LX-2").code == 0  # same agent, any card
    held(team, "LX-3", "a3")
    assert ask(team, "a3", "--scope", "deploy:staging", key="LX-3").code == 6  # another agent
    team.ok("gate", "answer", "G-3", "approve", "--remember", "board", "--for", "1h", tty=True)
    team.ok("release", "LX-3", agent="a3")
    held(team, "LX-3", "a3")
    assert ask(team, "a3", "--scope", "deploy:staging", key="LX-3").code == 0


def test_a_remembered_grant_expires(team, clock):
    team.ok("card", "add", "one")
    held(team, "LX-1", "a2")
    ask(team, "a2", "--scope", "deploy:prod")
    team.ok("gate", "answer", "G-1", "approve", "--remember", "board", "--for", "1h", tty=True)
    team.ok("release", "LX-1", agent="a2")
    clock.advance(3601)
    held(team, "LX-1", "a2")
    assert ask(team, "a2", "--scope", "deploy:prod").code == 6


def test_a_grant_also_covers_permission_gates_at_claim(team):
    team.ok("card", "add", "one", "--needs", "deploy:prod")
    team.ok("card", "add", "two", "--needs", "deploy:prod")
    assert team.cli("claim", "LX-1", agent="a2").code == 6
    team.ok("gate", "answer", "G-1", "approve", "--remember", "agent", tty=True)
    res = team.cli("claim", "LX-2", agent="a2")
    assert res.code == 0 and res.data["action"] == "work"


def test_only_a_person_with_their_key_answers(team):
    team.ok("card", "add", "one")
    held(team, "LX-1", "a2")
    ask(team, "a2", "--scope", "git:push")
    err = refused(team, 10, "gate", "answer", "G-1", "approve", agent="a2", tty=True)
    assert "agent" in err["message"]
    refused(team, 10, "gate", "answer", "G-1", "approve", agent="a1", tty=True)  # even another agent
    err = refused(team, 10, "gate", "answer", "G-1", "approve", tty=True, env=NO_KEY)  # a terminal proves nothing
    assert "key" in err["message"]
    refused(
        team, 10, "gate", "answer", "G-1", "approve", tty=True, env={**NO_KEY, "LOOPX_HUMAN": "tester"}
    )  # nor a name
    refused(team, 2, "gate", "answer", "G-1", "approve", "--agent", "a1", tty=True)  # no such flag: no way in


def test_answer_refusals(team):
    team.ok("card", "add", "one")
    held(team, "LX-1", "a2")
    ask(team, "a2")  # no scope
    refused(team, 3, "gate", "answer", "G-1", "approve", "--remember", "card", tty=True)  # nothing to remember
    refused(team, 4, "gate", "answer", "G-7", "approve", tty=True)
    refused(team, 2, "gate", "answer", "G-1", "maybe", tty=True)
    refused(team, 3, "gate", "answer", "G-1", "approve", "--remember", "board", "--for", "ever", tty=True)
    team.ok("gate", "answer", "G-1", "reject", tty=True)
    err = refused(team, 5, "gate", "answer", "G-1", "approve", tty=True)
    assert err["code"] == "already_answered" and "human:tester" in err["message"]
    assert err["gate"]["status"] == "rejected"


def test_a_deadline_that_passes_fails_closed(team, clock):
    team.ok("card", "add", "one")
    held(team, "LX-1", "a2")
    res = ask(team, "a2", "--scope", "deploy:prod", "--deadline", "15m")
    assert res.code == 6 and res.data["gate"]["deadline"] == "2027-01-15T08:15:00Z"
    clock.advance(14 * 60)
    assert team.cli("gate", "status", "G-1").code == 6
    clock.advance(61)
    st = team.cli("gate", "status", "G-1")
    assert st.code == 7
    assert st.data["gate"]["status"] == "expired" and st.data["gate"]["answer"] == "rejected"
    assert st.data["gate"]["answered_by"] == "system:deadline"
    c = card(team, "LX-1")
    assert c["status"] == "blocked" and "expired" in c["blocked_reason"] and c["lease"] is None
    assert "gate_expired" in kinds(team, "LX-1")
    refused(team, 5, "gate", "answer", "G-1", "approve", tty=True)  # too late
    refused(team, 5, "writeback", "LX-1", "--summary", "x", agent="a2")


def test_an_expired_deadline_is_seen_by_next_too(team, clock):
    team.ok("card", "add", "one")
    held(team, "LX-1", "a2")
    ask(team, "a2", "--deadline", "1m")
    clock.advance(120)
    res = team.cli("next", agent="a2")
    assert res.code == 9  # the card is blocked and no longer the agent's
    assert card(team, "LX-1")["status"] == "blocked"


def test_gate_ask_wait_returns_when_answered_or_times_out(team):
    team.ok("card", "add", "one")
    held(team, "LX-1", "a2")
    res = ask(team, "a2", "--wait", "0.3s")
    assert res.code == 6 and res.data["gate"]["status"] == "pending"
    worked(team, "LX-1", "a2")  # a writeback while waiting is allowed
    team.ok("gate", "answer", "G-1", "approve", tty=True)
    assert team.cli("gate", "status", "G-1").code == 0


def test_the_plain_sqlite_gate_status_answers_exactly_what_the_kernel_answers(team, monkeypatch):
    """`gate status` on a SQLite board reads with sqlite3 alone (plainread.py):
    pending, approved by a capability, by a person's signed answer, rejected,
    and an approval written into the database (it reads as pending, forged)."""
    if team.backend != "sqlite":
        return  # PostgreSQL boards always take the kernel's path
    from loopx_core.ops import gates
    from loopx_core.store import plainread
    from tests import board_sql

    from ..conftest import person

    for i in range(4):
        team.ok("card", "add", f"card {i}")
    held(team, "LX-1", "a1")
    team.ok("gate", "ask", "LX-1", "--question", "push?", "--scope", "git:push", agent="a1")  # G-1 approved: capability
    held(team, "LX-2", "a2")
    assert (
        team.cli(
            "gate", "ask", "LX-2", "--question", "push?", "--scope", "git:push", "--option", "yes", agent="a2"
        ).code
        == 6
    )  # G-2
    person(team, "gate", "answer", "G-2", "approve", "--note", "fine")  # G-2 approved: signed
    team.ok("agent", "add", "a3")
    held(team, "LX-3", "a3")
    assert (
        team.cli("gate", "ask", "LX-3", "--question", "deploy?", "--scope", "deploy:prod", agent="a3").code == 6
    )  # G-3
    person(team, "gate", "answer", "G-3", "reject", "--note", "no")  # G-3 rejected
    team.ok("agent", "add", "a4")
    held(team, "LX-4", "a4")
    assert team.cli("gate", "ask", "LX-4", "--question", "wait?", agent="a4").code == 6  # G-4 pending
    assert (
        team.cli("gate", "ask", "LX-4", "--question", "and this?", "--scope", "deploy:prod", agent="a4").code == 6
    )  # G-5 pending
    with board_sql.connect(team.db) as con:  # the attack: an approval written into the database
        con.execute(
            "UPDATE gate SET status = 'approved', answer = 'approved', answered_by = 'human:tester' WHERE id = 5"
        )
    monkeypatch.delenv(
        "LOOPX_NOW"
    )  # the reader leaves a frozen clock to the kernel; the board's times are ahead of the real one
    store = team.store()
    try:
        for gid in range(1, 6):
            plain = plainread.gate_status(team.db, gid)
            assert plain is not None and plain == gates.status(store, gid).to_json(), gid
            res = team.cli("gate", "status", f"G-{gid}")  # the CLI, on the plain path now
            assert res.data["gate"] == plain and res.code == {"approved": 0, "pending": 6}.get(plain["status"], 7), gid
    finally:
        store.close()
    assert (
        plainread.gate_status(team.db, 5)["status"] == "pending"
        and "no valid signed decision" in plainread.gate_status(team.db, 5)["forged"]
    )
    assert [plainread.gate_status(team.db, g)["status"] for g in (1, 2, 3, 4)] == [
        "approved",
        "approved",
        "rejected",
        "pending",
    ]
    assert plainread.gate_status(team.db, 99) is None and team.cli("gate", "status", "G-99").code == 4


def test_a_stopping_runner_withdraws_its_runtimes_questions_and_gives_the_card_back(team):
    """#39: a stop leaves no runtime question pending. The question Claude Code
    asked (a gate of kind runtime) is withdrawn with an event, the lease
    released, the card ready; a card waiting on the agent's own question keeps
    its holder and its gate (a person's answer is still awaited)."""
    from loopx_core.adapters import runtime_questions
    from loopx_core.ops import release

    team.ok("card", "add", "one")
    team.ok("card", "add", "two")
    held(team, "LX-1", "a1")
    store = team.store()
    try:
        said = runtime_questions.decide(store, "a1", "claude-code", "Bash", {"command": "rm -rf build"}, wait=0)
        assert said is not None and said["behavior"] == "deny"  # no answer yet: the gate stays
        asked = team.ok("gate", "list", "--pending")["gates"]
        assert [(g["id"], g["card"]) for g in asked] == [("G-1", "LX-1")] and card(team, "LX-1")["status"] == "waiting"
        held(team, "LX-2", "a2")
        assert ask(team, "a2", key="LX-2", question="which branch?").code == 6  # the agent's own question
        assert release.release_on_stop(store, 1, "a1", "the runner stopped (stopped by human:tester)") is not None
        assert release.release_on_stop(store, 2, "a2", "the runner stopped") is None
    finally:
        store.close()
    gate = team.cli("gate", "status", "G-1").data["gate"]  # (exit 7: withdrawn)
    assert gate["status"] == "withdrawn" and gate["answered_by"] == "system"
    one = card(team, "LX-1")
    assert one["status"] == "ready" and one["lease"] is None and one["pending_gate"] is None
    assert kinds(team, "LX-1")[-2:] == ["gate_withdrawn", "released"]
    withdrawn = [e for e in events(team, "LX-1") if e["kind"] == "gate_withdrawn"][-1]
    assert withdrawn["data"]["reason"] == "the runner stopped (stopped by human:tester)"
    assert card(team, "LX-2")["status"] == "waiting" and team.cli("gate", "status", "G-2").code == 6  # (pending)
    assert team.ok("verify")["verify"]["ok"]
