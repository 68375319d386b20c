"""The lab's step 4b: the offline question and INJECT=bad_args on a student's three functions."""

from __future__ import annotations

import pytest

from course_agent import ToolCallAccumulator, execute_call, truncate_result
from course_agent.notebook.own_loop import run_mine
from course_agent.protocol import AgentStopped


class UnwrittenAccumulator:
    """The lab's starter: exercise 1 not written yet."""

    def __init__(self) -> None:
        raise NotImplementedError("write this part: the TODO comment above says what it must do")


def test_the_offline_question_shows_the_three_cards_then_a_conclusion(capsys) -> None:
    stopped = run_mine(ToolCallAccumulator, execute_call, truncate_result)
    out = capsys.readouterr().out
    assert stopped == AgentStopped("done")
    cards = [line for line in out.splitlines() if line.startswith(("v ", "x "))]
    assert [card.split("(")[0] for card in cards] == ["v glob", "v grep", "v read_file"]
    assert "fed back 50 chars" in cards[0] and "361" in cards[1] and "386" in cards[2]
    assert out.rstrip().endswith("(`MOCK=1 course-agent` exits 0)")


def test_bad_arguments_are_fed_back_and_the_run_still_ends_done(capsys) -> None:
    stopped = run_mine(ToolCallAccumulator, execute_call, truncate_result, inject="bad_args")
    out = capsys.readouterr().out
    assert stopped.reason == "done"
    assert "x edit_file(" in out and "there is no tool named edit_file" in out
    assert out.rstrip().endswith("(`MOCK=1 INJECT=bad_args course-agent` exits 0)")


@pytest.mark.parametrize("inject", [None, "bad_args"])
def test_an_unwritten_exercise_ends_the_run_in_one_line_not_a_traceback(capsys, inject) -> None:
    stopped = run_mine(UnwrittenAccumulator, execute_call, truncate_result, inject=inject)
    out = capsys.readouterr()
    assert stopped.reason == "error" and "write this part" in stopped.message
    assert "ended: error" in out.out and "Traceback" not in out.out + out.err
