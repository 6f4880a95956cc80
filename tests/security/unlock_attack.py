"""An agent's attempt to sign with a person's unlock (tests/security/test_unlock.py):
ask every holder in the person's run folder to sign a message of the agent's
choosing, and say what came back. ``newpty``: first open a pseudo-terminal of
its own and make it its controlling terminal (setsid + TIOCSCTTY), as an agent
that wants "a terminal" would. Prints one line: SIGNED, or REFUSED and why."""

from __future__ import annotations

import base64
import fcntl
import json
import os
import pty
import socket
import sys
import termios


def ask_every_holder() -> str:
    # (the person's LoopX folder worked out here: this file also runs on its own,
    # with a system python3 in a runtime's sandbox, where LoopX is not importable)
    xdg = os.environ.get("XDG_CONFIG_HOME", "")
    base = xdg if os.path.isabs(xdg) else os.path.join(os.path.expanduser("~"), ".config")
    folder = os.path.join(base, "loopx", "run")
    names = [n for n in os.listdir(folder) if n.endswith(".sock")]
    if not names:
        return "NO HOLDER"
    answers = []
    for name in names:
        sock = socket.socket(socket.AF_UNIX)
        sock.settimeout(10)
        os.chdir(folder)  # (a deep test folder overflows a socket path)
        sock.connect(name)
        message = base64.b64encode(b"agent-chosen decision").decode()
        sock.sendall(json.dumps({"op": "sign", "message": message}).encode() + b"\n")
        data = b""
        while not data.endswith(b"\n"):
            chunk = sock.recv(65536)
            if not chunk:
                break
            data += chunk
        answer = json.loads(data or b"{}")
        if answer.get("signature"):
            return "SIGNED"
        answers.append(answer.get("refused", "no answer"))
    return "REFUSED " + "; ".join(answers)


def main() -> None:
    if sys.argv[1:] == ["newpty"]:
        _, follower = pty.openpty()
        os.setsid()
        fcntl.ioctl(follower, termios.TIOCSCTTY, 0)
        assert os.open("/dev/tty", os.O_RDWR) >= 0  # it has a controlling terminal now
    try:
        print("ATTACK", ask_every_holder(), flush=True)
    except OSError as exc:  # (the folder hidden or refused: nothing to ask)
        print("ATTACK UNREACHABLE", type(exc).__name__, exc, flush=True)


if __name__ in ("__main__", "__attack__"):
    main()
