"""The human key file: sealed, private, and found where the person's other
config lives (SECURITY.md "The human key")."""

from __future__ import annotations

import json
import os
import stat

import pytest

from loopx_core.authority import chain, keys
from loopx_core.shapes.errors import Forbidden, InvalidInput


def test_a_sealed_key_keeps_its_secret_and_needs_its_passphrase(tmp_path):
    made = keys.create(tmp_path / "k" / "key.json", "alice", "s3cret passphrase")
    raw = made.path.read_text()
    doc = json.loads(raw)
    assert made.sealed and "plain" not in doc["secret"] and doc["secret"]["kdf"] == "scrypt"
    assert stat.S_IMODE(os.stat(made.path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(made.path.parent).st_mode) == 0o700
    person = made.unlock("s3cret passphrase")
    assert person.fingerprint == made.fingerprint and person.actor == "human:alice"
    with pytest.raises(Forbidden, match="wrong passphrase"):
        made.unlock("not it")
    with pytest.raises(Forbidden, match="locked with a passphrase"):
        made.unlock(None)
    # What it signs verifies with its public half only.
    sig = person.sign(chain.signed_message("ab" * 32))
    assert keys.verify_signature(made.public_raw, sig, chain.signed_message("ab" * 32))
    assert not keys.verify_signature(made.public_raw, sig, chain.signed_message("cd" * 32))


def test_a_key_file_that_is_damaged_or_foreign_says_what_to_do(tmp_path):
    path = tmp_path / "key.json"
    path.write_text("{not json")
    with pytest.raises(InvalidInput, match="cannot read your LoopX key") as err:
        keys.read(path)
    assert "loopx key init --force" in err.value.hint
    assert keys.read(tmp_path / "missing.json") is None
    with pytest.raises(Forbidden, match="no LoopX key"):
        keys.unlock(tmp_path / "missing.json")
    made = keys.create(tmp_path / "ok.json", "bob", None)
    other = keys.create(tmp_path / "other.json", "eve", None)
    doc = json.loads(made.path.read_text())
    doc["public"] = json.loads(other.path.read_text())["public"]  # halves from two keys
    made.path.write_text(json.dumps(doc))
    with pytest.raises(InvalidInput, match="damaged"):
        keys.read(made.path).unlock()


def test_the_key_lives_in_the_users_config_folder(monkeypatch, tmp_path):
    from platformdirs import user_config_dir

    monkeypatch.delenv("LOOPX_KEY", raising=False)
    for value in (str(tmp_path / "xdg"), None):
        if value is None:
            monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
        else:
            monkeypatch.setenv("XDG_CONFIG_HOME", value)
        assert keys.config_dir() == __import__("pathlib").Path(user_config_dir("loopx"))
        assert keys.key_path() == keys.config_dir() / "key.json"
    monkeypatch.setenv("LOOPX_KEY", str(tmp_path / "elsewhere.json"))
    assert keys.key_path() == tmp_path / "elsewhere.json"


def test_key_verbs_make_show_and_reseal(board, tmp_path, monkeypatch):
    monkeypatch.setenv("LOOPX_KEY", str(tmp_path / "new.json"))
    made = board.cli("key", "init", "--no-passphrase", "--name", "carol")
    assert made.code == 0 and made.data["key"]["name"] == "carol" and made.data["key"]["sealed"] is False
    assert "NO passphrase" in board.cli("key", "show", json_out=False).out
    again = board.cli("key", "init", "--no-passphrase")
    assert again.code == 2 and "already exists" in again.data["error"]["message"]
    assert board.cli("key", "init", agent="a1").code == 10
    assert board.cli("key", "init", "--name", "no spaces please", "--no-passphrase", "--force").code == 2
    shown = board.ok("key", "show")["key"]
    assert (
        shown["public_key"] == made.data["key"]["public_key"]
        and shown["fingerprint"] == made.data["key"]["fingerprint"]
    )
    assert board.cli("key", "init").code == 2  # a passphrase needs a terminal to be typed on
