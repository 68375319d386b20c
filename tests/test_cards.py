import io
import json
import re
from html.parser import HTMLParser

import pytest
from hypothesis import given
from hypothesis import strategies as st

from course_agent.loop import run_agent
from course_agent.notebook.cards import ToolCard, ToolsView, show_events
from course_agent.protocol import (
    AgentStopped,
    TextDelta,
    ToolCall,
    ToolContext,
    ToolFinished,
    ToolResult,
)
from course_agent.providers.scripted import ScriptedModel
from course_agent.registry import default_registry
from course_agent.render.terminal import card_line
from course_agent.sandbox import QUESTION, build_sandbox

CALL = ToolCall("call_1", "read_file", '{"path":"src/calc.js"}')
RESULTS = {
    "ok": ToolResult("src/calc.js (lines 1-13 of 13)\n 1  // Arithmetic"),
    "failed": ToolResult("there is no tool named edit_file. Available: glob", ok=False),
    "truncated": ToolResult("head\n" + "x" * 50, meta={"truncated": True, "originalChars": 38000}),
}


class Texts(HTMLParser):
    """The text a reader sees in each <summary> and <pre>, styles and tags ignored."""

    def __init__(self) -> None:
        super().__init__()
        self.found: dict[str, str] = {"summary": "", "pre": ""}
        self.inside: list[str] = []
        self.tags: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.inside.append(tag)
        assert not any(name.startswith("on") for name, _ in attrs), "no event handlers"

    def handle_endtag(self, tag):
        self.inside.pop()

    def handle_data(self, data):
        for tag in ("summary", "pre"):
            if tag in self.inside:
                self.found[tag] += data


def read_card(card: ToolCard) -> Texts:
    reader = Texts()
    reader.feed(card._repr_mimebundle_()["text/html"])
    reader.close()
    return reader


@pytest.mark.parametrize("kind", RESULTS)
def test_text_plain_is_the_terminal_line(kind):
    card = ToolCard(CALL, RESULTS[kind])
    assert card._repr_mimebundle_()["text/plain"] == card_line(CALL, RESULTS[kind])


@pytest.mark.parametrize("kind", RESULTS)
def test_the_summary_reads_like_the_line_with_the_arguments(kind):
    result = RESULTS[kind]
    line = card_line(CALL, result)
    mark, name, rest = line.split(" ", 2)
    reader = read_card(ToolCard(CALL, result))
    assert reader.found["summary"] == f"{mark} {name}({CALL.args}) {rest}"
    assert reader.found["pre"] == result.content
    assert reader.tags[:2] == ["details", "summary"]


def test_the_truncation_badge_comes_from_meta():
    summary = read_card(ToolCard(CALL, RESULTS["truncated"])).found["summary"]
    assert summary.endswith("[truncated from 38000]")
    assert "truncated" not in read_card(ToolCard(CALL, RESULTS["ok"])).found["summary"]


def test_the_failed_mark_is_x_in_red():
    html = ToolCard(CALL, RESULTS["failed"])._repr_html_()
    assert '<b style="color:#cf222e">x</b>' in html


@given(name=st.text(max_size=20), args=st.text(max_size=40), content=st.text(max_size=200))
def test_whatever_the_model_or_a_file_says_the_card_is_inert(name, args, content):
    card = ToolCard(ToolCall("c", name, args), ToolResult(content))
    html = card._repr_html_()
    assert not re.search(r"<(?!/?(details|summary|b|code|pre|span)\b)", html), "only our tags"
    reader = read_card(card)
    assert reader.found["pre"] == content


def test_tools_view_is_the_tools_array_verbatim():
    tools = default_registry().list()
    view = ToolsView(tools)
    assert json.loads(view._repr_mimebundle_()["text/plain"]) == tools
    html = view._repr_html_()
    for tool in tools:
        assert f"<b>{tool['function']['name']}</b>" in html
    assert html.count("<details open") == len(tools)


def test_show_events_streams_text_and_shows_a_card_per_call_in_order(tmp_path):
    out, err, shown = io.StringIO(), io.StringIO(), []
    events = run_agent(
        QUESTION, ScriptedModel(), default_registry(), ToolContext(build_sandbox(tmp_path))
    )
    stopped = show_events(events, shown.append, out, err)
    assert stopped.reason == "done"
    assert [card.call.name for card in shown] == ["glob", "grep", "read_file"]
    assert all(isinstance(card, ToolCard) and card.result.ok for card in shown)
    assert out.getvalue().endswith("the test goes green.\n")
    assert err.getvalue() == ""


def test_a_card_starts_on_a_fresh_line_and_errors_go_to_stderr():
    out, err, shown = io.StringIO(), io.StringIO(), []
    events = [
        TextDelta("Let me look."),
        ToolFinished(CALL, RESULTS["ok"]),
        TextDelta("Hmm"),
        AgentStopped("error", "gateway http://127.0.0.1:9 refused the connection"),
    ]
    stopped = show_events(events, shown.append, out, err)
    assert stopped.reason == "error"
    assert out.getvalue() == "Let me look.\nHmm\n"
    assert err.getvalue() == "! gateway http://127.0.0.1:9 refused the connection\n"
    assert len(shown) == 1
