"""A person's unlock, held for one terminal session (SECURITY.md "The human key",
docs/decisions/2026-12-07-unlock-per-terminal.md).

After a person types their passphrase at a terminal, a small *holder* process
keeps the unlocked key in memory for ``LOOPX_UNLOCK_FOR`` (default 15 minutes,
renewed by each use; ``0`` keeps nothing) and signs, on request, the exact
message a person's verb signs — it never hands the key out. It listens on a
unix socket in the person's LoopX folder (``run/``, 0700: the folder the
runtimes' sandboxes and the hook deny to agents) and answers a peer only when,
read from the kernel (``SO_PEERCRED``, ``/proc/<pid>/stat``):

- it runs as the same user;
- its controlling terminal and session id are the unlocking terminal's, and
  that session's leader is the very process that led it when the person
  unlocked (its start time: a reused session id or terminal is another
  session, as sudo's ``tty_tickets`` keys on);
- neither it nor any ancestor within that session is an agent: ``LOOPX_AGENT``
  (or a runtime's own marker) in its environment, or a runtime's executable.

A process an agent starts elsewhere (another terminal, no terminal, a pty it
opened with ``setsid``) is in another session and cannot join this one. The
holder makes itself undumpable (``PR_SET_DUMPABLE`` 0): a same-user process
can neither ptrace it nor read its memory. Standard library only, imported by
a person's verb before anything heavy.
"""

from __future__ import annotations

import json
import os
import socket
import struct

TYPE_CHECKING = False  # (annotations only; checkers read this as typing's)
if TYPE_CHECKING:
    from .keys import Person

DEFAULT_FOR = 15 * 60.0
AGENT_MARK = b"LOOPX_AGENT="  # LoopX's own agent identity, in the peer's environment or its ancestors'


def _runtime_marks() -> tuple[tuple[bytes, ...], tuple[str, ...], tuple[bytes, ...]]:
    """What a process of a coding runtime shows, each runtime's from its module
    (``runtimes/``: ``ENV_MARKS``, ``BINARY``, ``PACKAGE``): the markers it
    leaves in the environment of the processes it runs (with LoopX's own agent
    identity), its executable's name, and its package's in a node argv. Any of
    them in the peer or its ancestors refuses it."""
    from .. import runtimes

    hooked = [runtimes.module(name) for name in runtimes.HOOKED]
    return (
        (AGENT_MARK, *(mark.encode() for module in hooked for mark in module.ENV_MARKS)),
        tuple(module.BINARY for module in hooked),
        tuple(module.PACKAGE.encode() for module in hooked),
    )


class Refused(Exception):
    """The holder would not sign for this process (why, for the person)."""


# -- what the kernel says about a process ------------------------------------------------------


class Proc:
    """``/proc/<pid>/stat``'s fields the checks use."""

    __slots__ = ("pid", "ppid", "session", "tty", "start")

    def __init__(self, pid: int):
        with open(f"/proc/{pid}/stat", "rb") as fh:
            raw = fh.read()
        rest = raw[raw.rindex(b")") + 2 :].split()  # (the name may hold spaces and parentheses)
        self.pid = pid
        self.ppid, self.session, self.tty = int(rest[1]), int(rest[3]), int(rest[4])
        self.start = int(rest[19])


def terminal_session() -> tuple[int, int, int] | None:
    """This process's (controlling terminal, session id, session leader's start
    time), or None without a controlling terminal."""
    try:
        me = Proc(os.getpid())
        if me.tty == 0:
            return None
        return me.tty, me.session, Proc(me.session).start
    except (OSError, ValueError, IndexError):
        return None


def unlock_for() -> float:
    """How long an unlock lasts without use (``LOOPX_UNLOCK_FOR``: 15m, 1h, 0 = not kept)."""
    raw = os.environ.get("LOOPX_UNLOCK_FOR", "").strip()
    if not raw:
        return DEFAULT_FOR
    if raw == "0":
        return 0.0
    from ..rules.durations import parse_duration

    try:
        return float(parse_duration(raw))
    except ValueError:
        return DEFAULT_FOR


def _agent_in(pid: int) -> str | None:
    """Why the process ``pid`` is an agent's, or None."""
    try:
        with open(f"/proc/{pid}/environ", "rb") as fh:
            env = fh.read()
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            argv = fh.read().split(b"\0")
    except OSError:
        return f"process {pid} cannot be examined"  # (undumpable, gone, another user's): fail closed
    marks, binaries, packages = _runtime_marks()
    for entry in env.split(b"\0"):
        for mark in marks:
            if entry.startswith(mark) and (mark[-1:] != b"=" or len(entry) > len(mark)):
                return f"process {pid} runs as an agent ({mark.decode().rstrip('=')} is set)"
    words = [os.path.basename(w.decode(errors="replace")) for w in argv[:5] if w]
    for word in words[:3]:
        if any(word == name or word.startswith(name + "-") or word.startswith(name + ".") for name in binaries):
            return f"process {pid} is a coding runtime ({word})"
    for raw in argv[:4]:
        if any(package in raw for package in packages):
            return f"process {pid} is a coding runtime"
    loopx = words[:1] == ["loopx"] or words[1:3] == ["-m", "loopx_core"]
    if loopx and ("run" in words[1:5] or "mcp" in words[1:5] or ("workspace" in words[1:4] and "start" in words[1:5])):
        return f"process {pid} is a runner or an agent's session ({' '.join(words[:4])[:60]})"
    return None


def check_peer(pid: int, uid: int, tty: int, session: int, leader_start: int) -> None:
    """Refused unless ``pid`` is a person's process of the unlocking terminal session."""
    if uid != os.getuid():
        raise Refused("another user")
    try:
        peer = Proc(pid)
    except (OSError, ValueError, IndexError):
        raise Refused("the process is gone") from None
    if peer.tty == 0:
        raise Refused("the process has no terminal")
    if peer.tty != tty or peer.session != session:
        raise Refused("the process runs in another terminal session")
    try:
        if Proc(session).start != leader_start:
            raise Refused("the terminal session that unlocked has ended")
    except (OSError, ValueError, IndexError):
        raise Refused("the terminal session that unlocked has ended") from None
    seen = 0
    current: Proc | None = peer
    while current is not None and seen < 256:
        why = _agent_in(current.pid)
        if why:
            raise Refused(why)
        if current.pid == session or current.ppid <= 1:
            break
        try:
            parent = Proc(current.ppid)
        except (OSError, ValueError, IndexError):
            break
        current = parent if parent.session == session else None
        seen += 1


# -- where the holders listen -----------------------------------------------------------------


def run_dir(create: bool = False) -> int | None:
    """An fd of the person's ``run/`` folder (owned by them, 0700), or None.
    Sockets are named through ``/proc/self/fd/N/``: a deep HOME would
    overflow a socket path's 108 bytes."""
    from ..rules.person_folder import person_folder

    path = os.path.join(person_folder(), "run")
    if create:
        os.makedirs(person_folder(), mode=0o700, exist_ok=True)
        try:
            os.mkdir(path, 0o700)
        except FileExistsError:
            pass
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError:
        return None
    st = os.fstat(fd)
    if st.st_uid != os.getuid() or st.st_mode & 0o077:
        os.close(fd)
        return None  # (another's, or opened to others: never trusted)
    return fd


def _name(fingerprint: str, tty: int, session: int) -> str:
    return f"{fingerprint}-{tty}-{session}.sock"


def _request(dirfd: int, name: str, message: dict, timeout: float = 10.0) -> dict:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.settimeout(timeout)
        sock.connect(f"/proc/self/fd/{dirfd}/{name}")
        sock.sendall(json.dumps(message).encode() + b"\n")
        data = b""
        while not data.endswith(b"\n"):
            chunk = sock.recv(65536)
            if not chunk:
                break
            data += chunk
        return json.loads(data or b"{}")
    finally:
        sock.close()


class HeldKey:
    """Stands where a private key would in ``keys.Person``: ``sign`` asks the
    holder, and checks what comes back against the public half."""

    def __init__(self, dirfd: int, name: str, public_raw: bytes):
        self.dirfd, self.name, self.public_raw = dirfd, name, public_raw

    def sign(self, message: bytes) -> bytes:
        from ..shapes.errors import Forbidden
        from . import keys

        try:
            answer = _request(self.dirfd, self.name, {"op": "sign", "message": keys.b64(message)})
        except (OSError, ValueError):
            answer = {}
        signature = answer.get("signature")
        if not isinstance(signature, str) or not keys.verify_signature(self.public_raw, signature, message):
            raise Forbidden(
                "your unlock ended before this could be signed",
                "run the command again (it asks for your passphrase)",
                code="not_unlocked",
            )
        return keys.unb64(signature)


def held(fingerprint: str, public_raw: bytes) -> HeldKey | None:
    """This terminal's unlock of the key ``fingerprint``, renewed, or None
    (none, ended, or the holder refuses this process)."""
    where = terminal_session()
    if where is None:
        return None
    dirfd = run_dir()
    if dirfd is None:
        return None
    name = _name(fingerprint, where[0], where[1])
    try:
        answer = _request(dirfd, name, {"op": "check"}, timeout=5.0)
    except (OSError, ValueError):
        os.close(dirfd)
        return None
    if answer.get("ok") is not True or answer.get("fingerprint") != fingerprint:
        os.close(dirfd)
        return None
    return HeldKey(dirfd, name, public_raw)


def time_left(fingerprint: str) -> float | None:
    """Seconds this terminal's unlock of ``fingerprint`` has left unused, or None."""
    where = terminal_session()
    dirfd = run_dir() if where is not None else None
    if where is None or dirfd is None:
        return None
    try:
        answer = _request(dirfd, _name(fingerprint, where[0], where[1]), {"op": "status"}, timeout=5.0)
    except (OSError, ValueError):
        return None
    finally:
        os.close(dirfd)
    left = answer.get("left")
    return float(left) if answer.get("ok") is True and isinstance(left, (int, float)) else None


def lock_all() -> int:
    """End every unlock this user holds; how many ended."""
    dirfd = run_dir()
    if dirfd is None:
        return 0
    ended = 0
    try:
        for name in os.listdir(f"/proc/self/fd/{dirfd}"):
            if not name.endswith(".sock"):
                continue
            try:
                if _request(dirfd, name, {"op": "lock"}, timeout=5.0).get("locked"):
                    ended += 1
            except (OSError, ValueError):
                pass
            try:
                os.unlink(name, dir_fd=dirfd)
            except OSError:
                pass
    finally:
        os.close(dirfd)
    return ended


# -- the holder --------------------------------------------------------------------------------


def hold(person: Person, seconds: float | None = None) -> bool:
    """Keep ``person``'s unlocked key for this terminal session in a holder
    process (forked here). False when there is nothing to hold it for."""
    seconds = unlock_for() if seconds is None else seconds
    where = terminal_session()
    if seconds <= 0 or where is None:
        return False
    dirfd = run_dir(create=True)
    if dirfd is None:
        return False
    tty, session, leader_start = where
    name = _name(person.fingerprint, tty, session)
    try:  # a holder this session had (refusing this process, or ending) ends now
        _request(dirfd, name, {"op": "lock"}, timeout=2.0)
    except (OSError, ValueError):
        pass
    try:
        os.unlink(name, dir_fd=dirfd)
    except FileNotFoundError:
        pass
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(f"/proc/self/fd/{dirfd}/{name}")
    os.chmod(name, 0o600, dir_fd=dirfd)
    inode = os.stat(name, dir_fd=dirfd).st_ino
    listener.listen(8)
    first = os.fork()
    if first:
        listener.close()
        os.close(dirfd)
        os.waitpid(first, 0)
        return True
    try:  # the child: leave the terminal, fork again so no terminal is ever reacquired
        os.setsid()
        if os.fork():
            os._exit(0)
        _serve(listener, dirfd, name, inode, person, seconds, tty, session, leader_start)
    finally:
        os._exit(0)
    return True  # (unreachable: for the checkers)


def _undumpable() -> None:
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE, 0
    except Exception:  # noqa: BLE001 - a platform without prctl: the holder still serves
        pass


def _serve(
    listener: socket.socket,
    dirfd: int,
    name: str,
    inode: int,
    person: Person,
    seconds: float,
    tty: int,
    session: int,
    leader_start: int,
) -> None:
    import select
    import time

    _undumpable()
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    keep = {listener.fileno(), dirfd, 0, 1, 2}
    for fd in range(3, 1024):  # (the board's connection, the terminal, pipes: none are the holder's)
        if fd not in keep:
            try:
                os.close(fd)
            except OSError:
                pass
    os.chdir("/")
    deadline = time.monotonic() + seconds
    from . import keys

    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            break
        ready, _, _ = select.select([listener], [], [], min(left, 5.0))
        if not ready:
            try:
                if Proc(session).start != leader_start:
                    break  # the terminal session ended: so does its unlock
            except (OSError, ValueError, IndexError):
                break
            continue
        conn, _ = listener.accept()
        stop = False
        try:
            conn.settimeout(5.0)
            pid, uid, _gid = struct.unpack(
                "3i", conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
            )
            data = b""
            while not data.endswith(b"\n") and len(data) < 1 << 20:
                chunk = conn.recv(65536)
                if not chunk:
                    break
                data += chunk
            request = json.loads(data or b"{}")
            op = request.get("op")
            if op == "lock":
                answer: dict = {"locked": True}
                stop = uid == os.getuid()
            else:
                try:
                    check_peer(pid, uid, tty, session, leader_start)
                except Refused as why:
                    answer = {"ok": False, "refused": str(why)}
                else:
                    if op == "status":  # (looking is not using: not renewed)
                        answer = {
                            "ok": True,
                            "fingerprint": person.fingerprint,
                            "left": max(0.0, deadline - time.monotonic()),
                        }
                    else:
                        deadline = time.monotonic() + seconds  # renewed by use
                        if op == "sign":
                            answer = {"signature": person.sign(keys.unb64(request["message"]))}
                        else:
                            answer = {"ok": True, "fingerprint": person.fingerprint, "seconds": seconds}
            conn.sendall(json.dumps(answer).encode() + b"\n")
        except Exception:  # noqa: BLE001 - one bad request never ends the holder
            pass
        finally:
            conn.close()
        if stop:
            break
    try:  # (unless a newer holder of this session bound the name since)
        if os.stat(name, dir_fd=dirfd).st_ino == inode:
            os.unlink(name, dir_fd=dirfd)
    except OSError:
        pass
