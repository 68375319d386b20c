import io

from course_agent.protocol import (
    AgentStopped,
    TextDelta,
    ToolCall,
    ToolFinished,
    ToolResult,
    ToolStarted,
)
from course_agent.render.terminal import card_line, first_line, print_events

CALL = ToolCall("call_1", "read_file", '{"path":"src/calc.js"}')


def test_card_lines_use_the_course_format():
    ok = ToolResult("src/calc.js (lines 1-13 of 13)\n 1  // x")
    failed = ToolResult("there is no tool named edit_file. Available: glob", ok=False)
    assert card_line(CALL, ok) == (
        f"v read_file fed back {len(ok.content)} chars - src/calc.js (lines 1-13 of 13)"
    )
    assert card_line(CALL, failed).startswith("x read_file fed back 49 chars - there is no tool")


def test_truncated_badge_comes_from_meta_only():
    result = ToolResult("a\nb", meta={"truncated": True, "originalChars": 38000})
    assert card_line(CALL, result).endswith("[truncated from 38000]")


def test_first_line_is_bounded():
    assert len(first_line("z" * 500)) == 100


def test_text_streams_and_cards_start_on_their_own_line():
    out = io.StringIO()
    events = [
        TextDelta("Let me "),
        TextDelta("look."),
        ToolStarted(CALL),
        ToolFinished(CALL, ToolResult("hello")),
        TextDelta("Done."),
        AgentStopped("done"),
    ]
    stopped = print_events(events, out)
    assert stopped.reason == "done"
    assert out.getvalue() == (
        "Let me look.\n"
        '> read_file({"path":"src/calc.js"})\n'
        "v read_file fed back 5 chars - hello\n"
        "Done.\n"
    )


def test_a_stop_with_a_message_is_printed_with_a_mark():
    out = io.StringIO()
    print_events([AgentStopped("error", "gateway http://x answered 401")], out)
    assert out.getvalue() == "! gateway http://x answered 401\n"
