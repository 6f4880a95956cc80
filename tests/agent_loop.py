"""A scripted agent for the drain tests: next --claim, writeback, done, until idle.
Run as `python -c AGENT_LOOP AGENT_ID`; prints the list of failed calls as JSON."""

AGENT_LOOP = r"""
import json, subprocess, sys
agent = sys.argv[1]
loopx = [sys.executable, "-m", "loopx_core", "--json"]
errors = []
while True:
    p = subprocess.run(loopx + ["next", "--claim", "--agent", agent], capture_output=True, text=True)
    if p.returncode == 9:
        break
    if p.returncode != 0:
        errors.append(p.stdout + p.stderr)
        continue
    card = json.loads(p.stdout)["card"]["id"]
    for args in (["writeback", card, "--summary", agent + " worked"], ["done", card, "--summary", "done"]):
        q = subprocess.run(loopx + args + ["--agent", agent], capture_output=True, text=True)
        if q.returncode != 0:
            errors.append(q.stdout + q.stderr)
print(json.dumps(errors))
"""
