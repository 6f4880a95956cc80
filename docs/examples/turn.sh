#!/bin/sh
# A shell agent's turn, for `loopx run --agent shell-1 --runtime shell -- ./turn.sh`.
#
# The runner starts this once per turn, in the card's workspace (a git worktree
# on the branch loopx/LX-n, named by $LOOPX_WORKSPACE), with the card's
# continuation packet on stdin and in $LOOPX_CONTEXT. LOOPX_AGENT, LOOPX_CARD,
# LOOPX_TURN_ID, LOOPX_LEASE_TOKEN and LOOPX_DB say who works, on what, in
# which turn and on which board: every `loopx` call below picks them up.
#
# Replace step 1 with your agent's work (an LLM CLI, a script, make …). This
# one does the card's next action in a line and finishes the card in one turn.
set -eu
cd "${LOOPX_WORKSPACE:-.}"

# 1. The work: here, the packet's "## Next action" noted in NOTES.md, and a
#    report of the turn (an artifact: a file the turn made, in the workspace).
next=$(printf '%s\n' "$LOOPX_CONTEXT" | sed -n '/^## Next action$/{n;p;q;}')
printf -- '- %s\n' "$next" >> NOTES.md
printf '%s did "%s" on %s in turn %s\n' "$LOOPX_AGENT" "$next" "$LOOPX_CARD" "$LOOPX_TURN_ID" > turn-report.txt

# 2. Commit on the card's branch: commits are what the person merges (the
#    committer is the agent, so the history says who wrote what).
git add -A
git diff --cached --quiet || git -c user.name="$LOOPX_AGENT" -c user.email="$LOOPX_AGENT@loopx.invalid" \
    commit -q -m "$LOOPX_CARD: $next"

# 3. Write back what the turn did (the turn id makes a retry safe). The artifact
#    is named in the workspace; the board records its size and sha256.
loopx writeback "$LOOPX_CARD" --turn-id "$LOOPX_TURN_ID" --summary "did: $next" \
    --artifact turn-report.txt --next "wait for the person's merge"

# 4. Finish: `done` runs the card's verify command here; a branch with commits
#    then waits on a git:merge gate — the person's yes merges it into the base.
loopx done "$LOOPX_CARD" --summary "$next"
