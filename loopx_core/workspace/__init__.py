"""A card's code: git worktrees, their state, their diff and the person's merge."""
