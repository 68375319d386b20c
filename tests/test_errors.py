"""The error lines: one line each, the gateway named, a gateway's words redacted before any cut."""

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from course_agent.providers.anthropic_wire import ANTHROPIC
from course_agent.providers.gateway import errors
from course_agent.providers.openai_wire import OPENAI

GATEWAY = "https://gateway.example/v1"


@pytest.mark.parametrize(
    ("count", "said"),
    [(1 << 20, "1 MB"), (2 << 20, "2 MB"), (64 << 10, "64 KB"), (1000, "1000 bytes")],
)
def test_sizes_are_said_as_people_say_them(count: int, said: str) -> None:
    assert errors.size(count) == said


KEY_CHARS = st.characters(codec="ascii", categories=["L", "N"])


@given(
    key=st.text(KEY_CHARS, min_size=8, max_size=300),
    before=st.integers(min_value=0, max_value=400),
)
def test_an_excerpt_never_holds_a_piece_of_the_key(key: str, before: int) -> None:
    # Wherever the key sits against the 200-character cut, no 8 characters of it survive.
    text = "-" * before + key + "-" * 50
    shown = errors.excerpt(text, [key])
    assert key[:8] not in shown and len(shown) <= errors.EXCERPT


def test_an_error_body_is_summarised_after_redaction() -> None:
    key = "sk-" + "k" * 300
    body = json.dumps({"error": {"code": "invalid_api_key", "message": f"key {key} refused"}})
    assert errors.body_summary(body, [key]) == "invalid_api_key: key [redacted] refused"


@pytest.mark.parametrize(
    ("code", "wire", "advice"),
    [
        (401, OPENAI, "check OPENAI_API_KEY"),
        (403, ANTHROPIC, "check ANTHROPIC_API_KEY"),
        (404, OPENAI, "check OPENAI_BASE_URL (it usually ends in /v1) and the model name 'm'"),
        (404, ANTHROPIC, "check ANTHROPIC_BASE_URL (the API root, without /v1)"),
        (429, OPENAI, "still rate-limited"),
        (529, ANTHROPIC, "the gateway itself failed"),
        (422, OPENAI, "check the model name 'm' and the tool schemas"),
    ],
)
def test_each_status_gets_the_advice_of_its_wire(code, wire, advice) -> None:
    line = errors.status(GATEWAY, code, '{"error": {"message": "no"}}', "m", wire)
    assert line.startswith(f"gateway {GATEWAY} answered HTTP {code} (no): ")
    assert advice in line


def test_a_broken_stream_says_which_setting_to_check() -> None:
    line = errors.broken(errors.broken_chunk(GATEWAY, "choices is a string"), ANTHROPIC)
    assert line == (
        f"gateway {GATEWAY} sent a chunk that breaks the stream's format: choices is a string; "
        "check that ANTHROPIC_BASE_URL points at the Anthropic Messages API"
    )


def test_every_cap_and_timeout_line_names_its_figure_and_setting() -> None:
    assert "2 MB" in errors.too_long_line(GATEWAY, 2 << 20)
    assert "1 MB of text" in errors.too_much_text(GATEWAY, 1 << 20)
    assert "1 MB of arguments" in errors.too_many_arguments(GATEWAY, 1 << 20)
    assert "more than 1024 calls in one turn" in errors.too_many_calls(GATEWAY, 1024)
    assert "more than 4 MB in one turn" in errors.too_much_in_turn(GATEWAY, 4 << 20)
    assert "COURSE_AGENT_TIMEOUT" in errors.silence(GATEWAY, 60)
    assert "600 s" in errors.too_slow(GATEWAY, 600)
    assert "COURSE_AGENT_REQUEST_TIMEOUT" in errors.too_slow(GATEWAY, 600)


def nested(depth: int) -> list[object]:
    """[[[...]]] `depth` levels deep, built without recursion."""
    value: list[object] = []
    for _ in range(depth):
        value = [value]
    return value


def test_a_value_too_deep_to_write_back_is_summarised_without_it() -> None:
    # json.loads can read a value at the edge of the stack that json.dumps, called from a few
    # frames deeper, cannot write: the summary says so instead of raising RecursionError.
    payload = {"error": {"code": None, "message": None, "detail": None, "x": nested(100_000)}}
    assert "nested too deeply" in errors.error_summary(payload)
    assert "nested too deeply" in errors.error_summary(nested(100_000))


def test_an_absurd_wait_is_said_in_a_few_characters() -> None:
    # retry-after-ms: 1e308 was said in 309 digits.
    line = errors.wait_too_long(1e308, 20)
    assert "1e+308 s" in line and len(line) < 150
    assert "asks to wait 30 s" in errors.wait_too_long(30, 20)


@pytest.mark.parametrize(
    "shown",
    ["\\u0073k-test-KEY-0123456789", "%73k-test-KEY-0123456789", "sk-test-KEY-01234567\\u0038%39"],
)
def test_a_key_with_some_characters_escaped_is_cut_too(shown: str) -> None:
    # Redaction matches whole forms: one character escaped left the other 20 readable.
    line = errors.not_json(GATEWAY, f'{{"x": "{shown}"', ["sk-test-KEY-0123456789"])
    assert "KEY-0123" not in line and "[redacted]" in line
