"""The LoopX live board: a Textual app over loopx_core's values and operators."""
