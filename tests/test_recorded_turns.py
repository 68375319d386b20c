"""Recorded turns: how each shipped recording ends, read by the package's own parsers, and the
offline model's replay of the course's "stop" with a call."""

from __future__ import annotations

from pathlib import Path

import pytest

from course_agent.offline.recorded_turns import (
    RECORDINGS,
    STREAMS,
    offline_stop_with_call,
    recorded_turns,
)

TESTS_STREAMS = Path(__file__).resolve().parent / "data" / "streams"


@pytest.mark.parametrize("name", [name for name, _, _ in RECORDINGS] + ["README.txt"])
def test_the_package_ships_the_recordings_verbatim_beside_their_provenance(name: str) -> None:
    assert (STREAMS / name).read_bytes() == (TESTS_STREAMS / name).read_bytes()


def test_each_recorded_turn_ends_as_the_file_shows() -> None:
    ends = [(turn.finish, [call.name for call in turn.calls]) for turn in recorded_turns()]
    assert ends == [
        ("tool_calls", ["read_file"]),
        ("tool_calls", ["GetWeatherArgs", "get_stock_price"]),
        ("stop", []),
        ("length", []),
        ("tool_calls", ["get_weather"]),  # Anthropic's tool_use, in the loop's words
        ("length", ["make_file"]),  # max_tokens, with the call's arguments cut off
        ("stop", ["read_file"]),  # the course's trap, replayed offline
    ]


def test_the_offline_model_replays_stop_with_a_call() -> None:
    turn = offline_stop_with_call()
    assert turn.finish == "stop"
    assert [(call.name, call.args) for call in turn.calls] == [
        ("read_file", '{"path":"src/calc.js"}')
    ]
    assert "replayed by the offline model" in turn.label
