"""The runner's log: a process that runs for days says when (an ISO date and
time with its offset), how bad (a level) and whose (the agent) on every line,
to its terminal and, with ``--log-file``, to a file that survives rotation
(``WatchedFileHandler`` reopens it when logrotate moves it). Every line is
terminal-safe: the messages quote agents' output and card titles."""

from __future__ import annotations

import logging
import logging.handlers

from ..rules.text import terminal_safe

TYPE_CHECKING = False  # (annotations only; checkers read this as typing's)
if TYPE_CHECKING:
    from typing import Protocol, TextIO

    class Log(Protocol):
        """What ``Runner`` calls for each line (a level of logging's)."""

        def __call__(self, text: str, level: int = ...) -> None: ...


FORMAT = "%(asctime)s %(levelname)-7s %(agent)s: %(message)s"
DATE = "%Y-%m-%dT%H:%M:%S%z"  # 2026-12-04T23:10:02+0000
LEVELS = {"quiet": logging.WARNING, "normal": logging.INFO, "verbose": logging.DEBUG}


class _SafeFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        return terminal_safe(super().format(record), multiline=True)


def runner_logger(
    agent: str, stream: TextIO, *, log_file: str | None = None, verbosity: str = "normal"
) -> logging.Logger:
    """The logger of one runner process (``loopx run``): ``stream`` is its terminal."""
    logger = logging.getLogger(f"loopx.runner.{agent}")
    logger.handlers.clear()
    logger.propagate = False
    logger.setLevel(LEVELS[verbosity])
    formatter = _SafeFormatter(FORMAT, DATE)
    handlers: list[logging.Handler] = [logging.StreamHandler(stream)]
    if log_file:
        handlers.append(logging.handlers.WatchedFileHandler(log_file, encoding="utf-8"))
    for handler in handlers:
        handler.setFormatter(formatter)
        logger.addHandler(handler)
    return logger


def writer(logger: logging.Logger, agent: str) -> Log:
    """``log(text, level)``, what ``Runner`` calls for each line."""

    def log(text: str, level: int = logging.INFO) -> None:
        logger.log(level, text, extra={"agent": agent})

    return log
