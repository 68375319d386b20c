"""How a check fails: one clipped line, and a watch that sees the package's answer run."""

from __future__ import annotations

import cProfile
import sys
from collections.abc import Iterator

import pytest

from course_agent import ToolResult, truncate_result
from course_agent.selftest.judge import (
    CheckFailed,
    Watch,
    first_of,
    plain,
    plain_result,
    raised,
    shown,
)


@pytest.fixture
def no_profiler() -> Iterator[None]:
    before = sys.getprofile()
    sys.setprofile(None)
    yield
    sys.setprofile(before)


def wrapper(result: ToolResult) -> ToolResult:
    return truncate_result(result)


def test_a_wrapper_around_the_package_is_seen_and_named(no_profiler: None) -> None:
    watch = Watch(wrapper, truncate_result, truncate_result)
    assert watch(wrapper, ToolResult("short")) == ToolResult("short")
    assert sys.getprofile() is None
    with pytest.raises(CheckFailed, match=r"^wrapper runs the package's own course_agent\.trunc"):
        watch.verdict()


def test_the_package_itself_is_not_watched(no_profiler: None) -> None:
    watch = Watch(truncate_result, truncate_result, truncate_result)
    watch(truncate_result, ToolResult("short"))
    watch.verdict()  # does not raise


def test_a_student_that_raises_leaves_no_profiler_behind(no_profiler: None) -> None:
    def broken() -> None:
        raise ValueError("no")

    with pytest.raises(ValueError):
        Watch(broken, truncate_result, truncate_result)(broken)
    assert sys.getprofile() is None


def test_another_python_profiler_is_set_aside_and_put_back(no_profiler: None) -> None:
    seen: list[str] = []

    def other(frame: object, event: str, arg: object) -> None:
        seen.append(event)

    sys.setprofile(other)
    try:
        watch = Watch(wrapper, truncate_result, truncate_result)
        watch(wrapper, ToolResult("short"))
        assert sys.getprofile() is other
    finally:
        sys.setprofile(None)
    with pytest.raises(CheckFailed, match=r"^wrapper runs the package's own"):
        watch.verdict()  # a profiler set beforehand (by a student's cell, say) hides nothing


def test_a_profiler_that_cannot_be_put_back_fails_the_check(no_profiler: None) -> None:
    profiler = cProfile.Profile()
    profiler.enable()
    try:
        watch = Watch(wrapper, truncate_result, truncate_result)
        watch(wrapper, ToolResult("short"))
        assert sys.getprofile() is profiler  # left running as it was
    finally:
        profiler.disable()
    with pytest.raises(
        CheckFailed, match=r"^a profiler \(cProfile\.Profile\) was running.*wrapper"
    ):
        watch.verdict()


def test_code_that_turns_the_watch_off_fails_the_check(no_profiler: None) -> None:
    def sly(result: ToolResult) -> ToolResult:
        sys.setprofile(None)
        return truncate_result(result)

    watch = Watch(sly, truncate_result, truncate_result)
    assert watch(sly, ToolResult("short")) == ToolResult("short")
    assert sys.getprofile() is None
    with pytest.raises(CheckFailed, match=r"^sly changed the profiler \(sys\.setprofile\)"):
        watch.verdict()


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
    result = plain_result(Always(Liar("Operation failed"), False, {"k": Liar("v")}), "yours")
    assert type(result) is ToolResult and type(result.content) is str
    assert result != ToolResult("anything", False) and "echo" not in result.content


@pytest.mark.parametrize(
    ("returned", "said"),
    [
        ("text", "yours returned 'text': return a ToolResult"),
        (ToolResult(["a"]), "content is text"),  # type: ignore[arg-type]
        (ToolResult("a", ok=1), "ok True or False"),  # type: ignore[arg-type]
        (ToolResult("a", meta=None), "meta a dict"),  # type: ignore[arg-type]
    ],
)
def test_a_result_of_another_shape_is_one_line_saying_so(returned: object, said: str) -> None:
    line = plain_result(returned, "yours")
    assert isinstance(line, str) and said in line and "\n" not in line


def test_code_that_turns_the_watch_off_and_back_on_fails_the_check(no_profiler: None) -> None:
    def slier(result: ToolResult) -> ToolResult:
        hook = sys.getprofile()
        sys.setprofile(None)
        try:
            return truncate_result(result)
        finally:
            sys.setprofile(hook)  # as if nothing happened

    watch = Watch(slier, truncate_result, truncate_result)
    watch(slier, ToolResult("short"))
    with pytest.raises(CheckFailed, match=r"^slier changed the profiler"):
        watch.verdict()


@pytest.mark.parametrize("value", ["x" * 500, "line\n" * 50, {"k": "v" * 300}, None])
def test_a_value_is_shown_on_one_short_line(value: object) -> None:
    text = shown(value)
    assert "\n" not in text and len(text) <= 48
    assert text.startswith(repr(value)[:10])


def test_the_first_failure_says_how_many_more() -> None:
    first_of([], 3, "cases")  # nothing failed: no exception
    with pytest.raises(CheckFailed, match=r"^one$"):
        first_of(["one"], 3, "cases")
    with pytest.raises(CheckFailed, match=r"^one \(and 1 more of 3 cases\)$"):
        first_of(["one", "two"], 3, "cases")


def test_an_exception_is_one_line_but_the_lab_stub_passes_through() -> None:
    assert raised(KeyError(7), "drain") == "drain raised KeyError: 7"
    assert "\n" not in raised(ValueError("a\nb"), "push")
    with pytest.raises(NotImplementedError, match="exercise 1"):
        raised(NotImplementedError("exercise 1: ..."), "push")
