"""An exclusive lock on a file, for the length of a ``with``: one writer at a
time of a small file of the person's that is read, changed and replaced whole
(the witness's anchors, the list of their boards). Where there are no
advisory locks (Windows), ``os.replace`` still keeps the file whole; two
writers may then lose an update."""

from __future__ import annotations

import os


class locked:
    def __init__(self, path: str):
        self.path = path

    def __enter__(self) -> locked:
        self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            import fcntl
        except ImportError:
            return self
        fcntl.flock(self.fd, fcntl.LOCK_EX)
        return self

    def __exit__(self, *exc: object) -> None:
        os.close(self.fd)  # (closing releases the lock)
