"""The board runs the file watcher as a worker: evidence dropped in the inbox shows up on the card."""

from __future__ import annotations

import json

from tests.polling import until_async


async def test_an_evidence_file_in_the_inbox_reaches_the_card_on_screen(make_app, seeded):
    app = make_app(background=True, poll_interval=0.02)
    async with app.run_test(size=(140, 40)) as pilot:
        await pilot.pause()
        held = [c for c in app.model.cards.values() if c.status == "active" and c.lease is not None]
        assert held, "the seeded board has an active card"
        card = held[0]
        before = card.evidence_count
        inbox = seeded.root / ".loopx" / "inbox"
        inbox.mkdir(parents=True, exist_ok=True)
        doc = {"card": card.key, "agent": card.lease.holder, "summary": "from a file", "turn_id": "file-turn-1"}
        tmp = inbox / "turn.tmp"
        tmp.write_text(json.dumps(doc))
        tmp.rename(inbox / "turn.loopx.json")  # an atomic write, as agents should
        await until_async(
            lambda: app.model.cards[card.id].evidence_count != before,
            what="the document's evidence on the board",
            pause=lambda: pilot.pause(0.05),
        )
        assert app.model.cards[card.id].evidence_count == before + 1
