"""read_environment: the working folder's .env under the shell, and where each value came from."""

import os
from pathlib import Path

import pytest

from course_agent.app.environment import DOTENV_MAX_BYTES, Environment, read_environment

KEY = "sk-test-ENVIRONMENT-0123456789-never-shown"
FILE_KEY = "sk-test-FROM-DOTENV-0123456789"


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A working folder inside a parent folder, with no key in the shell, the current folder."""
    for name in ["OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"]:
        monkeypatch.delenv(name, raising=False)
    work = tmp_path / "parent" / "work"
    work.mkdir(parents=True)
    monkeypatch.chdir(work)
    return work


def test_a_dotenv_in_a_parent_folder_is_not_read(folder):
    (folder.parent / ".env").write_text(
        f"OPENAI_API_KEY={FILE_KEY}\nOPENAI_BASE_URL=http://attacker.example/v1\n"
    )
    env = read_environment()
    assert "OPENAI_BASE_URL" not in env and "OPENAI_API_KEY" not in env


def test_the_dotenv_of_the_working_folder_is_read_and_the_shell_wins(folder, monkeypatch):
    (folder / ".env").write_text("COURSE_AGENT_MODEL=from-file\nOPENAI_BASE_URL=http://f/v1\n")
    monkeypatch.setenv("COURSE_AGENT_MODEL", "from-shell")
    env = read_environment()
    assert env["COURSE_AGENT_MODEL"] == "from-shell"
    assert env.origin("COURSE_AGENT_MODEL") == "in the environment"
    assert env["OPENAI_BASE_URL"] == "http://f/v1"
    assert env.origin("OPENAI_BASE_URL") == f"in {folder / '.env'}"


def test_a_dotenv_cannot_copy_the_shells_key_by_interpolation(folder, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    (folder / ".env").write_text(
        "ANTHROPIC_API_KEY=${OPENAI_API_KEY}\nANTHROPIC_BASE_URL=http://attacker.example\n"
    )
    env = read_environment()
    assert env["ANTHROPIC_API_KEY"] == "${OPENAI_API_KEY}"
    assert KEY not in repr(env) and FILE_KEY not in repr(env)


def test_the_environment_keeps_values_out_of_its_repr(folder, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    (folder / ".env").write_text(f"ANTHROPIC_API_KEY={FILE_KEY}\n")
    env = read_environment()
    assert KEY not in repr(env) and FILE_KEY not in repr(env)


def test_a_plain_mapping_counts_as_the_shell():
    env = Environment({"OPENAI_API_KEY": KEY})
    assert env["OPENAI_API_KEY"] == KEY and env.origin("OPENAI_API_KEY") == "in the environment"
    assert dict(env) == {"OPENAI_API_KEY": KEY} and KEY not in repr(env)


def test_an_unreadable_dotenv_is_one_line(folder):
    (folder / ".env").write_bytes(b"OPENAI_BASE_URL=\xff\xfe\n")
    with pytest.raises(ValueError, match=r"^cannot read .*\.env: "):
        read_environment()


# -- a .env that is not a small file ------------------------------------------------------------


def test_a_dotenv_over_the_cap_is_refused_in_one_line_before_it_is_parsed(folder):
    # 2 MB of short lines took python-dotenv 10 s to parse, on 2 busy cores: a cloned
    # repository's .env could freeze the kernel that way. Real ones are a few hundred bytes.
    (folder / ".env").write_text("A=1\n" * 50_000 + "OPENAI_BASE_URL=http://attacker.example/v1\n")
    with pytest.raises(ValueError) as refused:
        read_environment()
    message = str(refused.value)
    assert message.startswith(f"{folder / '.env'} is over {DOTENV_MAX_BYTES // 1024} KB")
    assert "move it away" in message and "\n" not in message


def test_a_dotenv_of_exactly_the_cap_is_read(folder):
    line = "OPENAI_BASE_URL=http://gw.example/v1\n"
    (folder / ".env").write_text("#" * (DOTENV_MAX_BYTES - len(line) - 1) + "\n" + line)
    assert (folder / ".env").stat().st_size == DOTENV_MAX_BYTES
    assert read_environment()["OPENAI_BASE_URL"] == "http://gw.example/v1"


@pytest.mark.parametrize("kind", ["fifo", "directory", "dangling link"])
def test_a_dotenv_that_is_no_regular_file_is_passed_over_without_waiting(folder, kind):
    path = folder / ".env"
    if kind == "fifo":
        os.mkfifo(path)  # opening it to read would wait for a writer forever
    elif kind == "directory":
        path.mkdir()
    else:
        path.symlink_to(folder / "gone")
    env = read_environment()
    assert "OPENAI_BASE_URL" not in env and env.path == path


def test_a_dotenv_linked_to_a_file_elsewhere_is_read_and_named_by_its_link(folder):
    # A link is how people share one .env between projects; the file read is the link's target,
    # and a link, like the file, can only speak for itself: url and key come from one place.
    (folder.parent / "shared.env").write_text(f"OPENAI_API_KEY={FILE_KEY}\n")
    (folder / ".env").symlink_to(folder.parent / "shared.env")
    env = read_environment()
    assert env["OPENAI_API_KEY"] == FILE_KEY and env.origin("OPENAI_API_KEY") == (
        f"in {folder / '.env'}"
    )
