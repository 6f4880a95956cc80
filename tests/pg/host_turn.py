"""A shell agent's turn for the several-hosts drain (tests/pg/hosts.py): the
`shell` runtime's command. It writes back its work and finishes the card.

The work's op id is the card and its lease token: a turn that runs again under
the same lease (its `done` failed while the server restarted) answers as the
first instead of writing the work twice; a new holder (after a lease ran out)
writes its own. While the file ``$HOSTS_HOLD`` exists the turn stops after its
writeback, marks ``$HOSTS_HOLD.<card>`` and waits to be killed: a host killed
mid-turn, its card half done."""

import os
import subprocess
import sys
import time

card, host = os.environ["LOOPX_CARD"], os.environ["LOOPX_HOST"]
token = os.environ["LOOPX_LEASE_TOKEN"]
loopx = [sys.executable, "-m", "loopx_core"]
subprocess.run(
    loopx + ["writeback", card, "--summary", f"worked on {card}", "--turn-id", f"{card}-lease-{token}"],
    check=True,
    stdout=subprocess.DEVNULL,
)
hold = os.environ.get("HOSTS_HOLD")
if hold and os.path.exists(hold):
    with open(f"{hold}.{card}", "w") as marker:
        marker.write(host)
    time.sleep(600)  # (bounded: the test kills this host long before)
    sys.exit(1)
subprocess.run(loopx + ["done", card, "--summary", f"{card} done on {host}"], check=True, stdout=subprocess.DEVNULL)
