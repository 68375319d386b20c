"""read_file: header, numbered lines, paging, long lines, encodings and refusals."""

from __future__ import annotations

import codecs
import os
import re
import socket
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from course_agent.protocol import ToolContext, ToolError
from course_agent.tools import read_file as module
from course_agent.tools.read_file import ReadFileArgs, run_read_file

CALC_JS = """\
// Arithmetic helpers for the invoice report.
export function add(a, b) {
  return a + b
}

// Split an amount into equal shares.
export function divide(a, b) {
  if (b === 0) {
    throw new Error('cannot divide by zero')
  }
  return Math.floor(a / b)
}
"""


def read(root: Path, path: str, **kwargs: int) -> str:
    return run_read_file(ReadFileArgs(path=path, **kwargs), ToolContext(root)).content


def write(root: Path, relative: str, data: bytes | str) -> Path:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    path.write_bytes(data)
    return path


def test_header_and_numbered_lines(tmp_path: Path) -> None:
    write(tmp_path, "src/calc.js", CALC_JS)
    lines = read(tmp_path, "src/calc.js").split("\n")
    assert lines[0] == "src/calc.js (lines 1-12 of 12)"
    assert lines[1] == " 1  // Arithmetic helpers for the invoice report."
    assert lines[5] == " 5  "
    assert lines[11] == "11    return Math.floor(a / b)"
    assert lines[12] == "12  }"
    assert len(lines) == 13  # nothing remains, so no footer


def test_paging_with_offset_and_limit(tmp_path: Path) -> None:
    write(tmp_path, "big.txt", "".join(f"row {n}\n" for n in range(1, 1001)))
    first = read(tmp_path, "big.txt").split("\n")
    assert first[0] == "big.txt (lines 1-400 of 1000)"
    assert first[1] == "  1  row 1" and first[400] == "400  row 400"
    assert first[-1] == "(lines 401-1000 remain; read on with offset=401)"
    page = read(tmp_path, "big.txt", offset=998, limit=5).split("\n")
    assert page == [
        "big.txt (lines 998-1000 of 1000)",
        " 998  row 998",
        " 999  row 999",
        "1000  row 1000",
    ]


def test_width_follows_the_last_number_shown(tmp_path: Path) -> None:
    write(tmp_path, "a.txt", "x\n" * 12)
    assert read(tmp_path, "a.txt", offset=8, limit=2).split("\n")[1:] == [
        "8  x",
        "9  x",
        "(lines 10-12 remain; read on with offset=10)",
    ]


def test_offset_past_the_end_says_how_many_lines(tmp_path: Path) -> None:
    write(tmp_path, "a.txt", "one\ntwo\nthree")
    with pytest.raises(
        ToolError, match=re.escape("offset 9 is past the end of a.txt, which has 3 lines")
    ):
        read(tmp_path, "a.txt", offset=9)


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b"", "e.txt (empty file)"),
        (b"\n", "e.txt (lines 1-1 of 1)\n1  "),
        (b"no newline", "e.txt (lines 1-1 of 1)\n1  no newline"),
        (b"a\r\nb\r\n", "e.txt (lines 1-2 of 2)\n1  a\n2  b"),  # one \r stripped for display
        (b"a\rb\n", "e.txt (lines 1-1 of 1)\n1  a\rb"),  # split on \n only, like grep
        (b"\xef\xbb\xbfbom\n", "e.txt (lines 1-1 of 1)\n1  bom"),  # the UTF-8 BOM is not text
        (b"caf\xe9 \xff\n", "e.txt (lines 1-1 of 1)\n1  caf\ufffd \ufffd"),  # invalid UTF-8
    ],
)
def test_small_files(tmp_path: Path, data: bytes, expected: str) -> None:
    write(tmp_path, "e.txt", data)
    assert read(tmp_path, "e.txt") == expected


@pytest.mark.parametrize("codec", ["utf-16-le", "utf-16-be", "utf-32-le", "utf-32-be"])
def test_utf16_and_utf32_with_a_bom_are_decoded(tmp_path: Path, codec: str) -> None:
    bom = {
        "utf-16-le": codecs.BOM_UTF16_LE,
        "utf-16-be": codecs.BOM_UTF16_BE,
        "utf-32-le": codecs.BOM_UTF32_LE,
        "utf-32-be": codecs.BOM_UTF32_BE,
    }[codec]
    write(tmp_path, "w.txt", bom + "héllo\r\nwörld\n".encode(codec))
    assert read(tmp_path, "w.txt") == "w.txt (lines 1-2 of 2)\n1  héllo\n2  wörld"


def test_long_lines_are_cut_and_say_how_long_they_were(tmp_path: Path) -> None:
    write(tmp_path, "min.js", "a" * 600 + "\n" + "é" * 3000 + "\nshort\n")
    lines = read(tmp_path, "min.js").split("\n")
    assert lines[1] == "1  " + "a" * 500 + "… [line cut at 500 of 600 characters]"
    assert lines[2] == "2  " + "é" * 500 + "… [line cut at 500 of 3000 characters]"
    assert lines[3] == "3  short"


def test_exactly_500_characters_is_not_cut(tmp_path: Path) -> None:
    write(tmp_path, "edge.txt", "b" * 500 + "\n")
    assert read(tmp_path, "edge.txt").split("\n")[1] == "1  " + "b" * 500


def test_binary_is_reported_with_its_size(tmp_path: Path) -> None:
    write(tmp_path, "logo.png", b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR" + bytes(2000))
    with pytest.raises(ToolError, match=r"logo.png is a binary file \(2,016 bytes\)"):
        read(tmp_path, "logo.png")


def test_a_nul_after_the_first_8000_bytes_is_still_text(tmp_path: Path) -> None:
    write(tmp_path, "late.txt", "x\n" * 5000 + "\0\n")
    assert read(tmp_path, "late.txt", limit=1).startswith("late.txt (lines 1-1 of 5001)")


def test_missing_file_suggests_glob(tmp_path: Path) -> None:
    with pytest.raises(
        ToolError, match=re.escape("src/nope.js does not exist; find files with glob")
    ):
        read(tmp_path, "src/nope.js")
    write(tmp_path, "file.txt", "x")
    with pytest.raises(ToolError, match="does not exist"):
        read(tmp_path, "file.txt/child")


def test_directory_suggests_glob(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    with pytest.raises(ToolError, match=re.escape("src is a directory; list its files with glob")):
        read(tmp_path, "src")
    with pytest.raises(ToolError, match=re.escape("e.g. *")):
        read(tmp_path, ".")


@pytest.mark.timeout(10)
def test_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    with pytest.raises(ToolError, match="pipe is a FIFO"):
        read(tmp_path, "pipe")


@pytest.mark.timeout(10)
def test_socket_is_refused(tmp_path: Path) -> None:
    server = socket.socket(socket.AF_UNIX)
    try:
        server.bind(str(tmp_path / "s.sock"))
    except OSError:
        pytest.skip("cannot bind a unix socket under tmp_path (path too long?)")
    with server, pytest.raises(ToolError, match=re.escape("s.sock is a socket")):
        read(tmp_path, "s.sock")


def test_path_is_shown_relative_and_normalised(tmp_path: Path) -> None:
    write(tmp_path, "src/a.js", "x\n")
    assert read(tmp_path, "./src/../src/a.js").startswith("src/a.js (lines 1-1 of 1)")
    assert read(tmp_path, str(tmp_path / "src" / "a.js")).startswith("src/a.js (lines")


# -- chunk boundaries: a tiny CHUNK makes every line straddle one ------------------------------


def reference(data: bytes) -> list[str]:
    """What the lines are, by definition: split on \\n, no empty line after a final \\n."""
    lines = data.split(b"\n")
    if lines[-1] == b"":
        lines.pop()
    return [line.decode("utf-8", "replace").removesuffix("\r") for line in lines]


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    data=st.lists(
        st.sampled_from([b"a", b"\n", b"\r\n", b"\xc3\xa9", b"xyz", b"\n\n"]), max_size=40
    ).map(b"".join),
    chunk=st.sampled_from([1, 2, 3, 7, 1 << 20]),
    offset=st.integers(1, 12),
    limit=st.integers(1, 5),
)
def test_pages_agree_with_the_definition(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    data: bytes,
    chunk: int,
    offset: int,
    limit: int,
) -> None:
    monkeypatch.setattr(module, "CHUNK", chunk)
    write(tmp_path, "p.txt", data)
    expected = reference(data)
    total = len(expected)
    try:
        lines = read(tmp_path, "p.txt", offset=offset, limit=limit).split("\n")
    except ToolError as refused:
        assert offset > total > 0 and f"which has {total} lines" in str(refused)
        return
    if total == 0:
        assert lines == ["p.txt (empty file)"]  # whatever the offset
        return
    shown = expected[offset - 1 : offset - 1 + limit]
    last = offset + len(shown) - 1
    assert lines[0] == f"p.txt (lines {offset}-{last} of {total})"
    numbered = [re.fullmatch(r" *(\d+)  (.*)", line, re.DOTALL) for line in lines[1:]]
    assert [m.group(2) for m in numbered[: len(shown)] if m] == shown
    assert [int(m.group(1)) for m in numbered[: len(shown)] if m] == list(range(offset, last + 1))
    if last < total:
        assert lines[-1] == f"(lines {last + 1}-{total} remain; read on with offset={last + 1})"
