"""Runtime adapters: Claude Code and Codex hooks, the MCP server, ``init --for``.

Hooks are enforcement; the prose ``init`` writes into CLAUDE.md / AGENTS.md is
advice. The hook path (``hook_entry`` → ``hooks`` → ``policy`` → ``commands``
with ``shellwords``/``ground``/``builtin_rules``, and ``fastcheck``) imports
only the standard library until a call actually needs the board's operators:
it runs on every tool call. The command checker's other readers
(``interpreters``, ``wrappers``, ``guarded``, ``pwshwords``/``pwsh_commands``)
are imported only by a command that needs them.
"""
