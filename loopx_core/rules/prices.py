"""Token prices, so usage the hooks measure is charged in dollars too.

A board keeps one price list in its ``prices`` setting:
``{model: {"input": $, "output": $, "cache_read": $, "cache_write": $}}`` in
dollars per million tokens. There is no built-in table — prices change and
differ by contract — so a model without a price is charged $0 and the hook says
how to add one. A model matches its exact name first, else the longest
listed prefix (``claude-sonnet-4`` prices ``claude-sonnet-4-6``).
"""

from __future__ import annotations

import json

TYPE_CHECKING = False  # (annotations only; checkers read this as typing's)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Protocol, TypeVar

    T = TypeVar("T")
    PersonT = TypeVar("PersonT", contravariant=True)

    class SignedSettings(Protocol[PersonT]):
        """The store as the price list uses it (``store.base.Store``; a person is
        authority's ``keys.Person``, which a rule does not import)."""

        def signed_setting(self, key: str) -> str | None: ...
        def put_signed_setting(
            self, key: str, value: str, person: PersonT, kind: str = ..., **extra: object
        ) -> None: ...
        def run(self, body: Callable[[], T]) -> T: ...


KINDS = ("input", "output", "cache_read", "cache_write")
SETTING = "prices"


def load(store: SignedSettings[PersonT]) -> dict[str, dict[str, float]]:
    """The price list a person signed (prices edited in the database count for nothing)."""
    raw = store.signed_setting(SETTING) or "{}"
    try:
        table = json.loads(raw)
    except ValueError:
        return {}
    return table if isinstance(table, dict) else {}


def lookup(table: dict[str, dict], model: str | None) -> dict | None:
    if not model:
        return None
    if model in table:
        return table[model]
    keys = [k for k in table if model.startswith(k)]
    return table[max(keys, key=len)] if keys else None


def cost(price: dict, parts: dict[str, int]) -> float:
    """Dollars for token counts by kind (input, output, cache_read, cache_write).
    A kind without its own price costs what input costs."""
    total = 0.0
    for kind, tokens in parts.items():
        rate = price.get(kind)
        if rate is None:
            rate = price.get("input", 0.0)
        total += tokens * rate / 1_000_000
    return round(total, 6)


def _save(
    store: SignedSettings[PersonT], table: dict[str, dict[str, float]], person: PersonT, kind: str, **extra: object
) -> None:
    """The new list, signed: the ``price_set``/``price_removed`` event is the proof."""
    store.put_signed_setting(SETTING, json.dumps(table, sort_keys=True), person, kind, **extra)


def set_price(store: SignedSettings[PersonT], model: str, price: dict[str, float], actor: PersonT) -> dict[str, float]:
    """Add or replace a model's price (one transaction): a person's decision,
    signed (``actor``: a ``keys.Person``)."""

    def body() -> dict[str, float]:
        table = load(store)
        table[model] = {k: price[k] for k in KINDS if price.get(k) is not None}
        _save(store, table, actor, "price_set", model=model, **table[model])
        return table[model]

    return store.run(body)


def remove_price(store: SignedSettings[PersonT], model: str, actor: PersonT) -> bool:
    def body() -> bool:
        table = load(store)
        if model not in table:
            return False
        del table[model]
        _save(store, table, actor, "price_removed", model=model)
        return True

    return store.run(body)
