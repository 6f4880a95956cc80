"""Evidence from files (DESIGN §7): the watcher behind ``loopx watch`` and the
TUI's watcher worker — one engine, same results, safe to run both at once.

API (no Textual here; ``watchfiles`` is imported only when watching starts)::

    from loopx_core.watch import watch_board, WatchConfig, Result

    stats = await watch_board(
        store,                      # the app's open Store (or a BoardLocation / --db string)
        stop_event=stop,            # an asyncio.Event (anything with is_set() works, polled)
        on_result=callback,         # called on the event loop with each Result
        on_progress=progress,       # called on the event loop with (done, total) during catch-up scans
        once=False,                 # True: catch up on what is there, then return
        config=WatchConfig(),       # timings; the defaults suit both surfaces
    )                               # -> WatchStats(ingested, duplicate, refused, observed, scanned, folders)

Stop it by setting ``stop_event`` (it returns its stats) or by cancelling the
task or worker running it (it cleans up and re-raises ``CancelledError``;
cancelling takes a few ms). It never raises for a bad file: problems are
``Result``s and ``ingest_error`` events. In a Textual app run it in an async
worker (``run_worker(coro, exclusive=True, exit_on_error=False)``) and pass the
app's Store (each store's statements run on its own connections, so other
stores may be open in the same process). Board writes happen in the watcher's own
worker thread, with its own connection (``Store.thread_connection`` rules), so
the event loop is never blocked on the database or on hashing files.

``Result`` (``ingest.py``): ``kind`` is ``ingested`` | ``duplicate`` |
``refused`` | ``observed`` | ``notice``; with ``file`` (project-relative when
inside the project), ``line``, ``card`` (int or None), ``agent``,
``evidence`` (int), ``message``, ``hint``, ``code``; ``text()`` is the line
``loopx watch`` prints, ``to_json()`` a dict. The board itself records what
the TUI needs anyway: ``evidence_added`` (source ``file``),
``artifact_observed`` and ``ingest_error`` events (``file``, ``line``,
``reason``, ``hint``, ``code``, ``agent``; the event's card is set when the
document names a card that exists).

What is followed: the board's inbox (``inbox/`` next to ``board.db``, i.e.
``.loopx/inbox/``, created if missing; on PostgreSQL ``<project>/.loopx/inbox/``
when the board knows its project) and every registered agent's ``--watch``
folders, recursively, including folders created later. Agents registered (or
given new folders) while it runs are picked up within ``recheck`` (0.5 s). A
folder that does not exist yet gets a notice and is followed once it appears;
one that disappears is followed again when it comes back. Each change of the
followed set restarts watchfiles and rescans (cheap: unchanged files are
skipped by inode, size and mtime).

Rules:
- ``*.loopx.json``: one evidence document — ``card``, ``agent``, ``summary``,
  optional ``turn_id``, ``artifacts``, ``next``, ``todos_added``,
  ``todos_done``, ``tokens``, ``usd`` (the ``writeback --input`` model plus card
  and agent). Applied through the ``writeback`` operator with source ``file``:
  same rules and messages as the CLI (unknown card or agent, agent not holding
  the card, artifact outside the project, budget, …). Relative artifact paths
  are resolved against the project root (as for an agent running ``loopx``
  there), not against the document's folder.
- ``*.loopx.jsonl``: one document per line, read by byte offset up to the last
  newline; the offset lives in the board (``IngestStream``), so a restart
  resumes exactly. A shrunk file (truncation), a new inode (replacement) or
  changed bytes before the offset (rewrite) restart it from the top; lines
  already ingested are then no-ops.
- Unfinished writes: a ``*.loopx.json`` that is not valid JSON (or not UTF-8,
  or empty) is taken to be still being written. It is retried on every change
  and reported only once it has stayed unchanged for ``settle`` seconds
  (default 1 s; ``--once`` waits that long before exiting). The same holds for
  a stream's last line without a newline: once unchanged for ``settle`` it is
  ingested if it is a whole JSON object, else reported (and kept: completing
  the line ingests it). A document that is valid JSON but invalid, or refused
  by the operator, is reported at once. Write atomically (temp + rename)
  anyway.
- Identity: a document (or JSONL line) in an agent's watch folder must name
  that agent — one of them when several agents' folders hold it — else it is
  refused (``agent_mismatch``). One in the inbox is recorded as unverified
  (``Evidence.unverified``), with a turn id of its own (``inbox-`` + a hash of
  its content), and may not release a card. A document or stream whose real
  path (symlinks resolved) is outside the project and outside the folder it
  was found in is refused unread; an observed file likewise is ignored.
- Idempotence: the turn id is ``turn_id``, else ``file-`` + a hash of the
  validated content; the same content twice (another file, a restart, a second
  watcher) is a no-op (two identical turns without a ``turn_id`` count once).
  Each document is handled in one write transaction that also records the
  outcome (``IngestSeen``), so two watchers never double-ingest or double-report.
- Refusals: never dropped, never half-applied (the writeback runs in a
  savepoint). Each is one ``ingest_error`` event, reported once per file, line
  and content; fixing the file (or touching it: a new mtime) retries it.
  Fix a bad JSONL line by appending a corrected one, or by rewriting the file.
- Observed artifacts: any other file created or changed under an agent's
  watch folder while that agent holds a card (the card ``loopx next`` would
  resume) becomes an ``Observed`` row on that card (path relative to the
  project, or absolute outside it; size; sha256) and an ``artifact_observed``
  event, once it has been quiet for ``observe_delay`` (0.3 s), and only when its
  content differs from the last observation of that path on that card.
  Catch-up scans observe only files modified since the lease began. A file
  over ``rules.artifacts.HASH_MAX`` (256 MB) is never read: it is refused
  with one ``ingest_error`` (code ``artifact_too_large``) per content, looked
  at again only when it changes, and the rest of the folder flows meanwhile. The path
  recorded is where the bytes really are (symlinks resolved). Ignored:
  ``.git`` and other VCS folders, caches (``__pycache__``, ``node_modules``,
  ``.pytest_cache``, ``.mypy_cache``, ``.venv``, …), editor temp files
  (``*.swp``, ``*~``, ``.#*``, ``#*#``, ``4913``, …), in-flight temp files
  (``*.tmp``, ``*.part``), ``.loopx/`` and the board file itself.
"""

from __future__ import annotations

__all__ = ["watch_board", "WatchConfig", "WatchStats", "Result", "Ingestor"]

TYPE_CHECKING = False  # (checkers read the names here; at run time __getattr__ imports them when asked)
if TYPE_CHECKING:
    from .ingest import Ingestor, Result
    from .watcher import WatchConfig, WatchStats, watch_board


def __getattr__(name: str) -> object:
    if name in ("watch_board", "WatchConfig", "WatchStats"):
        from . import watcher

        return getattr(watcher, name)
    if name in ("Result", "Ingestor"):
        from . import ingest

        return getattr(ingest, name)
    raise AttributeError(name)
