"""The three caps on a call's arguments are cited in docs/hardening.md by name, with their figure.

Each citation reads "<figure> <unit> (`argument_caps.NAME`)"; the figure must be the constant's.
Deliberately not handled: figures stated without the name (the name is what a reader looks up).
"""

from __future__ import annotations

import re
from pathlib import Path

from course_agent import argument_caps

HARDENING = Path(__file__).resolve().parent.parent / "docs" / "hardening.md"
CITED = re.compile(r"([\d,]+) (MiB|characters)\s*\(`argument_caps\.(\w+)`")
UNITS = {"MiB": 1 << 20, "characters": 1}


def citations(text: str) -> list[tuple[str, int]]:
    """(name, figure) for every citation of a cap in `text`."""
    return [
        (name, int(figure.replace(",", "")) * UNITS[unit])
        for figure, unit, name in CITED.findall(text)
    ]


def test_every_cap_is_cited_with_its_own_figure() -> None:
    cited = citations(HARDENING.read_text(encoding="utf-8"))
    assert {name for name, _ in cited} == set(argument_caps.__all__)
    wrong = [(name, figure) for name, figure in cited if getattr(argument_caps, name) != figure]
    assert wrong == [], f"docs/hardening.md states other figures than argument_caps: {wrong}"


def test_a_citation_is_read_as_written() -> None:
    text = (
        "at most 4,096 characters\n  (`argument_caps.MAX_FIELD_CHARS`: PATH_MAX); "
        "1 MiB (`argument_caps.MAX_ARGUMENTS`)"
    )
    assert citations(text) == [("MAX_FIELD_CHARS", 4096), ("MAX_ARGUMENTS", 1 << 20)]
