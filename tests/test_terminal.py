import io

import pytest
from hypothesis import given
from hypothesis import strategies as st

from course_agent.protocol import (
    AgentStopped,
    TextDelta,
    ToolCall,
    ToolFinished,
    ToolResult,
    ToolStarted,
)
from course_agent.render.terminal import card_line, first_line, print_events, printable

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


# C0 controls but newline and tab, DEL, and C1 controls: what a terminal may act on.
CONTROLS = [chr(c) for c in [*range(0x20), 0x7F, *range(0x80, 0xA0)] if chr(c) not in "\n\t"]
# The explicit bidi controls, which reorder what a terminal shows ("Trojan Source").
BIDI = [chr(c) for c in [*range(0x202A, 0x202F), *range(0x2066, 0x206A)]]
# The invisible characters that join nothing: two paths that differ by one look the same.
INVISIBLE = ["\u200b", *map(chr, range(0x2060, 0x2065)), "\ufeff"]
MARKS = ["\u061c", "\u200e", "\u200f", "\u2028", "\u2029"]
ESCAPED = set(CONTROLS) | set(BIDI) | set(INVISIBLE) | set(MARKS)


@pytest.mark.parametrize("control", CONTROLS)
def test_each_control_character_is_shown_as_its_escape(control):
    assert printable(f"a{control}b") == f"a\\x{ord(control):02x}b"


@pytest.mark.parametrize("control", BIDI)
def test_each_bidi_control_is_shown_as_its_escape(control):
    assert printable(f"a{control}b") == f"a\\u{ord(control):04x}b"


@pytest.mark.parametrize("char", INVISIBLE)
def test_each_invisible_character_is_shown_as_its_escape(char):
    assert printable(f"src/calc{char}.js") == f"src/calc\\u{ord(char):04x}.js"


def test_the_joiners_scripts_and_emoji_need_are_kept():
    assert printable("\u0645\u06cc\u200c\u0634\u0648\u062f \U0001f469\u200d\U0001f4bb") == (
        "\u0645\u06cc\u200c\u0634\u0648\u062f \U0001f469\u200d\U0001f4bb"
    )


@pytest.mark.parametrize("surrogate", ["\ud800", "\udcff", "\udfff"])
def test_a_lone_surrogate_is_shown_as_its_escape_and_prints(surrogate):
    # JSON may spell one ("\ud800"), and a file name undecodable as UTF-8 holds one: printed as
    # it is, it raised UnicodeEncodeError out of print_events, a traceback instead of the run.
    assert printable(f"a{surrogate}b") == f"a\\u{ord(surrogate):04x}b"
    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")  # strict, like a UTF-8 terminal
    call = ToolCall("c", "glob", "{}")
    print_events([TextDelta(surrogate), ToolFinished(call, ToolResult(f"src/{surrogate}.js"))], out)
    out.flush()
    assert out.buffer.getvalue().decode().count(f"\\u{ord(surrogate):04x}") == 2


# Any character, lone surrogates included, with hostile ones drawn often (a list joined, since
# st.text would merge the two alphabets into one and draw the hostile ones hardly ever).
HOSTILE_TEXT = st.lists(
    st.one_of(
        st.characters(exclude_categories=()),
        st.sampled_from([*BIDI, *INVISIBLE, "\ud800", "\udcff", "\x1b", "\x07", "\x9b", "\r"]),
    )
).map("".join)


@given(HOSTILE_TEXT)
def test_printable_output_holds_no_control_character(text):
    shown = printable(text)
    assert not set(shown) & ESCAPED
    shown.encode("utf-8")  # no lone surrogate left either


@given(HOSTILE_TEXT, HOSTILE_TEXT)
def test_printable_escapes_pieces_as_it_escapes_the_whole(left, right):
    # Text streams in deltas: an escape sequence cut in two must come out the same.
    assert printable(left) + printable(right) == printable(left + right)


@given(st.text().filter(lambda text: not set(text) & ESCAPED))
def test_printable_keeps_everything_else_as_it_is(text):
    assert printable(text) == text


def test_every_line_printed_from_outside_is_escaped():
    hostile = "\x1b]0;pwned\x07"
    call = ToolCall("call_1", "read\x1b[2J", f'{{"path":"{hostile}"}}')
    out = io.StringIO()
    events = [
        TextDelta(f"look {hostile}\n"),
        ToolStarted(call),
        ToolFinished(call, ToolResult(f"x {hostile}")),
        AgentStopped("error", f"gateway said {hostile}"),
    ]
    print_events(events, out)
    fed_back = len(f"x {hostile}")  # the count is of what the model got, not of what is shown
    assert out.getvalue() == (
        "look \\x1b]0;pwned\\x07\n"
        '> read\\x1b[2J({"path":"\\x1b]0;pwned\\x07"})\n'
        f"v read\\x1b[2J fed back {fed_back} chars - x \\x1b]0;pwned\\x07\n"
        "! gateway said \\x1b]0;pwned\\x07\n"
    )


@pytest.mark.parametrize(
    ("char", "shown"),
    [
        ("\u2028", "\\u2028"),  # LINE SEPARATOR: some terminals and editors break the line here
        ("\u2029", "\\u2029"),  # PARAGRAPH SEPARATOR
        ("\x85", "\\x85"),  # NEXT LINE (C1)
        ("\u200e", "\\u200e"),  # LEFT-TO-RIGHT MARK
        ("\u200f", "\\u200f"),  # RIGHT-TO-LEFT MARK
        ("\u061c", "\\u061c"),  # ARABIC LETTER MARK
        ("\u202e", "\\u202e"),  # RIGHT-TO-LEFT OVERRIDE
    ],
)
def test_line_separators_and_bidi_marks_are_escaped(char, shown):
    # Hole 10: the CLI printed U+2028 raw.
    out = io.StringIO()
    print_events([TextDelta(f"a{char}b"), AgentStopped("error", f"gw{char}said")], out)
    assert char not in out.getvalue()
    assert out.getvalue() == f"a{shown}b\n! gw{shown}said\n"


def test_an_interrupt_ends_the_current_line_and_goes_on_up():
    def interrupted():
        yield TextDelta("Let me")
        raise KeyboardInterrupt

    out = io.StringIO()
    with pytest.raises(KeyboardInterrupt):
        print_events(interrupted(), out)
    assert out.getvalue() == "Let me\n"
