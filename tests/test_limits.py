"""The caps on memory, on bytes and events alone (test_http.py runs them over loopback HTTP)."""

import gzip
import itertools
import zlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from course_agent.argument_caps import MAX_ARGUMENTS
from course_agent.protocol import GatewayError, TextDelta, ToolCallDelta
from course_agent.providers.gateway.limits import (
    MAX_CALLS_HELD,
    MAX_ERROR_BODY,
    MAX_TEXT,
    MAX_TURN,
    UNPACK_STEP,
    bounded,
    unpacked,
    without_partial_secret,
)
from course_agent.safety.redaction import REDACTED, redact

GATEWAY = "https://gateway.example/v1"
MB = 1 << 20


def test_the_figures_the_readme_states() -> None:
    assert (MAX_ERROR_BODY, MAX_TEXT, MAX_ARGUMENTS) == (64 * 1024, MB, MB)
    assert (MAX_CALLS_HELD, MAX_TURN) == (1024, 4 * MB)


@pytest.mark.parametrize("encoding", ["gzip", "deflate", "x-gzip", " GZIP "])
def test_a_packed_body_unpacks_whole(encoding: str) -> None:
    body = b"data: hello\n\n" * 10_000
    packed = zlib.compress(body) if encoding == "deflate" else gzip.compress(body)
    chunks = [packed[i : i + 100] for i in range(0, len(packed), 100)]
    assert b"".join(unpacked(chunks, encoding, GATEWAY)) == body


def test_a_bomb_unpacks_one_step_at_a_time_and_stops_at_the_limit() -> None:
    bomb = gzip.compress(b"\0" * (64 * MB))  # 64 MB from about 64 KB
    pieces = unpacked([bomb], "gzip", GATEWAY, limit=MAX_ERROR_BODY + 5)
    sizes = [len(piece) for piece in pieces]
    assert max(sizes) <= UNPACK_STEP
    assert sum(sizes) == MAX_ERROR_BODY + 5


def test_a_plain_body_stops_at_the_limit_too() -> None:
    assert b"".join(unpacked([b"abc"] * 10, "", GATEWAY, limit=7)) == b"abcabca"


@pytest.mark.parametrize(("encoding", "cause"), [("br", "'br'"), ("gzip", "does not unpack")])
def test_what_cannot_be_unpacked_is_a_gateway_error(encoding: str, cause: str) -> None:
    with pytest.raises(GatewayError) as caught:
        list(unpacked([b"not packed at all"], encoding, GATEWAY))
    assert GATEWAY in str(caught.value) and cause in str(caught.value)


def test_gzip_members_one_after_another_unpack_whole() -> None:
    # RFC 1952: a gzip file is a series of members; zlib's decompressor stops after the first.
    body = gzip.compress(b"data: a\n\n") + gzip.compress(b"data: b\n\n")
    chunks = [body[i : i + 7] for i in range(0, len(body), 7)]
    assert b"".join(unpacked(chunks, "gzip", GATEWAY)) == b"data: a\n\ndata: b\n\n"


def test_bytes_after_the_packed_body_are_a_gateway_error() -> None:
    # Past the end of a member, zlib keeps what follows in `unused_data`, copying it whole for
    # every chunk: endless zeros there held 60 MB in 30 s, at full CPU, until the silence timeout.
    zeros = itertools.repeat(b"\0" * 1000, 1000)
    with pytest.raises(GatewayError, match="does not unpack as gzip"):
        list(unpacked(itertools.chain([gzip.compress(b"data: a\n\n")], zeros), "gzip", GATEWAY))


KEY = "sk-test-LIMITS-0123456789"


@given(cut=st.integers(min_value=0, max_value=200))
def test_a_cut_never_leaves_the_start_of_a_key(cut: int) -> None:
    # As http.py reads an error body: cut at the cap, then redacted whole.
    clean = redact(without_partial_secret(("x" * 100 + KEY + "y" * 100)[:cut], [KEY]), [KEY])
    assert KEY not in clean
    assert not any(clean.endswith(KEY[:n]) for n in range(1, len(KEY)))


def test_text_that_ends_without_a_key_is_left_alone() -> None:
    assert without_partial_secret("ends in sk-", ["other"]) == "ends in sk-"
    assert without_partial_secret("ends in sk-", [KEY]) == f"ends in {REDACTED}"


def test_text_under_its_cap_passes() -> None:
    events = [TextDelta("a" * (MAX_TEXT // 2)), TextDelta("a" * (MAX_TEXT // 2))]
    assert list(bounded(events, GATEWAY)) == events


def test_text_over_its_cap_stops_after_what_fits() -> None:
    events = [TextDelta("a" * MAX_TEXT), TextDelta("b")]
    seen = []
    with pytest.raises(GatewayError, match="more than 1 MB of text in one turn"):
        seen.extend(bounded(events, GATEWAY))
    assert seen == events[:1]


def test_arguments_are_capped_per_call_not_per_turn() -> None:
    half = "a" * (MAX_ARGUMENTS // 2 + 1)
    two_calls = [ToolCallDelta(1, "x", "glob", half), ToolCallDelta(2, "y", "glob", half)]
    assert len(list(bounded(two_calls, GATEWAY))) == 2
    one_call = [ToolCallDelta(1, "x", "glob", half), ToolCallDelta(1, args_delta=half)]
    with pytest.raises(GatewayError, match="more than 1 MB of arguments for one call"):
        list(bounded(one_call, GATEWAY))


def test_without_an_index_a_call_is_known_by_its_id_then_by_being_the_last() -> None:
    half = "a" * (MAX_ARGUMENTS // 2 + 1)
    mistral = [
        ToolCallDelta(None, "x", "glob", half),
        ToolCallDelta(None, "y", "glob", half),  # a new id: another call
        ToolCallDelta(None, args_delta="b"),  # no id: continues y
    ]
    assert len(list(bounded(mistral, GATEWAY))) == 3
    with pytest.raises(GatewayError):
        list(bounded([*mistral, ToolCallDelta(None, args_delta=half)], GATEWAY))


# A gateway can open calls without end, each small: 32 run, but all are held until the turn ends.
OPENED_BY = {
    "index": lambda n: ToolCallDelta(n, f"call_{n}", "glob", "{}"),
    "id alone": lambda n: ToolCallDelta(None, f"call_{n}", "glob", "{}"),
    "index alone": lambda n: ToolCallDelta(n),
}


@pytest.mark.parametrize("opened_by", OPENED_BY.values(), ids=OPENED_BY.keys())
def test_calls_past_the_cap_stop_the_turn(opened_by) -> None:
    calls = [opened_by(n) for n in range(MAX_CALLS_HELD)]
    assert len(list(bounded(calls, GATEWAY))) == MAX_CALLS_HELD
    with pytest.raises(GatewayError, match="more than 1024 calls in one turn"):
        list(bounded([*calls, opened_by(MAX_CALLS_HELD)], GATEWAY))


def test_more_fragments_of_the_same_calls_are_not_more_calls() -> None:
    fragments = [ToolCallDelta(n % 3, args_delta="a") for n in range(10 * MAX_CALLS_HELD)]
    assert len(list(bounded(fragments, GATEWAY))) == len(fragments)


def test_all_a_turn_holds_is_capped_across_calls() -> None:
    # Each call under its own cap, the turn's text under its own: together past MAX_TURN.
    arguments = "a" * MAX_ARGUMENTS
    events = [TextDelta("t" * MAX_TEXT)] + [
        ToolCallDelta(n, args_delta=arguments) for n in range(3)
    ]
    assert len(list(bounded(events, GATEWAY))) == 4  # exactly MAX_TURN
    with pytest.raises(GatewayError, match="more than 4 MB in one turn"):
        list(bounded([*events, ToolCallDelta(3, args_delta="b")], GATEWAY))


@pytest.mark.parametrize("field", ["id", "name"])
def test_ids_and_names_count_toward_what_a_turn_holds(field: str) -> None:
    # No arguments at all: 100 calls with a 64 KB name (or id) each hold 6.4 MB.
    big = "n" * (64 << 10)
    events = [ToolCallDelta(n, **{field: big}) for n in range(100)]
    with pytest.raises(GatewayError, match="more than 4 MB in one turn"):
        list(bounded(events, GATEWAY))


def test_an_id_and_name_repeated_in_every_fragment_count_once() -> None:
    # Some gateways repeat both in every fragment; the accumulator keeps one copy.
    big = "n" * (64 << 10)
    events = [ToolCallDelta(0, big, big, "a") for _ in range(200)]
    assert len(list(bounded(events, GATEWAY))) == 200
