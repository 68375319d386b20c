"""The live card without a frontend: its ipywidgets driven as clicks would drive them."""

import copy
import io

import pytest

from course_agent.loop import run_agent
from course_agent.notebook.cards import LiveCards, live, show_events
from course_agent.notebook.cards.fragments import FragmentLog
from course_agent.notebook.cards.live import MAX_REPLAYS, LiveCard
from course_agent.notebook.saving import SAVE_STATIC, WIDGET_VIEW
from course_agent.offline.repository import QUESTION, build_sandbox
from course_agent.offline.scripted import ScriptedModel
from course_agent.protocol import ToolCall, ToolContext, ToolResult
from course_agent.registry import default_registry


@pytest.fixture
def run(tmp_path):
    """The offline question run with live cards; returns (cards, transcript)."""
    root, log, registry = build_sandbox(tmp_path), FragmentLog(), default_registry()
    messages: list[dict] = []
    events = run_agent(
        QUESTION, log.watch(ScriptedModel()), registry, ToolContext(root), messages=messages
    )
    cards: list[LiveCard] = []

    def display(card, display_id=None):
        cards.append(card)

        class Handle:
            def update(self, obj):
                pass

        return Handle()

    live = LiveCards(lambda call: registry.execute(call, ToolContext(root)), log)
    show_events(events, display, io.StringIO(), io.StringIO(), live)
    (root / "big.txt").write_text("".join(f"line {i} " + "x" * 90 + "\n" for i in range(399)))
    return cards, messages


def toggle(card: LiveCard, description: str) -> None:
    (button,) = [b for b in card.box.children[1].children if b.description.startswith(description)]
    button.value = not button.value


def test_the_bundle_is_the_widget_and_the_static_card_marked_to_be_saved_static(run):
    cards, _ = run
    data, metadata = cards[0]._repr_mimebundle_()
    assert set(data) == {WIDGET_VIEW, "text/plain", "text/html"}
    assert data["text/plain"] == str(cards[0].card)
    assert data["text/html"] == cards[0].card._repr_html_() == cards[0].header.value
    assert metadata == SAVE_STATIC


@pytest.mark.parametrize(
    ("name", "args", "feedback"),
    [
        ("read_file", '{"file": "src/calc.js"}', "invalid arguments for read_file: path: Field"),
        ("read_file", '{"path": "src/calc.js"', "arguments for read_file are not valid JSON"),
        ("read_file", '["src/calc.js"]', "must be a JSON object, got list"),
        ("edit_file", "{}", "there is no tool named edit_file. Available: glob, grep, read_file"),
        ("read_file", '{"path": "../../etc/passwd"}', "outside"),
    ],
)
def test_run_replays_an_edited_call_and_leaves_the_transcript_alone(run, name, args, feedback):
    cards, messages = run
    before = copy.deepcopy(messages)
    card = cards[2]  # read_file
    toggle(card, "edit & run")
    assert card.replay_box.layout.display == ""
    card.name.value, card.args.value = name, args
    replayed = card.run()
    assert not replayed.result.ok
    assert feedback in replayed.result.content
    assert "replay 1, not sent to the model:" in card.replayed.value
    assert str(card.card).startswith("v read_file")  # the original result stays above
    assert messages == before


def test_asking_for_more_shows_truncation(run):
    cards, _ = run
    card = cards[2]  # read_file
    card.args.value = '{"path": "big.txt", "limit": 20}'
    few = card.run()
    card.args.value = '{"path": "big.txt"}'
    many = card.run()
    assert few.result.ok and "truncated" not in few.result.meta
    assert many.result.meta["truncated"] is True
    assert "[truncated from " in card.replayed.value


def test_replays_are_kept_up_to_a_bound_and_a_raising_replay_is_a_failed_card():
    calls = []

    def replay(call):
        calls.append(call)
        if len(calls) == MAX_REPLAYS + 2:
            raise RuntimeError("boom")
        return ToolResult("fine")

    card = LiveCard(ToolCall("c1", "glob", "{}"), replay)
    for _ in range(MAX_REPLAYS + 2):
        last = card.run()
    assert len(card.replays) == MAX_REPLAYS
    assert card.replayed.value.count("<details") == MAX_REPLAYS
    assert f"replay {MAX_REPLAYS + 2}, not sent" in card.replayed.value
    assert "replay 1, not sent" not in card.replayed.value
    assert last.result.content == "the replay raised RuntimeError: boom"
    assert [call.id for call in calls[:2]] == ["c1-replay-1", "c1-replay-2"]


def test_the_fragments_toggle_lists_the_turns_fragments_with_this_calls_in_bold(run):
    cards, _ = run
    glob, grep, read_file = cards
    assert glob.fragments.value == ""  # drawn only when unfolded
    toggle(grep, "fragments (15)")
    assert grep.fragments.layout.display == ""
    table = grep.fragments.value
    assert (
        "turn 1: 15 fragments for 2 calls, in arrival order; in bold, this call (index 2)" in table
    )
    assert table.count("<tr") == 15
    assert table.count("font-weight:bold") == 8  # grep's head and its 7 pieces
    assert table.index("name=grep") < table.index("name=glob")  # arrival order, as streamed
    toggle(grep, "fragments")
    assert grep.fragments.layout.display == "none"
    toggle(read_file, "fragments (")
    assert "turn 2:" in read_file.fragments.value


def test_a_card_without_recorded_fragments_says_so():
    card = LiveCard(ToolCall("c", "glob", "{}"), lambda call: ToolResult(""))
    toggle(card, "fragments (0)")
    assert "no fragments were recorded" in card.fragments.value


def test_the_static_form_keeps_the_replays_and_the_open_fragments_list(run, monkeypatch, tmp_path):
    # Issue 33: a saved card dropped its replays and its unfolded fragments list.
    left: dict[str, dict] = {}
    monkeypatch.setattr(live, "remember", lambda model, bundle: left.__setitem__(model, bundle))
    cards, _ = run
    card = cards[2]  # read_file
    card.args.value = '{"file": "src/calc.js"}'
    card.run()
    toggle(card, "fragments (")
    bundle = card._repr_mimebundle_()[0]
    assert bundle["text/plain"].splitlines()[1:] == [
        "replay 1, not sent to the model:",
        'x read_file({"file": "src/calc.js"}) fed back 207 chars - invalid arguments for '
        'read_file: path: Field required; file: Extra inputs are not permitted (got "s…',
    ]
    html = bundle["text/html"]
    assert html.index("✓") < html.index("replay 1, not sent") < html.index("turn 2: ")
    assert left[card.box.model_id] == {key: bundle[key] for key in ("text/plain", "text/html")}
    toggle(card, "fragments")  # folded again: the saved form folds it too
    assert "turn 2: " not in left[card.box.model_id]["text/html"]
