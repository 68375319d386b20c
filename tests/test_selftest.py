import pytest

from course_agent.protocol import ToolResult
from course_agent.selftest import run_selftest


class StubAccumulator:
    def push(self, delta):
        raise NotImplementedError("exercise 1")

    def drain(self):
        raise NotImplementedError("exercise 1")


def stub_run_call(tools, call, ctx):
    raise NotImplementedError("exercise 2")


def stub_truncate(result):
    raise NotImplementedError("exercise 3")


def test_the_package_passes_all_seven_with_their_figures():
    report = run_selftest()
    assert report.summary() == "7/7 passed"
    text = str(report)
    assert "8054" in text and "12000" in text
    assert "glob -> grep -> read_file (50, 361, 386 chars)" in text


def test_the_unmodified_starter_passes_exactly_checks_one_and_two():
    report = run_selftest(StubAccumulator, stub_run_call, stub_truncate)
    assert [c.number for c in report.checks if c.ok] == [1, 2]
    assert report.summary() == "2/7 passed"
    assert "exercise 1" in report.checks[2].line


def test_a_truncation_that_keeps_only_the_head_fails_check_five():
    def head_only(result):
        return ToolResult(
            result.content[:8000] + "\n" + "(12000 cut)" + " " * 42,
            meta={"truncated": True, "originalChars": 20000},
        )

    report = run_selftest(truncate=head_only)
    assert not report.checks[4].ok and "tail" in report.checks[4].line


def test_an_executor_that_always_fails_cannot_pass_check_four():
    def always_fail(tools, call, ctx):
        return ToolResult(
            f"there is no tool named {call.name}. Available: glob, grep, read_file", ok=False
        )

    report = run_selftest(run_call=always_fail)
    assert not report.checks[3].ok and "valid call" in report.checks[3].line


@pytest.mark.parametrize("broken", ["join in arrival order", "array from 0"])
def test_naive_accumulators_fail_check_three(broken):
    from course_agent.protocol import ToolCall

    class Naive:
        def __init__(self):
            self.parts = []

        def push(self, delta):
            self.parts.append(delta)

        def drain(self):
            if broken == "join in arrival order":
                head = next(d for d in self.parts if d.name)
                return [
                    ToolCall(head.id, head.name, "".join(d.args_delta or "" for d in self.parts))
                ]
            slots = [None, None]
            for d in self.parts:
                slots[d.index] = d  # IndexError at index 2: the index does not start at 0
            return []

    report = run_selftest(accumulator=Naive)
    assert not report.checks[2].ok
