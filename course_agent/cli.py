"""`course-agent` / `python -m course_agent`: ask a question, or run the self-test, in a terminal.

Reads MOCK, SELFTEST and INJECT like the course's `MOCK=1 SELFTEST=1 pnpm start`; without a key
and without --mock a question is refused in one line (exit 2), never answered offline unasked.
Deliberately not handled: the notebook (see course_agent.notebook) and interactive chat.
"""

from __future__ import annotations

import argparse
import importlib
import io
import os
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from course_agent.app.options import (
    DEFAULT_REQUEST_TIMEOUT,
    DEFAULT_RUN_SECONDS,
    DEFAULT_TIMEOUT,
    REQUEST_TIMEOUT_VARIABLE,
    RUN_DEADLINE_VARIABLE,
    TIMEOUT_VARIABLE,
    add_model_options,
    env_flag,
    seconds_from,
)
from course_agent.lab.iri_grammar import skip_iri_grammar
from course_agent.offline.repository import QUESTION

if TYPE_CHECKING:
    from course_agent.app.settings import Setup

__all__ = ["build_parser", "main"]

# Exit codes: 0 answered, 1 the gateway failed, 2 bad usage or settings (argparse's), 3 out of
# turns, 4 a self-test check failed, 130 Ctrl-C (128 + SIGINT, as shells report it).
EXIT_CODES = {"done": 0, "error": 1, "max_turns": 3}
EXIT_INTERRUPTED = 130  # as a shell reports a process stopped by Ctrl-C (128 + SIGINT)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="course-agent",
        description="A read-only coding agent: glob, grep and read_file in a loop. "
        "It needs an API key, or --mock (MOCK=1) for the offline scripted model on a generated "
        "sandbox repository. "
        "Instructors: `course-agent grade SUBMISSIONS...` grades lab notebooks; "
        "`course-agent lab release SOURCE DEST` makes the student lab from the solution.",
        epilog="Environment (also read from a .env file in the current folder, never a parent's): "
        "OPENAI_API_KEY, OPENAI_BASE_URL, ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL, "
        "COURSE_AGENT_MODEL, MOCK=1, SELFTEST=1, INJECT=bad_args, "
        f"{TIMEOUT_VARIABLE}=SECONDS to wait for a silent gateway (default "
        f"{DEFAULT_TIMEOUT:g}), {REQUEST_TIMEOUT_VARIABLE}=SECONDS for one whole request "
        f"(default {DEFAULT_REQUEST_TIMEOUT:g}), {RUN_DEADLINE_VARIABLE}=SECONDS for a whole run. "
        "A gateway URL from .env gets only a key from the same .env.",
    )
    parser.add_argument("question", nargs="?", default=QUESTION, help=f'default: "{QUESTION}"')
    add_model_options(parser)
    parser.add_argument("--selftest", action="store_true", help="run the seven checks (SELFTEST=1)")
    return parser


# The instructors' commands: `course-agent grade ...` and `course-agent lab release|execute ...`,
# as module:function, imported only when named: the grader imports every self-test and nbclient.
SUBCOMMANDS = {
    "grade": "course_agent.lab.grade_command:main_grade",
    "lab": "course_agent.lab.release:main_lab",
}


def _subcommand(name: str) -> Callable[[list[str]], int]:
    module, function = SUBCOMMANDS[name].split(":")
    return getattr(importlib.import_module(module), function)


def main(argv: Sequence[str] | None = None) -> int:
    for stream in (sys.stdout, sys.stderr):
        # A terminal that is not UTF-8 (PYTHONIOENCODING=ascii, a latin-1 locale) shows what it
        # cannot encode as \u2192, instead of stopping the run with UnicodeEncodeError.
        if isinstance(stream, io.TextIOWrapper):
            stream.reconfigure(errors="backslashreplace")
    try:
        return _run(list(sys.argv[1:] if argv is None else argv))
    except KeyboardInterrupt:  # one line, not a traceback: the run has nothing to clean up
        print("! interrupted by Ctrl-C", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # `course-agent | head`: the reader left, so stop without a word
        # Point stdout at /dev/null, or Python's final flush of it raises the same error again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


def _run(argv: list[str]) -> int:
    if argv and argv[0] in SUBCOMMANDS:
        skip_iri_grammar()  # about 1 s of every grader start (lab/iri_grammar.py)
        return _subcommand(argv[0])(argv[1:])
    args = build_parser().parse_args(argv)
    if args.max_turns < 1:
        print("course-agent: --max-turns must be at least 1", file=sys.stderr)
        return 2
    # Imported after parsing, so that --help and a usage error cost only argparse: settings bring
    # the wire formats and the tools (pydantic) behind them.
    from course_agent.app.environment import read_environment
    from course_agent.app.settings import choose
    from course_agent.protocol import GatewayError
    from course_agent.render.terminal import printable

    try:
        env = read_environment()
        if args.selftest or env_flag(env, "SELFTEST"):
            return _selftest()
        seconds = seconds_from(env, RUN_DEADLINE_VARIABLE, DEFAULT_RUN_SECONDS, args.deadline)
        setup = choose(
            mock=args.mock,
            provider=args.provider,
            inject=args.inject,
            model=args.model,
            base_url=args.base_url,
            root=args.root,
            record=args.record,
            replay=args.replay,
            env=env,
        )
    except (GatewayError, ValueError) as exc:  # no key, a bad base URL, an unreadable --replay
        print(f"course-agent: {printable(str(exc))}", file=sys.stderr)
        return 2
    if not setup.root.is_dir():
        print(
            f"course-agent: --root {printable(str(setup.root))} is not a directory", file=sys.stderr
        )
        return 2
    for line in (setup.origin, setup.notice):  # the gateway and where it came from, first
        if line:
            print(printable(line))
    print(f"? {printable(args.question)}")
    return _ask(args.question, setup, args.max_turns, seconds)


def _ask(question: str, setup: Setup, max_turns: int, seconds: float) -> int:
    from course_agent.accumulator import ToolCallAccumulator
    from course_agent.app.channels import (
        RedactingModel,
        RedactingRegistry,
        redacting,
        shown_events,
    )
    from course_agent.app.guard import RunDeadline, run_guarded
    from course_agent.app.notes import NotedRegistry
    from course_agent.registry import default_registry
    from course_agent.render.terminal import print_events

    deadline = RunDeadline(seconds)
    deadline.bind(setup.model)  # a gateway's request ends with the run
    # Each channel out (text, calls, results, errors) leaves with every known key cut.
    events = run_guarded(
        question,
        RedactingModel(setup.model),
        RedactingRegistry(NotedRegistry(default_registry())),
        setup.tool_context(),
        max_turns=max_turns,
        accumulator=redacting(ToolCallAccumulator),
        deadline=deadline,
    )
    stopped = print_events(shown_events(events), sys.stdout)
    return EXIT_CODES[stopped.reason]


def _selftest() -> int:
    from course_agent.selftest.lab import run_selftest

    report = run_selftest()
    print(report)
    return 0 if report.passed == len(report.checks) else 4
