"""The shapes values take at the edges: validated inputs (``inputs``, ``schemas``),
the frozen values operators return (``values``) and the errors they raise."""
