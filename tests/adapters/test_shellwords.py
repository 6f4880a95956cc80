"""The shell and PowerShell readers: what they split a command into, and two
properties on any text at all — they never raise, and their work grows
linearly with the text (counted in tokens read, not timed: the suite has no
timed assertions; bench/hook_worst.py times the worst cases)."""

from __future__ import annotations

import string

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loopx_core.adapters import policy
from loopx_core.adapters.ground import Ground
from loopx_core.shell import posix_words as shellwords
from loopx_core.shell import pwsh_words as pwshwords


def commands(text: str) -> list[list[str]]:
    return [[w.text for w in c.words] for c in shellwords.parse(text).commands]


@pytest.mark.parametrize(
    "text, expected",
    [
        ("git push", [["git", "push"]]),
        ("g'i't p\"us\"h", [["git", "push"]]),
        ("$'\\x67\\151t' push", [["git", "push"]]),
        ("a && b || c; d & e | f |& g", [["a"], ["b"], ["c"], ["d"], ["e"], ["f"], ["g"]]),
        ('echo "x$(git push)y"', [["git", "push"], ["echo", "xy"]]),
        ("echo `git push`", [["echo", ""], ["git", "push"]]),  # backquotes are read after their line
        ("(cd /tmp && rm x)", [["cd", "/tmp"], ["rm", "x"]]),
        ("echo a#b # a comment", [["echo", "a#b"]]),
        ("echo ${x:-$(rm -r y)}", [["rm", "-r", "y"], ["echo", ""]]),
        ("cat <<'END'\n$(git push)\nEND\nls", [["cat"], ["ls"]]),
        ("cat <<END\n$(git push)\nEND", [["cat"], ["git", "push"]]),
        ("diff <(git push) b", [["git", "push"], ["diff", "/dev/fd/63", "b"]]),
        ("echo 'unterminated", [["echo", "unterminated"]]),
        ("a\\\nb", [["ab"]]),
    ],
)
def test_shell_commands(text, expected):
    assert commands(text) == expected


def test_what_the_reader_keeps_about_words_and_input():
    [cmd] = shellwords.parse("$g push > /tmp/out 2>&1").commands
    assert cmd.words[0].dynamic and not cmd.words[1].dynamic
    assert [(op, w.text) for op, w in cmd.redirects] == [(">", "/tmp/out"), (">&", "1")]
    first, second = shellwords.parse("echo hi | sh").commands
    assert not first.piped and second.piped
    [cmd] = shellwords.parse("bash <<'END'\ngit push\nEND").commands
    assert cmd.stdin == [("git push\n", True)]
    assert shellwords.expand_braces("{git,} push") == ["git push", " push"]
    assert shellwords.expand_braces("{1..5000}") is None


def test_limits_end_the_reading_with_a_reason():
    assert shellwords.parse("$(" * 10_000).limits == [f"contexts nested more than {shellwords.MAX_DEPTH} deep"]
    assert "more than" in shellwords.parse("a;" * (shellwords.MAX_TOKENS + 10)).limits[0]
    assert pwshwords.parse("(" * 10_000).limits


# -- properties ----------------------------------------------------------------------------

SHELL_ALPHABET = string.ascii_letters[:6] + " \t\n'\"\\$`;&|()<>{}[]*?#~=!-,.0123456789@%+:"
PWSH_ALPHABET = SHELL_ALPHABET + "@'\"`"
texts = st.text(alphabet=SHELL_ALPHABET, max_size=400)
PROPERTY = settings(derandomize=True, max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@PROPERTY
@given(texts)
def test_the_shell_reader_never_raises_and_reads_linearly(text):
    script = shellwords.parse(text)
    # one pass per level; backquotes and here-document bodies are read again, at most MAX_NESTING deep
    assert script.size <= (shellwords.MAX_NESTING + 2) * (len(text) + 1)
    assert all(isinstance(w.text, str) for c in script.commands for w in c.words)


@PROPERTY
@given(st.text(alphabet=PWSH_ALPHABET, max_size=400))
def test_the_powershell_reader_never_raises_and_reads_linearly(text):
    script = pwshwords.parse(text)
    assert script.size <= len(text) + 1


@PROPERTY
@given(texts)
def test_the_checker_never_raises(tmp_path_factory, text):
    root = str(tmp_path_factory.getbasetemp())
    for tool in ("Bash", "PowerShell"):
        found = policy.classify(tool, {"command": text}, root, root, ground=Ground(root))
        assert all(n.scope is None or isinstance(n.scope, str) for n in found)


@pytest.mark.parametrize("unit", ["a;", "$(", "`", "`\\`", "''", '"$x"', "\n", "(", "${", "<<E\n", "w ", "$'\\x41'"])
def test_work_grows_linearly_with_hostile_text(unit):
    """Doubling a pathological text at most doubles the tokens read (plus a
    constant): no quadratic re-splitting, no backtracking blow-up."""
    small = shellwords.parse(unit * 2000)
    large = shellwords.parse(unit * 4000)
    if small.limits or large.limits:  # both stopped by a limit: bounded either way
        assert large.size <= shellwords.MAX_TOKENS + 1
    else:
        assert large.size <= 2 * small.size + 10
