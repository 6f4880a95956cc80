"""``loopx run`` and ``loopx runner list|pause|resume|stop`` (DESIGN §10 "Runners")."""

from __future__ import annotations

import os
import sys

from ..rules import clock
from ..rules.given_paths import check_program, check_target
from ..shapes.errors import InvalidInput, UsageError
from . import Context, Outcome, agent_id


def _duration(text: str, flag: str) -> float:
    from ..rules.durations import parse_duration

    try:
        return parse_duration(text)
    except ValueError as exc:
        raise InvalidInput(f"{flag}: {exc}", "e.g. 30s, 10m, 2h") from None


def given_bin(path: str | None) -> None:
    """``--bin``: a path to a program (a bare name is looked up on PATH when it runs)."""
    if path and os.sep in path:
        check_program(
            path,
            "--bin",
            "give --bin the runtime's executable (or leave it out: claude / codex on PATH)",
            error=UsageError,
        )


def cmd_run(ctx: Context) -> Outcome:
    from ..runner.loop import Options, Runner
    from ..runtimes import make
    from ..store.rows import agent_row

    a = ctx.args
    agent = agent_id(a.drive)
    command = list(a.rest)
    if command[:1] == ["--"]:
        command = command[1:]
    if not command and make(a.runtime, command).needs_command:
        raise UsageError(
            f"the {a.runtime} runtime needs a command",
            f"e.g. `loopx run --agent {a.runtime}-1 --runtime {a.runtime} -- ./turn.sh`",
        )
    given_bin(a.bin)
    if a.log_file:
        check_target(
            a.log_file,
            "the log file",
            "give --log-file a regular file (or a new one) in a folder you can write",
            error=UsageError,
        )
    options = Options(
        agent=agent,
        runtime=a.runtime,
        command=command,
        lease=_duration(a.lease, "--lease") if a.lease else None,
        turn_limit=_duration(a.turn_limit, "--turn-limit"),
        grace=_duration(a.grace, "--grace") if a.grace not in ("0", "0s") else 0.0,
        turns=a.turns,
        binary=a.bin,
    )
    store = ctx.store
    with store.read():
        agent_row(agent)  # an unknown agent: exit 4 with the command that registers it
    problem = make(a.runtime, command, a.bin, agent).identity_problem(store.project_root())
    if problem:
        raise UsageError(
            problem, f"run it in a checkout set up for it: `loopx init --for {a.runtime} --agent {agent}` there"
        )
    from ..runner.log import runner_logger, writer

    out = sys.stderr if getattr(a, "json", False) else sys.stdout
    if a.quiet and a.verbose:
        raise UsageError(
            "--quiet and --verbose contradict each other", "give one of them (or neither: the runner's ordinary log)"
        )
    verbosity = "quiet" if a.quiet else "verbose" if a.verbose else "normal"
    try:
        logger = runner_logger(agent, out, log_file=a.log_file, verbosity=verbosity)
    except OSError as exc:
        raise UsageError(
            f"cannot write the log file {a.log_file}: {exc.strerror or exc}",
            "give --log-file a path in a folder you can write",
        ) from None
    runner = Runner(store, options, writer(logger, agent))
    code = runner.run()
    if runner.altered is not None:
        raise runner.altered  # (exit 11, said on stderr)
    from ..ops.runners import get_runner

    view = get_runner(store, agent)
    data = {"runner": view.to_json() if view else None}
    return Outcome(data, code, f"{agent}'s runner stopped: {view.detail if view else ''}")


def _line(r: dict) -> str:
    from .render import one_line

    r = dict(r, detail=one_line(r["detail"]), control=dict(r["control"], problem=one_line(r["control"]["problem"])))
    what = r["state"]
    if r["state"] == "running":
        what = f"running turn {r['turn']} on {r['card']} since {r['since']}"
    elif r["state"] == "waiting":
        what = f"waiting on {r['gate']} ({r['card']})"
    elif r["state"] == "asleep":
        what = (
            "asleep" + (f" until {r['wake_at']}" if r["wake_at"] else "") + (f": {r['detail']}" if r["detail"] else "")
        )
    elif r["state"] in ("paused", "stopped", "gone"):
        what = r["state"] + (f": {r['detail']}" if r["detail"] else "")
    control = r["control"]
    if control["problem"]:
        what += f"  [control not honoured: {control['problem']}]"
    elif control["control"] != "run":
        what += f"  [{control['control']} by {control['by']}]"
    where = f"pid {r['pid']} on {r['host']}" if r["pid"] else ""
    return f"{r['agent']:<16} {r['runtime'] or '-':<12} {what}  {where}".rstrip()


def cmd_list(ctx: Context) -> Outcome:
    from ..ops.runners import list_runners

    now = clock.now()
    found = [r.to_json(now) for r in list_runners(ctx.store)]
    text = (
        "\n".join(_line(r) for r in found)
        or "no runners yet → start one: `loopx run --agent ID --runtime claude-code|codex|shell`"
    )
    return Outcome({"runners": found}, 0, text)


def cmd_control(ctx: Context) -> Outcome:
    from ..ops.runners import control

    what = ctx.args.subcommand
    agent = agent_id(ctx.args.target)
    person = ctx.person(f"{what} a runner")
    view = control(ctx.store, agent, what, person).to_json()
    then = {
        "pause": "it starts no new turn; `loopx runner resume " + agent + "` lets it go on",
        "resume": "it goes on (a stopped runner: start `loopx run --agent " + agent + " …` again)",
        "stop": "it ends its turn, releases its card and exits; `loopx runner resume " + agent + "` allows a new one",
    }[what]
    return Outcome({"runner": view}, 0, f"{agent}'s runner: {what} (signed by {person.actor})\n{then}")
