"""The course's four rules for what a model sees of a tool, as checks: each broken rule, one line.

1 a verb-noun name, 2 an example in the description, 3 every parameter described with its default,
4 one job per tool; and a schema that forbids extra properties. Rule 1 checks the first word
against a list of common verbs, so `glob` and `grep`, one-word command names, do not pass it.
Deliberately not handled: what only a reader can judge (is the example a good one? is the second
word really a noun?); the checks flag tell-tale wording, nothing more.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

__all__ = ["VERBS", "rule_problems"]

# Verbs that start a tool's name, as agents name them (read_file, list_dir, run_tests, ...).
_VERB_TEXT = """
add apply build call check copy count create delete describe download edit fetch find get insert
install list load lookup make move open parse print query read remove rename replace run save
search send set show test update upload view write
"""
VERBS = frozenset(_VERB_TEXT.split())
MAX_WORDS = 3  # list_dir_entries is still short; a four-word name is a sentence
EXAMPLE = re.compile(r"\b(?:e\.g\.|for example|for instance|such as|examples?:)", re.IGNORECASE)
# A second job offered beside the first: "..., or read the file", "depending on whether".
# A verb followed by / or . is a path (test/*.js), not a job.
VERB_FORMS = "|".join(sorted({form for verb in VERBS for form in (verb, f"{verb}s", f"{verb}es")}))
SECOND_JOB = re.compile(
    rf"\b(?:or|otherwise|and also|and then)\s+(?:it\s+|the\s+)?(?:{VERB_FORMS})\b(?![/.*-])"
    r"|\bdepending on\b[^.,;]*",
    re.IGNORECASE,
)


def _name_problem(name: str) -> str | None:
    if not re.fullmatch(r"[a-z]+(?:_[a-z0-9]+)*", name):
        return f"rule 1: name {name!r} is not lowercase snake_case: write it like read_file"
    words = name.split("_")
    if words[0] not in VERBS:
        return (
            f"rule 1: name {name!r} does not start with one of the {len(VERBS)} verbs this check "
            f"knows (course_agent.selftest.tool_rules.VERBS: {', '.join(sorted(VERBS)[:6])}, "
            "...): put the action first, then what it acts on"
        )
    if len(words) == 1:
        return f"rule 1: name {name!r} is a verb alone: add the noun it acts on, e.g. {name}_dir"
    if words[1] in VERBS:
        return f"rule 1: name {name!r} has two verbs: a verb, then the noun it acts on"
    if len(words) > MAX_WORDS:
        return f"rule 1: name {name!r} has {len(words)} words: keep it to a verb and a noun"
    return None


def _states_default(text: str, default: Any) -> bool:
    """Whether `text` says "default" followed closely by the value (any value for None)."""
    if default is None:
        return re.search(r"\bdefault", text, re.IGNORECASE) is not None
    values = {str(default), json.dumps(default)}
    shown = "|".join(re.escape(value) for value in sorted(values))
    said = rf"\bdefault(?:s to|:| is)?\s*[`'\"(]?(?:{shown})(?![\w.])"
    return re.search(said, text, re.IGNORECASE) is not None


def _parameter_problems(schema: Mapping[str, Any]) -> list[str]:
    problems = []
    required = set(schema.get("required", []))
    for name, prop in schema.get("properties", {}).items():
        text = str(prop.get("description") or "").strip()
        if not text:
            problems.append(
                f"rule 3: parameter {name!r} has no description: add Field(description=...)"
            )
        elif name not in required and not _states_default(text, prop.get("default")):
            default = json.dumps(prop.get("default"))
            problems.append(
                f"rule 3: parameter {name!r} does not state its default ({default}) in its "
                f"description: add 'default {prop.get('default')}'"
            )
    return problems


def rule_problems(tool: Mapping[str, Any]) -> list[str]:
    """What an entry of the `tools` array breaks, one line per problem; [] when it keeps all.

    `tool` is {"type": "function", "function": {"name", "description", "parameters"}}, as
    `ToolRegistry.list()` gives it: exactly what the model sees.
    """
    function = tool.get("function", {})
    name = str(function.get("name", ""))
    description = str(function.get("description") or "")
    schema = function.get("parameters") or {}
    problems = [problem] if (problem := _name_problem(name)) else []
    if not EXAMPLE.search(description):
        problems.append(
            "rule 2: the description has no example: add one the model can copy, "
            "e.g. 'for example src or src/lib'"
        )
    problems += _parameter_problems(schema)
    if found := SECOND_JOB.search(description):
        problems.append(
            f"rule 4: the description offers a second job ({found.group(0)!r}): "
            "one job per tool, and name the tool that does the other"
        )
    if schema.get("additionalProperties") is not False:
        problems.append(
            "the schema accepts extra properties: add model_config = ConfigDict(extra='forbid'), "
            "so an invented argument comes back named"
        )
    return problems
