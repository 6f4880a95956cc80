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


def terminal_session(
    script: str, env, cwd, passphrase: bytes, on_ready=None, prompt: bytes = b"Passphrase for LoopX key", timeout=240.0
):
    """A person's terminal session: ``script`` run by a shell (the session
    leader) on a pty of its own; ``passphrase`` is typed at each prompt; at each
    ``READY`` line ``on_ready()`` runs, then a line is typed so the script goes
    on (its ``read``). Returns (exit code, what the terminal showed, prompts)."""
    seen = {"prompts": 0, "ready": 0}

    def respond(out: bytes):
        if out.count(b"\nREADY") > seen["ready"]:
            seen["ready"] += 1
            if on_ready:
                on_ready()
            return b"go\n"
        if out.count(prompt) + out.count(b"Wrong passphrase") > seen["prompts"] and out.rstrip().endswith(b":"):
            seen["prompts"] += 1
            return passphrase
        return None

    code, out = on_pty(["bash", "--norc", "--noprofile", "-c", script], env, cwd, respond, timeout=timeout)
    return code, out, seen["prompts"]
