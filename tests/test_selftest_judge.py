"""How a check fails: one clipped line, and a watch that sees the package's answer run."""

from __future__ import annotations

import sys
from collections.abc import Iterator

import pytest

from course_agent import ToolResult, truncate_result
from course_agent.selftest_judge import CheckFailed, Watch, first_of, raised, shown


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


def test_the_watch_stands_aside_while_another_profiler_runs(no_profiler: None) -> None:
    def other(frame: object, event: str, arg: object) -> None:
        pass

    sys.setprofile(other)
    try:
        watch = Watch(wrapper, truncate_result, truncate_result)
        watch(wrapper, ToolResult("short"))
        assert sys.getprofile() is other
    finally:
        sys.setprofile(None)
    watch.verdict()  # saw nothing: deliberately, see Watch's docstring


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
