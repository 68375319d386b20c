import itertools
import tracemalloc

import pytest
from gateway import STREAMS
from hypothesis import given
from hypothesis import strategies as st

from course_agent.providers.gateway.sse import (
    MAX_LINE,
    ServerSentEvent,
    TooLong,
    iter_sse,
    split_lines,
)


def events(text: str) -> list[ServerSentEvent]:
    return list(iter_sse(text.splitlines(keepends=True)))


def test_blank_line_separates_events() -> None:
    assert events("data: a\n\ndata: b\n\n") == [
        ServerSentEvent("message", "a"),
        ServerSentEvent("message", "b"),
    ]


def test_comments_and_keepalives_are_skipped() -> None:
    text = ": OPENROUTER PROCESSING\n\n: keep-alive\n\ndata: a\n: inside an event\n\n:\n\n"
    assert events(text) == [ServerSentEvent("message", "a")]


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
def test_every_line_ending(newline: str) -> None:
    text = f"event: error{newline}data: x{newline}{newline}data: y{newline}{newline}"
    assert events(text) == [ServerSentEvent("error", "x"), ServerSentEvent("message", "y")]


def test_multi_line_data_is_joined_with_newlines() -> None:
    assert events('data: {\ndata:   "a": 1\ndata: }\n\n') == [
        ServerSentEvent("message", '{\n  "a": 1\n}')
    ]


def test_only_one_space_after_the_colon_is_dropped() -> None:
    assert events("data:x\n\ndata:  x\n\ndata\n\n") == [
        ServerSentEvent("message", "x"),
        ServerSentEvent("message", " x"),
        ServerSentEvent("message", ""),
    ]


def test_event_error_names_the_event_and_resets_after_it() -> None:
    text = 'event: error\ndata: {"error": {"message": "boom"}}\n\ndata: after\n\n'
    assert events(text) == [
        ServerSentEvent("error", '{"error": {"message": "boom"}}'),
        ServerSentEvent("message", "after"),
    ]


def test_event_without_data_is_dropped_and_does_not_leak_its_name() -> None:
    assert events("event: ping\n\ndata: a\n\n") == [ServerSentEvent("message", "a")]


def test_final_event_without_blank_line_still_counts() -> None:
    assert events("data: a\n\ndata: [DONE]") == [
        ServerSentEvent("message", "a"),
        ServerSentEvent("message", "[DONE]"),
    ]


def test_id_retry_and_unknown_fields_are_ignored() -> None:
    assert events("id: 7\nretry: 100\nfoo: bar\ndata: a\n\n") == [ServerSentEvent("message", "a")]


def test_leading_byte_order_mark_does_not_hide_the_first_field() -> None:
    assert events("\ufeffdata: a\n\n") == [ServerSentEvent("message", "a")]


def test_lines_without_endings_work_too() -> None:
    # httpx's iter_lines strips the endings; splitlines(keepends=True) keeps them.
    assert list(iter_sse(["data: a", "", "data: b", ""])) == [
        ServerSentEvent("message", "a"),
        ServerSentEvent("message", "b"),
    ]


def test_recorded_groq_stream_ends_with_an_error_event() -> None:
    text = (STREAMS / "pydantic-ai_groq-gpt-oss_midstream_error_event.sse").read_text()
    last = events(text)[-1]
    assert last.event == "error"
    assert '"code":"tool_use_failed"' in last.data


def test_recorded_openrouter_keepalives_yield_no_events() -> None:
    text = (STREAMS / "pydantic-ai_openrouter_keepalive_comments.sse").read_text()
    found = events(text)
    assert found[0].data.startswith('{"id":"gen-')  # the 30 comments produced nothing
    assert found[-1] == ServerSentEvent("message", "[DONE]")


# -- cutting a body into lines ----------------------------------------------------------------


def test_split_lines_cuts_only_at_the_three_line_endings() -> None:
    text = 'data: {"t": "a\u2028b\u2029c\x85d\x0be\x0cf\x1cg"}\r\n\r\ndata: x\ry\n'
    assert list(split_lines([text])) == [
        'data: {"t": "a\u2028b\u2029c\x85d\x0be\x0cf\x1cg"}',
        "",
        "data: x",
        "y",
    ]


@given(
    lines=st.lists(st.text(st.characters(blacklist_characters="\r\n"))),
    endings=st.lists(st.sampled_from(["\n", "\r\n", "\r"]), min_size=1),
    last_ended=st.booleans(),
    data=st.data(),
)
def test_split_lines_gives_back_the_lines_however_the_text_is_cut(
    lines: list[str], endings: list[str], last_ended: bool, data: st.DataObject
) -> None:
    text = ""
    for n, line in enumerate(lines):
        if text.endswith("\r") and not line:
            text += "\r"  # after a lone \r, an empty line ended by \n would read as one \r\n
        else:
            text += line + endings[n % len(endings)]
    if lines and not last_ended and lines[-1]:  # a last line may end with no line ending at all
        text = text.rstrip("\r\n")
    cuts = sorted(data.draw(st.sets(st.integers(0, len(text)), max_size=10)))
    pieces = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]
    assert list(split_lines(pieces)) == lines


# -- caps: a line, and an event's data, end at MAX_LINE characters --------------------------------


def test_the_line_cap_is_2_mb() -> None:
    assert MAX_LINE == 2 * 1024 * 1024


@pytest.mark.parametrize("piece", [1000, 65536])
def test_a_line_that_never_ends_stops_at_the_cap(piece: int) -> None:
    pieces = iter(lambda: "a" * piece, None)  # endless
    with pytest.raises(TooLong) as caught:
        list(split_lines(pieces, max_line=10_000))
    assert caught.value.limit == 10_000


def test_an_ended_line_over_the_cap_in_one_piece_is_refused_too() -> None:
    with pytest.raises(TooLong):
        list(split_lines(["short\n" + "a" * 101 + "\nshort\n"], max_line=100))


def test_lines_at_the_cap_pass() -> None:
    text = "a" * 100 + "\n" + "b" * 100
    assert list(split_lines([text[:37], text[37:]], max_line=100)) == ["a" * 100, "b" * 100]


def test_an_event_of_many_short_data_lines_stops_at_the_cap() -> None:
    lines = iter(lambda: "data: " + "a" * 50, None)  # endless, and never a blank line
    with pytest.raises(TooLong):
        list(iter_sse(lines, max_data=10_000))


def test_the_event_cap_counts_one_event_at_a_time() -> None:
    lines = ["data: " + "a" * 60, "data: " + "b" * 30, ""] * 1000
    assert len(list(iter_sse(lines, max_data=100))) == 1000


def test_a_long_line_in_tiny_pieces_is_held_compactly() -> None:
    # A line of 200,000 characters arriving 2 at a time (a gateway writing tiny chunks): kept
    # as a list of pieces it held 60 bytes per piece, 6 MB here (59 MB at the 2 MB cap).
    pieces = (str(10 + n % 90) for n in range(100_000))
    tracemalloc.start()
    try:
        [line] = split_lines(itertools.chain(pieces, ["\n"]), max_line=1 << 20)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(line) == 200_000
    assert peak < 2 << 20
