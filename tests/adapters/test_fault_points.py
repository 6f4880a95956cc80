"""``LOOPX_FAULT`` (tests/faults) never reaches the hook: an agent that put it
in the hook's environment would turn the person's check into a dead hook,
which a runtime reads as "no objection" and runs the tool (#30)."""

from __future__ import annotations

import pytest

from tests.adapters.conftest import deny_reason, payload


@pytest.mark.parametrize("point", ["commit:1", "committed:1"])
def test_the_hook_never_honours_a_fault_point(hooks, working, point):
    data = payload("claude/pre_tool_use_bash.json", COMMAND="git push origin main", CWD=str(working.root))
    res = hooks.spawn("claude-code", "pre-tool-use", data, env={"LOOPX_FAULT": point})
    assert res.code == 0, res
    assert "gate" in deny_reason(res).lower()  # it wrote the gate (a transaction) and still answered
