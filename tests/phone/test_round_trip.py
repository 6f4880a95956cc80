"""From pairing to an approved gate whose waiting runner starts its turn, on a
real browser with a passkey (tests/phone/conftest.py)."""

from __future__ import annotations

from tests.conftest import person_ok

from .conftest import pair, plan, serving, tap


def test_a_gate_approved_on_the_phone_starts_the_waiting_runners_turn(team, watch, page):
    device = pair(team, page, label="pixel")
    assert device["device"].startswith("wa:") and device["label"] == "pixel"
    listed = team.ok("phone", "list")["devices"]
    assert [(d["device"], d["label"], d["person"], d["revoked"]) for d in listed] == [
        (device["device"], "pixel", "tester", False)
    ]
    team.ok("card", "add", "needs a yes", "--next", "step 1")
    plan(team, {2: "gate"})
    proc = watch.run("a1", "--turns", "3")
    watch.until("the runner waits on G-1", lambda: (r := watch.runner("a1")) and r.state == "waiting" and r.gate == 1)
    with serving(team) as server:
        page.goto(server.url)
        assert "may I go on after step 2?" in page.evaluate("document.body.innerText")
        said = tap(page, 'button.yes[data-gate="G-1"]')
        assert said == "G-1 approved ✓"
    assert watch.ended(proc) == 0
    answered = watch.events("gate_answered")
    assert len(answered) == 1 and answered[0].actor == "human:tester"
    third = watch.events("turn_started")[2]
    assert third.seq > answered[0].seq and third.data["turn"] == 3
    status = team.ok("gate", "status", "G-1")["gate"]
    assert status["status"] == "approved" and status["answered_by"] == "human:tester"
    assert status["note"].startswith("answered on phone ") and status["note"].endswith(
        f"(pixel, {device['device'][:11]})"
    )
    text = team.cli("gate", "status", "G-1", json_out=False).out
    assert "answered on phone" in text
    report = team.ok("verify")["verify"]
    assert report["ok"], report


def test_an_option_chosen_on_the_phone_is_the_answer_the_agent_reads(team, page):
    pair(team, page)
    team.ok("card", "add", "pick one", "--owner", "a1", "--next", "ask")
    team.ok("claim", "LX-1", agent="a1")
    asked = team.cli(
        "gate",
        "ask",
        "LX-1",
        "--question",
        "Which <b>database</b>?",
        "--option",
        "sqlite",
        "--option",
        "postgres",
        agent="a1",
    )
    assert asked.code == 6  # pending
    with serving(team) as server:
        page.goto(server.url)
        assert page.evaluate("document.querySelectorAll('b').length") == 0  # the agent's text is shown, never run
        assert tap(page, 'button.opt[data-gate="G-1"][data-choice="2"]') == "G-1 approved ✓"
    gate = team.ok("gate", "status", "G-1", agent="a1")["gate"]
    assert gate["status"] == "approved" and gate["choice"] == "postgres"
    # An answer in words, as on the board: the agent reads exactly what the passkey signed.
    assert team.cli("gate", "ask", "LX-1", "--question", "Name the table?", agent="a1").code == 6
    with serving(team) as server:
        page.goto(server.url)
        page.evaluate("""document.getElementById('t-G-2').value = 'call it <b>users</b>'""")
        assert tap(page, 'button[data-gate="G-2"][data-text]') == "G-2 approved ✓"
    gate = team.ok("gate", "status", "G-2", agent="a1")["gate"]
    assert gate["status"] == "approved" and gate["text"] == "call it <b>users</b>"
    person_ok(team, "verify")


def test_a_scope_approved_on_the_phone_is_allowed_by_the_kernel_and_the_hooks_reader(team, page):
    import time

    from loopx_core.adapters import fastcheck
    from loopx_core.ops import gates

    pair(team, page)
    team.ok("card", "add", "deploy", "--owner", "a1", "--next", "go")
    team.ok("claim", "LX-1", agent="a1")
    assert team.cli("gate", "ask", "LX-1", "--question", "deploy?", "--scope", "deploy:staging", agent="a1").code == 6
    assert fastcheck.check(str(team.db), "a1", ["deploy:staging"], time.time()).allowed == {}
    with serving(team) as server:
        page.goto(server.url)
        assert tap(page, 'button.yes[data-gate="G-1"]') == "G-1 approved ✓"
    store = team.store()
    try:
        _, allowed = gates.scopes_allowed(store, "a1", ["deploy:staging"])
    finally:
        store.close()
    assert allowed == {"deploy:staging": "gate:G-1"}
    assert fastcheck.check(str(team.db), "a1", ["deploy:staging"], time.time()).allowed == {
        "deploy:staging": "gate:G-1"
    }


def test_a_passkey_refused_once_is_asked_again_with_a_tap_and_no_answer_is_made_without_it(team, page):
    pair(team, page)
    team.ok("card", "add", "confirm", "--owner", "a1", "--next", "go")
    team.ok("claim", "LX-1", agent="a1")
    assert team.cli("gate", "ask", "LX-1", "--question", "go on?", agent="a1").code == 6
    # The person not verified (no Face ID, no fingerprint): the passkey refuses, nothing is answered …
    page.send("WebAuthn.setUserVerified", {"authenticatorId": page.authenticator, "isUserVerified": False})
    with serving(team) as server:
        page.goto(server.url)
        page.evaluate("""document.querySelector('button.yes[data-gate="G-1"]').click()""", gesture=True)
        page.wait_for("document.querySelector('#msg button') !== null")
        assert team.cli("gate", "status", "G-1", agent="a1").data["gate"]["status"] == "pending"
        # … and the page offers to ask again, in a tap of its own (as Safari wants it).
        page.send("WebAuthn.setUserVerified", {"authenticatorId": page.authenticator, "isUserVerified": True})
        page.evaluate("document.querySelector('#msg button').click()", gesture=True)
        page.wait_for("document.getElementById('msg').textContent.includes('✓')")
    assert team.cli("gate", "status", "G-1", agent="a1").data["gate"]["status"] == "approved"
