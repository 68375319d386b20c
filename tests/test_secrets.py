"""An API key reaches the gateway's Authorization header and nowhere else a person could see it.

Not the CLI's output, the magic's, an exception (its message or anything chained to it), a repr, a
recording or a saved notebook, even when the gateway echoes the header back in an error body.
"""

import json
import os
import traceback
from dataclasses import replace
from pathlib import Path

import nbformat
import pytest
from gateway import Gateway, Reply, status_reply
from IPython.core.error import UsageError
from IPython.utils.capture import capture_output
from nbclient import NotebookClient
from nbformat.v4 import new_code_cell, new_notebook

import course_agent
from course_agent.app.settings import choose
from course_agent.protocol import GatewayError
from course_agent.providers.anthropic_wire import ANTHROPIC
from course_agent.providers.http import HttpModel
from course_agent.providers.openai_wire import OPENAI

KEY = "sk-test-SECRETS-0123456789-must-not-show"
QUESTION = [{"role": "user", "content": "hi"}]

# Leaky gateways: "{authorization}" becomes the header as received, "Bearer <key>".
ECHO_401 = '{"error": {"message": "Incorrect API key provided: {authorization}"}}'
ECHO_MIDSTREAM = 'event: error\ndata: {"error": {"message": "upstream saw {authorization}"}}\n\n'


def echoing_replies() -> list[Reply]:
    """Every way a gateway can echo the header: an error status, and an error mid-stream."""
    return [
        status_reply(401, ECHO_401, echo_authorization=True),
        # 501, not 500: a 500 would be retried, and the retry would not echo.
        status_reply(501, "proxy error for {authorization}", echo_authorization=True),
        Reply(parts=[ECHO_MIDSTREAM.encode()], echo_authorization=True),
    ]


def chain(error: BaseException) -> list[BaseException]:
    """The exception and everything reachable from it: its cause and its context, recursively."""
    found = []
    while error is not None and error not in found:
        found.append(error)
        error = error.__cause__ or error.__context__
    return found


def assert_no_key(*texts: str) -> None:
    for text in texts:
        assert KEY not in text
        assert "SECRETS-0123456789" not in text  # nor a recognisable part of it


# -- the clients: messages, chained exceptions, tracebacks, reprs --------------------------------


@pytest.mark.parametrize("reply", echoing_replies(), ids=["401", "501", "mid-stream"])
@pytest.mark.parametrize("wire", [OPENAI, ANTHROPIC], ids=["openai", "anthropic"])
def test_a_gateway_echoing_the_key_never_puts_it_in_the_exception(gateway, wire, reply):
    if wire is ANTHROPIC:  # x-api-key is not echoed by the helper: put the key in the body
        reply = replace(
            reply, parts=[p.replace(b"{authorization}", KEY.encode()) for p in reply.parts]
        )
    gateway.queue(reply)
    base_url = gateway.url.removesuffix("/v1") if wire is ANTHROPIC else gateway.url
    model = HttpModel(wire, base_url, KEY, "gpt-test", timeout=5, max_retries=0)
    with pytest.raises(GatewayError) as caught:
        list(model.stream(QUESTION, []))
    error = caught.value
    assert "[redacted]" in str(error)
    assert chain(error) == [error]  # nothing unredacted is kept behind it
    printed = "".join(traceback.format_exception(error))
    assert_no_key(str(error), repr(error), repr(error.args), printed, repr(model), model.label)


def test_a_key_glued_to_other_text_is_cut_too(gateway):
    gateway.queue(status_reply(400, f"bad request: /v1/chat?auth=Bearer%20{KEY}x&stream=1"))
    model = HttpModel(OPENAI, gateway.url, KEY, "gpt-test", timeout=5)
    with pytest.raises(GatewayError) as caught:
        list(model.stream(QUESTION, []))
    assert "auth=Bearer%20[redacted]x&stream=1" in str(caught.value)


@pytest.mark.parametrize("bad_key", [f"{KEY} ", f"{KEY}\n", f"{KEY}é", f"x {KEY}"])
def test_a_malformed_key_is_refused_without_showing_it(bad_key):
    with pytest.raises(GatewayError) as caught:
        HttpModel(OPENAI, "https://api.openai.com/v1", bad_key, "gpt-test")
    assert_no_key(str(caught.value), "".join(traceback.format_exception(caught.value)))


def test_setup_and_models_have_no_key_in_their_repr(tmp_path):
    for provider, variable in [("openai", "OPENAI_API_KEY"), ("anthropic", "ANTHROPIC_API_KEY")]:
        setup = choose(provider=provider, root=tmp_path, env={variable: KEY})
        assert_no_key(repr(setup), str(setup), setup.notice, setup.model.label)


# -- the CLI and the magic -----------------------------------------------------------------------


@pytest.mark.parametrize("reply", echoing_replies(), ids=["401", "501", "mid-stream"])
def test_the_cli_never_prints_the_key_nor_records_it(cli, tmp_path, reply):
    recording = tmp_path / "session.jsonl"
    with Gateway() as gateway:
        gateway.queue(reply)
        args = ["--base-url", gateway.url, "--record", str(recording), "hi"]
        done = cli(*args, env={"OPENAI_API_KEY": KEY})
    assert done.returncode == 1
    assert "[redacted]" in done.stdout
    assert_no_key(done.stdout, done.stderr, recording.read_text())


def test_the_cli_never_prints_a_key_the_gateway_echoes_as_the_models_text(cli, tmp_path):
    # A debugging proxy, or a hostile one, streams the request's header back as the answer: the
    # clients redact errors, and the terminal now cuts the key out of model text too.
    said = {"choices": [{"index": 0, "delta": {"content": "you sent {authorization}"}}]}
    done_chunk = {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
    parts = [f"data: {json.dumps(said)}\n\n", f"data: {json.dumps(done_chunk)}\n\n"]
    with Gateway() as gateway:
        gateway.queue(Reply(parts=[p.encode() for p in parts], echo_authorization=True))
        done = cli("--base-url", gateway.url, "hi", env={"OPENAI_API_KEY": KEY})
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "you sent Bearer [redacted]"
    assert_no_key(done.stdout, done.stderr)


def run_cell(shell, source):
    with capture_output() as captured:
        result = shell.run_cell(source)
    shown = captured.stdout + captured.stderr + json.dumps([o.data for o in captured.outputs])
    return shown, result.error_in_exec


def test_the_magic_never_shows_the_key(shell, monkeypatch, gateway):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    gateway.queue(*echoing_replies())
    for question in ["one", "two", "three"]:
        shown, error = run_cell(shell, f"%%agent --base-url {gateway.url}\n{question}")
        assert error is None and "[redacted]" in shown
        assert_no_key(shown)
    assert_no_key(
        repr(shell.magics),
        repr(shell.magics.conversation),
        repr(shell.magics.conversation.setup),
        json.dumps(shell.magics.conversation.messages),
    )


def test_a_malformed_key_in_the_magic_is_a_usage_error_without_it(shell, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", f"{KEY} pasted twice {KEY}")
    shown, error = run_cell(shell, "%%agent --base-url http://127.0.0.1:9/v1\nhi")
    assert isinstance(error, UsageError) and "OPENAI_API_KEY contains a space" in str(error)
    assert_no_key(shown, str(error))


# -- a saved notebook ----------------------------------------------------------------------------


def test_a_saved_notebook_holds_no_key(tmp_path, monkeypatch):
    """Run a notebook in a real kernel whose environment has the key, save it, and grep it."""
    for name in ["OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "MOCK", "INJECT", "COURSE_AGENT_MODEL"]:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    repo = str(Path(course_agent.__file__).parents[1])
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([repo, os.environ.get("PYTHONPATH", "")]))
    monkeypatch.setenv("IPYTHONDIR", str(tmp_path / "ipython"))
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(tmp_path / "runtime"))
    with Gateway() as gateway:
        gateway.queue(*echoing_replies(), status_reply(401, ECHO_401, echo_authorization=True))
        url = gateway.url
        notebook = new_notebook(
            cells=[
                new_code_cell("%load_ext course_agent"),
                new_code_cell(f"%%agent --base-url {url}\nwhy is the test red?"),
                new_code_cell(f"%%agent --base-url {url}\nand now?"),
                new_code_cell(f"%%agent --base-url {url}\nonce more"),
                new_code_cell("%agent_cost"),
                # The conversation's repr, as someone poking at the magics would display it.
                new_code_cell("get_ipython().magics_manager.registry['AgentMagics'].conversation"),
                # The client called directly, its GatewayError left to the notebook's traceback.
                new_code_cell(
                    "import os\n"
                    "from course_agent.providers.http import HttpModel\n"
                    "from course_agent.providers.openai_wire import OPENAI\n"
                    f"model = HttpModel(OPENAI, {url!r}, os.environ['OPENAI_API_KEY'], 'gpt')\n"
                    "list(model.stream([{'role': 'user', 'content': 'hi'}], []))"
                ),
            ],
            metadata={"kernelspec": {"name": "python3", "display_name": "Python 3"}},
        )
        client = NotebookClient(
            notebook,
            timeout=60,
            startup_timeout=60,
            kernel_name="python3",
            allow_errors=True,  # the last cell raises on purpose
            resources={"metadata": {"path": str(tmp_path)}},
        )
        client.execute()
    saved = tmp_path / "secrets.ipynb"
    nbformat.write(notebook, saved)
    text = saved.read_text()

    assert text.count("[redacted]") >= 4  # each echo was there, and cut out
    assert "GatewayError" in text  # the last cell's traceback was saved
    assert_no_key(text)
