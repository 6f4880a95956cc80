"""A turn, the way a person sets it up (README's agent set-up) and a real runtime
runs it: Claude Code 2.1.197, the Claude Code 2.1.335 inside the Agent SDK, and
Codex 0.171, each driven by the scripted model on 127.0.0.1, each calling the
real ``loopx`` hooks and MCP server (which are not on the runtime's PATH)."""

from __future__ import annotations

import hashlib

import pytest

from .harness import ALL, LOOPX, PYTHON, answer_as_person, as_person
from .model_server import Call, Say, Usage

TOOLS = ("next", "claim", "writeback", "gate_ask", "gate_status", "handoff", "context")
AGENT = {"claude-code": "cc1", "claude-sdk": "cc2", "codex": "cx1"}


@pytest.fixture(params=ALL, ids=repr)
def runtime(request):
    return request.param


def started(project, runtime, *, sandbox=True, can=()):
    agent = AGENT[runtime.name]
    project.init(runtime.setup, agent, can=can, sandbox=sandbox)
    card = project.card("Fix the date parser", "--next", "make the parser test pass")
    return agent, card


def test_a_normal_turn(project, model, runtime):
    """SessionStart context in, the model claims through MCP, works in its (sandboxed)
    shell, writes back through MCP, and Stop lets the turn end."""
    agent, card = started(project, runtime)
    session = runtime.run(
        project,
        model,
        [
            runtime.tool("next", claim=True),
            runtime.shell("echo 'def parse(): ...' > parser.py"),
            runtime.tool(
                "writeback",
                card=card,
                summary="Fixed the date parser",
                artifacts=["parser.py"],
                next="add a test for leap years",
            ),
            Say("Done: the parser is fixed."),
        ],
    )
    assert session.code == 0
    first = model.agent_requests()[0]
    assert f"you are agent `{agent}`" in first.text()  # SessionStart context reached the model
    assert all(f"{tool}" in " ".join(first.tool_names()) + first.text() for tool in TOOLS)
    assert len(model.agent_requests()) == 4 and model.steps_left == 0  # Stop did not send it back
    assert not any("wrote no evidence" in r.text() for r in model.agent_requests())
    written = [e for e in project.evidence(card) if e["source"] == "mcp"]
    assert [e["summary"] for e in written] == ["Fixed the date parser"]
    artifact = written[0]["artifacts"][0]
    assert (
        artifact["path"] == "parser.py"
        and artifact["sha256"] == hashlib.sha256((project.root / "parser.py").read_bytes()).hexdigest()
    )
    assert project.show(card)["next"] == "add a test for leap years"


def test_a_turn_written_back_through_the_shell(project, model, runtime):
    """Without the sandbox (``init --no-sandbox``) the agent's own ``loopx writeback`` works."""
    agent, card = started(project, runtime, sandbox=False)
    session = runtime.run(
        project,
        model,
        [
            runtime.tool("next", claim=True),
            # by its full path: Codex runs `bash -lc`, whose login profile resets PATH
            runtime.shell(f"{LOOPX} writeback {card} --agent {agent} --summary 'Wrote back from the shell'"),
            Say("Done."),
        ],
        no_sandbox=True,
    )
    assert session.code == 0
    assert [e["summary"] for e in project.evidence(card) if e["source"] == "cli"] == ["Wrote back from the shell"]
    assert len(model.agent_requests()) == 3


def test_a_denied_tool_opens_a_gate(project, model, runtime):
    agent, card = started(project, runtime)
    project.with_remote()
    session = runtime.run(
        project,
        model,
        [
            runtime.tool("next", claim=True),
            runtime.shell("git push origin main"),
            Say("Waiting for a person."),
        ],
    )
    assert session.code == 0
    reason = model.agent_requests()[2].last_tool_result()
    assert "G-1" in reason and "git:push" in reason and "loopx gate status G-1" in reason
    gate = project.gate("G-1")
    assert (
        gate["status"] == "pending" and gate["scope"] == "git:push" and gate["card"] == card and gate["agent"] == agent
    )
    assert not project.pushed()


def test_a_gate_answered_by_a_person(project, model, runtime):
    """The model is denied, a person approves on the board, the same call then runs."""
    agent, card = started(project, runtime)
    project.with_remote()

    def person_approves(request):
        assert "G-1" in request.last_tool_result()
        assert answer_as_person(project, "G-1")["status"] == "approved"
        return runtime.shell("git push origin main")

    session = runtime.run(
        project,
        model,
        [
            runtime.tool("next", claim=True),
            runtime.shell("git push origin main"),
            person_approves,
            runtime.tool("writeback", card=card, summary="Pushed the fix"),
            Say("Pushed."),
        ],
    )
    assert session.code == 0 and not model.problems
    assert project.pushed()
    gate = project.gate("G-1")
    assert gate["status"] == "approved" and gate["answered_by"].startswith("human")
    assert len(project.gates()) == 1  # the retry did not open a second gate


def test_a_stop_without_evidence_is_sent_back_once(project, model, runtime):
    agent, card = started(project, runtime)
    session = runtime.run(
        project,
        model,
        [
            runtime.tool("next", claim=True),
            Say("All done."),  # no writeback: Stop sends the model back
            runtime.tool("writeback", card=card, summary="Recorded the turn after the reminder"),
            Say("Recorded."),
        ],
    )
    assert session.code == 0
    reminder = model.agent_requests()[2]
    assert f"this turn wrote no evidence on {card}" in reminder.text()
    assert len(model.agent_requests()) == 4 and model.steps_left == 0  # the second Stop let it end
    assert [e["summary"] for e in project.evidence(card) if e["source"] == "mcp"] == [
        "Recorded the turn after the reminder"
    ]
    if runtime.setup == "claude-code":
        # additionalContext continues cleanly; decision:block would show "Stop hook error occurred"
        assert "Stop hook additional context" in reminder.text() and "Stop hook error" not in session.stdout
        assert "blocking error" not in reminder.text()


def test_usage_is_charged_as_the_model_reported_it(project, model, runtime):
    agent, card = started(project, runtime)
    model_name = "gpt-5.1-codex" if runtime.name == "codex" else "claude"
    as_person(
        project,
        "price",
        "set",
        model_name,
        "--input",
        "3",
        "--output",
        "15",
        "--cache-read",
        "0.3",
        "--cache-write",
        "3.75",
    )
    steps = [
        runtime.tool("next", claim=True),
        runtime.tool("writeback", card=card, summary="Measured turn"),
        Say("Done."),
    ]
    usages = [
        Usage(input=1200, output=80, cache_read=4000, cache_write=300),
        Usage(input=900, output=40, cache_read=5000, cache_write=0),
        Usage(input=700, output=25, cache_read=5100, cache_write=0),
    ]
    for step, usage in zip(steps, usages):
        step.usage = usage
    session = runtime.run(project, model, steps)
    assert session.code == 0
    reported = model.usage_reported
    assert len(reported) >= 3  # (more when Claude Code 2.1.197 made the model wait for the MCP server)
    if runtime.name == "codex":
        # OpenAI counts cached input inside input_tokens; the scripted server reports cache_read as cached input
        tokens = sum(u.input + u.cache_read + u.output for u in reported)
        usd = sum(u.input * 3 + u.cache_read * 0.3 + u.output * 15 for u in reported) / 1e6
    else:
        tokens = sum(u.input + u.cache_write + u.cache_read + u.output for u in reported)
        usd = sum(u.input * 3 + u.cache_write * 3.75 + u.cache_read * 0.3 + u.output * 15 for u in reported) / 1e6
    quota = project.show(card)["quota"]
    assert quota["tokens"]["used"] == tokens
    assert quota["usd"]["used"] == pytest.approx(usd, abs=1e-6)
    charges = [e for e in project.evidence(card) if e["source"] == "hook"]
    assert sum(e["usage"]["tokens"] for e in charges) == tokens


@pytest.mark.parametrize("runtime", [r for r in ALL if r.setup == "claude-code"], ids=repr)
def test_the_agent_id_is_not_in_the_shared_settings(project, model, runtime):
    """The hooks in .claude/settings.json name no agent: the id comes from the checkout's
    settings.local.json, and a runner can pick another with --settings."""
    agent, card = started(project, runtime)
    shared = (project.root / ".claude" / "settings.json").read_text()
    assert agent not in shared and "LOOPX_AGENT" not in shared
    assert f"{PYTHON} -I -m loopx_core hook" in shared  # the installed interpreter by absolute path, isolated
    as_person(project, "agent", "add", "runner-2")
    from .harness import run_claude

    run_claude(
        project,
        model,
        [Say("Hello.")],
        binary=runtime.name,
        args=("--settings", '{"env": {"LOOPX_AGENT": "runner-2"}}'),
    )
    assert "you are agent `runner-2`" in model.agent_requests()[0].text()


@pytest.mark.parametrize("runtime", [r for r in ALL if r.setup == "claude-code"], ids=repr)
def test_a_background_task_notice_is_not_a_new_prompt(project, model, runtime):
    """Claude Code reports a finished background command as a ``user`` transcript entry
    (origin.kind task-notification). The turn wrote back before it: its Stop must not
    send the model back as if a person had asked for something new."""
    agent, card = started(project, runtime)
    ended = project.root / ".turn-ended"

    def end_the_turn(request):
        # The background command finishes only once the turn's last reply is on its
        # way, so its notice comes after the turn, on a loaded machine too (when it
        # finished during the writeback, the notice rode along inside the turn).
        ended.write_text("")
        return Say("Turn done.")

    session = runtime.run(
        project,
        model,
        [
            runtime.tool("next", claim=True),
            Call(
                "Bash",
                {
                    "command": "timeout 120 sh -c 'until [ -e .turn-ended ]; do sleep 0.05; done'; echo finished",
                    "description": "background work",
                    "run_in_background": True,
                },
            ),
            runtime.tool("writeback", card=card, summary="Started the background work"),
            end_the_turn,
            Say("Saw the background notice."),
        ],
    )
    assert session.code == 0
    texts = [r.text() for r in model.agent_requests()]
    assert any("task-notification" in t for t in texts)  # the notice did arrive
    assert len(texts) == 5 and model.steps_left == 0
    assert not any("wrote no evidence" in t for t in texts)


def test_a_hook_that_cannot_run_blocks_the_tool(project, model):
    """``onFailure: "block"`` (Claude Code 2.1.335): when the PreToolUse hook cannot even
    start — loopx uninstalled, the path in the settings gone — the tool call is blocked,
    not run. (2.1.197 ignores the key: there the hook itself must never fail.)"""
    import json

    from .harness import run_claude

    agent, card = started(project, ALL[1])
    settings_path = project.root / ".claude" / "settings.json"
    settings = json.loads(settings_path.read_text())
    handler = settings["hooks"]["PreToolUse"][0]["hooks"][0]
    assert handler["onFailure"] == "block"
    handler["command"] = handler["command"].replace(str(PYTHON), str(project.root / "uninstalled" / "python"))
    settings_path.write_text(json.dumps(settings))
    session = run_claude(
        project,
        model,
        [
            Call("Bash", {"command": "touch ran.txt", "description": "a harmless command"}),
            Say("Done."),
        ],
        binary="claude-sdk",
    )
    assert session.code == 0
    assert not (project.root / "ran.txt").exists()
    assert "ran.txt" in model.agent_requests()[1].text() and model.agent_requests()[1].last_tool_result()


def test_a_skill_shell_command_a_person_turned_on_passes_the_hook(project, model):
    """``init`` turns skills' `!` shell commands off (2.1.197 runs them with no hook).
    A person on 2.1.335 may turn them back on: then its PreSkillShellCommand hook
    guards them like any shell command — a push asks a gate and does not run."""
    import json

    from .harness import run_claude

    agent, card = started(project, ALL[1])
    project.with_remote()
    settings_path = project.root / ".claude" / "settings.json"
    settings = json.loads(settings_path.read_text())
    assert settings["disableSkillShellExecution"] is True  # init's default
    settings["disableSkillShellExecution"] = False  # the person's choice, in a file agents cannot edit
    settings_path.write_text(json.dumps(settings))
    skill = project.root / ".claude" / "skills" / "release" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text(
        "---\nname: release\ndescription: Release helper\n---\nStatus: !`git push origin HEAD:refs/heads/skilled`\n"
    )
    session = run_claude(
        project,
        model,
        [
            Call("mcp__loopx__next", {"claim": True}),
            Call("Skill", {"skill": "release"}),
            Say("Done."),
        ],
        binary="claude-sdk",
    )
    assert session.code == 0
    assert not project.pushed()
    gates = project.gates()
    assert [(g["scope"], g["status"], g["agent"]) for g in gates] == [("git:push", "pending", agent)]


@pytest.mark.parametrize("runtime", [r for r in ALL if r.setup == "claude-code"], ids=repr)
def test_a_subagents_calls_are_charged_to_the_card_of_the_turn_that_started_it(project, model, runtime):
    """#29: the Task tool's subagent writes its model calls to a transcript of its
    own; they are charged to the card, with every other call, exactly once
    (Stop and SessionEnd both charge; by call id)."""
    agent, card = started(project, runtime)

    def spawn(request):
        tool = "Agent" if "Agent" in request.tool_names() else "Task"
        return Call(
            tool,
            {
                "description": "find the callers",
                "prompt": "List the callers of parse().",
                "subagent_type": "general-purpose",
                "run_in_background": False,
            },
            usage=Usage(input=700, output=60),
        )

    session = runtime.run(
        project,
        model,
        [
            runtime.tool("next", claim=True),
            spawn,
            Say("parse() has no callers.", usage=Usage(input=333, output=44)),  # the subagent's own call
            runtime.tool("writeback", card=card, summary="Checked the callers"),
            Say("Done."),
        ],
    )
    assert session.code == 0, session.stderr[-2000:]
    assert model.steps_left == 0
    reported = model.usage_reported
    tokens = sum(u.input + u.cache_write + u.cache_read + u.output for u in reported)
    assert project.show(card)["quota"]["tokens"]["used"] == tokens
    charges = [e for e in project.evidence(card) if e["source"] == "hook"]
    assert any("(subagent)" in e["summary"] for e in charges)
    assert sum(e["usage"]["tokens"] for e in charges) == tokens


@pytest.mark.parametrize("runtime", [r for r in ALL if r.setup == "claude-code"], ids=repr)
def test_a_turn_sent_back_is_charged_exactly_with_its_usage_arriving_late(project, model, runtime):
    """#29: the case that undercharged on 2.1.197 (a turn whose first Stop was
    sent back), with every reply's final usage sent 0.4 s after its content,
    SessionEnd registered beside Stop: exactly what the model reported, on
    both pinned versions. (Both binaries wrote each call's entry with its final
    usage here; the late-entry race itself is forced on both binaries by
    tests/e2e/test_charging.py, LOOPX_FAULT=transcript-lag.)"""
    agent, card = started(project, runtime)
    model.usage_delay = 0.4
    steps = [
        runtime.tool("next", claim=True),
        Say("All done."),
        runtime.tool("writeback", card=card, summary="Recorded after the reminder"),
        Say("Recorded."),
    ]
    for n, step in enumerate(steps):
        step.usage = Usage(input=1000 + n, output=300 + 7 * n, cache_read=2000, cache_write=50)
    session = runtime.run(project, model, steps)
    assert session.code == 0, session.stderr[-2000:]
    assert "wrote no evidence" in model.agent_requests()[2].text()
    tokens = sum(u.input + u.cache_write + u.cache_read + u.output for u in model.usage_reported)
    assert project.show(card)["quota"]["tokens"]["used"] == tokens
    charges = [e for e in project.evidence(card) if e["source"] == "hook"]
    assert sum(e["usage"]["tokens"] for e in charges) == tokens


def _person_answers_when_asked(project, answer: tuple, found: list, asked: str = "asks to use Bash"):
    """A person at the board: the first pending gate that is the runtime's own question, answered
    with ``loopx gate answer GATE *answer`` at their terminal."""
    import threading
    import time

    def watch():
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            pending = [g for g in project.gates() if g["status"] == "pending" and asked in g["question"]]
            if pending:
                found.append(pending[0])
                found.append(as_person(project, "gate", "answer", pending[0]["id"], *answer).data["gate"])
                return
            time.sleep(0.2)

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    return thread


CLAUDES = [r for r in ALL if r.setup == "claude-code"]
PROMPT_TOOL = (
    "--permission-prompt-tool",
    "mcp__loopx__permission_prompt",
)  # what `loopx run` passes (runtimes/claude_code.py)


def _turn_of_a_runner(project, model, runtime, steps):
    """One `claude -p` turn started as `loopx run` starts it: LOOPX_TURN_ID set (nobody at that
    terminal), LoopX's permission prompt tool named, Claude Code's own permission mode."""
    from . import runtimes
    from .harness import _session, claude_env

    model.script(steps)
    cmd = [
        str(runtimes.binary(runtime.name)),
        "-p",
        "Do the next step of your card.",
        "--output-format",
        "stream-json",
        "--verbose",
        "--permission-mode",
        "default",
        "--allowedTools",
        "mcp__loopx",
        *PROMPT_TOOL,
    ]
    return _session(project, model, runtime.name, cmd, dict(claude_env(project, model), LOOPX_TURN_ID="turn-29"))


def _hear_hooks(project, *events):
    """A hook of the test's own beside LoopX's for each of ``events``, noting the event's name
    when Claude Code runs it; returns a reader of the names heard."""
    import json

    heard = project.root.parent / "hooks-heard.jsonl"
    settings = project.root / ".claude" / "settings.json"
    data = json.loads(settings.read_text())
    for event in events:
        data["hooks"].setdefault(event, []).append(
            {"hooks": [{"type": "command", "command": f"/bin/sh -c 'cat >> {heard}; echo >> {heard}'"}]}
        )
    settings.write_text(json.dumps(data))
    return lambda: (
        {json.loads(line)["hook_event_name"] for line in heard.read_text().splitlines() if line.strip()}
        if heard.exists()
        else set()
    )


@pytest.mark.parametrize("runtime", CLAUDES, ids=repr)
@pytest.mark.parametrize("decision", ["approve", "reject"])
def test_claude_codes_own_permission_question_is_answered_on_the_board(project, model, runtime, decision):
    """#29: Claude Code asks its own permission question (not bypassed); it joins the person's
    queue as a gate; the person's answer reaches the runtime: the command runs only when they
    approve. 2.1.335 asks through its PermissionRequest hook; 2.1.197 runs none under `-p` and
    asks through the permission prompt tool `loopx run` names (the loopx MCP server's).
    Without the sandbox: 2.1.197 allows a sandboxed command without asking."""
    agent, card = started(project, runtime, sandbox=False)
    project.git("init", "-q")
    heard = _hear_hooks(project, "PermissionRequest", "Notification")
    found: list = []
    thread = _person_answers_when_asked(project, (decision,), found)
    assert project.loopx("claim", card, "--agent", agent).data["action"] == "work"
    session = _turn_of_a_runner(
        project,
        model,
        runtime,
        [Call("Bash", {"command": "touch made-it.txt", "description": "make a file"}), Say("Done.")],
    )
    thread.join(timeout=120)  # (returns once the person has answered: a loaded machine may take seconds)
    assert session.code == 0, session.stderr[-2000:]
    assert found and found[1]["status"] == ("approved" if decision == "approve" else "rejected")
    assert (project.root / "made-it.txt").exists() == (decision == "approve")
    ran = heard()
    assert ("PermissionRequest" in ran) == (
        runtime.name == "claude-sdk"
    )  # 2.1.197: none under -p, the prompt tool asked
    assert "Notification" not in ran  # registered, but Claude Code notifies only from its interactive screen
    if decision == "reject":
        assert "the person said no" in (model.agent_requests()[1].last_tool_result() or "")


QUESTION = {
    "questions": [
        {
            "question": "Which date parser should I use?",
            "header": "Parser",
            "multiSelect": False,
            "options": [
                {"label": "dateutil", "description": "the third-party parser"},
                {"label": "stdlib", "description": "datetime.strptime"},
            ],
        }
    ]
}


@pytest.mark.parametrize("runtime", CLAUDES, ids=repr)
def test_claude_codes_question_tool_is_answered_on_the_board(project, model, runtime):
    """#29: the model asks the person with Claude Code's question tool (AskUserQuestion, offered
    under `-p` only with a permission prompt tool); the question becomes a gate offering its
    options; the person chooses one with `loopx gate answer --choose`; the model's next request
    carries that answer as the tool's result."""
    agent, card = started(project, runtime)
    found: list = []
    thread = _person_answers_when_asked(project, ("--choose", "stdlib"), found, asked="Which date parser should I use?")
    assert project.loopx("claim", card, "--agent", agent).data["action"] == "work"
    session = _turn_of_a_runner(
        project, model, runtime, [Call("AskUserQuestion", QUESTION), Say("I will use the standard library.")]
    )
    thread.join(timeout=120)  # (returns once the person has answered: a loaded machine may take seconds)
    assert session.code == 0, session.stderr[-2000:]
    asked, answered = found
    assert asked["options"] == ["dateutil", "stdlib"] and "[Parser]" in asked["question"] and asked["card"] == card
    assert answered["status"] == "approved" and answered["choice"] == "stdlib"
    result = model.agent_requests()[1].last_tool_result() or ""
    assert '"Which date parser should I use?"="stdlib"' in result, result
    assert len(project.gates()) == 1


def test_codex_asks_the_person_for_an_escalation_on_the_board(project, model, tmp_path):
    """#29: `codex exec` runs with the approval policy "never" (`-c approval_policy=…` is
    overridden: "approval policy is Never; reject command"); with `--approve-for-me` an
    escalation (a command asking to run outside the sandbox) is reviewed, and Codex 0.171 runs
    its PermissionRequest hooks before its automatic reviewer: LoopX's opens a gate, the person
    approves it, the command runs outside the sandbox."""
    from . import runtimes
    from .harness import _session, codex_env, codex_model_args

    codex = next(r for r in ALL if r.name == "codex")
    agent, card = started(project, codex)
    outside = tmp_path / "made-outside.txt"  # not writable from Codex's sandbox
    found: list = []
    thread = _person_answers_when_asked(project, ("approve",), found)
    assert project.loopx("claim", card, "--agent", agent).data["action"] == "work"
    model.script(
        [
            Call(
                "exec_command",
                {
                    "cmd": f"touch {outside}",
                    "sandbox_permissions": "require_escalated",
                    "justification": "write the fixture outside",
                },
            ),
            Say("Done."),
        ]
    )
    cmd = [
        str(runtimes.binary("codex")),
        "exec",
        "--json",
        "--skip-git-repo-check",
        *codex_model_args(model),
        "--approve-for-me",
        "Do the next step of your card.",
    ]
    session = _session(project, model, "codex", cmd, dict(codex_env(project), LOOPX_TURN_ID="turn-29"))
    thread.join(timeout=120)  # (returns once the person has answered: a loaded machine may take seconds)
    assert session.code == 0, session.stderr[-2000:]
    asked, answered = found
    assert (
        asked["question"].startswith(f"Codex ({agent}) asks to use Bash on {card}")
        and str(outside) in asked["question"]
    )
    assert answered["status"] == "approved"
    assert outside.exists()
    assert "guardian" not in (
        model.agent_requests()[1].last_tool_result() or ""
    )  # the person decided, not Codex's reviewer
