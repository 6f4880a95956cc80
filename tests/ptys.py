"""A command on a pseudo-terminal of its own, typed at as a person would."""

from __future__ import annotations

import os
import pty
import select
import time


def on_pty(argv, env, cwd, respond, timeout=60.0):
    """Run ``argv`` on a pty (pty.fork: it is the child's controlling terminal,
    so /dev/tty is the pty); after each read, ``respond(everything so far)``
    may return bytes to type. Returns (exit code, everything it printed)."""
    pid, fd = pty.fork()
    if pid == 0:
        try:
            os.chdir(cwd)
            os.execvpe(argv[0], argv, env)
        finally:
            os._exit(127)
    out = b""
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([fd], [], [], 0.2)
            if not ready:
                done, status = os.waitpid(pid, os.WNOHANG)
                if done:
                    return os.waitstatus_to_exitcode(status), out.decode(errors="replace")
                continue
            try:
                chunk = os.read(fd, 4096)
            except OSError:  # EIO: the child exited and closed the slave
                break
            if not chunk:
                break
            out += chunk
            reply = respond(out)
            if reply:
                os.write(fd, reply)
        else:
            os.kill(pid, 9)
    finally:
        os.close(fd)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status), out.decode(errors="replace")
