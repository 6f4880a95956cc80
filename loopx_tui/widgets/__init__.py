"""Widgets: cards, columns, the board, the evidence log."""
