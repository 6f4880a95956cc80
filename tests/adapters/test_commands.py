"""The command checker, table by table: every way around `git push` needs
authority, LoopX's own ground is refused through every tool, and the commands
agents run all day need nothing. In-process and fast; tests/security/ runs the
attack-shaped ones again as the runtime does (a cold `loopx hook` process)."""

from __future__ import annotations

import base64
import os

import pytest

from loopx_core.adapters import policy
from loopx_core.adapters.ground import Ground
from loopx_core.rules.person_folder import person_folder
from loopx_core.shapes.human_verbs import HUMAN_VERBS

GUARDED = {"git:push", "shell:opaque", "shell:interactive"}  # any of these: not without authority


@pytest.fixture
def project(tmp_path):
    root = tmp_path / "project"
    (root / ".loopx" / "inbox").mkdir(parents=True)
    (root / ".loopx" / "board.db").write_bytes(b"")
    (root / "src").mkdir()
    (root / "src" / "a.py").write_text("print('hi')\n")
    return root


def needs(command: str, root, *, tool: str = "Bash", agent: str | None = "a2", cwd=None) -> list:
    return policy.classify(
        tool, {"command": command}, str(cwd or root), str(root), ground=Ground(str(root)), agent=agent
    )


def scopes(command: str, root, **kw) -> set:
    return {n.scope or "refused" for n in needs(command, root, **kw)}


# -- ways around `git push` (#12: 5 of these 11 passed) -------------------------------

EVASIONS = [
    ("a variable as the command", "g=git; $g push"),
    ("a braced variable", "g=git; ${g} push origin main"),
    ("a command substitution as the command", "$(echo git) push"),
    ("backquotes as the command", "`echo git` push"),
    ("eval of an encoded string", 'eval "$(echo Z2l0IHB1c2g= | base64 -d)"'),
    ("eval of a variable", "c='git push'; eval $c"),
    ("eval of literal words", "eval git push"),
    ("piped into sh", 'echo "git push" | sh'),
    ("piped into bash -s", "printf 'git push' | bash -s"),
    ("a python subprocess", "python3 -c \"import subprocess; subprocess.run(['git','push'])\""),
    ("python os.system", "python -c 'import os; os.system(\"git push\")'"),
    ("python through __import__", "python3 -c \"__import__('o'+'s').system('git push')\""),
    ("node child_process", 'node -e \'require("child_process").execSync("git push")\''),
    ("node dynamic require", 'node -e \'require("child"+"_process").execSync("git push")\''),
    ("perl system", "perl -e 'system(\"git push\")'"),
    ("perl backquotes", "perl -e '`git push`'"),
    ("ruby system", "ruby -e 'system(\"git push\")'"),
    ("php shell_exec", "php -r 'shell_exec(\"git push\");'"),
    ("find -exec", "find . -maxdepth 0 -exec git push \\;"),
    ("find -execdir with sh -c", "find . -maxdepth 0 -execdir sh -c 'git push' \\;"),
    ("xargs feeding git", "echo push | xargs git"),
    ("xargs -I into sh -c", "echo 'git push' | xargs -I{} sh -c '{}'"),
    ("sh -c", 'sh -c "git push"'),
    ("bash -lc", "bash -lc 'git push origin main'"),
    ("sh -c of a variable", 'c="git push"; sh -c "$c"'),
    ("env wrapper", "env GIT_TRACE=0 git push"),
    ("env -S", "env -S 'git push'"),
    ("sudo wrapper", "sudo -u deploy git push"),
    ("nice, nohup, timeout", "nice -n 5 nohup timeout 30 git push"),
    ("command / builtin / exec", "command git push; builtin exec git push"),
    ("a wrapper option LoopX does not know", "sudo --frobnicate git push"),
    ("source a script", "source ./push.sh"),
    ("dot a script", ". ./push.sh"),
    ("bash a script", "bash ./push.sh"),
    ("run a script by path", "./push.sh"),
    ("here-document into bash", "bash <<'END'\ngit push\nEND"),
    ("here-string into sh", "sh <<< 'git push'"),
    ("an alias defined in the same command", "alias ls='git push'; ls"),
    ("a function defined in the same command", "f() { git push; }; f"),
    ("brace expansion as the command", "{git,} push"),
    ("ANSI-C quoting", "$'\\x67\\x69\\x74' push"),
    ("quotes inside the word", "g'i't p\"us\"h"),
    ("a git alias given with -c", "git -c alias.p=push p"),
    ("a pager that runs a command", "GIT_PAGER='sh -c \"git push\"' git log"),
    ("awk system()", "awk 'BEGIN{system(\"git push\")}'"),
    ("sed's e command", "sed -n '1e git push' README.md"),
    ("watch", "watch -n 60 'git push'"),
    ("script -c", "script -qc 'git push' /dev/null"),
    ("su -c", "su -c 'git push' me"),
    ("ssh to this machine", "ssh localhost git push"),
    ("trap", "trap 'git push' EXIT"),
    ("process substitution", "cat <(git push)"),
    ("a substitution in a here-document", "cat <<END\n$(git push)\nEND"),
    ("BASH_ENV", "BASH_ENV=./push.sh bash -c true"),
    ("an interactive shell (Codex write_stdin)", "bash"),
    ("an interactive python", "python3"),
    ("an interactive node", "node"),
    ("git send-pack", "git send-pack origin main"),
    ("git subtree push", "git subtree push --prefix lib origin main"),
]


@pytest.mark.parametrize("name, command", EVASIONS, ids=[e[0] for e in EVASIONS])
def test_every_way_around_git_push_needs_authority(project, name, command):
    (project / "push.sh").write_text("#!/bin/sh\ngit push origin main\n")
    found = scopes(command, project)
    assert found & GUARDED, found


def test_what_the_hook_could_not_read_says_why(project):
    [need] = needs("g=git; $g push", project)
    assert need.scope == "shell:opaque" and "`$g`" in need.why and "only known when the shell runs" in need.why
    [need] = needs("bash", project)
    assert need.scope == "shell:interactive" and "write_stdin" in need.why


# -- LoopX's own ground, through every shell tool ------------------------------------

GROUND = [
    ("read the board with sqlite3", "sqlite3 .loopx/board.db 'select * from gate'"),
    ("write the board with sqlite3", "sqlite3 .loopx/board.db \"update gate set status='approved'\""),
    (
        "open the board from python",
        "python3 -c \"import sqlite3; sqlite3.connect('.loopx/board.db').execute('delete from gate')\"",
    ),
    ("delete the board folder", "rm -rf .loopx"),
    ("delete the project", "rm -rf ."),
    ("delete with a glob", "rm -rf .lo*"),
    ("copy over the board", "cp /tmp/evil.db .loopx/board.db"),
    ("move the board away", "mv .loopx /tmp/gone"),
    ("redirect into the policy", 'echo \'{"allow": [".*"]}\' > .loopx/policy.json'),
    ("tee into the policy", "echo '{}' | tee .loopx/policy.json"),
    ("cd into the board folder", "cd .loopx && rm board.db"),
    ("dd over the board", "dd if=/dev/zero of=.loopx/board.db bs=1 count=1"),
    ("git clean -fdx", "git clean -fdx"),
    ("answer a gate", "loopx gate answer G-1 approve"),
    ("answer a gate with options first", "loopx --db .loopx/board.db --json gate answer G-1 approve"),
    ("answer a gate through python -m", "python -m loopx_core gate answer G-1 approve"),
    ("answer a gate through env", "env LOOPX_HUMAN=boss loopx gate answer G-1 approve"),
    ("register an agent", "loopx agent add helper --can git:push"),
    ("raise a budget", "loopx card budget LX-1 --add-usd 100"),
    ("move a card", "loopx card move LX-1 --to ready"),
    ("assign a card", "loopx card assign LX-1 --to a1"),
    ("set a price", "loopx price set gpt --input 0 --output 0"),
    ("open the board's screen", "loopx"),
    ("open the board's screen by name", "loopx board"),
    ("rewrite the hooks", "loopx init --for claude-code"),
    ("speak for another agent", "loopx writeback LX-1 --agent a1 --summary x"),
    ("pose as another agent", "LOOPX_AGENT=a1 loopx next"),
    ("freeze the clock", "LOOPX_NOW=0 loopx gate status G-1"),
    ("edit Claude Code's settings", "sed -i 's/loopx/true/' .claude/settings.json"),
    ("edit Claude Code's local settings", "echo '{}' > .claude/settings.local.json"),
    ("edit the user's Claude Code config", "cp x ~/.claude.json"),
    ("edit Codex's project config", "printf '' > .codex/config.toml"),
    ("edit Codex's user config", "rm -rf ~/.codex"),
    ("edit the MCP list", "echo '{}' > .mcp.json"),
    ("read the human key", f"cat {person_folder()}/key.pem"),
    ("read the human key by ~", "cat ~/.config/loopx/key.pem"),
    ("send keys to the person's pane", "tmux send-keys -t board y Enter"),
    ("paste into the person's pane", "tmux set-buffer y \\; paste-buffer -t 0"),
    ("run a command in tmux", "tmux run-shell 'git push'"),
    ("screen stuff", "screen -S main -X stuff 'y\\n'"),
    ("xdotool", "xdotool type y"),
    ("write to another terminal", "echo y > /dev/pts/3"),
    ("read another terminal", "cat /dev/pts/0"),
    ("another process's stdin", "echo y > /proc/1234/fd/0"),
    ("psql on the board", None),  # PostgreSQL: below
]


@pytest.mark.parametrize("name, command", [g for g in GROUND if g[1]], ids=[g[0] for g in GROUND if g[1]])
def test_loopx_ground_is_refused_whatever_the_agent_holds(project, name, command):
    found = needs(command, project)
    refused = [n for n in found if n.scope is None]
    assert refused, found
    assert refused[0].why  # says why: not a gate to wait on


@pytest.mark.parametrize("verb", sorted(HUMAN_VERBS))
def test_every_human_verb_is_refused(project, verb):
    """Parametrised over the one list the CLI's human-only check also reads:
    a verb added there is refused here too."""
    command = "loopx " + " ".join(v for v in verb if v) + " X-1"
    assert "refused" in scopes(command, project)


def test_a_symbolic_link_into_the_ground_is_followed(project):
    os.symlink(project / ".loopx", project / "notes")
    assert "refused" in scopes("cat notes/board.db", project)
    assert "refused" in scopes("rm -rf notes", project)


def test_the_inbox_stays_open_to_agents(project):
    assert scopes("cp out.loopx.json .loopx/inbox/", project) == set()
    assert scopes("echo '{}' > .loopx/inbox/e.loopx.json", project) == set()
    assert "refused" in scopes("cp x .loopx/inbox/../policy.json", project)


def test_the_board_database_on_postgresql(project):
    url = "postgresql://loopx@db.internal:5432/teamboard"
    ground = Ground(str(project), board_url=url)

    def found(command):
        return {
            n.scope or "refused"
            for n in policy.classify("Bash", {"command": command}, str(project), str(project), ground=ground)
        }

    assert "refused" in found(f"psql {url} -c 'delete from gate'")
    assert "refused" in found("psql -h db.internal -d teamboard -c 'select 1'")
    assert "refused" in found("pg_dump teamboard")
    assert found("psql -d otherdb -c 'select 1'") == set()


# -- file tools and patches ------------------------------------------------------------


@pytest.mark.parametrize(
    "tool, field, path",
    [
        ("Write", "file_path", ".loopx/policy.json"),
        ("Edit", "file_path", ".claude/settings.json"),
        ("Write", "file_path", ".claude/settings.local.json"),
        ("Write", "file_path", ".mcp.json"),
        ("Edit", "file_path", ".codex/config.toml"),
        ("NotebookEdit", "notebook_path", ".loopx/x.ipynb"),
        ("Read", "file_path", ".loopx/board.db"),
        ("Read", "file_path", "~/.config/loopx/key.pem"),
        ("Grep", "path", ".loopx"),
        ("view_image", "path", ".loopx/board.db"),
    ],
)
def test_file_tools_cannot_touch_the_ground(project, tool, field, path):
    full = os.path.expanduser(path) if path.startswith("~") else str(project / path)
    found = policy.classify(
        tool, {field: full, "content": "{}"}, str(project), str(project), ground=Ground(str(project))
    )
    assert [n.scope for n in found] == [None], found


def test_glob_of_the_board_folder(project):
    found = policy.classify("Glob", {"pattern": ".lo*/*.db"}, str(project), str(project), ground=Ground(str(project)))
    assert [n.scope for n in found] == [None]


def test_codex_apply_patch_cannot_touch_the_ground(project):
    patch = '*** Begin Patch\n*** Add File: .loopx/policy.json\n+{"allow": [".*"]}\n*** End Patch\n'
    found = policy.classify("apply_patch", {"command": patch}, str(project), str(project), ground=Ground(str(project)))
    assert [n.scope for n in found] == [None]
    via_shell = "apply_patch <<'PATCH'\n" + patch + "PATCH"
    assert "refused" in scopes(via_shell, project)


def test_multiedit_is_gone():
    """Claude Code 2.1's tool list (the SDK's BUILTIN_TOOL_NAMES) has no MultiEdit."""
    assert "MultiEdit" not in policy.FILE_TOOLS


# -- PowerShell and the other shell-running tools ------------------------------------------

POWERSHELL = [
    ("git push", {"git:push"}),
    ("& 'git' push", {"git:push"}),
    ("& $g push", {"shell:opaque"}),
    ("iex 'git push'", {"git:push"}),
    ("Invoke-Expression $code", {"shell:opaque"}),
    ("$out = git push origin main", {"git:push"}),
    ("if (git push) { 'ok' }", {"git:push"}),
    ("Start-Process git -ArgumentList 'push'", {"git:push"}),
    ("Start-Process -FilePath $p", {"shell:opaque"}),
    ("g`it push", {"git:push"}),
    ("Get-ChildItem | ForEach-Object { git push }", {"git:push"}),
    ("Invoke-Command -ScriptBlock { npm publish }", {"publish:npm"}),
    ("Set-Alias g git; g push", {"git:push"}),
    ('cmd /c "git push"', {"git:push"}),
    ("[System.Diagnostics.Process]::Start('git', 'push')", {"shell:opaque"}),
    ("pwsh -EncodedCommand " + base64.b64encode("git push".encode("utf-16-le")).decode(), {"git:push"}),
    ("Remove-Item -Recurse -Force C:\\Windows\\Temp\\x", {"fs:delete-outside"}),
    ("Set-Content -Path .loopx/policy.json -Value '{}'", {"refused"}),
    ("[IO.File]::WriteAllText('.loopx/policy.json', '{}')", {"refused"}),
    ("Get-Content .claude/settings.json", {"refused"}),
    ("loopx gate answer G-1 approve", {"refused"}),
    ("Get-ChildItem -Recurse | Select-String TODO", set()),
    ("dotnet test", set()),
    ("Write-Output 'git push'", set()),
]


@pytest.mark.parametrize("command, expected", POWERSHELL, ids=[p[0][:40] for p in POWERSHELL])
def test_powershell(project, command, expected):
    assert scopes(command, project, tool="PowerShell") == expected


def test_leaving_the_sandbox_needs_a_person(project):
    """Claude Code's Bash can ask to run outside its sandbox (the sandbox
    `loopx init` turns on keeps the agent off LoopX's ground): a scope."""
    found = policy.classify("Bash", {"command": "ls", "dangerouslyDisableSandbox": True}, str(project), str(project))
    assert [n.scope for n in found] == ["sandbox:off"]
    assert (
        policy.classify("Bash", {"command": "ls", "dangerouslyDisableSandbox": False}, str(project), str(project)) == []
    )
    codex_old = policy.classify("exec_command", {"cmd": "git push"}, str(project), str(project))
    assert [n.scope for n in codex_old] == ["git:push"]


def test_monitor_and_skill_commands_are_shell_commands(project):
    """Claude Code's Monitor runs `command` in a shell; skill commands come as
    PreSkillShellCommand with tool_name Bash or PowerShell: the same checks."""
    monitor = policy.classify(
        "Monitor",
        {"description": "watch", "timeout_ms": 1000, "command": "tail -f log | while read l; do git push; done"},
        str(project),
        str(project),
    )
    assert {n.scope for n in monitor} == {"git:push"}
    websocket = policy.classify(
        "Monitor",
        {"description": "ws", "timeout_ms": 1000, "ws": {"url": "ws://127.0.0.1:9"}},
        str(project),
        str(project),
    )
    assert websocket == []


# -- what agents run all day needs nothing --------------------------------------------------

BENIGN = [
    "git status",
    "git log --oneline -20 | head",
    "git diff HEAD~1 -- src/",
    'git add -A && git commit -m "Fix the parser\n\nexplains $(why) in quotes"',
    "git commit -m \"$(cat <<'END'\nFix the parser\n\ngit push follows later\nEND\n)\"",
    "git checkout -b feature/x",
    "git stash && git pull --rebase && git stash pop",
    "git clean -n",
    "git rm --cached -r build",
    "npm test",
    "npm run build",
    "npm install",
    "pnpm install --frozen-lockfile",
    "yarn test",
    "npx tsc --noEmit",
    "pytest -q tests/ 2>&1 | tail -20",
    "python -m pytest -x",
    "uv run pytest",
    "poetry run pytest -q",
    "python3 -m venv .venv && . .venv/bin/activate && pip install -e .",
    "cd src && ls -la && cd ..",
    'find . -name "*.py" -not -path "./.venv/*" | xargs wc -l',
    "find . -name __pycache__ -type d -exec rm -rf {} +",
    'grep -rn "TODO" src/ | head -50',
    'rg "def main" -g "*.py"',
    "cat > src/notes.md <<'END'\n# Notes\n$HOME and git push are only words here\nEND",
    'echo "done" > out.txt',
    "make test",
    "cargo build --release",
    "go test ./...",
    "docker build -t app .",
    "curl -s http://localhost:8080/health | jq .",
    "sed -i 's/foo/bar/g' src/a.py",
    "awk '{print $1}' data.txt | sort | uniq -c",
    "for f in src/*.py; do echo $f; done",
    "if [ -f package.json ]; then npm ci; fi",
    'export PATH="$HOME/.local/bin:$PATH"',
    "python -c \"import json,sys; print(json.load(open('package.json'))['version'])\"",
    "node -e \"console.log(require('./package.json').version)\"",
    "mkdir -p build && cp -r src build/",
    "timeout 60 npm test",
    "env NODE_ENV=test npm test",
    "wc -l $(git ls-files)",
    "diff <(sort a) <(sort b)",
    "python3 --version",
    "rm -rf build dist *.egg-info",
    "rm -f src/*.pyc",
    "loopx next --claim",
    'loopx writeback LX-1 --summary "did x" --artifact src/a.py',
    "loopx gate status G-1",
    'loopx gate ask LX-1 --question "Push?" --scope git:push --wait',
    "loopx context LX-1",
    "sqlite3 app.db 'select count(*) from users'",
    "tmux ls",
    "less README.md",
    "xargs -n1 echo < list.txt",
    "echo '.loopx/' >> .gitignore",
    "./src/a.py --help",
]


@pytest.mark.parametrize("command", BENIGN, ids=[b[:40] for b in BENIGN])
def test_everyday_commands_need_nothing(project, command):
    assert needs(command, project) == []
