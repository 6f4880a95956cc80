"""The hook reads every way git writes as a class (issue #38): a setting
written to any config file or given with ``-c`` or the environment, a file
named by an option, and ``find -exec``/``xargs`` handing a command the files
they find. In-process; tests/security/test_workspace_hook.py runs the ref
classes from a real workspace with the cold hook."""

from __future__ import annotations

import pytest

from tests.adapters.test_commands import GUARDED, scopes


@pytest.fixture
def project(tmp_path):
    root = tmp_path / "project"
    (root / ".loopx" / "inbox").mkdir(parents=True)
    (root / ".loopx" / "board.db").write_bytes(b"")
    (root / "src").mkdir()
    return root


GIT_WRITES = [
    # a config file outside the repository's own (the person's, a template's, another checkout's)
    "git config --file=../../../.gitconfig init.templateDir /tmp/evil",
    "git config -f ~/.gitconfig core.editor vim",
    "git config --global init.templateDir /tmp/evil",
    "git config --global user.email agent@evil",
    "git config --system core.pager less",
    "git config --file .git/config remote.origin.pushurl /tmp/evil",
    # settings that run a program or point git elsewhere, in every scope
    "git config interactive.diffFilter 'touch /tmp/x'",
    "git config submodule.x.update '!touch /tmp/x'",
    "git config --worktree core.hooksPath /tmp/hooks",
    "git config --local url./tmp/evil.insteadOf https://github.com/",
    "git config remote.origin.url /tmp/evil",
    "git config safe.directory '*'",
    "git config --unset core.hooksPath",
    "git config --edit",
    "git config --remove-section user",
    "git config set core.fsmonitor /tmp/x",
    "git config --add include.path /tmp/evil.cfg",
    # -c and the environment
    "git -c init.templateDir=/tmp/evil clone a b",
    "git -c core.worktree=/tmp status",
    "git -c interactive.diffFilter=x add -p",
    "git -c commit.gpgsign=true commit -m x",
    "git config core.fsmonitor /tmp/x",
    "git --exec-path=/tmp/evil status",
    "GIT_DIR=/tmp/evil git log",
    "GIT_INDEX_FILE=/tmp/index git add .",
    "export GIT_CONFIG_GLOBAL=/tmp/evil; git status",
    "env GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.pager GIT_CONFIG_VALUE_0=x git log",
    "GIT_OBJECT_DIRECTORY=/tmp/o git commit -m x",
    "GIT_TRACE=/tmp/trace git status",
    "GIT_REPLACE_REF_BASE=refs/x/ git log",
    # what the person later reads in place of the truth
    "git replace HEAD HEAD~1",
]


@pytest.mark.parametrize("command", GIT_WRITES)
def test_every_way_git_writes_its_settings_needs_a_person(project, command):
    assert scopes(command, project) & GUARDED, command


GIT_INERT = [
    "git config user.email agent@localhost",
    "git config user.name Agent",
    "git config --get remote.origin.url",
    "git config -l",
    "git config --list --show-origin",
    "git config get core.pager",
    "git config core.autocrlf",
    "git config --unset user.email",
    "git -c user.name=x -c user.email=y commit -m z",
    "git -c color.ui=never log",
    "git -c commit.gpgsign=false commit -m x",
    "git config commit.gpgSign false",
    "GIT_AUTHOR_NAME=x git commit -m y",
    "GIT_TRACE=1 git status",
    "git replace -l",
]


@pytest.mark.parametrize("command", GIT_INERT)
def test_settings_that_run_nothing_and_point_nowhere_stay_free(project, command):
    assert not scopes(command, project), command


FOUND = [
    "find . -name board.db -exec sqlite3 {} 'select 1' \\;",
    "find . -iname 'BOARD.*' -execdir sqlite3 {} 'update card set x=1' +",
    "find . -name '*.db' -exec sqlite3 {} .dump \\;",
    "find . -type f -exec rm {} \\;",
    "find . -name board.db -print0 | xargs -0 -I{} sqlite3 {} 'select 1'",
    "find . -name board.db | xargs sqlite3",
    'sqlite3 "$DB" "select 1"',
]


@pytest.mark.parametrize("command", FOUND)
def test_find_exec_and_xargs_check_their_command_with_what_they_find(project, command):
    """Before: `find . -name board.db -exec sqlite3 {} …` passed undecided (``{}``
    was read as a file under `.` that is not the board)."""
    assert scopes(command, project) & ({"refused"} | GUARDED), command


def test_find_exec_on_files_that_are_not_the_ground_stays_free(project):
    assert not scopes("find . -name '*.py' -exec grep -n todo {} +", project)
    assert not scopes("find src -type f -exec rm {} \\;", project)
