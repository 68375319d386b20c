"""Lab kernels: this interpreter, no keys in their environment, a run that says what stopped it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from code_cells import notebook, streamed
from hypothesis import given
from hypothesis import strategies as st
from lab_class import kernel_env

from course_agent.lab.kernel import OUTPUT_LIMIT, is_key_name, kernel_environment, run_notebook

KEY = "sk-kernel-probe-0123456789"


@pytest.mark.parametrize(
    "name",
    [
        "OPENAI_API_KEY",
        "anthropic_api_key",
        "GITHUB_TOKEN",
        "Aws_Secret",
        "AWS_SECRET_ACCESS_KEY",
        "DB_PASSWORD",
        "GOOGLE_APPLICATION_CREDENTIALS",
        "TOKEN",
    ],
)
def test_a_key_is_known_by_its_name_in_any_case(name: str) -> None:
    assert is_key_name(name)


@pytest.mark.parametrize(
    "name", ["PATH", "HOME", "PYTHONPATH", "KEYBOARD", "TOKENIZERS_PARALLELISM", "MONKEY"]
)
def test_other_names_are_not_keys(name: str) -> None:
    assert not is_key_name(name)


def test_a_value_that_carries_a_key_goes_too() -> None:
    environ = {
        "OPENAI_API_KEY": KEY,
        "OPENAI_BASE_URL": f"https://proxy.example/v1?key={KEY}",
        "HTTPS_PROXY": "http://proxy.example:3128",
        "PATH": "/usr/bin",
        "SHORT_KEY": "abc",  # too short to look for elsewhere: only its own variable goes
        "MODE": "abc",
    }
    assert kernel_environment(environ) == {
        "HTTPS_PROXY": "http://proxy.example:3128",
        "PATH": "/usr/bin",
        "MODE": "abc",
    }


names = st.text(st.sampled_from("ABCKEYTOKNSRPWD_ab"), min_size=1, max_size=16)


@given(st.dictionaries(names, st.text(max_size=20), max_size=8))
def test_what_is_kept_is_part_of_the_input_and_holds_no_key(environ: dict[str, str]) -> None:
    kept = kernel_environment(environ)
    assert kept.items() <= environ.items()
    assert not any(is_key_name(name) for name in kept)
    removed = [value for name, value in environ.items() if is_key_name(name) and len(value) >= 8]
    assert not any(secret in value for secret in removed for value in kept.values())


def test_a_kernel_sees_no_key_and_starts_in_an_empty_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = kernel_env()["PYTHONPATH"]
    monkeypatch.setenv("PYTHONPATH", path)
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GITHUB_TOKEN", "my_secret"):
        monkeypatch.setenv(name, KEY)
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".env").write_text(f"OPENAI_API_KEY={KEY}\n")
    nb = notebook(
        "1 / 0",  # an exception in a cell does not stop the run
        "import json, os\n"
        "print(json.dumps({'env': dict(os.environ), 'cwd': os.getcwd(), 'files': os.listdir()}))",
    )
    assert run_notebook(nb, timeout=30) == ""
    assert nb.cells[0].outputs[0]["ename"] == "ZeroDivisionError"
    seen = json.loads(streamed(nb.cells[1]))
    assert not any(is_key_name(name) for name in seen["env"])
    assert KEY not in json.dumps(seen["env"])
    assert seen["env"]["PYTHONPATH"] == path  # the rest is passed on
    assert Path(seen["cwd"]) != tmp_path and seen["files"] == []


def test_a_run_names_the_cell_that_hung_or_killed_its_kernel() -> None:
    hung = notebook("x = 1", "while True:\n    pass")
    assert run_notebook(hung, timeout=2) == "timeout: cell 2 ran over 2 s"
    killed = notebook("import os\n\nos._exit(1)")
    named = run_notebook(killed, timeout=10, describe=lambda index: f"the cell at {index}")
    assert named == "kernel died in the cell at 0"


def test_a_run_keeps_a_bounded_amount_of_output_and_each_cells_reply() -> None:
    # 12 MB printed in 1 MB lines, flushed one by one: the run goes on, keeping at most
    # OUTPUT_LIMIT bytes of output, and the kernel's reply to every cell still comes.
    nb = notebook(
        "print('before')",
        "import sys, time\nfor _ in range(12):\n    print('x' * 1_000_000)\n"
        "    sys.stdout.flush(); time.sleep(0.05)",
        "raise ValueError('the reply names it')",
    )
    replies: dict[int, dict] = {}
    assert run_notebook(nb, timeout=60, on_reply=replies.__setitem__) == ""
    assert streamed(nb.cells[0]) == "before\n"
    kept = sum(len(output.get("text", "")) for cell in nb.cells for output in cell.outputs)
    assert kept <= OUTPUT_LIMIT
    assert [replies[index]["content"]["status"] for index in range(3)] == ["ok", "ok", "error"]
    assert replies[2]["content"]["evalue"] == "the reply names it"


def test_a_kernel_given_a_relative_folder_imports_its_helper_modules_from_a_fresh_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # `course-agent lab execute labs/source/day03-lab.ipynb` hands the kernel a relative folder;
    # the sandbox binds absolute paths only, and the kernel died before it answered. The kernel
    # runs in a fresh folder of its own, the folder's helper modules copied in (lab/private.py).
    (tmp_path / "labs" / "source").mkdir(parents=True)
    (tmp_path / "labs" / "source" / "helper.py").write_text("ANSWER = 42\n")
    monkeypatch.chdir(tmp_path)
    nb = notebook("import os\nprint(os.getcwd())", "from helper import ANSWER\nprint(ANSWER)")
    assert run_notebook(nb, timeout=30, cwd=Path("labs/source"), sandbox=True) == ""
    ran_in = Path(streamed(nb.cells[0]).strip())
    assert ran_in.name.startswith("course-agent-run-") and not ran_in.exists()
    assert streamed(nb.cells[1]) == "42\n"
