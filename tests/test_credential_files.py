"""The key and credential files a developer's home and repository commonly hold are refused to
read_file and never searched by grep (issue 30 item 5); .git/ is refused to read_file, as glob and
grep skip it. Their content reaches no tool result."""

import json
from pathlib import Path

import pytest

from course_agent.protocol import ToolCall, ToolContext
from course_agent.registry import default_registry

SECRET = "hunter2-CREDENTIAL-VALUE"
HELD = {
    ".ssh/id_ed25519": f"-----BEGIN OPENSSH PRIVATE KEY-----\n{SECRET}\n",
    ".ssh/id_ecdsa": f"-----BEGIN EC PRIVATE KEY-----\n{SECRET}\n",
    "id_ed25519": f"{SECRET}\n",
    "id_ecdsa": f"{SECRET}\n",
    ".git-credentials": f"https://me:{SECRET}@github.com\n",
    ".npmrc": f"//registry.npmjs.org/:_authToken={SECRET}\n",
    ".pgpass": f"db:5432:app:me:{SECRET}\n",
    ".aws/credentials": f"[default]\naws_secret_access_key = {SECRET}\n",
    ".envrc": f"export API_TOKEN={SECRET}\n",
    ".git/config": f'[remote "origin"]\n\turl = https://me:{SECRET}@github.com/me/app.git\n',
}


def call(root: Path, name: str, **args: object) -> str:
    result = default_registry().execute(ToolCall("c1", name, json.dumps(args)), ToolContext(root))
    return result.content


@pytest.fixture
def home(tmp_path: Path) -> Path:
    for relative, text in HELD.items():
        path = tmp_path / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    (tmp_path / "app.py").write_text("print('hi')\n")
    return tmp_path


@pytest.mark.parametrize("relative", HELD)
def test_read_file_refuses_each_credential_file(home: Path, relative: str) -> None:
    shown = call(home, "read_file", path=relative)
    assert SECRET not in shown
    assert "never shows" in shown and relative in shown


def test_grep_never_searches_them_and_glob_never_lists_their_content(home: Path) -> None:
    assert SECRET not in call(home, "grep", pattern="CREDENTIAL")
    assert "no matches" in call(home, "grep", pattern="CREDENTIAL")
    assert SECRET not in call(home, "glob", pattern="**/*")
