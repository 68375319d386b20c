"""Read a gateway's JSON, and each field of it as the type its wire format promises, or say how not.

The parsers read every field through these, so a string where an index belongs or a list where an
object belongs stops the turn with BrokenChunk, not an AttributeError three modules later.
Deliberately not checked: values the loop copes with (unknown event types, extra fields).
"""

from __future__ import annotations

import json
from typing import Any

__all__ = [
    "BrokenChunk",
    "BrokenJson",
    "index_field",
    "json_value",
    "list_field",
    "object_field",
    "text_field",
]

_KINDS = {dict: "an object", list: "a list", str: "a string", bool: "a boolean", type(None): "null"}


class BrokenChunk(ValueError):
    """One field of one chunk is not what the format promises; the message names it."""


class BrokenJson(ValueError):
    """Text that json.loads could not turn into a value, for whatever reason it gave."""


def json_value(text: str) -> Any:
    """`text` parsed as JSON, or BrokenJson. json.loads raises more than JSONDecodeError: a
    ValueError for an integer of over 4,300 digits, a RecursionError for `[[[[...` nested deeper
    than the interpreter's stack (a 2 MB line holds two million levels); a gateway can send both.
    """
    try:
        return json.loads(text)
    except RecursionError:
        raise BrokenJson("nested too deeply") from None
    except ValueError as error:  # JSONDecodeError is one
        raise BrokenJson(str(error)) from None


def _kind(value: Any) -> str:
    return _KINDS.get(type(value), "a number" if isinstance(value, (int, float)) else "unknown")


def object_field(value: Any, what: str) -> dict[str, Any]:
    """An object; absent or null reads as {}."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise BrokenChunk(f"{what} is {_kind(value)}, not an object")
    return value


def list_field(value: Any, what: str) -> list[Any]:
    """A list; absent or null reads as []."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise BrokenChunk(f"{what} is {_kind(value)}, not a list")
    return value


def text_field(value: Any, what: str) -> str | None:
    """A string, or None when absent or null."""
    if value is not None and not isinstance(value, str):
        raise BrokenChunk(f"{what} is {_kind(value)}, not a string")
    return value


def index_field(value: Any, what: str) -> int | None:
    """A whole number (an opaque label: any value, any start), or None when absent or null."""
    if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
        shown = repr(value) if isinstance(value, str) and len(value) <= 20 else _kind(value)
        raise BrokenChunk(f"{what} is {shown}, not a whole number")
    return value
