import tracemalloc

from hypothesis import given
from hypothesis import strategies as st

from course_agent.notebook.cards.fragments import (
    FRAGMENT_COST,
    MAX_KEPT_CHARS,
    FragmentLog,
    TurnFragments,
    fragments_html,
    slot_order,
)
from course_agent.notebook.fragments_demo import recorded_fragments
from course_agent.offline.repository import QUESTION
from course_agent.offline.scripted import ScriptedModel
from course_agent.protocol import ToolCallDelta


def piece(text: str, index: int | None = 0) -> ToolCallDelta:
    return ToolCallDelta(index, args_delta=text)


def test_watch_passes_every_event_through_and_keeps_the_call_fragments_per_turn():
    log = FragmentLog()
    messages = [{"role": "user", "content": QUESTION}]
    seen = list(log.watch(ScriptedModel()).stream(messages, tools=[]))
    assert seen == list(ScriptedModel().stream(messages, tools=[]))
    (turn,) = log.turns
    assert turn.deltas == [e for e in seen if isinstance(e, ToolCallDelta)]
    list(log.watch(ScriptedModel()).stream(messages, tools=[]))
    assert [t.number for t in log.turns] == [1, 2]


def test_the_log_never_keeps_more_than_its_limit_and_drops_whole_old_turns_first():
    log = FragmentLog(limit=10 * (FRAGMENT_COST + 10))
    old, new = log.start_turn(), log.start_turn()
    for _ in range(6):
        log.add(old, piece("a" * 10))
    for _ in range(6):
        log.add(new, piece("b" * 10))
    assert log.turns == [new]
    assert old.deltas == [] and old.left_out == 6
    assert old.forgotten == "left out: the conversation kept newer turns"
    for _ in range(6):
        log.add(new, piece("b" * 10))  # the current turn alone outgrows the limit
    assert len(new.deltas) == 10 and new.left_out == 2
    assert log.kept == 10 * (FRAGMENT_COST + 10) <= log.limit


@given(st.lists(st.tuples(st.booleans(), st.text(max_size=300)), max_size=60))
def test_whatever_arrives_the_kept_cost_is_counted_right_and_bounded(steps):
    log = FragmentLog(limit=3_000)
    turn = log.start_turn()
    for new_turn, text in steps:
        if new_turn:
            turn = log.start_turn()
        log.add(turn, piece(text))
    assert log.kept == sum(t.cost() for t in log.turns) <= log.limit


def test_a_new_conversation_clears_the_log_and_its_cards_say_why():
    log = FragmentLog()
    turn = log.start_turn()
    log.add(turn, piece("{}"))
    log.clear()
    assert log.turns == [] and log.kept == 0
    assert "the conversation they belong to has ended" in fragments_html(turn, 0)


def test_slots_follow_the_index_the_wire_gave_even_to_mistrals_fragments():
    # Mistral sends no index: the wire's CallSlots gives the id's call one, and its pieces too.
    deltas = [
        ToolCallDelta(0, id="a", name="glob"),
        ToolCallDelta(0, args_delta="{}"),
        ToolCallDelta(1, id="b", name="grep"),
        ToolCallDelta(1, args_delta='{"pattern":"x"}'),
    ]
    assert slot_order(deltas) == ([0, 0, 1, 1], [0, 1])
    grep = fragments_html(TurnFragments(1, deltas), 1)
    assert "in bold, this call (index 1)" in grep
    assert grep.count("font-weight:bold") == 2


def test_the_list_colours_each_index_and_bolds_the_asked_for_call():
    deltas = recorded_fragments("openai-python_parallel_tool_calls.sse")  # indexes 0 and 1
    turn = TurnFragments(1, deltas)
    second = fragments_html(turn, 1)
    slots, _ = slot_order(deltas)
    assert second.count("font-weight:bold") == slots.count(1)
    assert second.count("color:#0969da") == slots.count(0)  # index 0's colour
    assert second.count("color:#bc4c00") == slots.count(1)
    assert f"turn 1: {len(deltas)} fragments for 2 calls" in second


def test_a_long_turn_shows_a_bounded_list_and_says_how_much_is_missing():
    turn = TurnFragments(3, [piece("x") for _ in range(1_000)], left_out=7)
    text = fragments_html(turn, 0)
    assert text.count("<tr") == 400
    assert "600 more not shown" in text
    assert f"7 not kept (each conversation keeps {MAX_KEPT_CHARS} chars)" in text


def test_a_full_log_holds_about_a_quarter_megabyte():
    # The README's figure: tracemalloc counts what the kept fragments really take.
    tracemalloc.start()
    try:
        log = FragmentLog()
        turn = log.start_turn()
        while not turn.left_out:
            log.add(turn, piece("x" * 8 + str(len(turn.deltas))))  # a fresh string each time
        held, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(turn.deltas) > 1_000
    assert held < 300 * 1024
