"""The e2e suite: real Claude Code and Codex binaries, a scripted model on
127.0.0.1, real ``loopx`` processes. Selected with ``-m e2e``; part of the
default run. When the pinned runtimes are missing every test here FAILS with
the reason (``./dev test`` installs them first); ``LOOPX_E2E_SKIP=1`` skips the
folder on purpose, with a warning printed at the end of the run."""

from __future__ import annotations

import os

import pytest

from . import runtimes
from .harness import Project
from .model_server import ScriptedModel


def pytest_collection_modifyitems(config, items):
    here = os.path.dirname(__file__)
    for item in items:
        if str(item.fspath).startswith(here):
            item.add_marker(pytest.mark.e2e)


def pytest_configure(config):
    config.addinivalue_line("markers", "e2e: drives the real Claude Code / Codex binaries (tests/e2e)")


def pytest_terminal_summary(terminalreporter):
    if os.environ.get(runtimes.SKIP_ENV) == "1":
        terminalreporter.write_sep(
            "!", f"{runtimes.SKIP_ENV}=1: the e2e suite against the real runtimes was SKIPPED", red=True, bold=True
        )


@pytest.fixture(scope="session")
def installed_runtimes():
    if os.environ.get(runtimes.SKIP_ENV) == "1":
        pytest.skip(f"{runtimes.SKIP_ENV}=1: e2e suite skipped on purpose (never in CI)")
    why = runtimes.problem()
    if why:
        pytest.fail(f"the e2e suite cannot run: {why}", pytrace=False)
    return runtimes


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    project = getattr(item, "_e2e_project", None)
    if report.when == "call" and report.failed and project is not None:
        for session in project.sessions:
            report.sections.append((f"runtime session: {session.runtime}", session.explain()))


@pytest.fixture
def project(installed_runtimes, tmp_path, request):
    p = Project(tmp_path / "project")
    request.node._e2e_project = p
    yield p
    p.close()


@pytest.fixture
def model():
    with ScriptedModel() as server:
        yield server
