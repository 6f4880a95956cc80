"""The operators: small functions over one transaction, one module per family.

The CLI, the MCP server, the hooks, the watcher, the runner and the board call
these; nothing outside the kernel touches the models directly."""
