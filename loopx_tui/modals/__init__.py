"""Dialogs: the gate modal, the add-card and budget forms, the agent picker."""
