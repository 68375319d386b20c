"""How a check fails: one clipped line; what crosses from the kernel is plain data, judged here."""

from __future__ import annotations

import random

import pytest

from course_agent import ToolResult
from course_agent.selftest.judge import (
    CheckFailed,
    caught,
    difference,
    first_of,
    plain,
    plain_result,
    result_of,
    said,
    shown,
)
from course_agent.selftest.lab import PARTS, judge_part


class Liar(str):
    def __eq__(self, other: object) -> bool:
        return True

    def __contains__(self, other: object) -> bool:
        return True

    __hash__ = str.__hash__


class Always(ToolResult):
    def __eq__(self, other: object) -> bool:
        return True

    __hash__ = None  # type: ignore[assignment]


def test_a_students_values_are_judged_as_plain_copies() -> None:
    assert Liar("x") == "y" and "z" in Liar("x")  # what the copy must not inherit
    copy = plain({"id": Liar("x"), "n": [1, True, None]})
    assert copy == {"id": "x", "n": [1, True, None]} and type(copy["id"]) is str
    assert copy != {"id": "y", "n": [1, True, None]}
    answer = plain_result(Always(Liar("Operation failed"), False, {"k": Liar("v")}), "yours")
    result = result_of(answer["result"])
    assert type(result) is ToolResult and type(result.content) is str
    assert result != ToolResult("anything", False) and "echo" not in result.content


@pytest.mark.parametrize(
    ("returned", "told"),
    [
        ("text", "yours returned 'text': return a ToolResult"),
        (ToolResult(["a"]), "content is text"),  # type: ignore[arg-type]
        (ToolResult("a", ok=1), "ok True or False"),  # type: ignore[arg-type]
        (ToolResult("a", meta=None), "meta a dict"),  # type: ignore[arg-type]
    ],
)
def test_a_result_of_another_shape_is_one_line_saying_so(returned: object, told: str) -> None:
    line = plain_result(returned, "yours")["bad"]
    assert told in line and "\n" not in line


@pytest.mark.parametrize(
    "data", [{"content": 1, "ok": True, "meta": {}}, {"content": "a", "ok": 1, "meta": {}}]
)
def test_an_answered_result_that_is_not_one_fails_the_check(data: dict) -> None:
    with pytest.raises(CheckFailed, match="not one"):
        result_of(data)


@pytest.mark.parametrize("value", ["x" * 500, "line\n" * 50, {"k": "v" * 300}, None])
def test_a_value_is_shown_on_one_short_line(value: object) -> None:
    text = shown(value)
    assert "\n" not in text and len(text) <= 48
    assert text.startswith(repr(value)[:10])


def test_a_difference_is_shown_where_it_occurs() -> None:
    want = "alpha beta gamma delta " * 20
    got = want[:200] + "X" + want[201:]
    said_here = difference(got, want, window=10)
    assert said_here.startswith("at char 200: ")
    assert repr(got[195:205]) in said_here and repr(want[195:205]) in said_here
    assert difference("abc", "abcdef").startswith("at char 3: 'abc' where 'abcdef'")


def test_the_first_failure_says_how_many_more() -> None:
    first_of([], 3, "cases")  # nothing failed: no exception
    with pytest.raises(CheckFailed, match=r"^one$"):
        first_of(["one"], 3, "cases")
    with pytest.raises(CheckFailed, match=r"^one \(and 1 more of 3 cases\)$"):
        first_of(["one", "two"], 3, "cases")


def test_an_exception_is_data_one_line_and_the_lab_stub_says_its_own_message() -> None:
    assert said(caught(KeyError(7)), "drain") == "drain raised KeyError: 7"
    assert "\n" not in said(caught(ValueError("a\nb")), "push")
    stub = "write this part: the TODO comment above says what it must do"
    with pytest.raises(CheckFailed, match=f"^{stub}$"):  # never cut before what to do
        said(caught(NotImplementedError(stub)), "push")

    class Unprintable(Exception):
        def __str__(self) -> str:
            raise RuntimeError("no")

    assert caught(Unprintable()) == {
        "raised": ["Unprintable", "Exception", "BaseException", "object"],
        "text": "",
    }


@pytest.mark.parametrize(
    "answers",
    [None, "7/7", [], [{"calls": "all"}], [{"nonsense": True}] * 11, [[1, 2]] * 11, [None] * 11],
)
def test_answers_of_any_other_shape_fail_the_check_saying_so(answers: object) -> None:
    part = PARTS[2]  # fragment merging
    cases = part.cases(random.Random(1))
    check = judge_part(3, part, cases, answers)
    assert not check.ok and check.line.startswith("fragment merging: ")
    assert "\n" not in check.line
