"""Fault injection (tests/faults): the board's fixtures (both backends) and a frozen clock."""

from tests.kernel.conftest import clock  # noqa: F401  (autouse: every test here on a frozen clock)
