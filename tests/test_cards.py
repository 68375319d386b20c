import io
import json
import re
from html.parser import HTMLParser

import pytest
from gateway import Gateway, Received, Reply, sse_reply
from hypothesis import given
from hypothesis import strategies as st

from course_agent.loop import run_agent
from course_agent.notebook.cards import LiveCard, LiveCards, ToolCard, ToolsView, show_events
from course_agent.notebook.cards.fragments import FragmentLog, fragments_html
from course_agent.notebook.cards.show import INTERRUPTED
from course_agent.notebook.cards.static import ARGS_CHARS, BODY_ARGS_CHARS
from course_agent.notebook.fragments_demo import FragmentDemo
from course_agent.notebook.saving import SAVE_STATIC, WIDGET_VIEW
from course_agent.offline.repository import QUESTION, build_sandbox
from course_agent.offline.scripted import ScriptedModel
from course_agent.protocol import (
    AgentStopped,
    TextDelta,
    ToolCall,
    ToolCallDelta,
    ToolContext,
    ToolFinished,
    ToolResult,
    ToolStarted,
    TurnStarted,
)
from course_agent.providers.http import HttpModel
from course_agent.providers.openai_wire import OPENAI
from course_agent.registry import default_registry
from course_agent.render.terminal import card_line, printable

CALL = ToolCall("call_1", "read_file", '{"path":"src/calc.js"}')
RESULTS = {
    "ok": ToolResult("src/calc.js (lines 1-13 of 13)\n 1  // Arithmetic"),
    "failed": ToolResult("there is no tool named edit_file. Available: glob", ok=False),
    "truncated": ToolResult("head\n" + "x" * 50, meta={"truncated": True, "originalChars": 38000}),
}


class Texts(HTMLParser):
    """The text a reader sees in each <summary> and <pre>, and the style of each tag, in order."""

    def __init__(self) -> None:
        super().__init__()
        self.found: dict[str, str] = {"summary": "", "pre": ""}
        self.inside: list[str] = []
        self.tags: list[tuple[str, str]] = []  # (tag, its style)

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs).get("style") or ""))
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


def style_of(reader: Texts, tag: str) -> str:
    return next(style for name, style in reader.tags if name == tag)


@pytest.mark.parametrize("kind", RESULTS)
def test_text_plain_is_the_terminal_line_with_the_arguments(kind):
    line = card_line(CALL, RESULTS[kind])
    mark, name, rest = line.split(" ", 2)
    card = ToolCard(CALL, RESULTS[kind])
    assert card._repr_mimebundle_()["text/plain"] == f"{mark} {name}({CALL.args}) {rest}"


def test_a_name_with_spaces_still_gets_its_arguments_after_it():
    call = ToolCall("c", "read file fed back", "{}")
    assert str(ToolCard(call, RESULTS["ok"])).startswith(
        "v read file fed back({}) fed back 48 chars"
    )


@pytest.mark.parametrize("kind", RESULTS)
def test_the_summary_reads_like_the_line_with_a_tick_for_ok(kind):
    result = RESULTS[kind]
    plain = str(ToolCard(CALL, result))
    reader = read_card(ToolCard(CALL, result))
    assert reader.found["summary"] == ("✓" + plain[1:] if result.ok else plain)
    assert reader.found["pre"] == result.content
    assert [tag for tag, _ in reader.tags[:2]] == ["details", "summary"]


# -- issue 30 item 5: the HTML escapes what the text form escapes --------------------------------

# The explicit bidi controls and marks (Trojan Source reorders a browser's line as it does a
# terminal's), and the zero-width characters: the joiners U+200C and U+200D stay themselves in
# both forms (scripts and emoji need them), every other one is an escape in both.
BIDI = [
    "\u061c",
    "\u200e",
    "\u200f",
    *map(chr, range(0x202A, 0x202F)),
    *map(chr, range(0x2066, 0x206A)),
]
ZERO_WIDTH = ["\u200b", "\u200c", "\u200d", *map(chr, range(0x2060, 0x2065)), "\ufeff"]
JOINERS = {"\u200c", "\u200d"}


def html_text(markup: str) -> str:
    """What a browser shows of `markup`: its text, entities decoded."""
    texts: list[str] = []
    reader = HTMLParser(convert_charrefs=True)
    reader.handle_data = texts.append  # type: ignore[method-assign]
    reader.feed(markup)
    reader.close()
    return "".join(texts)


def shown_forms(char: str) -> list[tuple[str, str]]:
    """(text form, what the HTML shows) of each card kind, with `char` in every outside text."""
    call = ToolCall("c", f"read{char}file", '{"path": "a' + char + 'b"}' + " " * ARGS_CHARS)
    result = ToolResult(f"x{char}y\nz{char}")
    finished, running = ToolCard(call, result), ToolCard(call)
    forms = [(str(card), html_text(card._repr_html_())) for card in (finished, running)]
    log = FragmentLog()
    turn = log.start_turn()
    log.add(turn, ToolCallDelta(0, f"id{char}", f"glob{char}", f'{{"p{char}":1}}'))
    listed = html_text(fragments_html(turn, 0))
    forms.append((printable(f'id{char} glob{char} {{"p{char}":1}}'), listed))
    demo = FragmentDemo("interleaved")
    object.__setattr__(demo, "fragments", [ToolCallDelta(1, f"c{char}", f"grep{char}", "{}")])
    forms += [(str(demo), html_text(demo._repr_html_())), (str(demo), html_text(demo.step_html(1)))]
    return forms


@pytest.mark.parametrize("char", BIDI + ZERO_WIDTH, ids=lambda char: f"U+{ord(char):04X}")
def test_each_bidi_and_zero_width_control_shows_in_html_as_in_the_text_form(char):
    escaped = char not in JOINERS
    assert (printable(char) != char) == escaped
    for text, shown in shown_forms(char):
        assert (char in text) == (char in shown) == (not escaped), (text, shown)
        if escaped:
            assert printable(char) in text and printable(char) in shown


@given(name=st.text(max_size=20), args=st.text(max_size=40), content=st.text(max_size=200))
def test_a_cards_html_never_shows_a_character_its_text_form_escapes(name, args, content):
    card = ToolCard(ToolCall("c", name, args), ToolResult(content))
    shown = html_text(card._repr_html_())
    assert printable(shown) == shown


def test_the_badge_does_not_wrap_and_the_result_is_monospace():
    reader = read_card(ToolCard(CALL, RESULTS["truncated"]))
    assert reader.found["summary"].endswith("[truncated from 38000]")
    assert "white-space:nowrap" in style_of(reader, "span")
    assert "monospace" in style_of(reader, "pre")  # nbconvert's default pre font is proportional
    assert "monospace" in style_of(reader, "summary")
    assert "truncated" not in read_card(ToolCard(CALL, RESULTS["ok"])).found["summary"]


def test_the_failed_mark_is_x_in_red():
    html = ToolCard(CALL, RESULTS["failed"])._repr_html_()
    assert '<b style="color:#cf222e" title="failed">x</b>' in html


def test_a_running_card_and_a_stopped_one_say_so_in_both_forms():
    running = ToolCard(CALL)
    assert str(running) == '> read_file({"path":"src/calc.js"}) running'
    assert read_card(running).found["summary"] == '… read_file({"path":"src/calc.js"}) running'
    assert read_card(running).found["pre"] == ""
    stopped = ToolCard(CALL, stopped="the run was interrupted")
    assert str(stopped) == '! read_file({"path":"src/calc.js"}) not run: the run was interrupted'


def test_long_or_multiline_arguments_are_cut_in_the_line_and_bounded_in_the_body():
    call = ToolCall("c", "grep", '{"pattern": "' + "a" * 20_000 + '"}')
    card = ToolCard(call, RESULTS["ok"])
    args_shown = str(card).split("(", 1)[1].split(") fed back")[0]
    assert len(args_shown) == ARGS_CHARS and args_shown.endswith("…")
    html = card._repr_html_()
    assert f"… ({len(call.args) - BODY_ARGS_CHARS} more chars)" in html
    assert len(html) < BODY_ARGS_CHARS + 2_000
    two_lines = ToolCard(ToolCall("c", "grep", '{\n"pattern": "x"}'), RESULTS["ok"])
    assert str(two_lines).startswith("v grep({…) fed back")
    assert "&quot;pattern&quot;: &quot;x&quot;}" in two_lines._repr_html_()  # whole in the body


@given(name=st.text(max_size=20), args=st.text(max_size=40), content=st.text(max_size=200))
def test_whatever_the_model_or_a_file_says_the_card_is_inert(name, args, content):
    card = ToolCard(ToolCall("c", name, args), ToolResult(content))
    html = card._repr_html_()
    assert not re.search(r"<(?!/?(details|summary|b|code|pre|span|div)\b)", html), "only our tags"
    assert read_card(card).found["pre"] == printable(content)
    assert "\n" not in str(card).split(" fed back ")[0]  # the line's head is one line


def test_tools_view_is_the_tools_array_verbatim():
    tools = default_registry().list()
    view = ToolsView(tools)
    assert json.loads(view._repr_mimebundle_()["text/plain"]) == tools
    html = view._repr_html_()
    for tool in tools:
        assert f"<b>{tool['function']['name']}</b>" in html
    assert html.count("<details open") == len(tools)


# -- show_events ------------------------------------------------------------------------------


def test_without_a_kernel_each_call_shows_one_static_card_when_it_finishes(tmp_path):
    out, err, shown = io.StringIO(), io.StringIO(), []
    events = run_agent(
        QUESTION, ScriptedModel(), default_registry(), ToolContext(build_sandbox(tmp_path))
    )
    stopped = show_events(events, shown.append, out, err)
    assert stopped.reason == "done"
    assert [card.call.name for card in shown] == ["glob", "grep", "read_file"]
    assert all(type(card) is ToolCard and card.result.ok for card in shown)
    assert str(shown[0]) == 'v glob({"pattern":"**/*.js"}) fed back 50 chars - src/calc.js'
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


class Screen:
    """A display that keeps what each display id showed, bundle by bundle, as a frontend would."""

    def __init__(self) -> None:
        self.outputs: list[list[dict]] = []  # one list of successive bundles per display

    def display(self, obj, display_id=None):
        self.outputs.append([obj._repr_mimebundle_()])
        shown = self.outputs[-1]

        class Handle:
            def update(self, new):
                shown.append(new._repr_mimebundle_())

        return Handle() if display_id else None


def test_a_live_card_shows_running_then_its_result_in_the_same_display(tmp_path):
    out, err, screen = io.StringIO(), io.StringIO(), Screen()
    root, log = build_sandbox(tmp_path), FragmentLog()
    registry = default_registry()
    events = run_agent(QUESTION, log.watch(ScriptedModel()), registry, ToolContext(root))
    live = LiveCards(lambda call: registry.execute(call, ToolContext(root)), log)
    show_events(events, screen.display, out, err, live)

    assert len(screen.outputs) == 3  # one display per card, no duplicates
    for shown in screen.outputs:
        (running, metadata), (done, _) = shown  # displayed once, updated once
        assert running["text/plain"].startswith("> ") and running["text/plain"].endswith("running")
        assert done["text/plain"].startswith("v ") and " fed back " in done["text/plain"]
        assert running[WIDGET_VIEW] == done[WIDGET_VIEW]  # the same widget, updated in place
        assert metadata == SAVE_STATIC
    assert screen.outputs[0][1][0]["text/plain"] == (
        'v glob({"pattern":"**/*.js"}) fed back 50 chars - src/calc.js'
    )


def test_an_interrupted_call_leaves_its_card_saying_why_not_running():
    screen = Screen()

    def events():
        yield TurnStarted(1)
        yield ToolStarted(CALL)
        raise KeyboardInterrupt  # Ctrl-C while the call runs

    live = LiveCards(lambda call: RESULTS["ok"])
    with pytest.raises(KeyboardInterrupt):
        show_events(events(), screen.display, io.StringIO(), io.StringIO(), live)
    ((running, _), (stopped, _)) = screen.outputs[0]
    assert running["text/plain"].endswith("running")
    assert stopped["text/plain"] == f'! read_file({{"path":"src/calc.js"}}) not run: {INTERRUPTED}'


def test_a_live_card_holds_the_running_state_for_a_paced_run(monkeypatch):
    naps = []
    monkeypatch.setattr("course_agent.notebook.cards.show.time.sleep", naps.append)
    events = [TurnStarted(1), ToolStarted(CALL), ToolFinished(CALL, RESULTS["ok"])]
    live = LiveCards(lambda call: RESULTS["ok"], hold=0.5)
    show_events(events, Screen().display, io.StringIO(), io.StringIO(), live)
    assert naps == [0.5]


def test_cards_of_a_turn_know_their_place_among_its_calls():
    made = []

    class Recording(LiveCards):
        def start(self, call, position):
            made.append((call.name, position))
            return LiveCard(call, self.replay)

    calls = [ToolCall(f"c{i}", name, "{}") for i, name in enumerate(["glob", "grep", "read_file"])]
    events = [TurnStarted(1)]
    for call in calls[:2]:
        events += [ToolStarted(call), ToolFinished(call, RESULTS["ok"])]
    events += [TurnStarted(2), ToolStarted(calls[2]), ToolFinished(calls[2], RESULTS["ok"])]
    show_events(events, Screen().display, io.StringIO(), io.StringIO(), Recording(None))
    assert made == [("glob", 0), ("grep", 1), ("read_file", 0)]


def test_control_characters_are_escaped_in_the_line_as_the_terminal_escapes_them():
    call = ToolCall("c", "re\x1b[2Jad", '{"path": "\x07a"}')
    result = ToolResult("\x1b]0;pwned\x07 file")
    assert str(ToolCard(call, result)) == (
        'v re\\x1b[2Jad({"path": "\\x07a"}) fed back 15 chars - \\x1b]0;pwned\\x07 file'
    )
    assert str(ToolCard(call)) == '> re\\x1b[2Jad({"path": "\\x07a"}) running'


# -- hole 2: a key a gateway echoes into a call's arguments, split over two stream lines ---------

ECHOED_KEY = "sk-test-echoed-in-arguments-0123456789"


def echo_key_in_arguments(received: Received) -> Reply:
    """A hostile gateway: a read_file call whose path is the key, in two chunks; then an answer."""
    if any(m["role"] == "tool" for m in received.body["messages"]):
        answer = {"choices": [{"index": 0, "delta": {"content": "done"}, "finish_reason": "stop"}]}
        return sse_reply(f"data: {json.dumps(answer)}\n\n", "data: [DONE]\n\n")
    halves = ['{"path": "' + ECHOED_KEY[:12], ECHOED_KEY[12:] + '"}']
    chunks = [
        {"index": 0, "id": "call_1", "function": {"name": "read_file", "arguments": halves[0]}},
        {"index": 0, "function": {"arguments": halves[1]}},
    ]
    lines = [{"choices": [{"index": 0, "delta": {"tool_calls": [chunk]}}]} for chunk in chunks] + [
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}
    ]
    return sse_reply(*(f"data: {json.dumps(line)}\n\n" for line in lines), "data: [DONE]\n\n")


def widget_values(widget) -> list[str]:
    """Every string value of a widget tree's state: what a saved notebook keeps of it."""
    values = [v for v in widget.get_state().values() if isinstance(v, str)]
    for child in getattr(widget, "children", ()):
        values += widget_values(child)
    return values


def test_a_key_echoed_in_a_calls_arguments_reaches_no_card_nor_widget_state(tmp_path):
    out, err, screen, log = io.StringIO(), io.StringIO(), Screen(), FragmentLog()
    with Gateway(echo_key_in_arguments) as gateway:
        model = HttpModel(OPENAI, gateway.url, ECHOED_KEY, "echo", timeout=10)
        registry, ctx = default_registry(), ToolContext(build_sandbox(tmp_path))
        events = run_agent("q", log.watch(model), registry, ctx)
        cards: list[LiveCard] = []

        class Keeping(LiveCards):
            def start(self, call, position):
                cards.append(super().start(call, position))
                return cards[-1]

        show_events(
            events, screen.display, out, err, Keeping(lambda c: registry.execute(c, ctx), log)
        )
    assert len(cards) == 1
    cards[0]._unfold(True)  # the fragments list, drawn on demand
    shown = [json.dumps(bundle) for display in screen.outputs for bundle in display]
    shown += [str(cards[0].card), cards[0].card._repr_html_(), *widget_values(cards[0].box)]
    for text in shown:
        assert ECHOED_KEY[:12] not in text and ECHOED_KEY[12:] not in text
    assert "[redacted]" in str(cards[0].card) and "[redacted]" in cards[0].args.value


# -- hole 5: what a terminal acts on is escaped, in the model's text and the gateway's message ---


@pytest.mark.parametrize(
    "control",
    [
        "\x1b]52;c;cHduZWQ=\x07",  # OSC 52: write the clipboard
        "\x1b]8;;http://evil/\x1b\\link\x1b]8;;\x1b\\",  # OSC 8: a hyperlink
        "\x1b[2J\x1b[H",  # clear the screen
        "\x9b2J",  # a raw one-byte CSI
    ],
)
def test_the_magics_text_and_stop_message_escape_terminal_controls(control):
    out, err = io.StringIO(), io.StringIO()
    events = [TextDelta(f"hi {control}\n"), AgentStopped("error", f"gateway said {control}")]
    show_events(events, lambda *a, **k: None, out, err)
    for written in (out.getvalue(), err.getvalue()):
        assert not any(ch in written for ch in "\x1b\x07\x9b")
    assert out.getvalue() == "hi " + printable(control) + "\n"
