"""One place that turns options and the environment into a model and a working directory.

The CLI and the magic both declare their model options with `add_model_options` and call `choose`;
neither re-implements provider choice or reads keys. `.env` is read from the working folder only,
never from a parent, and a gateway URL from a `.env` never receives a key from the shell.
Deliberately not handled: storing keys anywhere. They are read, passed on, and never printed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from course_agent.app.environment import IN_SHELL, Environment, read_environment
from course_agent.app.options import (
    DEFAULT_ANTHROPIC_MODEL,
    DEFAULT_MODEL,
    DEFAULT_REQUEST_TIMEOUT,
    DEFAULT_TIMEOUT,
    PROVIDERS,
    REQUEST_TIMEOUT_VARIABLE,
    TIMEOUT_VARIABLE,
    add_model_options,
    env_flag,
    seconds_from,
)
from course_agent.offline.repository import build_sandbox
from course_agent.offline.scripted import ScriptedModel
from course_agent.protocol import Model, ToolContext
from course_agent.providers.anthropic_wire import ANTHROPIC
from course_agent.providers.openai_wire import OPENAI
from course_agent.providers.replay import ReplayModel
from course_agent.safety.redaction import remember_secrets

__all__ = [
    "DEFAULT_ANTHROPIC_BASE_URL",
    "DEFAULT_ANTHROPIC_MODEL",
    "DEFAULT_BASE_URL",
    "DEFAULT_MODEL",
    "PROVIDERS",
    "REQUEST_TIMEOUT_VARIABLE",
    "TIMEOUT_VARIABLE",
    "Environment",
    "Setup",
    "add_model_options",
    "choose",
    "env_flag",
    "read_environment",
]

DEFAULT_BASE_URL = OPENAI.default_url
DEFAULT_ANTHROPIC_BASE_URL = ANTHROPIC.default_url  # without /v1: the client adds it
KEY_VARIABLES = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}
URL_VARIABLES = {"openai": "OPENAI_BASE_URL", "anthropic": "ANTHROPIC_BASE_URL"}
# Shorter keys are placeholders ("EMPTY", "x" for local gateways), not secrets: cutting every "e"
# out of every file because a repository's .env says ANTHROPIC_API_KEY=e would wreck the run.
MIN_SECRET_CHARS = 8


@dataclass(frozen=True)
class Setup:
    model: Model
    root: Path
    notice: str  # one line for people ("" when there is nothing to say); never holds a key
    # The first line of a live run: the gateway and where its URL and key came from ("" offline).
    origin: str = ""

    def tool_context(self) -> ToolContext:
        return ToolContext(self.root)


def _key(env: Mapping[str, str], name: str) -> str:
    return env.get(name, "").strip()


def _no_key(provider: str | None, env: Environment) -> str:
    variable = KEY_VARIABLES[provider or "openai"]
    also = ", or ANTHROPIC_API_KEY for Anthropic" if provider is None else ""
    dotenv = env.path or Path.cwd() / ".env"
    return (
        f"no API key: set {variable}{also} (export it, or write {variable}=... into {dotenv}; "
        "never into a notebook), or add --mock for the offline scripted model"
    )


def _gateway(
    provider: str, base_url: str | None, env: Environment, key_variable: str, default: str
) -> tuple[str, str]:
    """The gateway's URL and the line saying where it and the key came from.

    Refuses (ValueError) a URL from the .env when the key is the shell's: a repository's .env must
    not be able to send your key somewhere else. The file's own key may go to the file's URL, and
    to the shell's (the http layer then refuses a URL with credentials, a query or a control).
    """
    url_variable = URL_VARIABLES[provider]
    if base_url:
        url, where = base_url, "--base-url"
    elif env.get(url_variable, "").strip():
        url, where = env[url_variable].strip(), f"{url_variable} {env.origin(url_variable)}"
        if env.origin(url_variable) != IN_SHELL and env.origin(key_variable) == IN_SHELL:
            raise ValueError(
                f"{url_variable} comes from {env.path} but {key_variable} from the environment: "
                "a gateway chosen by a file does not get the key from your shell; put the key "
                f"in that .env too, export {url_variable}, or pass --base-url"
            )
    else:
        url, where = default, "default"
    url = url.rstrip("/")
    return url, f"gateway {url} ({where}), key from {key_variable} {env.origin(key_variable)}"


def _timeout(
    env: Mapping[str, str], variable: str = TIMEOUT_VARIABLE, default: float = DEFAULT_TIMEOUT
) -> float:
    """COURSE_AGENT_TIMEOUT in seconds (default 30): how long a silent gateway is waited for;
    it bounds connecting, each read, and the time between data lines (keep-alives do not count).
    With COURSE_AGENT_REQUEST_TIMEOUT (default 300): how long one whole request may take.
    """
    return seconds_from(env, variable, default)


def _resolved_root(root: str | Path) -> Path:
    """`--root` as an absolute path, or ValueError in one line: a link that leads back to itself
    is no directory (Path.resolve raises RuntimeError for it, OSError on Python 3.13)."""
    try:
        return Path(root).expanduser().resolve()
    except (RuntimeError, OSError) as error:
        why = "is a symlink loop" if "loop" in str(error).lower() else f"cannot be read ({error})"
        raise ValueError(f"--root {root} {why}; name a directory") from None


def _provider(asked: str | None, env: Environment) -> tuple[str, bool]:
    """The wire format to use, and whether it was guessed: only ANTHROPIC_API_KEY set means
    nobody means "OpenAI" by it, so use Anthropic (and say so)."""
    guessed = (
        asked is None and not _key(env, "OPENAI_API_KEY") and bool(_key(env, "ANTHROPIC_API_KEY"))
    )
    return ("anthropic" if guessed else asked or "openai"), guessed


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
    Raises ValueError with one line for people: no key (and not offline), a gateway URL from a
    .env with a key from the shell, a bad timeout. `env` defaults to `read_environment()`.
    """
    if provider not in (None, *PROVIDERS):
        raise ValueError(f"unknown provider {provider!r}: use 'openai' or 'anthropic'")
    env = read_environment() if env is None else env
    env = env if isinstance(env, Environment) else Environment(env)
    inject = inject or env.get("INJECT") or None
    working_root = _resolved_root(root) if root is not None else None
    # Every configured key, even offline: every edge (the gateway's bytes, the tools' readers)
    # cuts them out of what comes in.
    keys = (_key(env, variable) for variable in KEY_VARIABLES.values())
    remember_secrets(key for key in keys if len(key) >= MIN_SECRET_CHARS)

    if replay is not None:
        # A recording is read with the parser of the wire format it was recorded from.
        chosen: Model = ReplayModel(replay, ANTHROPIC if provider == "anthropic" else OPENAI)
        notice = f"replaying {replay} (offline)"
        return Setup(chosen, working_root or build_sandbox(), notice)

    asked, (provider, guessed) = provider, _provider(provider, env)
    if mock or inject or env_flag(env, "MOCK"):
        sandbox = working_root or build_sandbox()
        notice = f"Offline: the scripted model on {sandbox}"
        return Setup(ScriptedModel(inject=inject, wire=provider), sandbox, notice)
    setup = _live(provider, asked, model, base_url, env, record)
    notice = "ANTHROPIC_API_KEY is the only key set: using Anthropic" if guessed else ""
    return replace(setup, root=working_root or setup.root, notice=notice)


def _live(
    provider: str,
    asked: str | None,
    model: str | None,
    base_url: str | None,
    env: Environment,
    record: Path | None,
) -> Setup:
    """The gateway's model for `provider`, on the current folder; ValueError without a key."""
    variable = KEY_VARIABLES[provider]
    key = _key(env, variable)
    if not key:
        raise ValueError(_no_key(asked, env))
    default = DEFAULT_ANTHROPIC_BASE_URL if provider == "anthropic" else DEFAULT_BASE_URL
    url, origin = _gateway(provider, base_url, env, variable, default)

    # Imported here, not at the top: httpx costs 60 ms, and an offline run never needs it.
    from course_agent.providers.http import HttpModel

    wire = ANTHROPIC if provider == "anthropic" else OPENAI
    chosen = HttpModel(
        wire,
        url,
        key,
        model or env.get("COURSE_AGENT_MODEL") or wire.default_model,
        timeout=_timeout(env),
        request_timeout=_timeout(env, REQUEST_TIMEOUT_VARIABLE, DEFAULT_REQUEST_TIMEOUT),
        record=record,
    )
    return Setup(chosen, Path.cwd().resolve(), "", origin)
