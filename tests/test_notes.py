"""The truncation note fits the tool it cuts (issue 30 item 5): read_file's says to page by
offset, glob's and grep's to narrow the pattern or lower the limit (they have no offset: a call
with one fails "Extra inputs are not permitted"). The lesson's truncate_result is unchanged."""

import json

from gateway import Gateway, Received, sse_reply

from course_agent.app.notes import NOTES, NotedRegistry
from course_agent.protocol import ToolCall, ToolContext
from course_agent.registry import default_registry
from course_agent.truncate import truncate_result

KEY = "sk-test-NOTES-0123456789abcdef"
LONG = "a-rather-long-folder-name-for-a-listing/with-a-long-file-name"


def tree(root):
    for number in range(400):
        path = root / f"{LONG}-{number:03}.txt"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("match me, a line long enough to fill grep's page quickly\n" * 3)
    (root / "big.txt").write_text("line of a long file\n" * 2000)
    return root


CALLS = {
    "glob": {"pattern": "**/*.txt", "limit": 400},
    "grep": {"pattern": "match", "limit": 500},
    "read_file": {"path": "big.txt", "limit": 2000},
}


def test_each_tool_gets_its_own_note(tmp_path):
    registry, ctx = NotedRegistry(default_registry()), ToolContext(tree(tmp_path))
    for name, args in CALLS.items():
        content = registry.execute(ToolCall("c1", name, json.dumps(args)), ctx).content
        advice = NOTES.get(name, "use offset for middle")
        assert f"chars cut; {advice}]" in content, name
        assert (name == "read_file") == ("offset" in content.split("chars cut;")[1][:40]), name


def test_the_lessons_note_and_figure_stay_the_courses():
    from course_agent.protocol import ToolResult

    cut = truncate_result(ToolResult("x" * 20000))
    assert len(cut.content) == 8054 and "use offset for middle" in cut.content


def two_turns(received: Received):
    if any(m["role"] == "tool" for m in received.body["messages"]):
        done = {"choices": [{"index": 0, "delta": {"content": "ok"}, "finish_reason": "stop"}]}
        return sse_reply(f"data: {json.dumps(done)}\n\n", "data: [DONE]\n\n")
    calls = [
        {"index": i, "id": f"c{i}", "function": {"name": name, "arguments": json.dumps(args)}}
        for i, (name, args) in enumerate(CALLS.items())
    ]
    chunk = {
        "choices": [{"index": 0, "delta": {"tool_calls": calls}, "finish_reason": "tool_calls"}]
    }
    return sse_reply(f"data: {json.dumps(chunk)}\n\n", "data: [DONE]\n\n")


def test_the_cli_sends_each_tool_its_own_note(cli, tmp_path):
    root = tree(tmp_path / "repo")
    with Gateway(two_turns) as gateway:
        done = cli("--base-url", gateway.url, "--root", str(root), "q", env={"OPENAI_API_KEY": KEY})
        sent = gateway.requests[-1].body["messages"]
    assert done.returncode == 0, done.stdout + done.stderr
    results = {m["tool_call_id"]: m["content"] for m in sent if m["role"] == "tool"}
    assert "chars cut; narrow the pattern or lower the limit]" in results["c0"]
    assert "chars cut; narrow the pattern, or the glob, or lower the limit]" in results["c1"]
    assert "chars cut; use offset for middle]" in results["c2"]
