"""The evidence row says when its writer is not verified (an inbox document)."""

from __future__ import annotations

from loopx_core.shapes.values import EvidenceView
from loopx_tui.widgets.evidence_log import evidence_text

T = 1_800_000_000.0


def row(unverified: bool) -> EvidenceView:
    return EvidenceView(
        id=3,
        card=1,
        agent="w1",
        turn_id="inbox-ab12",
        summary="w1 finished everything",
        artifacts=(),
        next_action=None,
        todos_added=(),
        todos_done=(),
        tokens_in=0,
        tokens_out=0,
        tokens=50,
        usd=0.0,
        source="file",
        created_at=T,
        unverified=unverified,
    )


def test_an_unverified_writer_is_marked_on_the_evidence_row():
    marked = evidence_text(row(True), T + 60).plain
    assert "E-3" in marked and "w1" in marked and "UNVERIFIED writer (inbox)" in marked
    assert "UNVERIFIED" not in evidence_text(row(False), T + 60).plain
