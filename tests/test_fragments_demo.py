import html
import json

import pytest

from course_agent.notebook.demo_tools import OPENAI_TEST_TOOLS, course_tools
from course_agent.notebook.fragments_demo import (
    SOURCES,
    FragmentDemo,
    recorded_fragments,
    scripted_fragments,
)
from course_agent.notebook.merges import (
    call_problem,
    merge_by_index,
    merge_by_subscript,
    merge_in_arrival_order,
)
from course_agent.notebook.saving import SAVE_STATIC
from course_agent.offline.repository import build_sandbox
from course_agent.protocol import ToolCall, ToolContext
from course_agent.registry import default_registry


def in_index_order(merged):
    return [slot for _, slot in sorted(merged.items())]


def names_and_args(slots):
    return [(slot.get("name", ""), slot.get("args", "")) for slot in slots]


def test_the_claude_stream_starts_at_index_1_and_breaks_the_subscript_merge():
    fragments = recorded_fragments("vercel-ai_claude-openai-compat_index1_after_text.sse")
    assert {d.index for d in fragments} == {1}
    good = [("read_file", '{"path": "a.txt"}')]
    assert names_and_args(in_index_order(merge_by_index(fragments))) == good
    assert names_and_args(merge_in_arrival_order(fragments)) == good
    by_subscript = merge_by_subscript(fragments)
    assert names_and_args(by_subscript) == [("", ""), *good]  # a phantom call at position 0
    assert call_problem(by_subscript[0], course_tools()) == (
        "no tool name: the gateway rejects the next request"
    )


def test_the_interleaved_turn_breaks_the_arrival_order_merge():
    fragments = scripted_fragments()
    heads = [d.name for d in fragments if d.name]
    assert heads == ["grep", "glob"]  # the second call's head arrives first
    assert sorted({d.index for d in fragments}) == [1, 2]
    good = [("glob", '{"pattern":"**/*.js"}'), ("grep", '{"pattern":"divide\\\\("}')]
    assert names_and_args(in_index_order(merge_by_index(fragments))) == good
    by_arrival = merge_in_arrival_order(fragments)
    assert [slot["name"] for slot in by_arrival] == ["grep", "glob"]
    assert by_arrival[0]["args"] == ""  # grep's arguments went to glob, stitched in
    assert call_problem(by_arrival[1], course_tools()).startswith(
        "registry: arguments for glob are not valid JSON (Expecting"
    )


def test_the_sequential_parallel_stream_hides_both_bugs():
    fragments = recorded_fragments("openai-python_parallel_tool_calls.sse")
    merges = [
        in_index_order(merge_by_index(fragments)),
        merge_by_subscript(fragments),
        merge_in_arrival_order(fragments),
    ]
    assert names_and_args(merges[1]) == names_and_args(merges[0])
    assert names_and_args(merges[2]) == names_and_args(merges[0])
    assert [slot["name"] for slot in merges[0]] == ["GetWeatherArgs", "get_stock_price"]
    assert all(call_problem(slot, OPENAI_TEST_TOOLS) is None for slot in merges[0])


@pytest.mark.parametrize("source", SOURCES)
def test_every_step_is_in_the_static_table(source):
    demo = FragmentDemo(source)
    html = demo._repr_html_()
    assert html.count("<tr>") == len(demo.fragments) + 1  # the header and one row per fragment
    assert "<script" not in html
    bundle = demo._repr_mimebundle_()
    assert set(bundle) == {"text/plain", "text/html"}
    assert bundle["text/plain"].startswith(f"{source}: ")


def test_a_step_shows_the_fragments_so_far_with_the_newest_in_bold():
    demo = FragmentDemo("claude")
    first = demo.step_html(1)
    assert "fragment 1 of" in first
    assert "<b>index=1 id=toolu_sanitized name=read_file args+=``</b>" in first
    assert "(nothing yet)" in demo.step_html(0)
    last = demo.step_html(len(demo.fragments))
    assert "x [0]: (no name)" in last  # only at the end are unfinished calls judged


def test_the_plain_text_form_judges_each_merge():
    text = str(FragmentDemo("interleaved"))
    assert '  1: glob {"pattern":"**/*.js"} v' in text
    assert "x (registry: arguments for glob are not valid JSON" in text


def test_a_call_the_registry_would_refuse_is_marked_wrong():
    # Issue 33: arrival order left grep with no arguments, and the demo showed `v [0]: grep`.
    demo = FragmentDemo("interleaved")
    assert "  [0]: grep  x (registry: invalid arguments for grep: pattern: Field " in (str(demo))
    last = demo.step_html(len(demo.fragments))
    assert "x [0]: grep  - registry: invalid arguments for grep: pattern: Field" in (
        html.unescape(last)
    )
    assert "v [0]: grep" not in html.unescape(demo._repr_html_())


def test_each_verdict_is_what_the_registry_does_with_the_call(tmp_path):
    registry, ctx = default_registry(), ToolContext(build_sandbox(tmp_path))
    demo = FragmentDemo("interleaved")
    verdicts = []
    for slots in demo.merges(len(demo.fragments)).values():
        for label, slot in slots:
            if not slot["name"]:
                continue  # the gateway rejects it before any registry sees it
            result = registry.execute(ToolCall(label, slot["name"], slot["args"]), ctx)
            verdicts.append((call_problem(slot, demo.tools) is None, result.ok))
    assert len(verdicts) == 6 and all(said == ran for said, ran in verdicts), verdicts
    assert [said for said, _ in verdicts] == [True, True, True, True, False, False]


def test_the_parallel_recording_is_judged_by_the_tools_it_was_recorded_with():
    text = str(FragmentDemo("parallel"))
    assert text.count(" v") == 6 and " x " not in text
    wrong = {"name": "GetWeatherArgs", "args": '{"city": "Edinburgh"}'}
    assert call_problem(wrong, OPENAI_TEST_TOOLS) == (
        "registry: invalid arguments for GetWeatherArgs: country: Field required"
    )


def test_an_unknown_stream_names_the_choices():
    with pytest.raises(ValueError, match="claude, interleaved, parallel"):
        FragmentDemo("mistral")


def test_the_player_steps_and_offers_the_static_table_beside_the_widget():
    demo = FragmentDemo("interleaved")
    player = demo.player()
    player.go(3)
    assert player.view.value == demo.step_html(3)
    player.go(999)
    assert player.slider.value == len(demo.fragments)
    player.go(-5)
    assert player.view.value == demo.step_html(0)
    bundle, metadata = player._repr_mimebundle_()
    assert metadata == SAVE_STATIC  # a saved notebook keeps the table, not the widget
    view = bundle["application/vnd.jupyter.widget-view+json"]
    assert view["model_id"] == player.box.model_id
    assert bundle["text/html"] == demo._repr_html_()
    assert json.dumps(bundle)  # a display message must be JSON
