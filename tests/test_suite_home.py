"""The suite never touches the real HOME and leaves nothing running (issue #44):
a run whose test writes to the HOME it started with, or leaves a daemon behind,
FAILS naming it. Proved by running pytest on a tiny test with the suite's own
plugin (tests/suite_home.py), the way tests/conftest.py installs it, and a
stand-in "real" HOME, so this test itself never writes the real one."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

from tests import suite_home

REPO = Path(__file__).resolve().parent.parent

CONFTEST = """
from tests import suite_home

suite_home.enter()
pytest_configure = suite_home.pytest_configure
pytest_sessionfinish = suite_home.pytest_sessionfinish
pytest_terminal_summary = suite_home.pytest_terminal_summary
pytest_unconfigure = suite_home.pytest_unconfigure
pytest_runtest_setup = suite_home.pytest_runtest_setup
"""


def run_inner(tmp_path: Path, test: str, **env_extra: str) -> tuple[subprocess.CompletedProcess, Path]:
    """pytest on ``test`` with the suite's plugin, HOME being a stand-in of the person's."""
    person = tmp_path / "person-home"
    (person / ".config" / "loopx").mkdir(parents=True)
    (person / ".config" / "loopx" / "key.json").write_text('{"sealed": "the person\'s own key"}')
    inner = tmp_path / "inner"
    inner.mkdir()
    (inner / "conftest.py").write_text(CONFTEST)
    (inner / "test_inner.py").write_text(textwrap.dedent(test))
    env = dict(os.environ, HOME=str(person), PYTHONPATH=str(REPO), **env_extra)
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-n",
            "0",
            "-p",
            "no:cacheprovider",
            "-q",
            "--rootdir",
            str(inner),
            "-c",
            os.devnull,
            str(inner),
        ],
        cwd=inner,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    return proc, person


def test_a_run_whose_test_writes_the_real_home_fails_naming_it(tmp_path):
    proc, person = run_inner(
        tmp_path,
        """
        import os
        from pathlib import Path

        def test_overwrites_the_key():
            real = Path(os.environ["LOOPX_SUITE_REAL_HOME"])  # what a test bypassing HOME would reach
            (real / ".config" / "loopx" / "key.json").write_text('{"private": "a test key"}')
    """,
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "1 passed" in proc.stdout  # the test itself passed: the run failed on what it did
    assert "the run changed the real HOME" in proc.stdout and "~/.config/loopx/key.json" in proc.stdout, proc.stdout


def test_a_run_that_keeps_to_its_own_home_passes_and_leaves_nothing(tmp_path):
    proc, person = run_inner(
        tmp_path,
        """
        import os
        from pathlib import Path

        def test_writes_its_own_home():
            home = Path(os.environ["HOME"])
            assert home != Path(os.environ["LOOPX_SUITE_REAL_HOME"]) and str(home).startswith(os.environ["LOOPX_SUITE_DIR"])
            assert not str(home).startswith("/tmp/")  # Codex refuses a home under /tmp
            for name in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME", "XDG_RUNTIME_DIR"):
                assert os.environ[name].startswith(os.environ["LOOPX_SUITE_DIR"]), name
            (home / ".config" / "loopx").mkdir(parents=True)
            (home / ".config" / "loopx" / "key.json").write_text('{"private": "a test key"}')
            (home / "locked").mkdir()
            (home / "locked" / "file").write_text("x")
            (home / "locked").chmod(0o500)  # a permissions test's leftover: removed all the same
            Path(os.environ["SAID"]).write_text(os.environ["LOOPX_SUITE_DIR"])
    """,
        SAID=str(tmp_path / "said"),
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert not Path((tmp_path / "said").read_text()).exists()  # the run's own folder is removed at its end
    assert (person / ".config" / "loopx" / "key.json").read_text() == '{"sealed": "the person\'s own key"}'
    assert sorted(os.listdir(person)) == [".config"]


def test_a_run_that_leaves_a_daemon_running_fails_naming_it_and_kills_it(tmp_path):
    pidfile = tmp_path / "daemon.pid"
    proc, _ = run_inner(
        tmp_path,
        f"""
        import os
        import subprocess

        def test_starts_a_daemon():
            # a grandchild in a session of its own, its parent gone: what a sandbox helper does
            subprocess.run(["sh", "-c", "setsid sleep 600 </dev/null >/dev/null 2>&1 & echo $! > {pidfile}"], check=True)
    """,
    )
    pid = int(pidfile.read_text())
    try:
        assert proc.returncode == 1, proc.stdout + proc.stderr
        assert "outlived it" in proc.stdout and f"{pid} " in proc.stdout and "sleep 600" in proc.stdout, proc.stdout
        assert "(started during test_inner.py::test_starts_a_daemon)" in proc.stdout, proc.stdout
        assert not _running(pid)
    finally:
        if _running(pid):
            os.kill(pid, 9)


def _running(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_this_run_has_its_own_home():
    assert os.environ["HOME"].startswith(os.environ[suite_home.DIR_ENV])
    assert os.environ["HOME"] != os.environ[suite_home.REAL_HOME_ENV]


def test_a_leftover_caught_in_the_middle_of_an_exec_is_still_found(tmp_path):
    """A process between ``exec`` and its new program reads as having no
    environment for a moment: the daemon of the test above, two execs from
    ``sleep``, was missed that way on a loaded CI machine. A process that does
    nothing but exec itself is found by every scan, not most."""
    token = "exec-" + os.urandom(4).hex()
    script = tmp_path / "again.sh"
    script.write_text(f"exec /bin/sh {script}\n")
    proc = subprocess.Popen(["/bin/sh", str(script)], env=dict(os.environ, **{suite_home.RUN_ENV: token}))
    try:
        scans = [pid for _ in range(200) for pid, _cmd in suite_home.marked_processes(token)]
        assert scans == [proc.pid] * 200
    finally:
        proc.kill()
        proc.wait()
