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
to them. The standard library, ``rules/`` and the human-only verbs' table
(``shapes/human_verbs``) only: the PreToolUse hook imports it cold. The hook's
decision — a tool call to the scopes it needs, LoopX's ground — is the
adapters' (``adapters/policy``, ``adapters/ground``).
"""
