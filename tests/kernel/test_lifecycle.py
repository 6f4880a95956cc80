"""The card lifecycle has one home: ``ops/lifecycle`` is the only code that
sets a card's status, when it is made (``create``) and when it moves
(``move``), checked against ``rules/lifecycle.ENTERS`` (the table the replay
folds too); and the due rule's SQL and Python forms, both
made from ``rules/lifecycle.DUE``, agree on every row."""

from __future__ import annotations

import ast
import sqlite3
from pathlib import Path
from types import SimpleNamespace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from loopx_core.rules import lifecycle

ROOT = Path(__file__).resolve().parents[2]
HOME = ("loopx_core/ops/lifecycle.py",)
# The replay folds events into the rows they should leave (what `verify`
# compares): it computes statuses, it writes nothing.
PROJECTION = ("loopx_core/authority/replay.py",)
NOT_CARDS = {"gate", "g"}  # a gate's own status (pending, approved, …) is the gate operators'


def _status_writes(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        targets = (
            node.targets
            if isinstance(node, ast.Assign)
            else [node.target]
            if isinstance(node, (ast.AugAssign, ast.AnnAssign))
            else []
        )
        for target in targets:
            for item in target.elts if isinstance(target, ast.Tuple) else [target]:
                if isinstance(item, ast.Attribute) and item.attr == "status":
                    owner = item.value.id if isinstance(item.value, ast.Name) else ast.unparse(item.value)
                    if owner not in NOT_CARDS:
                        found.append(f"{path.relative_to(ROOT)}:{node.lineno} {owner}.status")
        if isinstance(node, ast.Call) and _makes_a_card(node.func) and any(k.arg == "status" for k in node.keywords):
            found.append(f"{path.relative_to(ROOT)}:{node.lineno} a card made with its status")
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "setattr"
            and len(node.args) > 1
        ):
            if isinstance(node.args[1], ast.Constant) and node.args[1].value == "status":
                found.append(f"{path.relative_to(ROOT)}:{node.lineno} setattr status")
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            text = " ".join(node.value.replace("'", '"').split())
            if 'SET "status"' in text or ('INSERT INTO "card"' in text and "status" in text):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno} SQL")
    return found


def _makes_a_card(func: ast.expr) -> bool:
    """``Card(...)``, ``Card.create(...)``, ``Card.insert(...)``, ``models.Card.create(...)``: a new card row."""
    if isinstance(func, ast.Attribute) and func.attr in ("create", "insert", "get_or_create", "replace"):
        func = func.value
    return (isinstance(func, ast.Name) and func.id == "Card") or (
        isinstance(func, ast.Attribute) and func.attr == "Card"
    )


def test_only_the_lifecycle_writes_a_cards_status():
    sources = [
        p for p in sorted((ROOT / "loopx_core").rglob("*.py")) if str(p.relative_to(ROOT)) not in HOME + PROJECTION
    ]
    writes = [w for p in sources for w in _status_writes(p)]
    assert writes == [], "set a card's status with ops/lifecycle.move(card, to, event kind):\n" + "\n".join(writes)
    home = _status_writes(ROOT / HOME[0])
    assert any("card.status" in w for w in home) and any(
        "made with its status" in w for w in home
    )  # the check sees a move and a birth


def test_a_move_the_table_does_not_have_is_refused():
    from loopx_core.ops.lifecycle import move

    card = SimpleNamespace(status="ready")
    move(card, "active", "claimed")
    assert card.status == "active"
    for to, kind in (("done", "claimed"), ("active", "released"), ("limbo", "card_moved"), ("ready", "no_such_event")):
        with pytest.raises(AssertionError):
            move(card, to, kind)
    assert card.status == "active"


def test_every_status_an_event_names_is_a_status():
    for kind, leaves in lifecycle.ENTERS.items():
        for status in (leaves,) if isinstance(leaves, str) else leaves or ():
            assert status in lifecycle.STATUSES, kind
    assert set(lifecycle.FROM_DATA) == {k for k, v in lifecycle.ENTERS.items() if v is None}


# -- the due rule: SQL and Python from one table -------------------------------------------

CLOCK = st.one_of(st.none(), st.floats(min_value=0, max_value=200, allow_nan=False))
CARDS = st.lists(
    st.fixed_dictionaries(
        {
            "status": st.sampled_from(lifecycle.STATUSES),
            "paused_reason": st.sampled_from([None, "window", "budget", "no_progress"]),
            "lease_expires": CLOCK,
            "wake_at": CLOCK,
            "lease_holder": st.sampled_from([None, "a1", "a2"]),
        }
    ),
    max_size=8,
)
GATES = st.lists(
    st.fixed_dictionaries(
        {
            "status": st.sampled_from(["pending", "approved", "rejected", "expired", "withdrawn"]),
            "deadline": CLOCK,
            "agent": st.sampled_from(["a1", "a2"]),
        }
    ),
    max_size=6,
)


@settings(max_examples=300, deadline=None)
@given(
    cards=CARDS,
    gates=GATES,
    now=st.floats(min_value=0, max_value=200, allow_nan=False),
    agent=st.sampled_from([None, "a1"]),
)
def test_the_due_rules_sql_and_python_forms_agree(cards, gates, now, agent):
    con = sqlite3.connect(":memory:")
    con.execute(
        'CREATE TABLE "card" ("id" INTEGER PRIMARY KEY, "status" TEXT, "paused_reason" TEXT, "lease_expires" REAL, "wake_at" REAL, "lease_holder" TEXT)'
    )
    con.execute(
        'CREATE TABLE "gate" ("id" INTEGER PRIMARY KEY, "card_id" INTEGER, "status" TEXT, "deadline" REAL, "agent" TEXT)'
    )
    for i, c in enumerate(cards, 1):
        con.execute(
            'INSERT INTO "card" VALUES (?, ?, ?, ?, ?, ?)',
            (i, c["status"], c["paused_reason"], c["lease_expires"], c["wake_at"], c["lease_holder"]),
        )
    for i, g in enumerate(gates, 1):
        con.execute('INSERT INTO "gate" VALUES (?, ?, ?, ?, ?)', (i, i, g["status"], g["deadline"], g["agent"]))
    rows = {
        "card": [SimpleNamespace(id=i, **c) for i, c in enumerate(cards, 1)],
        "gate": [SimpleNamespace(id=i, card_id=i, **g) for i, g in enumerate(gates, 1)],
    }
    python_any = False
    for due in lifecycle.DUE:
        mine = agent is not None
        by_sql = sorted(
            c
            for (c,) in con.execute(
                lifecycle.due_sql(due, f'"{due.card}"', mine=mine), (now, agent) if mine else (now,)
            )
        )
        by_python = sorted(
            getattr(r, due.card)
            for r in rows[due.table]
            if lifecycle.is_due(due, r, now) and (not mine or getattr(r, due.who) == agent)
        )
        assert by_sql == by_python, due.name
        python_any |= any(lifecycle.is_due(due, r, now) for r in rows[due.table])
        clocks = [
            getattr(r, due.clock)
            for r in rows[due.table]
            if all(getattr(r, c) == v for c, v in due.state) and getattr(r, due.clock) is not None
        ]
        assert con.execute(lifecycle.next_sql(due)).fetchone()[0] == (min(clocks) if clocks else None), due.name
    assert bool(con.execute(lifecycle.DUE_SQL, (now,) * len(lifecycle.DUE)).fetchall()) == python_any
