"""The shell reader: what a command line an agent wrote would run, read the way
the shell would read it, without running anything.

From the bottom up (import-linter's "shell-layers" contract in pyproject.toml):
``posix_words`` and ``pwsh_words`` split POSIX shell and PowerShell text into
simple commands; ``vocabulary`` (the terms every reader shares) and
``builtin_rules`` (which scope a command's name and arguments need); the
readers of commands that reach LoopX itself (``guarded``), that run code
(``interpreters``), that run other commands (``wrappers``) and PowerShell's own
(``pwsh_commands``); and ``checker`` on top, which walks a line's commands and
calls the reader each one needs. No reader imports the checker: it hands itself
to them. Standard library only (and the rules it applies): the PreToolUse hook
imports it cold, and the hook's decision (``adapters/policy``, ``ground``) is
the adapters'.
"""
