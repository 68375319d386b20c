"""The options module: the same defaults as the modules it stands in for, and a cheap import."""

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from course_agent import loop
from course_agent.app import guard, options
from course_agent.providers.anthropic_wire import ANTHROPIC
from course_agent.providers.gateway import deadlines
from course_agent.providers.openai_wire import OPENAI


def test_each_default_is_declared_once_and_options_shows_the_owners():
    assert OPENAI.default_model == options.DEFAULT_MODEL
    assert ANTHROPIC.default_model == options.DEFAULT_ANTHROPIC_MODEL
    assert options.DEFAULT_TIMEOUT == deadlines.DEFAULT_TIMEOUT
    assert options.DEFAULT_REQUEST_TIMEOUT == deadlines.DEFAULT_REQUEST_TIMEOUT
    assert guard.RunDeadline().seconds == options.DEFAULT_RUN_SECONDS
    assert options.MAX_TURNS == loop.MAX_TURNS
    # Imported, not written out again: options.py assigns none of the others' names.
    tree = ast.parse(Path(options.__file__).read_text(encoding="utf-8"))
    assigned = {t.id for n in tree.body if isinstance(n, ast.Assign) for t in n.targets}
    borrowed = {"MAX_TURNS", "DEFAULT_MODEL", "DEFAULT_ANTHROPIC_MODEL", "DEFAULT_TIMEOUT"}
    assert not assigned & (borrowed | {"DEFAULT_REQUEST_TIMEOUT"})


def test_defaults_a_student_can_live_with():
    # A silent gateway is named within a minute, a whole run within a few: not ten minutes.
    assert options.DEFAULT_TIMEOUT <= 30
    assert options.DEFAULT_REQUEST_TIMEOUT <= 300
    assert options.DEFAULT_RUN_SECONDS <= 300


@pytest.mark.parametrize(
    ("env", "option", "expected"),
    [({}, None, 300.0), ({"V": "12"}, None, 12.0), ({"V": "12"}, 3.5, 3.5)],
)
def test_seconds_come_from_the_option_then_the_variable_then_the_default(env, option, expected):
    assert options.seconds_from(env, "V", 300.0, option) == expected


@pytest.mark.parametrize(("env", "option"), [({"V": "soon"}, None), ({}, 0.0), ({}, -1.0)])
def test_a_bad_number_of_seconds_is_one_line(env, option):
    with pytest.raises(ValueError, match="is not a number of seconds above 0") as bad:
        options.seconds_from(env, "V", 300.0, option)
    assert "\n" not in str(bad.value)


def test_the_cli_help_imports_no_grader_self_test_pydantic_or_httpx():
    # Issue 23: `course-agent --help` imported the grader, every self-test and both clients.
    code = (
        "import sys\n"
        "from course_agent.cli import main\n"
        "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
        "heavy = ['pydantic', 'httpx', 'course_agent.lab.grade', 'course_agent.selftest.lab',"
        " 'course_agent.tools', 'IPython', 'nbclient']\n"
        "print(sorted(name for name in heavy if name in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout.splitlines()[-1] == "[]", done.stderr


def test_a_first_offline_answer_imports_no_grader_or_http_client(tmp_path):
    code = (
        "import sys\n"
        "from course_agent.cli import main\n"
        f"main(['--mock', '--root', {str(tmp_path)!r}, 'where?'])\n"
        "heavy = ['httpx', 'course_agent.lab.grade', 'course_agent.selftest.lab', 'IPython']\n"
        "print(sorted(name for name in heavy if name in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout.splitlines()[-1] == "[]", done.stdout + done.stderr
