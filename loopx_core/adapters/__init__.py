"""Runtime adapters: Claude Code and Codex hooks, the MCP server, ``init --for``.

Hooks are enforcement; the prose ``init`` writes into CLAUDE.md / AGENTS.md is
advice. The hook path (``hook_entry`` → ``hooks`` → ``policy`` with
``ground``, and ``fastcheck``) decides; the shell reader it asks what a
command line runs is a package of its own (``loopx_core/shell``). It imports
only the standard library until a call actually needs the board's operators:
it runs on every tool call.
"""
