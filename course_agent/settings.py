"""One place that turns options and the environment into a model and a working directory.

The CLI and the magic both call `choose`; neither re-implements provider choice or reads keys.
Deliberately not handled: storing keys anywhere. They are read, passed on, and never printed.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from dotenv import dotenv_values, find_dotenv

from .protocol import Model
from .providers.anthropic import AnthropicModel
from .providers.anthropic_events import events_from_lines as read_anthropic_lines
from .providers.openai_compat import DEFAULT_IDLE_TIMEOUT, OpenAICompatModel
from .providers.replay import ReplayModel
from .providers.scripted import ScriptedModel
from .sandbox import build_sandbox

__all__ = [
    "DEFAULT_ANTHROPIC_BASE_URL",
    "DEFAULT_ANTHROPIC_MODEL",
    "DEFAULT_BASE_URL",
    "DEFAULT_MODEL",
    "PROVIDERS",
    "TIMEOUT_VARIABLE",
    "Setup",
    "choose",
    "env_flag",
    "read_environment",
]

DEFAULT_BASE_URL = "https://api.openai.com/v1"
DEFAULT_MODEL = "gpt-4o-mini"
DEFAULT_ANTHROPIC_BASE_URL = "https://api.anthropic.com"  # without /v1: the client adds it
DEFAULT_ANTHROPIC_MODEL = "claude-haiku-4-5"
PROVIDERS = ("openai", "anthropic")  # the wire formats `choose(provider=...)` accepts
TIMEOUT_VARIABLE = "COURSE_AGENT_TIMEOUT"  # seconds to wait for the gateway: connecting, or data
KEY_HELP = (
    "put {variable}=... in a .env file in this folder (keep it out of git), or export it "
    "in the shell before starting Jupyter; never paste it into a notebook"
)


@dataclass(frozen=True)
class Setup:
    model: Model
    root: Path
    notice: str  # one line for people ("" when there is nothing to say); never holds a key


def read_environment() -> dict[str, str]:
    """os.environ over a .env file found from the current directory: the shell wins.

    Returns a copy; os.environ is left alone so importing or calling this changes nothing.
    """
    path = find_dotenv(usecwd=True)
    from_file = {k: v for k, v in dotenv_values(path).items() if v is not None} if path else {}
    return {**from_file, **os.environ}


def env_flag(env: Mapping[str, str], name: str) -> bool:
    return env.get(name, "").strip().lower() in {"1", "true", "yes", "on"}


def _key(env: Mapping[str, str], name: str) -> str:
    return env.get(name, "").strip()


def _timeout(env: Mapping[str, str]) -> float:
    """COURSE_AGENT_TIMEOUT in seconds (default 60): how long a silent gateway is waited for.

    It bounds connecting, each read, and the time between data events (keep-alives do not count).
    """
    text = env.get(TIMEOUT_VARIABLE, "").strip()
    if not text:
        return DEFAULT_IDLE_TIMEOUT
    try:
        seconds = float(text)
    except ValueError:
        seconds = math.nan
    if not (0 < seconds < math.inf):
        raise ValueError(
            f"{TIMEOUT_VARIABLE}={text!r} is not a number of seconds above 0; e.g. set it to 60"
        )
    return seconds


def choose(
    *,
    mock: bool = False,
    inject: str | None = None,
    provider: str | None = None,
    model: str | None = None,
    base_url: str | None = None,
    root: str | Path | None = None,
    record: Path | None = None,
    replay: Path | None = None,
    env: Mapping[str, str] | None = None,
) -> Setup:
    """Pick the model: a replay, the scripted model, or the gateway named by the environment.

    `provider` is "openai" (any OpenAI-compatible gateway) or "anthropic" (the Messages API);
    None means openai, unless ANTHROPIC_API_KEY is the only key set. Offline, it picks the wire
    format the scripted model speaks; with `replay`, the format the recording is read as.
    """
    if provider not in (None, *PROVIDERS):
        raise ValueError(f"unknown provider {provider!r}: use 'openai' or 'anthropic'")
    env = read_environment() if env is None else env
    inject = inject or env.get("INJECT") or None
    working_root = Path(root).expanduser().resolve() if root is not None else None

    if replay is not None:
        # A recording is read with the parser of the wire format it was recorded from.
        chosen: Model = (
            ReplayModel(
                replay,
                read_anthropic_lines,
                key_variable=AnthropicModel.key_variable,
                url_advice=AnthropicModel.url_advice,
            )
            if provider == "anthropic"
            else ReplayModel(replay)
        )
        return Setup(chosen, working_root or build_sandbox(), f"replaying {replay} (offline)")

    # Only ANTHROPIC_API_KEY set: nobody means "offline" by that, so use it (and say so).
    guessed = (
        provider is None
        and not _key(env, "OPENAI_API_KEY")
        and bool(_key(env, "ANTHROPIC_API_KEY"))
    )
    provider = "anthropic" if guessed else provider or "openai"
    variable = "ANTHROPIC_API_KEY" if provider == "anthropic" else "OPENAI_API_KEY"
    key = _key(env, variable)
    if mock or inject or env_flag(env, "MOCK") or not key:
        help_text = KEY_HELP.format(variable=variable)
        notice = "" if (mock or env_flag(env, "MOCK") or inject) else f"no API key: {help_text}. "
        sandbox = working_root or build_sandbox()
        notice += f"Offline: the scripted model on {sandbox}"
        return Setup(ScriptedModel(inject=inject, wire=provider), sandbox, notice)

    timeout = _timeout(env)
    if provider == "anthropic":
        chosen = AnthropicModel(
            base_url=(
                base_url or env.get("ANTHROPIC_BASE_URL") or DEFAULT_ANTHROPIC_BASE_URL
            ).rstrip("/"),
            api_key=key,
            model=model or env.get("COURSE_AGENT_MODEL") or DEFAULT_ANTHROPIC_MODEL,
            timeout=timeout,
            idle_timeout=timeout,
            record=record,
        )
        notice = "ANTHROPIC_API_KEY is the only key set: using Anthropic" if guessed else ""
        return Setup(chosen, working_root or Path.cwd().resolve(), notice)

    chosen = OpenAICompatModel(
        base_url=(base_url or env.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL).rstrip("/"),
        api_key=key,
        model=model or env.get("COURSE_AGENT_MODEL") or DEFAULT_MODEL,
        timeout=timeout,
        idle_timeout=timeout,
        record=record,
    )
    return Setup(chosen, working_root or Path.cwd().resolve(), "")
