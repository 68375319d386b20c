"""The interfaces every other module speaks: tools, calls, results, stream events, the model.

Only shapes live here, no behaviour beyond a cleaned JSON Schema. Deliberately absent: any
provider's wire JSON (that is each provider's parser), and any notion of a notebook or terminal.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeAlias

if TYPE_CHECKING:
    from pydantic import BaseModel

__all__ = [
    "Accumulator",
    "AgentEvent",
    "AgentStopped",
    "Deadline",
    "Finish",
    "GatewayError",
    "Model",
    "ModelEvent",
    "Registry",
    "TextDelta",
    "ToolCall",
    "ToolCallDelta",
    "ToolContext",
    "ToolDef",
    "ToolError",
    "ToolFinished",
    "ToolResult",
    "ToolStarted",
    "TurnStarted",
    "clean_schema",
]

# -- tools -------------------------------------------------------------------------------------


class ToolError(Exception):
    """An expected refusal ("path is outside the working directory"). The message goes to the model
    as it is; any other exception a tool raises is reported with its class name."""


@dataclass(frozen=True)
class ToolContext:
    """What a tool may know about the world: the working directory, and nothing about the model."""

    root: Path


@dataclass(frozen=True)
class ToolResult:
    """What a tool hands back. `content` is fed to the model; `meta` is for people (renderers)."""

    content: str
    ok: bool = True
    meta: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ToolDef:
    """A tool as the model sees it (name, description, parameters) plus what only we see.

    `args` is a pydantic model: it validates the model's arguments and is the single source of the
    JSON Schema in `parameters`, so the schema shown and the schema enforced cannot drift apart.
    """

    name: str
    description: str
    args: type[BaseModel]
    run: Callable[[Any, ToolContext], ToolResult]
    # Not for the model: day five's approval gate asks before running a tool that writes.
    read_only: bool = True

    @property
    def parameters(self) -> dict[str, Any]:
        return clean_schema(self.args.model_json_schema())


def clean_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """Pydantic's schema minus the noise a model does not need: titles, `X | None` unions."""
    properties = {}
    for name, prop in schema.get("properties", {}).items():
        prop = {k: v for k, v in prop.items() if k != "title"}
        # {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None} -> {"type": "string"}
        variants = [v for v in prop.pop("anyOf", []) if v.get("type") != "null"]
        if len(variants) == 1:
            prop = {**variants[0], **prop}
        if prop.get("default", "") is None:
            del prop["default"]
        # Put type and description first: that is the order people (and models) read them in.
        properties[name] = {k: prop[k] for k in ("type", "description") if k in prop} | prop
    return {
        "type": "object",
        "properties": properties,
        "required": schema.get("required", []),
        "additionalProperties": False,
    }


# -- calls -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ToolCall:
    """One complete call. `args` is the raw JSON *string*: parsing happens after joining."""

    id: str
    name: str
    args: str


class Registry(Protocol):
    """The two verbs the loop uses: `list` the tools for the model, `execute` one call (never
    raising). registry.ToolRegistry is one; app/guard.py wraps one in another."""

    def list(self) -> list[dict[str, Any]]: ...
    def execute(self, call: ToolCall, ctx: ToolContext) -> ToolResult: ...


# -- what a model streams ----------------------------------------------------------------------


@dataclass(frozen=True)
class TextDelta:
    text: str


@dataclass(frozen=True)
class ToolCallDelta:
    """One fragment of a call. Only `index` ties fragments together; the rest may be missing."""

    index: int
    id: str | None = None
    name: str | None = None
    args_delta: str | None = None


class Accumulator(Protocol):
    """What the loop needs from a fragment merger (the lab swaps in a student's)."""

    def push(self, delta: ToolCallDelta) -> None: ...
    def drain(self) -> list[ToolCall]: ...


@dataclass(frozen=True)
class Finish:
    """The model's own reason for stopping: "stop", "tool_calls", "length", ... (do not trust it
    alone: a turn that merged calls is a tool turn whatever this says)."""

    reason: str | None


ModelEvent: TypeAlias = TextDelta | ToolCallDelta | Finish


class GatewayError(Exception):
    """The turn could not be completed: one line naming the cause and the gateway, no key."""


class Model(Protocol):
    """Anything that turns a transcript and a tool list into a stream of events.

    Messages and tools use the OpenAI chat shape; a provider with another wire format translates.
    `stream` raises GatewayError (never anything else) when the gateway fails.
    """

    label: str

    def stream(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]
    ) -> Iterator[ModelEvent]: ...


class Deadline(Protocol):
    """When a whole run must end: the loop asks before each turn, streamed event and call."""

    def passed(self) -> bool: ...
    def message(self) -> str: ...  # one line for people, saying how to change it


# -- what the loop tells its audience (terminal, widgets, self-test) ----------------------------


@dataclass(frozen=True)
class TurnStarted:
    turn: int


@dataclass(frozen=True)
class ToolStarted:
    call: ToolCall


@dataclass(frozen=True)
class ToolFinished:
    call: ToolCall
    result: ToolResult


@dataclass(frozen=True)
class AgentStopped:
    """The loop is over. `reason` says why; `message` is one line for people."""

    reason: Literal["done", "max_turns", "error"]
    message: str = ""


AgentEvent: TypeAlias = TurnStarted | TextDelta | ToolStarted | ToolFinished | AgentStopped
