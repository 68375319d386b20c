"""settings: where the key, the gateway and the options come from, and what is refused.

Unit tests on `choose` and `add_model_options` (`read_environment`: test_environment.py); the CLI
and the magic are driven for real in test_cli.py and test_magics.py.
"""

import argparse
from pathlib import Path

import pytest

from course_agent.app.settings import DEFAULT_BASE_URL, add_model_options, choose
from course_agent.protocol import GatewayError, ToolContext
from course_agent.safety import redaction

KEY = "sk-test-SETTINGS-0123456789-never-shown"
FILE_KEY = "sk-test-FROM-DOTENV-0123456789"


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A working folder inside a parent folder, the shell's settings cleared, cwd set to it."""
    for name in ["OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"]:
        monkeypatch.delenv(name, raising=False)
    for name in ["MOCK", "INJECT", "COURSE_AGENT_MODEL", "COURSE_AGENT_TIMEOUT"]:
        monkeypatch.delenv(name, raising=False)
    work = tmp_path / "parent" / "work"
    work.mkdir(parents=True)
    monkeypatch.chdir(work)
    return work


# -- the first line: the gateway, and where its URL and key came from ----------------------------


def test_the_first_line_names_the_default_gateway_and_the_keys_variable(tmp_path):
    setup = choose(env={"OPENAI_API_KEY": KEY}, root=tmp_path)
    assert setup.origin == (
        f"gateway {DEFAULT_BASE_URL} (default), key from OPENAI_API_KEY in the environment"
    )


def test_the_first_line_says_a_dotenv_chose_url_and_key(folder):
    (folder / ".env").write_text(f"OPENAI_API_KEY={FILE_KEY}\nOPENAI_BASE_URL=http://gw/v1/\n")
    setup = choose(root=folder)
    dotenv = folder / ".env"
    assert setup.origin == (
        f"gateway http://gw/v1 (OPENAI_BASE_URL in {dotenv}), key from OPENAI_API_KEY in {dotenv}"
    )
    assert FILE_KEY not in setup.origin + setup.notice + repr(setup)


def test_the_first_line_names_an_anthropic_gateway_given_on_the_command_line(tmp_path):
    env = {"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": "http://ignored"}
    setup = choose(provider="anthropic", base_url="http://proxy/", env=env, root=tmp_path)
    assert setup.origin == (
        "gateway http://proxy (--base-url), key from ANTHROPIC_API_KEY in the environment"
    )


def test_offline_there_is_no_gateway_line(tmp_path):
    setup = choose(mock=True, env={"OPENAI_API_KEY": KEY}, root=tmp_path)
    assert setup.origin == ""
    assert setup.notice == f"Offline: the scripted model on {tmp_path}"


# -- a gateway chosen by a file does not get a key from the shell --------------------------------


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_dotenv_gateway_never_receives_the_shells_key(folder, monkeypatch, provider):
    prefix = provider.upper()
    monkeypatch.setenv(f"{prefix}_API_KEY", KEY)
    (folder / ".env").write_text(f"{prefix}_BASE_URL=http://attacker.example/v1\n")
    with pytest.raises(ValueError) as refused:
        choose(provider=provider, root=folder)
    message = str(refused.value)
    assert message.startswith(
        f"{prefix}_BASE_URL comes from {folder / '.env'} but {prefix}_API_KEY from the environment"
    )
    assert "--base-url" in message and "\n" not in message and KEY not in message


def test_the_shells_gateway_or_a_flag_may_receive_the_shells_key(folder, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    (folder / ".env").write_text("OPENAI_BASE_URL=http://attacker.example/v1\n")
    flagged = choose(base_url="http://mine.example/v1", root=folder)
    assert flagged.origin.startswith("gateway http://mine.example/v1 (--base-url), ")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://shell.example/v1")
    exported = choose(root=folder)
    assert exported.origin.startswith(
        "gateway http://shell.example/v1 (OPENAI_BASE_URL in the environment), "
    )


def test_the_shells_gateway_may_receive_a_key_from_the_dotenv(folder, monkeypatch):
    # Refused before, saying the URL came from the .env: the shell chose the gateway, and the
    # working folder's own key going to it sends nobody's key anywhere they did not choose.
    monkeypatch.setenv("OPENAI_BASE_URL", "http://shell.example/v1")
    (folder / ".env").write_text(f"OPENAI_API_KEY={FILE_KEY}\n")
    setup = choose(root=folder)
    assert setup.origin == (
        "gateway http://shell.example/v1 (OPENAI_BASE_URL in the environment), "
        f"key from OPENAI_API_KEY in {folder / '.env'}"
    )


@pytest.mark.parametrize(
    "url",
    [
        "http://gw.example/v1\x1b]0;pwned\x07",
        "http://gw.example/v1\nHost: attacker.example",
        "http://gw.example/v1\u202e",
        "http://bob:hunter2pass@gw.example/v1",
        "http://gw.example/v1?api-key=hunter2pass",
    ],
)
def test_a_dotenv_gateway_url_with_controls_or_credentials_is_refused_in_one_line(folder, url):
    (folder / ".env").write_text(f'OPENAI_API_KEY={FILE_KEY}\nOPENAI_BASE_URL="{url}"\n')
    with pytest.raises((ValueError, GatewayError)) as refused:
        choose(root=folder)
    message = str(refused.value)
    assert message.startswith("OPENAI_BASE_URL ") and "\n" not in message
    assert not {"\x1b", "\x07", "\u202e"} & set(message)
    assert "hunter2pass" not in message and FILE_KEY not in message


@pytest.fixture
def remembered():
    """The keys settings remember during the test (and the registry as it was, after)."""
    before = set(redaction._KNOWN)
    redaction._KNOWN.clear()
    yield redaction._KNOWN
    redaction._KNOWN.clear()
    redaction._KNOWN.update(before)


def test_a_placeholder_key_too_short_to_be_secret_is_not_cut_from_results(tmp_path, remembered):
    # A repository's .env can set ANTHROPIC_API_KEY=e; cutting every "e" out of every file the
    # tools read would wreck the run. Local gateways' placeholders ("EMPTY", "x") are no secret.
    choose(env={"OPENAI_API_KEY": KEY, "ANTHROPIC_API_KEY": "e"}, root=tmp_path)
    assert remembered == {KEY}
    choose(env={"OPENAI_API_KEY": "EMPTY"}, root=tmp_path)
    assert remembered == {KEY}


# -- no key: one line, not a silent offline run ---------------------------------------------------


@pytest.mark.parametrize(
    ("provider", "variable"),
    [(None, "OPENAI_API_KEY"), ("openai", "OPENAI_API_KEY"), ("anthropic", "ANTHROPIC_API_KEY")],
)
def test_no_key_is_one_line_naming_the_variable_and_mock(tmp_path, provider, variable):
    other = {"OPENAI_API_KEY": "sk-o"} if provider == "anthropic" else {}
    with pytest.raises(ValueError) as missing:
        choose(provider=provider, env=other, root=tmp_path)
    message = str(missing.value)
    assert message.startswith(f"no API key: set {variable}")
    assert ".env" in message and "--mock" in message and "\n" not in message


@pytest.mark.parametrize(
    "options",
    [{"mock": True}, {"inject": "bad_args"}, {"env": {"MOCK": "1"}}, {"env": {"MOCK": "yes"}}],
)
def test_mock_and_inject_still_run_offline_without_a_key(tmp_path, options):
    setup = choose(**{"env": {}, **options}, root=tmp_path)
    assert setup.notice == f"Offline: the scripted model on {tmp_path}"


def test_offline_with_only_an_anthropic_key_speaks_the_anthropic_wire_as_before(tmp_path):
    setup = choose(mock=True, env={"ANTHROPIC_API_KEY": KEY}, root=tmp_path)
    assert repr(setup.model) == "ScriptedModel(inject=None, wire='anthropic')"


# -- the keys are remembered for every edge to cut, and shown nowhere ---------------------------


def test_every_configured_key_is_remembered_even_offline(tmp_path, remembered):
    env = {"OPENAI_API_KEY": f" {KEY} ", "ANTHROPIC_API_KEY": FILE_KEY}
    for setup in [choose(env=env, root=tmp_path), choose(mock=True, env=env, root=tmp_path)]:
        context = setup.tool_context()
        assert context == ToolContext(tmp_path)
        assert remembered == {KEY, FILE_KEY}
        assert KEY not in repr(setup) + repr(context)


# -- one declaration of the model options ---------------------------------------------------------


def test_add_model_options_declares_every_model_option_with_true_help():
    parser = argparse.ArgumentParser()
    add_model_options(parser)
    declared = {action.dest: action for action in parser._actions if action.dest != "help"}
    assert set(declared) == {
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
    assert "ANTHROPIC_BASE_URL" in declared["base_url"].help
    assert "no OPENAI_API_KEY" not in parser.format_help()
    args = parser.parse_args(["--provider", "anthropic", "--max-turns", "3", "--record", "f"])
    assert (args.provider, args.max_turns, args.record) == ("anthropic", 3, Path("f"))
