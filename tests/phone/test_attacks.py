"""No one but the person's paired passkey answers from the page (SECURITY.md
"The phone"): each attack run for real against ``loopx serve`` and ``loopx
phone pair`` processes, as any local process (an agent) could send it."""

from __future__ import annotations

import json
import os

from loopx_core.shapes import human_verbs, verbs
from tests.conftest import NO_KEY, person_ok

from .conftest import listen, pair, serving, tap

RECORD = "window.__sent = []; const f0 = window.fetch; window.fetch = (u, o) => { window.__sent.push([u, o.body]); return f0(u, o); };"


def ask(board, question: str = "may I?", *extra: str, card: str = "LX-1") -> None:
    """Agent a1, holding ``card``, asks a gate (made and claimed on first use)."""
    if not board.cli("card", "show", card).code == 0:
        board.ok("card", "add", "work", "--owner", "a1", "--next", "go")
        board.ok("claim", card, agent="a1")
    assert board.cli("gate", "ask", card, "--question", question, *extra, agent="a1").code == 6


def status(board, gate: str) -> str:
    return board.cli("gate", "status", gate, agent="a1").data["gate"]["status"]  # (exit 6 while pending)


def test_an_agent_can_neither_pair_a_device_nor_serve_the_page(team):
    for argv in (("phone", "pair", "--port", "0"), ("phone", "revoke", "wa:x"), ("serve", "--port", "0")):
        assert human_verbs.is_human_verb(*argv[:2]) or human_verbs.is_human_verb(argv[0])
        out = team.spawn(*argv, agent="a1", timeout=60)
        assert out.returncode == 10, out  # refused to an agent identity before anything else
    # Without the person's key (an agent's environment has none): no pairing either.
    env = {k: v for k, v in os.environ.items() if k != "LOOPX_AGENT"}
    out = team.spawn("phone", "pair", "--port", "0", env={**env, **NO_KEY}, timeout=60)
    assert out.returncode != 0 and "device_paired" not in json.dumps(team.ok("events")["events"])
    # Over MCP: none of them is a tool.
    assert all(v.tool is None for (verb, _), v in verbs.VERBS.items() if verb in ("phone", "serve"))


def test_the_page_takes_requests_only_from_itself_and_serves_no_file(team):
    ask(team)
    team.ok("card", "add", "<i>spent</i> its budget", "--owner", "a2", "--max-turns", "1")
    team.ok("claim", "LX-2", agent="a2")
    assert team.ok("writeback", "LX-2", "--summary", "its last turn", agent="a2")["card"]["status"] == "paused"
    with serving(team) as server:
        body = {"gate": "G-1", "decision": "approve"}
        assert server.post("/api/challenge", body, {"Origin": "http://evil.example"})[0] == 403
        assert server.post("/api/challenge", body, {"Origin": None})[0] == 403  # no Origin: not the page
        assert server.post("/api/challenge", body, {"Content-Type": "text/plain"})[0] == 415  # what a form can post
        assert server.post("/api/challenge", body, {"Host": "evil.example:80"})[0] == 421  # DNS rebinding
        assert server.get("/", {"Host": f"rebound.example:{server.origin.rsplit(':', 1)[1]}"})[0] == 421
        code, page, headers = server.get("/")
        assert code == 200 and "may I?" in page and "Set-Cookie" not in headers
        assert "&lt;i&gt;spent&lt;/i&gt; its budget" in page and "<i>" not in page  # paused, shown, escaped
        assert "default-src 'none'" in headers["Content-Security-Policy"]
        for path in ("/.loopx/board.db", "/../../etc/passwd", "/static/app.js", "/pair", "/README.md"):
            assert server.get(path)[0] == 404, path
        # No device is paired: the page can ask nothing.
        code, said = server.post("/api/challenge", body)
        assert code == 403 and "phone pair" in said["error"]
    assert status(team, "G-1") == "pending"


def test_without_the_passkeys_assertion_nothing_is_answered_cookie_or_not(team, page):
    pair(team, page)
    ask(team)
    with serving(team) as server:
        code, got = server.post("/api/challenge", {"gate": "G-1", "decision": "approve"})
        assert code == 200  # anyone may ask for a challenge: it decides nothing
        forged = {"id": "x", "rawId": "eA", "type": "public-key", "response": {}}
        for attempt in (
            {"nonce": got["nonce"]},
            {"nonce": got["nonce"], "credential": forged},
        ):
            code, said = server.post("/api/answer", attempt, {"Cookie": "session=approved; loopx=1"})
            assert code in (400, 403), said
        assert server.post("/api/answer", {"nonce": "made-up", "credential": forged})[0] == 403
    assert status(team, "G-1") == "pending"


def test_a_replayed_or_altered_assertion_is_refused(team, page):
    pair(team, page)
    ask(team, "first?")
    ask(team, "second?")
    with serving(team) as server:
        page.goto(server.url)
        page.evaluate(RECORD)
        assert tap(page, 'button.yes[data-gate="G-1"]') == "G-1 approved ✓"
        sent = [json.loads(b) for u, b in page.evaluate("window.__sent") if u == "/api/answer"]
        assert len(sent) == 1
        # Replayed as it was: its nonce was used.
        code, said = server.post("/api/answer", sent[0])
        assert code == 403 and "used" in said["error"]
        # Replayed on a fresh question (G-2's): the assertion signed G-1's decision, not this one.
        code, fresh = server.post("/api/challenge", {"gate": "G-2", "decision": "approve"})
        assert code == 200
        code, said = server.post("/api/answer", {**sent[0], "nonce": fresh["nonce"]})
        assert code == 403 and "does not verify" in said["error"]
        # Altered on its way (a byte of the authenticator data): refused.
        page.goto(server.url)
        page.evaluate(
            "const f1 = window.fetch; window.fetch = (u, o) => { if (u === '/api/answer') { const b = JSON.parse(o.body);"
            " const s = b.credential.response.authenticatorData; b.credential.response.authenticatorData ="
            " s.slice(0, 44) + (s[44] === 'A' ? 'B' : 'A') + s.slice(45); o = {...o, body: JSON.stringify(b)}; }"
            " return f1(u, o); };"
        )
        said = tap(page, 'button.yes[data-gate="G-2"]')
        assert said.startswith("not answered") and "does not verify" in said
    assert status(team, "G-2") == "pending"
    person_ok(team, "verify")


def test_a_passkey_whose_counter_went_back_is_refused(team, page):
    pair(team, page)
    ask(team, "first?")
    ask(team, "second?")
    with serving(team) as server:
        page.goto(server.url)
        assert tap(page, 'button.yes[data-gate="G-1"]') == "G-1 approved ✓"
        (credential,) = page.credentials()
        assert credential["signCount"] >= 2
        page.put_credential({**credential, "signCount": 0})  # a clone of the passkey, made before
        page.goto(server.url)
        said = tap(page, 'button.yes[data-gate="G-2"]')
        assert "counter went back" in said
    assert status(team, "G-2") == "pending"


def test_a_revoked_device_answers_nothing(team, page):
    device = pair(team, page)
    ask(team)
    person_ok(team, "phone", "revoke", device["device"])
    assert team.ok("phone", "list")["devices"][0]["revoked"] is True
    with serving(team) as server:
        page.goto(server.url)
        said = tap(page, 'button.yes[data-gate="G-1"]')
        assert said.startswith("not answered") and "no device is paired" in said
    assert status(team, "G-1") == "pending"


def test_a_dangerous_scope_is_not_approved_from_the_phone(team, page):
    pair(team, page)
    person_ok(team, "dangerous", "set", "db:*")
    ask(team, "drop the table?", "--scope", "db:drop")
    with serving(team) as server:
        page.goto(server.url)
        text = page.evaluate("document.body.innerText")
        assert "answer G-1 on the board" in text
        assert page.evaluate("document.querySelectorAll('button[data-gate]').length") == 0
        code, said = server.post("/api/challenge", {"gate": "G-1", "decision": "approve"})
        assert code == 409 and "on the board" in said["error"]
    assert status(team, "G-1") == "pending"


def test_pairing_takes_the_one_time_code_and_nothing_else(team):
    pairing = listen(team, "phone", "pair", pattern=r"(http://localhost:\d+/pair#t=\S+)")
    try:
        token = pairing.url.split("#t=", 1)[1]
        assert pairing.post("/api/pair/options", {"token": "guessed"})[0] == 403
        assert pairing.post("/api/pair/options", {"token": token}, {"Origin": "http://evil.example"})[0] == 403
        assert pairing.post("/api/pair/finish", {"token": "guessed", "credential": {}})[0] == 403
        code, got = pairing.post("/api/pair/options", {"token": token})
        assert code == 200 and got["options"]["authenticatorSelection"]["userVerification"] == "required"
        # A made-up registration (no authenticator behind it) is not a device.
        fake = {
            "id": "eA",
            "rawId": "eA",
            "type": "public-key",
            "response": {"clientDataJSON": "e30", "attestationObject": "oA"},
        }
        code, said = pairing.post("/api/pair/finish", {"token": token, "credential": fake})
        assert code == 403 and "not made" in said["error"]
        assert pairing.get("/")[0] == 404  # while pairing, the page lists nothing
    finally:
        pairing.proc.terminate()
        pairing.proc.wait(timeout=30)
    assert team.ok("phone", "list")["devices"] == []


def test_the_page_turns_callers_away_past_a_small_rate(team):
    with serving(team) as server:
        codes = [server.post("/api/challenge", {"gate": "G-9", "decision": "approve"})[0] for _ in range(12)]
        assert codes[:10] == [403] * 10 and codes[10:] == [429, 429]  # ten failures in a minute, then no more
