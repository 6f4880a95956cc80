"""LoopX state kernel: store, verified operators, ingestion and the agent CLI.

This package never imports Textual. Agent-facing paths (``next``, ``writeback``,
hooks) import only what they use, so a cold process stays cheap.
"""

__version__ = "0.1.0"

# The name LoopX is published under on the Python package index (`loopx` there is
# another project); every install and upgrade hint is written from it.
DISTRIBUTION = "loopx-kanban"
UPGRADE_HINT = (
    f"upgrade LoopX: `pipx upgrade {DISTRIBUTION}`, `uv tool upgrade {DISTRIBUTION}` or `pip install -U {DISTRIBUTION}`"
)
POSTGRES_HINT = f"install it: pip install '{DISTRIBUTION}[postgres]' (pipx: `pipx inject {DISTRIBUTION} 'psycopg[binary]'`; uv: `uv tool install '{DISTRIBUTION}[postgres]'`)"
