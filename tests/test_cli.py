"""The command line as a user runs it: a real subprocess, real environment variables."""

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import SETTINGS
from gateway import Gateway, sse_reply

KEY = "sk-test-CLI-0123456789-never-printed"


def test_offline_question_shows_the_three_cards_in_order_and_concludes(cli):
    done = cli(env={"MOCK": "1"})
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    cards = [line for line in lines if line[:2] in ("> ", "v ", "x ")]
    assert cards == [
        '> glob({"pattern":"**/*.js"})',
        "v glob fed back 50 chars - src/calc.js",
        '> grep({"pattern":"divide\\\\("})',
        "v grep fed back 361 chars - src/calc.js:8:export function divide(a, b) {",
        '> read_file({"path":"src/calc.js"})',
        "v read_file fed back 386 chars - src/calc.js (lines 1-13 of 13)",
    ]
    assert "line 12 rounds down" in lines[-1]


def test_an_offline_run_leaves_no_folder_in_the_temporary_directory(cli, tmp_path):
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    done = cli(env={"MOCK": "1", "TMPDIR": str(temporary)})
    assert done.returncode == 0, done.stderr
    assert f"Offline: the scripted model on {temporary}" in done.stdout  # it was made there
    assert list(temporary.iterdir()) == []  # and removed at exit


def test_selftest_prints_seven_of_seven(cli):
    done = cli(env={"MOCK": "1", "SELFTEST": "1"})
    assert done.returncode == 0
    assert done.stdout.splitlines()[-1] == "7/7 passed"


def test_bad_args_shows_the_failed_edit_file_card_and_exits_zero(cli):
    done = cli(env={"MOCK": "1", "INJECT": "bad_args"})
    assert done.returncode == 0, done.stderr
    assert (
        "x edit_file fed back 66 chars - there is no tool named edit_file. "
        "Available: glob, grep, read_file"
    ) in done.stdout
    assert "Traceback" not in done.stdout + done.stderr


def test_no_key_is_one_line_naming_the_variable_or_mock_and_exit_two(cli):
    done = cli("where is the config parsed?")
    assert done.returncode == 2
    assert done.stderr.startswith("course-agent: no API key: set OPENAI_API_KEY")
    assert ".env" in done.stderr and "--mock" in done.stderr
    assert done.stderr.count("\n") == 1 and done.stdout == ""


def answer(text: str) -> str:
    """One OpenAI-compatible turn that says `text` and stops."""
    chunk = {"choices": [{"index": 0, "delta": {"content": text}, "finish_reason": "stop"}]}
    return f"data: {json.dumps(chunk)}\n\n"


def test_the_first_line_names_the_gateway_and_where_url_and_key_came_from(cli, tmp_path):
    with Gateway() as gateway:
        gateway.queue(sse_reply(answer("hello"), "data: [DONE]\n\n"))
        done = cli("--base-url", gateway.url, "hi", env={"OPENAI_API_KEY": KEY})
        (tmp_path / ".env").write_text(f"OPENAI_API_KEY={KEY}\nOPENAI_BASE_URL={gateway.url}\n")
        gateway.queue(sse_reply(answer("hello"), "data: [DONE]\n\n"))
        from_file = cli("hi")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == (
        f"gateway {gateway.url} (--base-url), key from OPENAI_API_KEY in the environment"
    )
    assert from_file.returncode == 0, from_file.stderr
    dotenv = tmp_path / ".env"
    assert from_file.stdout.splitlines()[0] == (
        f"gateway {gateway.url} (OPENAI_BASE_URL in {dotenv}), key from OPENAI_API_KEY in {dotenv}"
    )
    assert KEY not in done.stdout + done.stderr + from_file.stdout + from_file.stderr


def test_a_dotenv_in_a_parent_folder_is_never_read(cli, tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    with Gateway() as gateway:
        (tmp_path / ".env").write_text(f"OPENAI_API_KEY={KEY}\nOPENAI_BASE_URL={gateway.url}\n")
        done = cli("hi", cwd=work)
    assert gateway.requests == []
    assert done.returncode == 2
    assert done.stderr.startswith("course-agent: no API key: set OPENAI_API_KEY")


def test_a_gateway_from_dotenv_is_refused_the_key_from_the_shell(cli, tmp_path):
    with Gateway() as gateway:
        (tmp_path / ".env").write_text(f"OPENAI_BASE_URL={gateway.url}\n")
        done = cli("hi", env={"OPENAI_API_KEY": KEY})
    assert gateway.requests == []  # the key never left
    assert done.returncode == 2
    assert done.stderr.startswith(
        f"course-agent: OPENAI_BASE_URL comes from {tmp_path / '.env'} but OPENAI_API_KEY from "
        "the environment"
    )
    assert done.stderr.count("\n") == 1 and KEY not in done.stdout + done.stderr


HOSTILE = "\x1b]0;pwned\x07\x1b[2J"  # retitle the terminal, ring the bell, clear the screen


def test_control_characters_from_a_repository_file_are_shown_escaped(cli, tmp_path):
    root = tmp_path / "repo"
    (root / "src").mkdir(parents=True)
    (root / "src" / "calc.js").write_text(
        f"// divide( {HOSTILE}\nexport function divide(a, b) {{\n"
        f"  return Math.floor(a / b); // {HOSTILE}\n}}\n"
    )
    done = cli("--mock", "--root", str(root))
    assert done.returncode == 0, done.stderr
    grep_card = next(line for line in done.stdout.splitlines() if line.startswith("v grep"))
    assert grep_card.endswith("src/calc.js:1:// divide( \\x1b]0;pwned\\x07\\x1b[2J")
    assert done.stdout.splitlines()[-1].count("\\x1b]0;pwned\\x07") == 1  # the model's text
    assert not {"\x1b", "\x07"} & set(done.stdout + done.stderr)


def test_control_characters_in_the_models_text_are_shown_escaped(cli):
    with Gateway() as gateway:
        gateway.queue(sse_reply(answer(f"Done.{HOSTILE}\x9b\x7f\r\tok\n"), "data: [DONE]\n\n"))
        done = cli("--base-url", gateway.url, "hi", env={"OPENAI_API_KEY": KEY})
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "Done.\\x1b]0;pwned\\x07\\x1b[2J\\x9b\\x7f\\x0d\tok"


# `python -m course_agent` with Ctrl-C at its default, as a terminal starts it. A suite run in the
# background (`cmd &` without job control, nohup, some CI runners) ignores SIGINT; children inherit
# that, and Python then installs no KeyboardInterrupt at all: the run went on for the gateway's 30 s
# and exited 1, whatever the load.
AS_IN_A_TERMINAL = (
    "import runpy, signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); "
    "sys.argv[0] = 'course-agent'; runpy.run_module('course_agent', run_name='__main__')"
)


def test_ctrl_c_prints_one_line_and_exits_130(tmp_path):
    env = {name: value for name, value in os.environ.items() if name not in SETTINGS}
    with Gateway() as gateway:
        gateway.queue(sse_reply(": waiting\n\n", ending="stall", hold=30))  # a slow gateway
        process = subprocess.Popen(
            [sys.executable, "-c", AS_IN_A_TERMINAL, "--base-url", gateway.url, "hi"],
            env={**env, "OPENAI_API_KEY": KEY},
            cwd=tmp_path,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        # The request has arrived, so the run is under way (its first line printed before it).
        assert gateway.received.wait(timeout=60), process.communicate(timeout=60)
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=60)
    assert process.returncode == 130
    assert err == "! interrupted by Ctrl-C\n"
    assert out.startswith(f"gateway {gateway.url} (--base-url)") and "Traceback" not in out


def test_dotenv_key_is_used_and_never_printed(cli, tmp_path):
    secret = "sk-test-DOTENV-SECRET-0123456789"
    (tmp_path / ".env").write_text(f"OPENAI_API_KEY={secret}\n")
    done = cli("--base-url", "http://127.0.0.1:9/v1", "hi")
    assert done.returncode == 1
    assert "127.0.0.1:9" in done.stdout
    assert secret not in done.stdout + done.stderr
    assert "Traceback" not in done.stdout + done.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--max-turns", "0"], "--max-turns must be at least 1"),
        (["--root", "/definitely/not/here", "--mock"], "is not a directory"),
        (["--inject", "nonsense"], "invalid choice"),
    ],
)
def test_misuse_is_one_clear_line_and_exit_two(cli, args, message):
    done = cli(*args)
    assert done.returncode == 2
    assert message in done.stderr and "Traceback" not in done.stderr


@pytest.mark.parametrize(
    ("args", "env", "message"),
    [
        (["--base-url", "api.openai.com/v1"], {"OPENAI_API_KEY": "sk-test"}, "not an http(s) URL"),
        ([], {"OPENAI_API_KEY": "sk-test pasted twice"}, "OPENAI_API_KEY contains a space"),
        (["--replay", "missing.jsonl"], {}, "cannot read recording missing.jsonl"),
        (
            [],
            {"OPENAI_API_KEY": "sk-test", "COURSE_AGENT_TIMEOUT": "soon"},
            "COURSE_AGENT_TIMEOUT='soon' is not a number of seconds",
        ),
        (
            [],
            {"OPENAI_API_KEY": "sk-test", "COURSE_AGENT_TIMEOUT": "0"},
            "COURSE_AGENT_TIMEOUT='0'",
        ),
    ],
)
def test_bad_settings_are_one_line_and_exit_two(cli, args, env, message):
    done = cli(*args, "hi", env=env)
    assert done.returncode == 2
    assert done.stderr.startswith("course-agent: ") and message in done.stderr
    assert done.stderr.count("\n") == 1 and done.stdout == ""
    assert "sk-test" not in done.stderr


def test_help_names_the_timeout_setting(cli):
    shown = cli("--help").stdout
    assert "COURSE_AGENT_TIMEOUT=SECONDS" in shown
    assert "COURSE_AGENT_REQUEST_TIMEOUT=SECONDS" in shown


def test_grade_and_lab_are_subcommands_with_their_own_usage(cli, tmp_path):
    broken = tmp_path / "broken.ipynb"
    broken.write_text("{not json")
    done = cli("grade", "--jobs", "1", "--csv", str(tmp_path / "grades.csv"), str(broken))
    assert done.returncode == 0, done.stderr
    assert "broken.ipynb" in done.stdout and "not a notebook" in done.stdout
    assert "broken.ipynb" in (tmp_path / "grades.csv").read_text()
    usage = cli("lab", "release")
    assert usage.returncode == 2 and "usage: course-agent lab" in usage.stderr


def test_a_reader_that_leaves_early_gets_no_traceback(tmp_path):
    env = {name: value for name, value in os.environ.items() if name not in SETTINGS}
    process = subprocess.Popen(
        [sys.executable, "-m", "course_agent", "--mock"],
        env=env,
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    process.stdout.close()  # as `| head -1` does once it has its line: every write now fails
    err = process.stderr.read()
    assert process.wait(timeout=60) == 1
    assert err == ""


# -- what a hostile gateway, repository or setting can make the terminal do ----------------------


def test_a_lone_surrogate_in_the_models_text_is_replaced_and_the_next_request_is_sent(cli):
    # JSON can spell "\ud800"; kept in the transcript, it made every later request of the
    # conversation fail with UnicodeEncodeError. It is replaced (U+FFFD) where text enters.
    call = {"index": 0, "id": "c1", "function": {"name": "glob", "arguments": '{"pattern": "*"}'}}
    first = [
        {"choices": [{"index": 0, "delta": {"content": "a\ud800b"}}]},
        {"choices": [{"index": 0, "delta": {"tool_calls": [call]}, "finish_reason": "tool_calls"}]},
    ]
    second = [{"choices": [{"index": 0, "delta": {"content": "done"}, "finish_reason": "stop"}]}]
    with Gateway() as gateway:
        for turn in (first, second):
            gateway.queue(sse_reply(*(f"data: {json.dumps(c)}\n\n" for c in turn)))
        done = cli("--base-url", gateway.url, "hi", env={"OPENAI_API_KEY": KEY})
        sent = gateway.requests[-1].body["messages"]
    assert done.returncode == 0, done.stderr
    assert len(gateway.requests) == 2 and done.stdout.splitlines()[-1] == "done"
    assert [m["content"] for m in sent if m["role"] == "assistant"] == ["a\ufffdb"]


def test_a_terminal_that_is_not_utf8_shows_escapes_instead_of_a_traceback(cli, tmp_path):
    root = tmp_path / "repo"
    (root / "src").mkdir(parents=True)
    (root / "src" / "calc.js").write_text("export function divide(a, b) { // a → b, naïve\n")
    done = cli("--mock", "--root", str(root), env={"PYTHONIOENCODING": "ascii"})
    assert done.returncode == 0, done.stderr
    assert "a \\u2192 b, na\\xefve" in done.stdout and "Traceback" not in done.stderr


def test_a_gateway_url_with_an_escape_from_dotenv_is_refused_before_any_request(cli, tmp_path):
    with Gateway() as gateway:
        (tmp_path / ".env").write_text(
            f'OPENAI_API_KEY={KEY}\nOPENAI_BASE_URL="{gateway.url}\x1b]0;pwned\x07"\n'
        )
        done = cli("hi")
    assert done.returncode == 2 and not gateway.requests
    assert done.stderr.startswith("course-agent: OPENAI_BASE_URL ")
    assert "\x1b" not in done.stdout + done.stderr and done.stderr.count("\n") == 1


def test_a_huge_dotenv_is_refused_in_one_line(cli, tmp_path):
    (tmp_path / ".env").write_text("A=1\n" * 100_000)
    done = cli("hi", env={"OPENAI_API_KEY": KEY})
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith(f"course-agent: {tmp_path / '.env'} is over 64 KB")
    assert done.stderr.count("\n") == 1


# -- hole 10: line and paragraph separators, bidi marks -------------------------------------------


def test_line_separators_and_bidi_marks_in_the_models_text_are_shown_escaped(cli):
    with Gateway() as gateway:
        gateway.queue(sse_reply(answer("a\u2028b\u2029c\u200fd\u061ce\n"), "data: [DONE]\n\n"))
        done = cli("--base-url", gateway.url, "hi", env={"OPENAI_API_KEY": KEY})
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "a\\u2028b\\u2029c\\u200fd\\u061ce"


# -- hole 7: a whole run has a deadline, said in one line -----------------------------------------


def test_a_run_stops_at_its_deadline_in_one_line(cli):
    # A gateway that only ever sends keep-alives: each is no data, and the silence allowed is an
    # hour here, so only the run's own deadline ends it.
    with Gateway() as gateway:
        gateway.queue(sse_reply(": hi\n\n", ending="keepalive", hold=30.0))
        env = {"OPENAI_API_KEY": KEY, "COURSE_AGENT_TIMEOUT": "3600"}
        done = cli("--base-url", gateway.url, "--deadline", "1", "hi", env=env)
    assert done.returncode == 1, done.stderr
    assert done.stdout.splitlines()[-1] == (
        "! stopped: the run took more than 1 s (--deadline, or COURSE_AGENT_RUN_DEADLINE); "
        "ask again to go on from here"
    )


def test_a_bad_deadline_is_one_line_and_exit_two(cli):
    done = cli("--mock", "--deadline", "0", "hi")
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    assert "--deadline 0.0 is not a number of seconds above 0" in done.stderr


def test_help_names_the_run_deadline(cli):
    shown = " ".join(cli("--help").stdout.split())
    assert "--deadline SECONDS" in shown and "COURSE_AGENT_RUN_DEADLINE" in shown


def test_grade_starts_without_building_jsonschemas_iri_grammar(tmp_path: Path) -> None:
    # rfc3987_syntax builds some 35 Earley parsers (lark) on import: 1 s of every grader start.
    (tmp_path / "broken.ipynb").write_text("{")
    command = [sys.executable, "-X", "importtime", "-m", "course_agent", "grade"]
    done = subprocess.run(
        [*command, str(tmp_path / "broken.ipynb"), "--no-sandbox"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert "not a notebook" in done.stdout, done.stdout + done.stderr[-2000:]
    # "import time: self | cumulative | name", microseconds; a blocked import is listed, and empty.
    lines = [line.split("|") for line in done.stderr.splitlines() if line.count("|") == 2]
    imported = {name.strip(): int(total) for _, total, name in lines if total.strip().isdigit()}
    assert "nbformat" in imported and "jsonschema" in imported
    assert "lark" not in imported and imported.get("rfc3987_syntax", 0) < 1000


def test_a_symlink_loop_as_root_is_one_line(cli, tmp_path):
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    for args in (["--mock"], ["--base-url", "http://127.0.0.1:9/v1"]):
        done = cli(*args, "--root", str(tmp_path / "a"), "q", env={"OPENAI_API_KEY": KEY})
        assert done.returncode == 2 and done.stdout == ""
        assert (
            done.stderr
            == f"course-agent: --root {tmp_path / 'a'} is a symlink loop; name a directory\n"
        )


@pytest.mark.parametrize(
    "url",
    [
        "http://me:s3cret-PASSWORD@[::1",  # httpx: Invalid port
        "http://me:s3cret-PASSWORD@host:port/v1",
        "https://s3cret-PASSWORD@exa mple.com/v1",
    ],
)
def test_a_base_url_httpx_cannot_parse_is_one_line_without_its_password(cli, url):
    done = cli("--base-url", url, "q", env={"OPENAI_API_KEY": KEY})
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("course-agent: OPENAI_BASE_URL")
    assert "s3cret" not in done.stderr and "PASSWORD" not in done.stderr
