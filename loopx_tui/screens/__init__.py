"""Full screens: the board, a card's drill-down, an artifact, help, no board."""
