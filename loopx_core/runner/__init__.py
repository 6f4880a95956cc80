"""``loopx run``: a long-lived process of the person that keeps one agent's
loop moving (DESIGN §10 "Runners").

It asks ``next`` before every turn and obeys it — *work* runs one bounded turn
of the agent's runtime in its headless mode, *wait* / *paused* / *idle* sleep
until the board changes or the clock reaches a wake-up — and it records what it
does on the board (``runners.py``). It is not the agent: it calls the kernel's
operators in-process for its own bookkeeping and gives the agent's runtime the
continuation packet and the agent's identity, never the person's key.

One module per concern: ``loop`` (the runner), ``runtimes`` (Claude Code,
Codex, any shell command: how a turn is started and what its output says),
``usage`` (live usage from a runtime's stream), ``process`` (the turn's process
group), ``guard`` (the turn's keeper: its whole process tree ends with it), ``waker`` (sleeping until the board changes, without busy polling).
"""
