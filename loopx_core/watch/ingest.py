"""Ingesting one path, given the board: idempotent, safe to run from two
processes at once, and the same code whether it runs headless or in the TUI.

Every document goes through the ``writeback`` operator (source ``file``), so a
file is held to exactly the rules and messages of ``loopx writeback --input``.
Each document (or JSONL line) is handled in one write transaction: the check
"already handled?", the writeback (in a savepoint, so a refusal leaves nothing
behind) and the record of the outcome (``IngestSeen``) commit together. Two
watchers on one board therefore never ingest or report the same thing twice.

Identity: a document's turn id is its ``turn_id``, else ``file-`` and a hash of
its validated content. The same content twice — in two files, after a restart,
from a second watcher — is a no-op. A refusal is keyed by file, line and
content (and, for a ``*.loopx.json``, the file's inode, size and mtime), so it
is reported once, and again only when the file changes.

Nothing here is async or Textual-aware: the watcher runs these methods in one
worker thread with its own connection.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat as statmod
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO, NamedTuple, TypeVar

from ..ops import leases, observed
from ..rules import clock, ids
from ..rules.artifacts import hash_within, inside, real, too_large, too_large_text
from ..rules.text import terminal_safe
from ..shapes.errors import Forbidden, InvalidInput, LoopxError
from .rules import Origin, display

if TYPE_CHECKING:
    from collections.abc import Callable

    from ..store.base import Store
    from ..store.columns import CardColumns

T = TypeVar("T")  # what a transaction's body returns

MAX_DOC = 4 << 20  # a document larger than this is refused, not read
MAX_LINE = 4 << 20  # likewise one JSONL line
READ_CHUNK = 1 << 20  # a stream is read (and committed) in pieces of about this size
LINES_PER_TXN = 200  # ... and at most this many lines per write transaction
TAIL = 64  # bytes before a stream's offset that must not change (else: rewritten)
HEAD = 4096  # ... and the first bytes of a stream likewise
STREAM_REFUSALS = 20  # refused lines of one stream (path) reported one by one; then one event says the rest are not
MTIME_SLACK = 0.05  # file mtimes come from a coarse kernel clock, a few ms behind time.time()
UNUSABLE_JSON = (
    UnicodeDecodeError,
    ValueError,
    RecursionError,
)  # JSONDecodeError is a ValueError; too deep; an integer of thousands of digits
_CARD_HINT = re.compile(rb'"card"\s*:\s*"?\s*(?:[Ll][Xx]-)?(\d{1,12})')


class Result(NamedTuple):
    """One outcome the watcher reports (``on_result``)."""

    kind: str  # ingested | duplicate | refused | observed | notice
    path: str  # absolute path of the file ("" for a notice about no file)
    file: str  # the path as shown: relative to the project when inside it
    line: int | None = None  # 1-based line of a JSONL stream (or of a JSON syntax error)
    card: int | None = None
    agent: str | None = None
    evidence: int | None = None  # E-n for ingested/duplicate
    message: str = ""
    hint: str = ""
    code: str | None = None  # the refusal's error code (same as the CLI's)

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}" if self.line else self.file

    def to_json(self) -> dict:
        out = {
            "kind": self.kind,
            "file": self.file,
            "line": self.line,
            "card": ids.fmt(ids.CARD, self.card),
            "agent": self.agent,
        }
        if self.evidence is not None:
            out["evidence"] = ids.fmt(ids.EVIDENCE, self.evidence)
        if self.message:
            out["message"] = self.message
        if self.hint:
            out["hint"] = self.hint
        if self.code:
            out["code"] = self.code
        return out

    def text(self) -> str:
        """One outcome for a terminal: a file name (and a message naming it) is
        one line, whatever bytes it holds — a newline in a name cannot forge a
        line of its own; the printer makes the rest terminal-safe."""
        return self._replace(
            file=terminal_safe(self.file) if self.file else self.file,
            agent=terminal_safe(self.agent) if self.agent else self.agent,
            message=terminal_safe(self.message) if self.message else self.message,
        )._text()

    def _text(self) -> str:
        card = ids.fmt(ids.CARD, self.card)
        if self.kind in ("ingested", "duplicate"):
            verb = "ingested" if self.kind == "ingested" else "already had"
            return f"{verb} {ids.fmt(ids.EVIDENCE, self.evidence)} on {card} from {self.where} ({self.agent})"
        if self.kind == "refused":
            on = f" [{card}]" if card else ""
            return f"refused {self.where}{on}: {self.message}" + (f"\n  → {self.hint}" if self.hint else "")
        if self.kind == "observed":
            return f"observed {self.file} on {card} ({self.agent}, {self.message})"
        return self.message


def _hash(*parts: object) -> str:
    digest = hashlib.sha256()
    for part in parts:
        digest.update(part if isinstance(part, bytes) else str(part).encode("utf-8", "surrogatepass"))
        digest.update(b"\0")
    return digest.hexdigest()


def _canonical(obj: object) -> bytes:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8", "surrogatepass")


def signature(st: os.stat_result) -> tuple[int, int, int]:
    return (st.st_ino, st.st_size, st.st_mtime_ns)


class Ingestor:
    """Ingestion against one open board. Not thread-safe: one thread uses it."""

    def __init__(self, store: Store, *, settle: float = 1.0):
        self.store = store
        self.settle = settle
        self.project_root = Path(os.path.normpath(store.project_root()))
        self.real_root = real(self.project_root)  # the project as it really is (it may be reached through a symlink)
        self._seen: set[str] = set()  # IngestSeen keys known to this process
        self._done_sig: dict[str, tuple] = {}  # doc path -> signature fully handled
        self._pending_sig: dict[str, tuple] = {}  # doc/stream path -> signature that looked unfinished
        self._stream_sig: dict[str, tuple] = {}  # stream path -> signature read to its end
        self._observed_sig: dict[tuple[str, str], tuple] = {}  # (agent, path) -> signature observed
        self._hashes: dict[tuple, tuple[int, str]] = {}  # signature -> (size, sha256), for observed files
        self._uncommitted: list[str] = []  # keys recorded by the transaction in progress
        self._held: dict[str, tuple[int, float] | None] = {}  # agent -> (card, lease start), this batch
        self._refused_lines: dict[str, int] = {}  # stream path -> its refused lines on the board (STREAM_REFUSALS)
        self._in_batch = False

    def new_batch(self) -> None:
        """Forget per-batch lookups (who holds what): called before each job."""
        self._held.clear()

    def _caches(self) -> tuple[dict, ...]:
        return (dict(self._done_sig), dict(self._pending_sig), dict(self._stream_sig), dict(self._observed_sig))

    def _restore(self, saved: tuple[dict, ...]) -> None:
        self._done_sig, self._pending_sig, self._stream_sig, self._observed_sig = (dict(c) for c in saved)

    def batch(self, work: Callable[[], T]) -> T:
        """Run ``work()`` — several files — in one write transaction, so a burst
        pays one commit per batch rather than one per document. Each document
        still runs in its own savepoint (one that fails leaves nothing behind),
        and what this object remembers about files is rolled back with the
        transaction if it does not commit."""
        saved = self._caches()

        def attempt() -> T:
            self._restore(saved)
            self._uncommitted = []
            return work()

        self._in_batch = True
        try:
            result = self.store.run(attempt)
        except BaseException:
            self._restore(saved)
            raise
        finally:
            self._in_batch = False
            keys, self._uncommitted = self._uncommitted, []
        self._seen.update(keys)  # reached only once the batch committed
        return result

    def _run(self, body: Callable[[], T]) -> T:
        """``store.run`` that remembers the keys it recorded only once they are
        committed (a retried or rolled-back body must not leave them behind)."""
        if self._in_batch:  # a savepoint: its keys wait for the batch's commit
            mark = len(self._uncommitted)
            try:
                return self.store.run(body)
            except BaseException:
                del self._uncommitted[mark:]
                raise

        def attempt() -> T:
            self._uncommitted = []
            return body()

        try:
            result = self.store.run(attempt)
        finally:
            keys, self._uncommitted = self._uncommitted, []
        self._seen.update(keys)
        return result

    # -- setup ------------------------------------------------------------------
    def load(self) -> int:
        """Preload the keys of what was handled before (a restart skips it cheaply)."""
        with self.store.read():
            self._seen = observed.seen_keys()
        return len(self._seen)

    def show(self, path: str) -> str:
        return display(path, self.project_root)

    def forget(self, path: str) -> None:
        """The file is gone: drop what we remember of it (the board keeps its state)."""
        for cache in (self._done_sig, self._pending_sig, self._stream_sig):
            cache.pop(path, None)
        for key in [k for k in self._observed_sig if k[1] == path]:
            del self._observed_sig[key]

    def is_pending(self, path: str) -> bool:
        return path in self._pending_sig

    def _regular_file(self, path: str) -> os.stat_result | None:
        """The file's stat, or None when it is gone (forgotten) or not a regular file."""
        try:
            st = os.stat(path)
        except (FileNotFoundError, NotADirectoryError):
            self.forget(path)
            return None
        return st if statmod.S_ISREG(st.st_mode) else None

    # -- *.loopx.json ---------------------------------------------------------------
    def _within(self, origin: Origin) -> list[str]:
        """Where a file found through ``origin`` may really be: the project, or the folder it was found in."""
        return [self.real_root, *(real(f) for f in origin.folders)]

    def _escapes(self, path: str, show: str, origin: Origin, sig: tuple) -> list[Result] | None:
        """A document or stream that is a symlink (or sits in a symlinked folder)
        leading out of the project and out of the folder it was found in is
        refused, never read; None when it does not escape."""
        where = real(path)
        if any(inside(where, r) for r in self._within(origin)):
            return None
        whose = "the inbox" if origin.inbox else "the watch folder of " + ", ".join(origin.agents)
        err = InvalidInput(
            f"{show} leads outside the project and {whose} (a symlink); it is not read",
            "write evidence documents as real files in the watch folder (or link only to files inside the project)",
            code="outside_folder",
        )
        self._done_sig[path] = sig
        return self._refuse_alone(path, show, None, None, err, _hash("doc-escapes", path, sig))

    def doc(self, path: str, *, origin: Origin, final: bool = False) -> tuple[list[Result], bool]:
        """Ingest one evidence document found through ``origin`` (the folders
        that hold it). Returns (results, pending): pending when it does not
        parse yet and may still be being written (retry on the next change;
        ``final=True`` once it stayed unchanged for the settle period)."""
        st = self._regular_file(path)
        if st is None:
            return [], False
        sig = signature(st)
        if self._done_sig.get(path) == sig:
            return [], False
        if final and self._pending_sig.get(path) != sig:
            final = False  # it changed since it looked unfinished: start over
        show = self.show(path)
        escaped = self._escapes(path, show, origin, sig)
        if escaped is not None:
            return escaped, False
        if st.st_size > MAX_DOC:
            err = InvalidInput(
                f"document is {st.st_size} bytes, more than {MAX_DOC >> 20} MB",
                "an evidence document is one small JSON object",
            )
            out = self._refuse_alone(path, show, None, None, err, _hash("doc-refused", path, sig))
            self._done_sig[path] = sig
            return out, False
        try:
            with open(path, "rb") as handle:
                raw = handle.read(MAX_DOC + 1)
        except FileNotFoundError:
            self.forget(path)
            return [], False
        except OSError as exc:  # refused once; looked at again only when it changes
            self._done_sig[path] = sig
            err = InvalidInput(
                f"cannot read {show}: {exc.strerror or exc}",
                "make the document readable by the watcher's user (it is read again when it changes)",
                code="unreadable",
            )
            return self._refuse_alone(path, show, None, None, err, _hash("doc-unreadable", path, sig)), False
        refused_key = _hash("doc-refused", path, sig, raw)
        if refused_key in self._seen:
            self._done_sig[path] = sig
            self._pending_sig.pop(path, None)
            return [], False
        try:
            obj = json.loads(raw.decode("utf-8"))
        except UNUSABLE_JSON as exc:
            if not final and isinstance(exc, (UnicodeDecodeError, json.JSONDecodeError)):
                self._pending_sig[path] = sig
                return [], True
            if not isinstance(exc, (UnicodeDecodeError, json.JSONDecodeError)):  # nested too deep, a number too long
                err, line = (
                    InvalidInput(
                        f"{show} is not a usable JSON document ({_why(exc)})",
                        "an evidence document is one flat JSON object",
                    ),
                    None,
                )
            elif isinstance(exc, UnicodeDecodeError):
                err, line = InvalidInput(f"{show} is not UTF-8 text", "write the document as UTF-8 JSON"), None
            elif not raw.strip():
                err, line = (
                    InvalidInput(
                        f"{show} is empty", "an evidence document is one JSON object: card, agent, summary, …"
                    ),
                    None,
                )
            else:
                err, line = (
                    InvalidInput(
                        f"not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}",
                        "an evidence document is one JSON object; write it atomically (temp file + rename)",
                    ),
                    exc.lineno,
                )
            self._pending_sig.pop(path, None)
            self._done_sig[path] = sig
            return self._refuse_alone(path, show, line, _card_hint(raw), err, refused_key), False
        self._pending_sig.pop(path, None)
        out = self._run(lambda: self._apply(obj, raw, path, show, None, refused_key, origin))
        self._done_sig[path] = sig
        return out, False

    # -- *.loopx.jsonl ----------------------------------------------------------------
    def stream(self, path: str, *, origin: Origin, final: bool = False) -> tuple[list[Result], bool]:
        """Ingest the complete lines a stream gained since its stored offset.
        Returns (results, pending): pending when an unterminated last line is left
        (``final=True`` once it stayed unchanged: ingested if it is a whole JSON
        object, else reported)."""
        st = self._regular_file(path)
        if st is None:
            return [], False
        sig = signature(st)
        if final and self._pending_sig.get(path) != sig:
            final = False
        if not final and self._stream_sig.get(path) == sig:
            return [], path in self._pending_sig
        show = self.show(path)
        escaped = self._escapes(path, show, origin, sig)
        if escaped is not None:
            self._stream_sig[path] = sig
            return escaped, False
        out: list[Result] = []
        while True:
            try:
                results, more, leftover = self._run(lambda: self._stream_step(path, show, final, origin))
            except FileNotFoundError:
                self.forget(path)
                return out, False
            out.extend(results)
            if not more:
                break
        self._stream_sig[path] = sig
        if leftover:
            self._pending_sig[path] = sig
        else:
            self._pending_sig.pop(path, None)
        return out, leftover

    def _stream_step(self, path: str, show: str, final: bool, origin: Origin) -> tuple[list[Result], bool, bool]:
        """One transaction: read from the stored offset, apply up to
        ``LINES_PER_TXN`` lines, store the new offset. Returns (results, more, leftover)."""
        out: list[Result] = []
        now = clock.now()
        row = observed.stream_mark(path)
        with open(path, "rb") as handle:
            st = os.fstat(handle.fileno())
            offset, lines = (row.offset, row.lines) if row else (0, 0)
            why = None
            if row is not None:
                if row.inode is not None and row.inode != st.st_ino:
                    why = "was replaced"
                elif st.st_size < row.offset:
                    why = "was truncated"
                elif row.offset and (_fingerprint(handle, row.offset) != (row.head, row.tail)):
                    why = "was rewritten"
            if why:
                offset, lines = 0, 0
                out.append(
                    Result(
                        "notice",
                        path,
                        show,
                        message=f"{show} {why}: reading it again from the start (lines already ingested are skipped)",
                    )
                )
            handle.seek(offset)
            buf = handle.read(READ_CHUNK)
            while b"\n" not in buf and len(buf) < MAX_LINE + 1:
                chunk = handle.read(READ_CHUNK)
                if not chunk:
                    break
                buf += chunk
            at_eof = offset + len(buf) >= st.st_size
            consumed = 0
            applied = 0
            leftover = False
            while applied < LINES_PER_TXN:
                nl = buf.find(b"\n", consumed)
                if nl < 0:
                    rest = buf[consumed:]
                    if not rest.strip():
                        if at_eof:
                            consumed = len(buf)  # trailing blanks: nothing to keep
                        break
                    if len(rest) > MAX_LINE:
                        # A line longer than any document may be: report it once it
                        # ends, and skip past it.
                        pos = offset + len(buf)
                        handle.seek(pos)
                        end = None
                        while chunk := handle.read(READ_CHUNK):
                            i = chunk.find(b"\n")
                            if i >= 0:
                                end = pos + i + 1
                                break
                            pos += len(chunk)
                        if end is None:
                            break  # still being written
                        lines += 1
                        err = InvalidInput(
                            f"line is longer than {MAX_LINE >> 20} MB",
                            "one evidence document per line, each a small JSON object",
                        )
                        out.extend(
                            self._refuse_line(
                                path, show, lines, None, err, _hash("line-refused", path, st.st_ino, lines, "long")
                            )
                        )
                        consumed = end - offset
                        break
                    if not at_eof:
                        break
                    # An unterminated last line: wait for the writer, then decide.
                    if not final:
                        leftover = True
                        break
                    try:
                        obj = json.loads(rest.decode("utf-8"))
                        ok = isinstance(obj, dict)
                    except UNUSABLE_JSON:
                        ok = False
                    if not ok:
                        err = InvalidInput(
                            f"unfinished last line (no newline): {_short(rest)}",
                            "end every line of a .loopx.jsonl stream with a newline",
                        )
                        out.extend(
                            self._refuse_line(
                                path,
                                show,
                                lines + 1,
                                _card_hint(rest),
                                err,
                                _hash("line-refused", path, st.st_ino, lines + 1, rest),
                            )
                        )
                        break  # reported and kept: completing the line ingests it
                    line_bytes, end = rest, len(buf)
                else:
                    line_bytes, end = buf[consumed:nl], nl + 1
                lines += 1
                consumed = end
                if not line_bytes.strip():
                    continue
                applied += 1
                out.extend(self._line(line_bytes, path, show, lines, st.st_ino, origin))
            new_offset = offset + consumed
            head, tail = _fingerprint(handle, new_offset) if new_offset else (None, None)
        more = new_offset < st.st_size and not leftover and consumed > 0
        observed.save_stream_mark(path, observed.StreamMark(st.st_ino, new_offset, lines, head, tail), row, now)
        return out, more, leftover

    def _line(self, line: bytes, path: str, show: str, lineno: int, inode: int, origin: Origin) -> list[Result]:
        refused_key = _hash("line-refused", path, inode, lineno, line)
        if refused_key in self._seen:
            return []
        try:
            obj = json.loads(line.decode("utf-8"))
        except UnicodeDecodeError:
            return self._refuse_line(
                path,
                show,
                lineno,
                _card_hint(line),
                InvalidInput("line is not UTF-8 text", "write the stream as UTF-8 JSON lines"),
                refused_key,
            )
        except json.JSONDecodeError as exc:
            err = InvalidInput(
                f"not valid JSON: {exc.msg} at column {exc.colno}", "one evidence document (a JSON object) per line"
            )
            return self._refuse_line(path, show, lineno, _card_hint(line), err, refused_key)
        except (ValueError, RecursionError) as exc:
            err = InvalidInput(
                f"not a usable JSON document ({_why(exc)})", "one flat evidence document (a JSON object) per line"
            )
            return self._refuse_line(path, show, lineno, _card_hint(line), err, refused_key)
        return self._apply(obj, line, path, show, lineno, refused_key, origin, stream=True)

    # -- applying one document (inside the caller's transaction) -----------------------
    def _apply(
        self,
        obj: object,
        raw: bytes,
        path: str,
        show: str,
        line: int | None,
        refused_key: str,
        origin: Origin,
        *,
        stream: bool = False,
    ) -> list[Result]:
        from ..ops.writeback import writeback
        from ..shapes.inputs import validate

        refuse = self._refuse_line if stream else self._refuse

        if not isinstance(obj, dict):
            err = InvalidInput(
                "an evidence document must be a JSON object",
                'e.g. {"card": "LX-3", "agent": "claude-1", "summary": "…"}',
            )
            return refuse(path, show, line, None, err, refused_key)
        try:
            doc = validate("document", obj)
        except (ValueError, RecursionError) as exc:  # (InvalidInput is not one) a value nested too deep to check
            err = InvalidInput(
                f"not a usable evidence document ({_why(exc)})", "an evidence document is one flat JSON object"
            )
            return refuse(path, show, line, _card_hint(raw), err, refused_key)
        except InvalidInput as err:
            return refuse(path, show, line, _card_hint(raw), err, refused_key)
        card, agent = doc.pop("card"), doc.pop("agent")
        refusal = identity_refusal(show, agent, origin, doc)
        if refusal is not None:
            return refuse(path, show, line, card, refusal, refused_key, agent=agent)
        content = _hash("doc", _canonical({"card": card, "agent": agent, **doc}))
        if origin.inbox:
            # Its writer is not verified: it gets a turn id of its own, so it can
            # never pre-empt (or replay as) a turn of the agent it names.
            doc["turn_id"] = "inbox-" + content[:24]
        elif not doc.get("turn_id"):
            doc["turn_id"] = "file-" + content[:24]
        if content in self._seen:
            return []  # this exact content was handled before (here or by another watcher)
        if self._known(content):
            self._uncommitted.append(content)
            return []
        extra = {"file": show, "line": line} if line else {"file": show}
        try:
            evidence, _, created = writeback(
                self.store,
                card,
                agent,
                doc,
                source="file",
                base=self.project_root,
                extra=extra,
                unverified=origin.inbox,
            )
        except LoopxError as err:
            return refuse(path, show, line, card, err, refused_key, agent=agent)
        self._record(content, "ingested", show, line, card)
        kind = "ingested" if created else "duplicate"
        return [Result(kind, path, show, line, card, agent, evidence.id)]

    def _record(self, key: str, outcome: str, show: str, line: int | None, card: int | None) -> None:
        observed.mark_seen(self.store, key, outcome, show, line, card)
        self._uncommitted.append(key)

    def _known(self, key: str) -> bool:
        return observed.is_seen(self.store, key)

    def _refuse(
        self,
        path: str,
        show: str,
        line: int | None,
        card: int | None,
        err: LoopxError,
        key: str,
        agent: str | None = None,
    ) -> list[Result]:
        """Inside a transaction: report ``err`` once (an ``ingest_error`` event)."""
        if key in self._seen or self._known(key):
            self._uncommitted.append(key)
            return []
        if card is not None and not observed.card_exists(card):
            card = None
        data = {"file": show, "line": line, "reason": err.message, "hint": err.hint, "code": err.code}
        if agent:
            data["agent"] = agent
        observed.ingest_error(card, **data)
        self._record(key, "refused", show, line, card)
        return [Result("refused", path, show, line, card, agent, None, err.message, err.hint, err.code)]

    def _refuse_line(
        self,
        path: str,
        show: str,
        line: int | None,
        card: int | None,
        err: LoopxError,
        key: str,
        agent: str | None = None,
    ) -> list[Result]:
        """A refused line of a stream: reported one by one up to ``STREAM_REFUSALS``
        per stream, then once more to say the rest are not — so a stream of bad
        lines grows the log by at most STREAM_REFUSALS + 1 events."""
        if key in self._seen:
            return []
        count = self._refused_lines.get(path)
        if count is None:
            count = observed.refused_count(show)
        if count < STREAM_REFUSALS:
            out = self._refuse(path, show, line, card, err, key, agent)
            self._refused_lines[path] = count + (1 if out else 0)
            return out
        self._refused_lines[path] = count
        if count > STREAM_REFUSALS:
            return []
        quiet = InvalidInput(
            f"more than {STREAM_REFUSALS} lines of {show} were refused; the rest are refused without an event each (line {line}: {err.message})",
            "fix what writes this stream; lines already refused are not read again",
            code="stream_refused",
        )
        out = self._refuse(path, show, line, card, quiet, _hash("stream-refusals", path))
        self._refused_lines[path] = count + 1
        return out

    def _refuse_alone(
        self, path: str, show: str, line: int | None, card: int | None, err: LoopxError, key: str
    ) -> list[Result]:
        if key in self._seen:
            return []
        return self._run(lambda: self._refuse(path, show, line, card, err, key))

    # -- observed artifacts ---------------------------------------------------------------
    def held_card(self, agent: str) -> CardColumns | None:
        """The card ``loopx next`` would resume for ``agent``, if it holds one."""
        return leases.held_card(agent, clock.now())

    def _lookup(self, read: Callable[[], T]) -> T:
        """A read: in a batch, inside a savepoint (on PostgreSQL an error outside
        one would void the whole batch); otherwise in a read snapshot."""
        if self._in_batch:
            return self.store.run(read)
        with self.store.read():
            return read()

    def observe(self, path: str, origin: Origin, *, scan: bool = False) -> list[Result]:
        """Record ``path`` as an observed artifact on the card held by each agent
        whose watch folder holds it, if it was modified since that agent's lease
        began (``scan``: found by a catch-up scan rather than a change event; the
        rule is the same). A file that really is elsewhere — a symlink out of the
        project and out of the folder — is ignored, never hashed."""
        agents = origin.agents
        where = real(path)
        within = self._within(origin)
        if not any(inside(where, r) for r in within):
            return []
        try:
            st = os.stat(path)
        except (FileNotFoundError, NotADirectoryError):
            self.forget(path)
            return []
        if not statmod.S_ISREG(st.st_mode):
            return []
        sig = signature(st)
        todo = [a for a in agents if self._observed_sig.get((a, path)) != sig]
        if not todo:
            return []
        held = {}
        for agent in todo:
            if agent not in self._held:
                self._held[agent] = self._lookup(lambda: observed.holding_since(agent))
            entry = self._held[agent]
            if entry is not None and st.st_mtime >= entry[1] - MTIME_SLACK:  # changed while it held the card
                held[agent] = entry[0]
        if not held:
            return []
        show = display(where, Path(self.real_root))  # where the bytes are
        if too_large(st.st_size):  # refused before a byte is read, once per content (a change looks again)
            err = InvalidInput(
                f"{show} is {too_large_text(st.st_size)}, not observed",
                "an observed file is hashed whole: keep large outputs out of the watch folder",
                code="artifact_too_large",
            )
            for agent in held:
                self._observed_sig[(agent, path)] = sig
            return self._refuse_alone(path, show, None, next(iter(held.values())), err, _hash("too-large", path, sig))
        found = self._hashes.get(sig) or hash_within(where, within)
        if found is None:  # gone, unreadable, or swapped for a link out meanwhile
            return []
        size, sha = found
        if sha is None:  # it grew past the limit since the stat: the next change refuses it
            return []
        if len(self._hashes) > 4096:
            self._hashes.clear()
        self._hashes[sig] = (size, sha)
        out: list[Result] = []
        for agent, card_id in held.items():
            result = self.store.run(lambda: self._observe_one(agent, card_id, path, show, size, sha))
            self._observed_sig[(agent, path)] = sig
            if result is not None:
                out.append(result)
        return out

    def _observe_one(self, agent: str, card_id: int, path: str, show: str, size: int, sha: str) -> Result | None:
        if not observed.record_observed(agent, card_id, show, size, sha):
            return None
        return Result("observed", path, show, None, card_id, agent, None, f"{size} B")

    # -- the board's agents ------------------------------------------------------------------
    def agent_folders(self) -> list[tuple[str, str]]:
        """(agent, folder) for every registered agent's watch folders."""
        return observed.agent_folders(self.store)


def identity_refusal(show: str, agent: str, origin: Origin, doc: dict) -> LoopxError | None:
    """Who may have written a document (DESIGN §7). In an agent's watch folder:
    that agent (if the folders of several agents hold it, one of them), else it
    is refused. In the board's inbox, anyone could have: it is recorded as
    unverified, and may not release a card (that is the holder's operator)."""
    if origin.inbox:
        if doc.get("release"):
            return Forbidden(
                f"{show} is in the inbox, where the writer is not verified, and asks to release the card",
                'release it as the agent: `loopx release CARD` (or drop "release" from the document)',
                code="unverified_release",
            )
        return None
    if agent in origin.agents:
        return None
    owners = " or ".join(origin.agents) or "no agent"
    return Forbidden(
        f"{show} is in the watch folder of {owners} ({', '.join(origin.folders)}) but names agent {agent}",
        f"an agent writes evidence only for itself: name {owners} in the document, or let {agent} write it in its own --watch folder",
        code="agent_mismatch",
    )


def _fingerprint(handle: BinaryIO, offset: int) -> tuple[str, str]:
    """Hashes of a stream's first bytes and of the bytes just before ``offset``:
    if either changed, the consumed part was rewritten (a same-size rewrite that
    touches neither is not noticed; replace files atomically instead)."""
    handle.seek(0)
    head = hashlib.sha256(handle.read(min(offset, HEAD))).hexdigest()
    start = max(0, offset - TAIL)
    handle.seek(start)
    tail = hashlib.sha256(handle.read(offset - start)).hexdigest()
    return head, tail


def _why(exc: BaseException) -> str:
    return "nested too deep" if isinstance(exc, RecursionError) else str(exc)[:120]


def _card_hint(raw: bytes) -> int | None:
    """The card a broken document names, so its error shows on that card."""
    match = _CARD_HINT.search(raw[:65536])
    return int(match.group(1)) if match else None


def _short(raw: bytes, n: int = 60) -> str:
    text = raw.decode("utf-8", "replace").strip()
    return repr(text if len(text) <= n else text[: n - 1] + "…")
