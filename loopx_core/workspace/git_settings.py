"""Which git settings and environment variables make git run a program or
write somewhere else (issue #38): one list for the PreToolUse hook (what an
agent's git may set) and for LoopX's own git calls (what a repository's own
config may not make them run, ``workspace/git.py``).

Standard library only and no compiled pattern at import: the hook imports
this on its cold path (``shell/guarded.py`` compiles lazily).
"""

from __future__ import annotations

# Settings whose value is a program git runs (or a file of settings git reads):
# hooks, filters, drivers, pagers, editors, credential helpers, ssh, gpg,
# `!command` submodule updates, diff filters, includes.
RUNS_A_PROGRAM = (
    r"(?i)^(?:alias\..*|core\.(?:pager|editor|sshcommand|fsmonitor|hookspath|askpass|gitproxy)"
    r"|.*\.(?:command|cmd|helper|program|driver|textconv|clean|smudge|process|difffilter)"
    r"|sequence\.editor|pager\..*|credential\..*|gpg\..*|include\..*|includeif\..*|protocol\..*|uploadpack\..*"
    r"|diff\.external|submodule\..*\.update|remote\..*\.(?:uploadpack|receivepack|vcs))$"
)

# Settings an agent's git may set (with `-c` or `git config` in the repository's
# own scope) because they run nothing, point git at no other place and move no
# ref: identity, colours, output and merge style. Everything else — a template
# folder, a push URL, `url.*.insteadOf`, `core.worktree`, `safe.directory`, a
# setting git adds next year — needs a person's gate (`shell:opaque`).
INERT = (
    r"(?i)^(?:user\.(?:name|email|signingkey|useconfigonly)|author\.(?:name|email)|committer\.(?:name|email)"
    r"|color\..*|advice\..*|column\..*|i18n\..*|log\..*|status\..*|format\.pretty|blame\..*|grep\..*|help\..*"
    r"|core\.(?:quotepath|autocrlf|safecrlf|eol|filemode|ignorecase|abbrev|whitespace|precomposeunicode|commentchar"
    r"|commentstring|untrackedcache|preloadindex|bigfilethreshold|compression|loosecompression|symlinks)"
    r"|init\.defaultbranch|pull\.(?:rebase|ff)|merge\.(?:ff|conflictstyle|log|stat|renames|verbosity)"
    r"|rebase\.(?:autosquash|autostash|stat|abbreviatecommands|missingcommitscheck)"
    r"|diff\.(?:renames|algorithm|context|noprefix|mnemonicprefix|relative|statgraphwidth|colormoved|colormovedws"
    r"|indentheuristic|wserrorhighlight|interhunkcontext|suppressblankempty|dirstat|renamelimit)"
    r"|commit\.(?:verbose|cleanup|status)|gc\.auto|fetch\.(?:prune|prunetags|parallel)|maintenance\.auto)$"
)

# Settings that switch a program off: inert when their value says off
# (`git -c commit.gpgsign=false commit`, `core.fsmonitor=false`).
INERT_WHEN_OFF = frozenset(
    ("commit.gpgsign", "tag.gpgsign", "push.gpgsign", "core.fsmonitor", "rebase.updaterefs", "pull.rebase")
)
OFF = frozenset(("false", "no", "off", "0"))

# Environment variables an agent's git may be given: who it is, how it talks.
# Any other GIT_* (GIT_DIR, GIT_INDEX_FILE, GIT_CONFIG_*, GIT_EXEC_PATH,
# GIT_OBJECT_DIRECTORY, GIT_SSH_COMMAND, GIT_TRACE=<file> …) points git at
# other files or programs: a gate.
INERT_ENV = frozenset(
    (
        "GIT_AUTHOR_NAME",
        "GIT_AUTHOR_EMAIL",
        "GIT_AUTHOR_DATE",
        "GIT_COMMITTER_NAME",
        "GIT_COMMITTER_EMAIL",
        "GIT_COMMITTER_DATE",
        "GIT_TERMINAL_PROMPT",
        "GIT_OPTIONAL_LOCKS",
        "GIT_NO_REPLACE_OBJECTS",
        "GIT_FLUSH",
        "GIT_MERGE_VERBOSITY",
        "GIT_ADVICE",
    )
)

# GIT_TRACE* values that write no file (off, or git's standard error).
TRACE_OFF_OR_STDERR = frozenset(("", "0", "1", "2", "true", "false"))

# What a caller of LoopX's git may pass on in its environment (the person's
# identity); every other GIT_* is dropped before LoopX runs git for the person.
KEPT_ENV = frozenset(("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL"))
