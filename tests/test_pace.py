import pytest

from course_agent.notebook.pace import DEFAULT_PACE, MAX_PACE, PACE_VARIABLE, choose_pace, paced
from course_agent.offline.repository import QUESTION
from course_agent.offline.scripted import ScriptedModel
from course_agent.protocol import TextDelta, ToolCallDelta

MESSAGES = [{"role": "user", "content": QUESTION}]


def test_a_live_kernel_is_paced_by_default_and_anything_else_runs_at_full_speed():
    assert choose_pace(None, {}, live=True) == DEFAULT_PACE
    assert choose_pace(None, {}, live=False) == 0
    assert choose_pace(None, {PACE_VARIABLE: "0"}, live=True) == 0  # how tests turn it off
    assert choose_pace(0.2, {PACE_VARIABLE: "0"}, live=False) == 0.2  # the option wins


@pytest.mark.parametrize(
    ("given", "env", "message"),
    [
        (-1.0, {}, "--pace must be between 0 and 2.0 seconds, not -1.0"),
        (float("nan"), {}, "--pace must be between 0 and"),
        (None, {PACE_VARIABLE: "fast"}, "COURSE_AGENT_PACE='fast' is not a number of seconds"),
        (None, {PACE_VARIABLE: "60"}, f"COURSE_AGENT_PACE must be between 0 and {MAX_PACE}"),
    ],
)
def test_a_bad_pace_names_the_value_and_the_range(given, env, message):
    with pytest.raises(ValueError, match="^" + message.replace("(", r"\(").replace(".", r"\.")):
        choose_pace(given, env, live=True)


def test_a_paced_model_waits_before_each_word_and_fragment_and_changes_nothing(monkeypatch):
    naps = []
    monkeypatch.setattr("course_agent.notebook.pace.time.sleep", naps.append)
    plain = list(ScriptedModel().stream(MESSAGES, tools=[]))
    slow = list(paced(ScriptedModel(), 0.05).stream(MESSAGES, tools=[]))
    assert slow == plain
    pieces = [e for e in plain if isinstance(e, (TextDelta, ToolCallDelta))]
    assert naps == [0.05] * len(pieces)
    assert len(pieces) > 20


def test_no_pace_is_the_model_itself():
    model = ScriptedModel()
    assert paced(model, 0) is model
    assert paced(model, 0.1).label == model.label
