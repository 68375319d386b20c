"""grep against `rg --json` on random trees: names with `~`, dots, spaces and unicode, symlinks,
and files with CRLF lines, invalid UTF-8 and NUL bytes early or late.

docs/design.md names rg as grep's referee: every line it reports is ours, with the same path,
number and text (CRLF's "\\r" dropped, invalid UTF-8 shown as U+FFFD); binary files (a NUL byte
anywhere) are skipped by both, ours saying so for a late one.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from course_agent.protocol import ToolContext
from course_agent.safety import redaction
from course_agent.tools.grep_files import GrepArgs, find_rg, run_grep

RG = find_rg()
pytestmark = pytest.mark.skipif(RG is None, reason="ripgrep is not installed")

FOLDERS = ["a", "~d", "d.d", "sp ace", "é", "日本"]
NAMES = ["~n.txt", "x.", ".h", "sp ace.md", "é.py", "a.log", "~$r.txt", "日本.txt"]
LINES = [b"ERROR one", b"ok", b"ERROR", "é ERROR ü".encode(), b"  ERROR  ", b"\x80\xff ERROR", b""]


@st.composite
def files(draw: st.DrawFn) -> bytes:
    lines = draw(st.lists(st.sampled_from(LINES), min_size=1, max_size=5))
    data = (b"\r\n" if draw(st.booleans()) else b"\n").join(lines) + b"\n"
    nul = draw(st.sampled_from(["none", "none", "early", "late"]))
    if nul == "early":
        data = b"\0" + data
    elif nul == "late":
        data = data + b"p" * 9000 + b"\n\0\n"
    return data


@st.composite
def trees(draw: st.DrawFn) -> tuple[dict[str, bytes], list[tuple[str, str]]]:
    folders = [""] + [draw(st.sampled_from(FOLDERS)) for _ in range(draw(st.integers(0, 3)))]
    tree: dict[str, bytes] = {}
    for _ in range(draw(st.integers(1, 6))):
        folder, name = draw(st.sampled_from(folders)), draw(st.sampled_from(NAMES))
        tree[f"{folder}/{name}" if folder else name] = draw(files())
    passed = {path.rsplit("/", 1)[0] for path in tree if "/" in path}
    tree = {path: data for path, data in tree.items() if path not in passed}
    links = [(f"link{n}.txt", draw(st.sampled_from(sorted(tree)))) for n in range(2)]
    return tree, links[: draw(st.integers(0, 2))]


def rg_json(root: Path, pattern: str) -> list[str]:
    """`path:line:text` per match rg --json reports, written out from its events alone."""
    assert RG is not None
    command = [RG, "--json", "--no-config", "--hidden", "--no-ignore", "--regexp", pattern, "."]
    done = subprocess.run(command, cwd=root, capture_output=True, check=False)
    found = []
    for line in done.stdout.splitlines():
        event = json.loads(line)
        if event["type"] != "match":
            continue
        data = event["data"]
        path = data["path"].get("text") or os.fsdecode(base64.b64decode(data["path"]["bytes"]))
        text = data["lines"].get("text")
        raw = text.encode() if text is not None else base64.b64decode(data["lines"]["bytes"])
        shown = raw.rstrip(b"\n").removesuffix(b"\r").decode("utf-8", "replace")
        found.append((os.fsencode(path.removeprefix("./")), data["line_number"], shown))
    return [f"{os.fsdecode(p)}:{n}:{text}" for p, n, text in sorted(found)]


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(tree=trees())
def test_grep_reports_what_rg_json_reports(
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
    tree: tuple[dict[str, bytes], list[tuple[str, str]]],
) -> None:
    monkeypatch.setattr(redaction, "_KNOWN", set())  # no key: nothing withheld
    files, links = tree
    root = tmp_path_factory.mktemp("tree")
    for relative, data in files.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_bytes(data)
    for link, target in links:
        if not (root / link).exists():
            (root / link).symlink_to(target)  # never followed, by rg or by us
    content = run_grep(GrepArgs(pattern="ERROR", limit=500), ToolContext(root)).content
    ours = [line for line in content.split("\n") if line[:1] != "("]
    assert (ours if not content.startswith("no matches") else []) == rg_json(root, "ERROR")
