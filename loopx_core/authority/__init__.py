"""Who may do what: people's keys, the signed event chain, trust, grants and
verification (DESIGN §5, SECURITY.md)."""
