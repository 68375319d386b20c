"""The options that choose a model, a root and a run's bounds, for the CLI and `%%agent` alike.

Imports no provider client, tool or grader, so `course-agent --help` costs about what Python's own
start-up does. Deliberately not handled: reading keys or building a model (that is settings.py).
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Mapping
from pathlib import Path

# Each declared once where it belongs, in modules that import nothing heavy: the loop's turns,
# the gateway's models and timeouts (providers/defaults.py).
from course_agent.loop import MAX_TURNS
from course_agent.providers.defaults import (
    DEFAULT_ANTHROPIC_MODEL,
    DEFAULT_MODEL,
    DEFAULT_REQUEST_TIMEOUT,
    DEFAULT_TIMEOUT,
)

__all__ = [
    "DEFAULT_ANTHROPIC_MODEL",
    "DEFAULT_MODEL",
    "DEFAULT_REQUEST_TIMEOUT",
    "DEFAULT_RUN_SECONDS",
    "DEFAULT_TIMEOUT",
    "MAX_TURNS",
    "PROVIDERS",
    "REQUEST_TIMEOUT_VARIABLE",
    "RUN_DEADLINE_VARIABLE",
    "TIMEOUT_VARIABLE",
    "add_model_options",
    "env_flag",
    "seconds_from",
]

PROVIDERS = ("openai", "anthropic")  # the wire formats `choose(provider=...)` accepts
TIMEOUT_VARIABLE = "COURSE_AGENT_TIMEOUT"  # seconds to wait for the gateway: connecting, or data
REQUEST_TIMEOUT_VARIABLE = "COURSE_AGENT_REQUEST_TIMEOUT"  # seconds for one whole request
RUN_DEADLINE_VARIABLE = "COURSE_AGENT_RUN_DEADLINE"  # seconds for a whole run (every turn)
# A whole run (one question, every turn and call) ends within 5 minutes, as one request does
# (docs/hardening.md): long enough for any question a student asks, short enough that a stuck
# run says so while the student is still looking. app/guard.py's RunDeadline uses it.
DEFAULT_RUN_SECONDS = 300.0


def seconds_from(
    env: Mapping[str, str], variable: str, default: float, option: float | None = None
) -> float:
    """`option` if given, else the variable in seconds, else `default`; ValueError for anything
    that is not a number of seconds above 0."""
    text = str(option) if option is not None else env.get(variable, "").strip()
    if not text:
        return default
    try:
        seconds = float(text)
    except ValueError:
        seconds = math.nan
    if not (0 < seconds < math.inf):
        where = f"--deadline {text}" if option is not None else f"{variable}={text!r}"
        raise ValueError(f"{where} is not a number of seconds above 0; e.g. set it to {default:g}")
    return seconds


def env_flag(env: Mapping[str, str], name: str) -> bool:
    return env.get(name, "").strip().lower() in {"1", "true", "yes", "on"}


def add_model_options(parser: argparse.ArgumentParser) -> None:
    """Declare the options that choose the model and the root, for the CLI and `%%agent` alike."""
    parser.add_argument(
        "--mock",
        action="store_true",
        help="the offline scripted model on a generated sandbox (as MOCK=1); no key needed",
    )
    parser.add_argument(
        "--provider",
        choices=PROVIDERS,
        help="wire format: openai (any OpenAI-compatible gateway: OPENAI_API_KEY, OPENAI_BASE_URL) "
        "or anthropic (Messages API: ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL); default openai, "
        "or anthropic when only ANTHROPIC_API_KEY is set",
    )
    parser.add_argument(
        "--model",
        metavar="NAME",
        help=f"model name (default $COURSE_AGENT_MODEL, else {DEFAULT_MODEL} or "
        f"{DEFAULT_ANTHROPIC_MODEL})",
    )
    parser.add_argument(
        "--base-url",
        metavar="URL",
        help="the gateway (default $OPENAI_BASE_URL or $ANTHROPIC_BASE_URL, else the provider's "
        "own API); a URL from .env is used only with a key from the same .env",
    )
    parser.add_argument(
        "--root",
        metavar="DIR",
        help="folder the tools may read (default: the current folder; offline: a generated "
        "sandbox)",
    )
    parser.add_argument(
        "--max-turns",
        type=int,
        default=MAX_TURNS,
        metavar="N",
        help=f"stop after N model requests (default {MAX_TURNS})",
    )
    parser.add_argument(
        "--record", type=Path, metavar="FILE", help="save what the stream showed (keys cut) to FILE"
    )
    parser.add_argument(
        "--replay", type=Path, metavar="FILE", help="replay a --record FILE offline, no key needed"
    )
    parser.add_argument(
        "--deadline",
        type=float,
        metavar="SECONDS",
        help=f"stop the whole run after SECONDS (default ${RUN_DEADLINE_VARIABLE}, else "
        f"{DEFAULT_RUN_SECONDS:g})",
    )
    parser.add_argument(
        "--inject",
        choices=["bad_args"],
        help="offline: the scripted model sends bad arguments first (as INJECT=bad_args)",
    )
