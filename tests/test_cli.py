"""The command line as a user runs it: a real subprocess, real environment variables."""

import pytest


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


def test_no_key_falls_back_offline_and_says_so_in_one_line(cli):
    done = cli()
    assert done.returncode == 0
    assert done.stdout.splitlines()[0].startswith("no API key: put OPENAI_API_KEY=")


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
    assert "COURSE_AGENT_TIMEOUT=SECONDS" in cli("--help").stdout


def test_grade_and_lab_are_subcommands_with_their_own_usage(cli, tmp_path):
    broken = tmp_path / "broken.ipynb"
    broken.write_text("{not json")
    done = cli("grade", "--jobs", "1", "--csv", str(tmp_path / "grades.csv"), str(broken))
    assert done.returncode == 0, done.stderr
    assert "broken.ipynb" in done.stdout and "not a notebook" in done.stdout
    assert "broken.ipynb" in (tmp_path / "grades.csv").read_text()
    usage = cli("lab", "release")
    assert usage.returncode == 2 and "usage: course-agent lab" in usage.stderr
