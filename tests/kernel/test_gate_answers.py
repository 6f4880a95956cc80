"""Answers beyond yes and no (#29): a person chooses one of a gate's options or
answers in words; the choice is part of the signed decision, reaches the agent
in `gate status`, `context` and the next turn's packet, and an agent can never
choose — not by the verb, not by editing the row."""

from __future__ import annotations

from ..security.conftest import sql
from .conftest import held, refused


def asked_with_options(board, *options, agent="a2"):
    board.ok("card", "add", "pick a database")
    held(board, "LX-1", agent)
    argv = ["gate", "ask", "LX-1", "--question", "which database?"]
    for option in options:
        argv += ["--option", option]
    res = board.cli(*argv, agent=agent)
    assert res.code == 6, res
    return res.data["gate"]


def test_choose_an_option_by_its_text_and_the_agent_reads_it(team):
    asked_with_options(team, "sqlite", "postgres")
    res = team.cli("gate", "answer", "G-1", "--choose", "postgres", tty=True)
    assert res.code == 0, res
    g = res.data["gate"]
    assert (g["status"], g["answer"], g["choice"], g["text"]) == ("approved", "postgres", "postgres", None)
    assert res.data["card"]["status"] == "active"
    status = team.cli("gate", "status", "G-1", agent="a2")
    assert status.code == 0 and status.data["gate"]["choice"] == "postgres"
    ctx = team.cli("context", "LX-1", agent="a2", json_out=False)
    assert "the person chose: **postgres**" in ctx.out
    assert team.cli("verify").code == 0  # the row and the replayed log agree, the signature holds


def test_choose_by_number_and_answer_in_words(team):
    asked_with_options(team, "sqlite", "postgres")
    assert team.cli("gate", "answer", "G-1", "--choose", "1", tty=True).data["gate"]["choice"] == "sqlite"
    team.ok("card", "add", "name it")
    held(team, "LX-2", "a1")
    assert team.cli("gate", "ask", "LX-2", "--question", "what should the service be called?", agent="a1").code == 6
    res = team.cli("gate", "answer", "G-2", "--text", "ledger-api, lowercase", "--note", "short names", tty=True)
    g = res.data["gate"]
    assert (g["status"], g["answer"], g["choice"], g["text"], g["note"]) == (
        "approved",
        "ledger-api, lowercase",
        None,
        "ledger-api, lowercase",
        "short names",
    )
    assert "answer: ledger-api, lowercase" in team.cli("gate", "status", "G-2", json_out=False).out
    ctx = team.cli("context", "LX-2", agent="a1", json_out=False)
    assert "the person answered: ledger-api, lowercase" in ctx.out
    assert team.cli("verify").code == 0


def test_answers_that_do_not_fit_are_refused_and_change_nothing(team):
    asked_with_options(team, "sqlite", "postgres")
    before = team.snapshot()
    assert "--choose" in refused(team, 3, "gate", "answer", "G-1", tty=True)["hint"]  # no answer at all
    assert "1. sqlite, 2. postgres" in refused(team, 3, "gate", "answer", "G-1", "--choose", "mysql", tty=True)["hint"]
    refused(team, 3, "gate", "answer", "G-1", "--choose", "3", tty=True)
    refused(team, 3, "gate", "answer", "G-1", "--choose", "sqlite", "--text", "either", tty=True)
    assert "--note" in refused(team, 3, "gate", "answer", "G-1", "reject", "--choose", "sqlite", tty=True)["hint"]
    refused(team, 3, "gate", "answer", "G-1", "--text", "   ", tty=True)
    assert team.snapshot() == before
    team.ok("card", "add", "plain")
    held(team, "LX-2", "a1")
    team.cli("gate", "ask", "LX-2", "--question", "go?", agent="a1")
    assert "no options" in refused(team, 3, "gate", "answer", "G-2", "--choose", "1", tty=True)["message"]


def test_an_agent_can_never_choose(team):
    """The attack: the agent that asked (or another) picks the option it wants,
    by the verb, by a name, or by writing the row; none of it is an answer."""
    from ..conftest import NO_KEY

    asked_with_options(team, "keep the data", "drop the table")
    for who, env in (("a2", None), ("a1", None), (None, {**NO_KEY, "LOOPX_HUMAN": "tester"})):
        refused(team, 10, "gate", "answer", "G-1", "--choose", "drop the table", agent=who, tty=True, env=env)
        refused(team, 10, "gate", "answer", "G-1", "--text", "drop it", agent=who, tty=True, env=env)
    assert team.cli("gate", "status", "G-1", agent="a2").data["gate"]["status"] == "pending"
    # A person chose to keep the data; the agent rewrites the row's answer.
    team.ok("gate", "answer", "G-1", "--choose", "keep the data", tty=True)
    sql(team, "UPDATE gate SET answer = 'drop the table' WHERE id = 1")
    st = team.cli("gate", "status", "G-1", agent="a2")
    assert st.code == 6 and st.data["gate"]["status"] == "pending" and st.data["gate"]["choice"] is None
    assert "no valid signed decision" in st.data["gate"]["forged"]
    assert "drop the table" not in team.cli("context", "LX-1", agent="a2", json_out=False).out
    report = team.cli("verify")
    assert report.code == 11 and "G-1" in report.out


def test_an_export_carries_the_answer_and_one_from_before_it_still_verifies(team, tmp_path, monkeypatch):
    import json

    asked_with_options(team, "sqlite", "postgres")
    team.ok("gate", "answer", "G-1", "--choose", "postgres", tty=True)
    team.ok("card", "add", "another")
    held(team, "LX-2", "a1")
    team.cli("gate", "ask", "LX-2", "--question", "ok?", agent="a1")
    team.ok("gate", "answer", "G-2", "approve", tty=True)
    root = team.ok("person", "list")["people"][0]["fingerprint"]
    doc = team.ok("export")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "elsewhere"))
    path = tmp_path / "board.json"
    path.write_text(json.dumps(doc))
    assert team.cli("verify", "--file", str(path), "--root", root).code == 0
    gates = doc["chain"]["tables"]["gate"]
    at = gates["columns"].index("answer")
    # An export written before answers were carried (no answer column) is read, never an internal error.
    old = {
        **gates,
        "columns": [c for c in gates["columns"] if c != "answer"],
        "rows": [[v for i, v in enumerate(r) if i != at] for r in gates["rows"]],
    }
    doc["chain"]["tables"]["gate"] = {**old, "rows": [r for r in old["rows"] if r[0] == 2]}
    path.write_text(json.dumps(doc))
    res = team.cli("verify", "--file", str(path), "--root", root)
    assert res.code in (0, 11) and "internal" not in res.out
