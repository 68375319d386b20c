"""The four rules as checks: the course's three tools, good and bad designs, names of any shape."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from course_agent.registry import default_registry
from course_agent.selftest.tool_rules import VERBS, rule_problems

GOOD = {
    "type": "function",
    "function": {
        "name": "list_dir",
        "description": "List one directory's entries, sorted. For example, path src lists "
        "calc.js. One level only: glob finds files at any depth, read_file reads one.",
        "parameters": {
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "directory; default .", "default": "."},
                "limit": {
                    "type": "integer",
                    "description": "most entries (default 100)",
                    "default": 100,
                },
                "all": {
                    "type": "boolean",
                    "description": "dotfiles too; defaults to false",
                    "default": False,
                },
                "glob": {"type": "string", "description": "a filter, e.g. *.js; default all files"},
                "exact": {"type": "string", "description": "needed, no default: it is required"},
            },
            "required": ["exact"],
            "additionalProperties": False,
        },
    },
}


def tool(**changes: Any) -> dict[str, Any]:
    function = {**GOOD["function"], **changes}
    return {"type": "function", "function": function}


def test_a_good_design_keeps_every_rule() -> None:
    assert rule_problems(GOOD) == []


def test_glob_and_grep_are_no_verb_noun_names_and_read_file_keeps_every_rule() -> None:
    problems = {t["function"]["name"]: rule_problems(t) for t in default_registry().list()}
    assert problems["read_file"] == []
    for name in ("glob", "grep"):
        assert problems[name] == [
            f"rule 1: name {name!r} does not start with one of the 41 verbs this check knows "
            "(course_agent.selftest.tool_rules.VERBS: add, apply, build, call, check, copy, ...): "
            "put the action first, then what it acts on"
        ]


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("listDir", "is not lowercase snake_case"),
        ("list-dir", "is not lowercase snake_case"),
        ("dir_list", "does not start with one of the 41 verbs"),
        ("list", "is a verb alone: add the noun it acts on, e.g. list_dir"),
        ("list_read", "has two verbs"),
        ("list_all_the_entries", "has 4 words"),
    ],
)
def test_a_name_that_is_no_verb_noun_breaks_rule_one(name: str, problem: str) -> None:
    (line,) = rule_problems(tool(name=name))
    assert line.startswith(f"rule 1: name {name!r} ") and problem in line


@given(st.sampled_from(sorted(VERBS)), st.from_regex(r"[a-z]{2,8}", fullmatch=True))
def test_any_common_verb_then_a_noun_keeps_rule_one(verb: str, noun: str) -> None:
    problems = rule_problems(tool(name=f"{verb}_{noun}"))
    assert not [line for line in problems if line.startswith("rule 1")] or noun in VERBS


@pytest.mark.parametrize(
    ("description", "rule"),
    [
        ("List one directory's entries, sorted.", "rule 2: the description has no example"),
        ("List entries, e.g. src, or read the file if path is one.", "rule 4: "),
        (
            "Reads the file, or lists the directory depending on whether path is a file, e.g. a",
            "rule 4: ",
        ),
    ],
)
def test_a_description_without_example_or_with_two_jobs_is_named(
    description: str, rule: str
) -> None:
    assert any(line.startswith(rule) for line in rule_problems(tool(description=description)))


def test_paths_and_alternatives_after_or_are_no_second_job() -> None:
    text = "List files, for example src or test/*.test.js, files or folders, sorted."
    assert rule_problems(tool(description=text)) == []


@pytest.mark.parametrize(
    ("prop", "problem"),
    [
        ({"type": "integer", "default": 100}, "rule 3: parameter 'limit' has no description"),
        ({"type": "integer", "description": "most entries", "default": 100}, "its default (100)"),
        ({"type": "integer", "description": "most; default 1000", "default": 100}, "(100)"),
    ],
)
def test_a_parameter_without_its_default_said_breaks_rule_three(prop: dict, problem: str) -> None:
    schema = {**GOOD["function"]["parameters"]}
    schema["properties"] = {**schema["properties"], "limit": prop}
    (line,) = rule_problems(tool(parameters=schema))
    assert line.startswith("rule 3:") and problem in line


def test_a_schema_that_accepts_extra_properties_is_named() -> None:
    schema = {**GOOD["function"]["parameters"], "additionalProperties": True}
    assert rule_problems(tool(parameters=schema)) == [
        "the schema accepts extra properties: add model_config = ConfigDict(extra='forbid'), "
        "so an invented argument comes back named"
    ]


def test_notebook_ones_bad_example_breaks_every_rule() -> None:
    bad = {
        "name": "fileReader",
        "description": "Reads the file through a buffered stream internally, "
        "or lists the directory depending on whether path is a file.",
        "parameters": {
            "type": "object",
            "properties": {"path": {"type": "string"}, "max": {"type": "integer"}},
            "required": ["path"],
        },
    }
    rules = [line.split(":")[0] for line in rule_problems({"function": bad})]
    assert rules == [
        "rule 1",
        "rule 2",
        "rule 3",
        "rule 3",
        "rule 4",
        "the schema accepts extra properties",
    ]
