"""The magics through a real IPython shell, and a notebook through a real kernel (nbclient)."""

import json
import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from gateway import fixture_reply, sse_reply, status_reply
from IPython.core.error import UsageError
from IPython.utils.capture import capture_output
from jupyter_client import KernelManager
from nbclient import NotebookClient
from nbconvert import HTMLExporter
from nbformat.sign import NotebookNotary
from scripted_gateway import ScriptedGateway

from course_agent.loop import check_transcript
from course_agent.notebook.saving import SAVE_STATIC
from course_agent.offline.repository import QUESTION, build_sandbox
from course_agent.registry import default_registry
from course_agent.render.cost import cost_lines, request_costs
from course_agent.selftest.lab import run_selftest

REPO = Path(__file__).resolve().parent.parent
NOTEBOOKS = Path(__file__).parent / "notebooks"
FAKE_KEY = "sk-test-FAKE-KEY-0123456789-do-not-print"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
SETTINGS = ["OPENAI_API_KEY", "OPENAI_BASE_URL", "COURSE_AGENT_MODEL", "MOCK", "INJECT"]


def run(ipython, source):
    """Run a cell as a user would; return what was printed and displayed, and the error."""
    with capture_output() as captured:
        result = ipython.run_cell(source)
    return captured, result.error_in_exec


def closed_port() -> int:
    """A loopback port nothing listens on: connecting is refused at once."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def everything(captured) -> str:
    return captured.stdout + captured.stderr + json.dumps([o.data for o in captured.outputs])


def test_load_ext_registers_every_magic(shell):
    assert shell.find_cell_magic("agent") is not None
    for name in ["agent_tools", "agent_selftest", "agent_demo", "agent_cost"]:
        assert shell.find_line_magic(name) is not None, name


def heads(plain: list[str]) -> list[str]:
    """`v glob({...}) fed back ...` -> `v glob`: the mark and the tool of each card line."""
    return [line.split("(", 1)[0] for line in plain]


def test_mock_shows_glob_grep_read_file_cards_then_the_conclusion(shell):
    captured, error = run(shell, f"%%agent --mock\n{QUESTION}")
    assert error is None
    plain = [output.data["text/plain"] for output in captured.outputs]
    assert heads(plain) == ["v glob", "v grep", "v read_file"]
    assert plain[0] == 'v glob({"pattern":"**/*.js"}) fed back 50 chars - src/calc.js'
    results = [m["content"] for m in shell.magics.conversation.messages if m["role"] == "tool"]
    fed_back = [re.search(r"\) fed back (\d+) chars", line).group(1) for line in plain]
    assert fed_back == [str(len(r)) for r in results]
    for output in captured.outputs:
        assert set(output.data) == {"text/plain", "text/html"}
        assert output.data["text/html"].startswith("<details")
    assert captured.stdout.startswith("Offline: the scripted model on ")
    assert captured.stdout.endswith("the test goes green.\n")
    assert captured.stderr == ""


def test_the_conversation_goes_on_until_new_or_a_change_of_model_or_root(shell, tmp_path):
    run(shell, f"%%agent --mock\n{QUESTION}")
    first = shell.magics.conversation
    assert len(first.messages) == 8  # system, user, 3 assistant turns, 3 tool results
    captured, _ = run(shell, "%%agent --mock\nand the report?")
    assert shell.magics.conversation is first
    assert len(first.messages) > 8
    assert captured.stdout.startswith("(continuing: 8 messages so far; --new starts afresh)")

    run(shell, f"%%agent --mock --new\n{QUESTION}")
    assert shell.magics.conversation is not first
    assert len(shell.magics.conversation.messages) == 8

    other = tmp_path / "other"
    other.mkdir()
    run(shell, f"%%agent --mock --root {other}\n{QUESTION}")
    assert shell.magics.conversation.setup.root == other
    assert len(shell.magics.conversation.messages) == 8


def test_each_turns_fragments_are_kept_until_the_conversation_ends(shell):
    run(shell, f"%%agent --mock\n{QUESTION}")
    first = shell.magics.conversation.fragments
    assert [len(turn.deltas) for turn in first.turns] == [15, 12, 0]
    turn = first.turns[0]
    run(shell, "%%agent --mock\nand the report?")  # the same conversation goes on
    assert shell.magics.conversation.fragments is first and len(first.turns) > 3
    run(shell, f"%%agent --mock --new\n{QUESTION}")
    assert first.turns == [] and first.kept == 0
    assert turn.deltas == [] and "has ended" in turn.forgotten
    assert len(shell.magics.conversation.fragments.turns) == 3


def test_inject_bad_args_feeds_the_failures_back_and_finishes(shell):
    captured, error = run(shell, "%%agent --inject bad_args\nfix the test")
    assert error is None
    plain = [output.data["text/plain"] for output in captured.outputs]
    assert plain[0].startswith('x edit_file({"path":"src/calc.js","old":"a / b"}) fed back ')
    assert "there is no tool named edit_file" in plain[0]
    assert sum(line.startswith("x ") for line in plain) >= 2
    assert plain[-1].startswith("v read_file")
    assert captured.stderr == ""


def test_running_out_of_turns_is_one_line(shell):
    captured, error = run(shell, f"%%agent --mock --max-turns 1\n{QUESTION}")
    assert error is None
    assert captured.stderr == (
        "! stopped after 1 turns without a final answer; ask again or raise --max-turns\n"
    )
    assert len(captured.outputs) == 2  # glob and grep ran; read_file was never asked for


def test_an_interrupt_keeps_a_valid_conversation(shell, monkeypatch):
    def interrupt(card):
        raise KeyboardInterrupt  # as Ctrl-C would, while the first card is being shown

    monkeypatch.setattr("course_agent.notebook.magics.display", interrupt)
    captured, error = run(shell, f"%%agent --mock\n{QUESTION}")
    assert error is None
    assert captured.stderr == "! interrupted; the conversation is kept and can go on\n"
    messages = shell.magics.conversation.messages
    assert check_transcript(messages) is None  # the unfinished call still got its result
    assert messages[-1]["content"] == "not run: the turn was interrupted before this call"


MISUSE = {
    "%%agent --bogus\nq": "%%agent: unrecognized arguments: --bogus",
    "%%agent --max-turns 0\nq": "--max-turns must be at least 1",
    "%%agent --max-turns many\nq": "argument --max-turns: invalid int value: 'many'",
    "%%agent --root no/such/dir\nq": "--root no/such/dir is not a directory",
    "%%agent --mock\n   \n": "the cell has no question",
    "%%agent --inject typo\nq": "argument --inject: invalid choice: 'typo'",
    "%%agent --provider gemini\nq": "argument --provider: invalid choice: 'gemini'",
    "%%agent --root 'unclosed\nq": "No closing quotation",
    "%%agent --replay missing.jsonl\nq": "cannot read recording missing.jsonl",
    "%agent_selftest --accumulator Missing": "--accumulator Missing: no such name in this notebook",
    "%agent_selftest --truncate a_number": "--truncate a_number is not callable",
    "%agent_selftest --run-call math.nothing": "--run-call math.nothing: math has no nothing",
    "%agent_demo mistral": "argument stream: invalid choice: 'mistral'",
    "%agent_tools --verbose": "%agent_tools: unrecognized arguments: --verbose",
    "%agent_cost": "%agent_cost: no conversation yet",
    "%%agent --mock --pace -1\nq": "%%agent: --pace must be between 0 and 2.0 seconds, not -1.0",
    "%%agent --mock --pace soon\nq": "argument --pace: invalid float value: 'soon'",
}


@pytest.mark.parametrize("source", MISUSE)
def test_misuse_is_one_usage_error_line(shell, source):
    shell.run_cell("import math\na_number = 3")
    captured, error = run(shell, source)
    assert isinstance(error, UsageError)
    assert MISUSE[source] in str(error)
    assert captured.stderr == f"UsageError: {error}\n"
    assert "\n" not in str(error)
    assert captured.outputs == []


def test_braces_and_dollars_are_left_alone(shell):
    shell.user_ns["x"] = "EXPANDED"
    question = "what does {x} cost in $x and $$x?"
    run(shell, f"%%agent --mock\n{question}")
    assert shell.magics.conversation.messages[1]["content"] == question
    _, error = run(shell, "%%agent --mock --root {x}\nq")
    assert str(error).startswith("%%agent: --root {x} is not a directory")


def test_a_missing_key_is_one_usage_error_naming_the_variable_or_mock(shell):
    captured, error = run(shell, f"%%agent\n{QUESTION}")
    assert isinstance(error, UsageError)
    assert str(error).startswith("%%agent: no API key: set OPENAI_API_KEY")
    assert ".env" in str(error) and "--mock" in str(error) and "\n" not in str(error)
    assert captured.stderr == f"UsageError: {error}\n"
    assert captured.outputs == [] and shell.magics.conversation is None  # nothing ran offline


def test_a_dotenv_above_the_notebooks_folder_is_not_read(shell, tmp_path, monkeypatch):
    gateway = f"http://127.0.0.1:{closed_port()}/v1"
    (tmp_path / ".env").write_text(f"OPENAI_API_KEY={FAKE_KEY}\nOPENAI_BASE_URL={gateway}\n")
    (tmp_path / "notebooks").mkdir()
    monkeypatch.chdir(tmp_path / "notebooks")
    captured, error = run(shell, f"%%agent\n{QUESTION}")
    assert isinstance(error, UsageError) and "no API key" in str(error)
    assert FAKE_KEY not in everything(captured) + str(error)


def test_the_first_line_names_the_gateway_and_where_url_and_key_came_from(shell, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    gateway = f"http://127.0.0.1:{closed_port()}/v1"
    captured, error = run(shell, f"%%agent --base-url {gateway}\n{QUESTION}")
    assert error is None
    assert captured.stdout.splitlines()[0] == (
        f"gateway {gateway} (--base-url), key from OPENAI_API_KEY in the environment"
    )
    assert FAKE_KEY not in everything(captured)


def test_a_gateway_from_dotenv_gets_no_key_from_the_environment(shell, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    (tmp_path / ".env").write_text("OPENAI_BASE_URL=http://127.0.0.1:9/v1\n")
    captured, error = run(shell, f"%%agent\n{QUESTION}")
    assert isinstance(error, UsageError)
    assert str(error).startswith(
        f"%%agent: OPENAI_BASE_URL comes from {tmp_path / '.env'} but OPENAI_API_KEY from "
        "the environment"
    )
    assert FAKE_KEY not in everything(captured) + str(error)


def model_options(parser) -> dict:
    """Each option as declared: its flags, default, type, choices, metavar and help."""
    return {
        action.dest: (
            action.option_strings,
            action.default,
            action.type,
            action.choices,
            action.metavar,
            action.help,
            action.nargs,
        )
        for action in parser._actions
        # --new and --pace are the magic's own: a conversation across cells, a class watching
        if action.dest not in ("help", "question", "selftest", "new", "pace")
    }


def test_the_cli_and_the_magic_declare_the_same_model_options():
    from course_agent.cli import build_parser
    from course_agent.notebook.magics import AGENT

    cli_options, magic_options = model_options(build_parser()), model_options(AGENT)
    assert cli_options == magic_options
    assert set(magic_options) == {
        "mock",
        "provider",
        "model",
        "base_url",
        "root",
        "max_turns",
        "record",
        "replay",
        "inject",
        "deadline",
    }
    line = "--mock --provider anthropic --model m --base-url http://u --root r --max-turns 2"
    words = [*line.split(), "--record", "a", "--replay", "b", "--inject", "bad_args"]
    cli_args = vars(build_parser().parse_args(words))
    magic_args = vars(AGENT.parse_line(" ".join(words)))
    assert {k: cli_args[k] for k in magic_options} == {k: magic_args[k] for k in magic_options}


def test_an_unreachable_gateway_is_one_line_without_the_key(shell, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    gateway = f"http://127.0.0.1:{closed_port()}/v1"
    captured, error = run(shell, f"%%agent --base-url {gateway}\n{QUESTION}")
    assert error is None
    assert captured.stderr.count("\n") == 1
    assert captured.stderr.startswith(f"! cannot connect to gateway {gateway}")
    assert "Traceback" not in everything(captured)
    assert FAKE_KEY not in everything(captured)
    assert FAKE_KEY not in repr(shell.magics.conversation)


def test_a_key_from_dot_env_is_used_and_never_shown(shell, tmp_path):
    gateway = f"http://127.0.0.1:{closed_port()}/v1"
    (tmp_path / ".env").write_text(f"OPENAI_API_KEY={FAKE_KEY}\nOPENAI_BASE_URL={gateway}\n")
    captured, _ = run(shell, f"%%agent\n{QUESTION}")
    assert captured.stderr.startswith(f"! cannot connect to gateway {gateway}")
    assert FAKE_KEY not in everything(captured)


def test_a_gateway_status_names_the_status_and_the_gateway(shell, monkeypatch, gateway):
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    body = '{"error": {"message": "bad key {authorization}", "code": "invalid_api_key"}}'
    gateway.queue(status_reply(401, body, echo_authorization=True))  # a leaky gateway
    captured, _ = run(shell, f"%%agent --base-url {gateway.url}\n{QUESTION}")
    assert captured.stderr.count("\n") == 1
    assert "401" in captured.stderr
    assert gateway.url in captured.stderr
    assert FAKE_KEY not in everything(captured)


def test_a_live_run_is_recorded_and_replayed_with_the_same_cards(shell, monkeypatch, gateway):
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    root = Path.cwd() / "repo"
    root.mkdir()
    (root / "a.txt").write_text("hello from a.txt\n")
    answer = {
        "choices": [{"index": 0, "delta": {"content": "It says hello."}, "finish_reason": "stop"}]
    }
    gateway.queue(
        fixture_reply("vercel-ai_claude-openai-compat_index1_after_text.sse"),  # index from 1
        sse_reply(f"data: {json.dumps(answer)}\n\n", "data: [DONE]\n\n"),
    )
    line = f"--base-url {gateway.url} --root {root} --record session.jsonl"
    live, _ = run(shell, f"%%agent {line}\nwhat is in a.txt?")
    assert heads([o.data["text/plain"] for o in live.outputs]) == ["v read_file"]
    assert "a.txt" in live.outputs[0].data["text/plain"]
    assert live.stdout.endswith("Reading it.\nIt says hello.\n")
    assert FAKE_KEY not in Path("session.jsonl").read_text()

    replayed, _ = run(shell, f"%%agent --replay session.jsonl --root {root}\nwhat is in a.txt?")
    assert [o.data for o in replayed.outputs] == [o.data for o in live.outputs]


def test_provider_anthropic_asks_the_messages_api(shell, monkeypatch, tmp_path):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-this-one")  # both keys: --provider decides
    monkeypatch.setenv("ANTHROPIC_API_KEY", FAKE_KEY)
    root = build_sandbox(tmp_path)
    with ScriptedGateway(wire="anthropic") as gateway:
        line = f"--provider anthropic --base-url {gateway.root_url} --root {root}"
        captured, error = run(shell, f"%%agent {line}\n{QUESTION}")
    assert error is None and captured.stderr == ""
    plain = [output.data["text/plain"] for output in captured.outputs]
    assert heads(plain) == ["v glob", "v grep", "v read_file"]
    assert captured.stdout.endswith("the test goes green.\n")
    assert [request.path for request in gateway.requests] == ["/v1/messages"] * 3
    assert {request.headers["x-api-key"] for request in gateway.requests} == {FAKE_KEY}
    assert shell.magics.conversation.choice["provider"] == "anthropic"


def test_agent_tools_shows_exactly_what_the_model_sees(shell):
    captured, _ = run(shell, "%agent_tools")
    (output,) = captured.outputs
    assert json.loads(output.data["text/plain"]) == default_registry().list()


def test_agent_selftest_runs_the_seven_checks(shell):
    captured, _ = run(shell, "%agent_selftest")
    assert captured.stdout == f"{run_selftest()}\n"
    assert len(captured.stdout.splitlines()) == 8


def test_agent_selftest_grades_implementations_from_the_notebook(shell):
    shell.run_cell(
        "class ArrivalOrder:\n"
        "    '''A student's first try: joins fragments in arrival order.'''\n"
        "    def __init__(self):\n"
        "        self.calls = []\n"
        "    def push(self, delta):\n"
        "        if delta.id:\n"
        "            self.calls.append([delta.id, delta.name, ''])\n"
        "        self.calls[-1][2] += delta.args_delta or ''\n"
        "    def drain(self):\n"
        "        from course_agent import ToolCall\n"
        "        return [ToolCall(*call) for call in self.calls]\n"
        "from course_agent import execute_call, truncate_result\n"
    )
    captured, error = run(
        shell,
        "%agent_selftest --accumulator ArrivalOrder --run-call execute_call "
        "--truncate truncate_result",
    )
    assert error is None
    lines = captured.stdout.splitlines()
    assert lines[2].startswith("x 3. fragment merging: the course's parallel call")
    assert "expected index order ['call_a', 'call_b']" in lines[2]
    assert (
        lines[1:2] + lines[3:5]
        == str(run_selftest()).splitlines()[1:2] + str(run_selftest()).splitlines()[3:5]
    )


@pytest.mark.parametrize("line", ["", "interleaved", "parallel --static"])
def test_agent_demo_without_a_kernel_shows_the_static_table(shell, line):
    captured, error = run(shell, f"%agent_demo {line}")
    assert error is None
    (output,) = captured.outputs
    assert set(output.data) == {"text/plain", "text/html"}
    assert output.data["text/html"].count("<tr>") > 3


def test_agent_cost_shows_the_figures_of_the_conversation(shell):
    run(shell, f"%%agent --mock\n{QUESTION}")
    captured, _ = run(shell, "%agent_cost")
    (output,) = captured.outputs
    messages = shell.magics.conversation.messages
    assert output.data["text/plain"] == "\n".join(cost_lines(request_costs(messages)))
    assert "request 3" in output.data["text/html"]


def test_the_core_imports_no_face():
    code = (
        "import sys, course_agent, course_agent.cli, course_agent.render.cost, "
        "course_agent.app.settings, course_agent.selftest.lab\n"
        "faces = sorted(m for m in sys.modules if m.split('.')[0] in ('IPython', 'ipywidgets'))\n"
        "print(faces)"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60
    )
    assert done.stdout == "[]\n", done.stderr


# -- a real kernel: execute, save, and read back as an untrusted reader ---------------------------


def execute(name: str, tmp_path: Path, monkeypatch, **options) -> nbformat.NotebookNode:
    """Run tests/notebooks/`name` in a fresh kernel in tmp_path; return it as saved and reread."""
    for variable in SETTINGS:
        monkeypatch.delenv(variable, raising=False)
    # The kernel sees a key and a gateway that refuses connections: the last cell of the tour.
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    monkeypatch.setenv("OPENAI_BASE_URL", f"http://127.0.0.1:{closed_port()}/v1")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]))
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setenv("IPYTHONDIR", str(tmp_path / "ipython"))
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(tmp_path / "runtime"))
    notebook = nbformat.read(NOTEBOOKS / name, as_version=4)
    client = NotebookClient(
        notebook,
        timeout=60,
        startup_timeout=60,
        kernel_name="python3",
        resources={"metadata": {"path": str(tmp_path)}},
        **options,
    )
    client.execute()
    saved = tmp_path / name
    nbformat.write(notebook, saved)
    return nbformat.read(saved, as_version=4)


def outputs_of(notebook, source_start: str) -> list:
    return [
        output
        for cell in notebook.cells
        if cell.cell_type == "code" and cell.source.startswith(source_start)
        for output in cell.outputs
    ]


def test_a_saved_notebook_reads_without_widgets_or_trust(tmp_path, monkeypatch):
    notebook = execute("magics_tour.ipynb", tmp_path, monkeypatch)
    text = (tmp_path / "magics_tour.ipynb").read_text()
    assert "widgets" not in notebook.metadata
    assert WIDGET_VIEW not in text  # nbclient is no notebook frontend: static cards, as before
    assert FAKE_KEY not in text
    assert "Traceback" not in text

    cards = [o for o in outputs_of(notebook, "%%agent --mock") if o.output_type == "display_data"]
    assert heads([o.data["text/plain"] for o in cards])[:4] == [
        "v glob",
        "v grep",
        "v read_file",
        "x edit_file",
    ]
    for card in cards:
        assert set(card.data) == {"text/plain", "text/html"}
        assert card.data["text/html"].startswith("<details")
    streams = [
        o.text for o in outputs_of(notebook, "%%agent --mock\n") if o.output_type == "stream"
    ]
    assert "".join(streams).endswith("the test goes green.\n")

    (failure,) = [o for o in outputs_of(notebook, "%%agent --new") if o.name == "stderr"]
    assert failure.text.startswith("! cannot connect to gateway http://127.0.0.1:")
    assert failure.text.count("\n") == 1

    assert not NotebookNotary(data_dir=str(tmp_path)).check_signature(notebook)  # untrusted
    exported, _ = HTMLExporter().from_notebook_node(notebook)
    assert exported.count("<details") >= 3 + 3  # three tool cards and three tool schemas
    assert "fed back" in exported


def test_outside_a_notebook_frontend_the_demo_is_its_static_table(tmp_path, monkeypatch):
    notebook = execute("fragments_demo.ipynb", tmp_path, monkeypatch)
    for source in ["%agent_demo claude", "%agent_demo interleaved"]:
        (output,) = outputs_of(notebook, source)
        assert set(output.data) == {"text/html", "text/plain"}
        assert "<table" in output.data["text/html"]
    exported, _ = HTMLExporter().from_notebook_node(notebook)
    assert exported.count("by subscript from 0") >= 2  # nbconvert shows both static tables


# -- a kernel driven as JupyterLab drives it: each cell sent with its cellId ----------------------


def run_as_jupyterlab(cells: list[str], tmp_path: Path, monkeypatch) -> list[list[dict]]:
    """Run `cells` in a fresh kernel, each sent with a cellId as JupyterLab sends it; return the
    iopub messages each one caused (display_data, update_display_data, comm_open, ...)."""
    for variable in SETTINGS:
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]))
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setenv("IPYTHONDIR", str(tmp_path / "ipython"))
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(tmp_path / "runtime"))
    manager = KernelManager(kernel_name="python3")
    manager.start_kernel(cwd=str(tmp_path))
    client = manager.client()
    client.start_channels()
    try:
        client.wait_for_ready(timeout=60)
        replies = []
        for number, code in enumerate(cells):
            content = {"code": code, "silent": False, "store_history": True,
                       "user_expressions": {}, "allow_stdin": False}  # fmt: skip
            request = client.session.msg(
                "execute_request", content, metadata={"cellId": f"c{number}"}
            )
            client.shell_channel.send(request)
            messages = []
            while True:
                message = client.get_iopub_msg(timeout=60)
                if message["parent_header"].get("msg_id") != request["header"]["msg_id"]:
                    continue
                if message["msg_type"] == "status":
                    if message["content"]["execution_state"] == "idle":
                        break
                    continue
                messages.append(message)
            replies.append(messages)
        return replies
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)


def test_in_jupyterlab_each_card_is_one_live_display_updated_in_place(tmp_path, monkeypatch):
    _, run, demo = run_as_jupyterlab(
        ["%load_ext course_agent", f"%%agent --mock --pace 0\n{QUESTION}", "%agent_demo claude"],
        tmp_path,
        monkeypatch,
    )
    shown = [m for m in run if m["msg_type"] == "display_data"]
    updated = [m for m in run if m["msg_type"] == "update_display_data"]
    assert [m["content"]["data"]["text/plain"] for m in shown] == [
        '> glob({"pattern":"**/*.js"}) running',
        '> grep({"pattern":"divide\\\\("}) running',
        '> read_file({"path":"src/calc.js"}) running',
    ]
    assert heads([m["content"]["data"]["text/plain"] for m in updated]) == [
        "v glob",
        "v grep",
        "v read_file",
    ]
    for first, last in zip(shown, updated, strict=True):  # the same display, the same widget
        assert first["content"]["transient"] == last["content"]["transient"]
        assert first["content"]["data"][WIDGET_VIEW] == last["content"]["data"][WIDGET_VIEW]
        assert set(last["content"]["data"]) == {WIDGET_VIEW, "text/plain", "text/html"}
        assert last["content"]["metadata"] == SAVE_STATIC  # saved as the static card
    assert any(m["msg_type"] == "comm_open" for m in run)  # the widgets themselves

    (table,) = [m["content"] for m in demo if m["msg_type"] == "display_data"]
    assert {WIDGET_VIEW, "text/html", "text/plain"} == set(table["data"])
    assert "<table" in table["data"]["text/html"] and table["metadata"] == SAVE_STATIC


# -- hole 7: a cell's run has a deadline too -------------------------------------------------------


def test_a_cell_stops_at_its_deadline_in_one_line_and_the_chat_goes_on(shell):
    # Paced at 0.3 s a word, the offline answer takes many seconds: the deadline comes first.
    captured, error = run(shell, "%%agent --mock --pace 0.3 --deadline 0.5\nWhy is it red?")
    assert error is None
    stop = [line for line in captured.stderr.splitlines() if line.startswith("! ")]
    assert stop == [
        "! stopped: the run took more than 0.5 s (--deadline, or COURSE_AGENT_RUN_DEADLINE); "
        "ask again to go on from here"
    ]
    captured, error = run(shell, "%%agent --mock --pace 0 --deadline 60\nWhy is it red?")
    assert error is None and "(continuing:" in captured.stdout
    assert "Math.floor" in captured.stdout  # the same question asked again went on and finished


def test_a_bad_deadline_is_a_usage_error(shell):
    _, error = run(shell, "%%agent --mock --deadline -3\nq")
    assert isinstance(error, UsageError) and "--deadline -3.0 is not a number" in str(error)
