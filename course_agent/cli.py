"""`course-agent` / `python -m course_agent`: ask a question, or run the self-test, in a terminal.

Reads MOCK, SELFTEST and INJECT like the course's `MOCK=1 SELFTEST=1 pnpm start`. Deliberately
not handled: the notebook (see course_agent.notebook) and interactive chat (one question per run).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from .grading import main_grade
from .lab_release import main_lab
from .loop import MAX_TURNS, run_agent
from .protocol import GatewayError, ToolContext
from .registry import default_registry
from .render.terminal import print_events
from .sandbox import QUESTION
from .selftest import run_selftest
from .settings import PROVIDERS, TIMEOUT_VARIABLE, choose, env_flag, read_environment

__all__ = ["build_parser", "main"]

# Exit codes: 0 answered, 1 the gateway failed, 2 bad usage or settings (argparse's), 3 out of
# turns, 4 a self-test check failed.
EXIT_CODES = {"done": 0, "error": 1, "max_turns": 3}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="course-agent",
        description="A read-only coding agent: glob, grep and read_file in a loop. "
        "With MOCK=1 or no OPENAI_API_KEY it runs offline on a generated sandbox repository. "
        "Instructors: `course-agent grade SUBMISSIONS...` grades lab notebooks; "
        "`course-agent lab release SOURCE DEST` makes the student lab from the solution.",
        epilog="Environment (a .env file in the current folder is read too): OPENAI_API_KEY, "
        "OPENAI_BASE_URL, COURSE_AGENT_MODEL, MOCK=1, SELFTEST=1, INJECT=bad_args, "
        f"{TIMEOUT_VARIABLE}=SECONDS to wait for a silent gateway (default 60).",
    )
    parser.add_argument("question", nargs="?", default=QUESTION, help=f'default: "{QUESTION}"')
    parser.add_argument(
        "--root",
        help="working directory the tools may read (default: cwd, "
        "or the generated sandbox offline)",
    )
    parser.add_argument("--model", help="model name (default: $COURSE_AGENT_MODEL or gpt-4o-mini)")
    parser.add_argument("--base-url", help="OpenAI-compatible gateway (default: $OPENAI_BASE_URL)")
    parser.add_argument(
        "--max-turns",
        type=int,
        default=MAX_TURNS,
        metavar="N",
        help=f"stop after N model turns (default {MAX_TURNS})",
    )
    parser.add_argument(
        "--provider",
        choices=PROVIDERS,
        help="wire format: openai (any OpenAI-compatible gateway) or anthropic (Messages API); "
        "default: openai, or anthropic when only ANTHROPIC_API_KEY is set",
    )
    parser.add_argument("--mock", action="store_true", help="use the offline scripted model")
    parser.add_argument("--inject", choices=["bad_args"], help="offline: send bad arguments")
    parser.add_argument("--record", type=Path, metavar="FILE", help="save the raw stream to FILE")
    parser.add_argument(
        "--replay", type=Path, metavar="FILE", help="replay a --record FILE offline"
    )
    parser.add_argument("--selftest", action="store_true", help="run the seven checks (SELFTEST=1)")
    return parser


# The instructors' commands: `course-agent grade ...` and `course-agent lab release|execute ...`.
SUBCOMMANDS = {"grade": main_grade, "lab": main_lab}


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in SUBCOMMANDS:
        return SUBCOMMANDS[argv[0]](argv[1:])
    args = build_parser().parse_args(argv)
    env = read_environment()
    if args.max_turns < 1:
        print("course-agent: --max-turns must be at least 1", file=sys.stderr)
        return 2

    if args.selftest or env_flag(env, "SELFTEST"):
        report = run_selftest()
        print(report)
        return 0 if report.passed == len(report.checks) else 4

    try:
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
    except (GatewayError, ValueError) as exc:  # a base URL without http://, an unreadable --replay
        print(f"course-agent: {exc}", file=sys.stderr)
        return 2
    if not setup.root.is_dir():
        print(f"course-agent: --root {setup.root} is not a directory", file=sys.stderr)
        return 2
    if setup.notice:
        print(setup.notice)
    print(f"? {args.question}")
    events = run_agent(
        args.question,
        setup.model,
        default_registry(),
        ToolContext(setup.root),
        max_turns=args.max_turns,
    )
    stopped = print_events(events, sys.stdout)
    return EXIT_CODES[stopped.reason]
