"""#39: a runtime's own permission question in the gate dialog: the command
reads as text (no JSON escapes, still terminal-safe), and ``s`` approves
that exact call for the rest of the runner's session — a signed decision."""

from __future__ import annotations

from loopx_core.adapters import runtime_questions
from loopx_core.ops import gates, runners
from tests.polling import until_async

from .conftest import arm, export, feed, gate_dialog
from .conftest import settled as _settle

OAUTH = 6  # the seeded board's LX-6, held by claude-1
ELSEWHERE = 2**22 + 4545
COMMIT = {"command": 'git commit -m "wip: parser"\ngit push origin loopx/LX-6', "description": "commit and push"}
ESCAPED = {"command": "git push origin \x1b[2Jloopx/LX-6\u202e", "description": "push"}


def ask(app, call=COMMIT) -> dict:
    return runtime_questions.decide(app.store, "claude-1", "claude-code", "Bash", call, wait=0)


async def runtime_gate(pilot, call=COMMIT) -> int:
    """claude-1's runner session r-1; its Claude Code turn asks to commit and push (the dialog on screen)."""
    app = pilot.app
    runners.start(app.store, "claude-1", "r-1", "claude-code", ELSEWHERE, "elsewhere")
    assert ask(app, call)["behavior"] == "deny"
    await feed(app)
    await pilot.pause()
    gate = max(app.model.pending)
    app.gates.show_first(gate)
    await app.reads_idle()
    await pilot.pause()
    return gate


async def question_and_s(pilot) -> str:
    """The dialog's question as drawn; then ``s`` once its keys are armed, and the answer written."""
    modal = await gate_dialog(pilot)
    question = str(modal.query_one("#gate-question").render())
    await arm(pilot)
    await pilot.press("s")
    await pilot.app.ops_idle()
    await pilot.pause()
    return question


def told(app, words: str):
    return lambda: any(words in text for _, text in app.notices)


async def test_the_command_reads_as_text_and_s_allows_it_for_the_session(make_app, seeded):
    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        gate = await runtime_gate(pilot)
        assert "s allow for session" in str((await gate_dialog(pilot)).query_one("#gate-keys").render())
        question = await question_and_s(pilot)
        assert '$ git commit -m "wip: parser" ⏎ git push origin loopx/LX-6 · description: commit and push' in question
        assert '\\"' not in question
        assert gates.status(app.store, gate).status == "approved"
        await until_async(told(app, "remembered for this session"), what="the toast", pause=lambda: pilot.pause(0.05))
        said = ask(app)  # the turn after: the same call runs unasked
        assert said["behavior"] == "allow" and "human:seed" in said["message"]
        assert ask(app, dict(COMMIT, command="git push --force"))["behavior"] == "deny"  # not another
    answered = [e for e in export(seeded.location)["events"] if e["kind"] == "gate_answered"][-1]
    assert (
        answered["signed"]
        and answered["data"]["remember"] == "session"
        and answered["data"]["session"]["runner"] == "r-1"
    )


async def test_a_call_shown_cleaned_is_approved_once_never_for_the_session(make_app, seeded):
    """Text from an agent never reaches the terminal raw; and what the person
    saw cleaned is not what would run, so s is refused (y still approves once)."""
    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        gate = await runtime_gate(pilot, ESCAPED)
        question = await question_and_s(pilot)
        assert "$ git push origin loopx/LX-6 · description: push" in question
        assert "\x1b" not in question and "\u202e" not in question
        assert gates.status(app.store, gate).status == "pending"
        await until_async(
            told(app, "cannot be allowed for a session"), what="the refusal", pause=lambda: pilot.pause(0.05)
        )


async def test_s_is_not_offered_for_an_agents_own_question(make_app, seeded):
    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press("g")
        modal = await gate_dialog(pilot)
        await arm(pilot)
        assert modal.brief.gate.kind != "runtime"
        assert "allow for session" not in str(modal.query_one("#gate-keys").render())
        await pilot.press("s")
        await app.ops_idle()
        assert gates.status(app.store, seeded.gate).status == "pending"


def test_snapshot_runtime_permission_gate(make_app, snap_compare):
    async def gate(pilot):
        await _settle(pilot)
        await runtime_gate(pilot)
        await arm(pilot)

    assert snap_compare(make_app(), terminal_size=(120, 36), run_before=gate)
