"""The offline model: the course's stream without a seed, the same steps cut otherwise with one."""

from course_agent.loop import check_transcript, run_agent
from course_agent.offline.repository import QUESTION, build_sandbox
from course_agent.offline.scripted import ScriptedModel, Step
from course_agent.protocol import AgentStopped, ToolContext, ToolFinished
from course_agent.registry import default_registry

STEP = Step("Looking.", [("glob", '{"pattern":"**/*.js"}'), ("grep", '{"pattern":"divide\\\\("}')])


def pieces(model: ScriptedModel) -> list[tuple[int, str | None, str]]:
    """Each tool-call fragment as (index, id, arguments piece), in the order the stream sends."""
    return [
        (call["index"], call.get("id"), call["function"].get("arguments", ""))
        for chunk in model.chunks(STEP, turn=1)
        for choice in chunk["choices"]
        for call in choice["delta"].get("tool_calls", [])
    ]


def joined(fragments: list[tuple[int, str | None, str]]) -> list[str]:
    """Each call's arguments, its pieces joined by index, calls in index order."""
    calls: dict[int, str] = {}
    for index, _, piece in fragments:
        calls[index] = calls.get(index, "") + piece
    return [calls[index] for index in sorted(calls)]


def test_without_a_seed_the_course_stream_is_the_same_every_time():
    assert pieces(ScriptedModel()) == pieces(ScriptedModel())
    assert {i for _, i, _ in pieces(ScriptedModel()) if i} == {"call_1_1", "call_1_2"}


def test_a_seed_sends_other_ids_and_other_cuts_of_the_same_arguments():
    course, seeded = pieces(ScriptedModel()), pieces(ScriptedModel(seed=123456))
    assert {i for _, i, _ in seeded if i} == {"call_1e240_1_1", "call_1e240_1_2"}
    assert [p for *_, p in seeded] != [p for *_, p in course]
    assert joined(seeded) == joined(course) == [arguments for _, arguments in STEP.calls]
    assert seeded == pieces(ScriptedModel(seed=123456))
    assert repr(ScriptedModel(seed=5)) == "ScriptedModel(inject=None, seed=5)"


def test_a_seeded_run_feeds_back_the_course_figures_on_its_own_repository(tmp_path):
    ctx = ToolContext(build_sandbox(tmp_path, seed=99))
    messages: list[dict] = []
    events = list(
        run_agent(QUESTION, ScriptedModel(seed=99), default_registry(), ctx, messages=messages)
    )
    sizes = [len(e.result.content) for e in events if isinstance(e, ToolFinished)]
    assert sizes == [50, 361, 386]
    assert isinstance(events[-1], AgentStopped) and events[-1].reason == "done"
    assert check_transcript(messages) is None
    assert all(c["id"].startswith("call_63_") for m in messages for c in m.get("tool_calls", []))
