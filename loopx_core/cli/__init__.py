"""The ``loopx`` command line (DESIGN §6)."""
