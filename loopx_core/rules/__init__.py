"""The rules: one module per rule, standard library only.

Every path that needs a rule imports it from here — the operators, the hooks'
cold path (``adapters/fastcheck.py`` over bare ``sqlite3``), the watcher — so a
rule has one definition. Nothing in this package imports the store, pydantic,
Textual or an adapter (tests/test_layers.py)."""
