"""read_file: header, numbered lines, paging, long lines, encodings and refusals."""

from __future__ import annotations

import codecs
import contextlib
import os
import re
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from course_agent.protocol import ToolContext, ToolError
from course_agent.safety import redaction
from course_agent.tools import read_file as module
from course_agent.tools.guards import textfile
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


@pytest.mark.parametrize("offset", [1, 4000])
def test_a_nul_anywhere_in_what_is_read_is_binary_as_grep_says(tmp_path: Path, offset: int) -> None:
    # grep's rule (rg --count): a NUL byte anywhere in the file. A small file is read whole,
    # so a NUL past the page, past the first 8 KB, still makes it binary.
    write(tmp_path, "late.txt", "x\n" * 5000 + "\0\n")
    with pytest.raises(ToolError, match=r"late.txt is a binary file \(10,002 bytes\)"):
        read(tmp_path, "late.txt", offset=offset, limit=1)


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
    monkeypatch.setattr(textfile, "CHUNK", chunk)
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


# -- key files: refused with a reason the model can act on --------------------------------------


@pytest.mark.parametrize(
    "name",
    [".env", ".env.local", "config/.env.production", "server.pem", "tls/site.key", "id_rsa",
     "id_rsa.pub", ".netrc", ".pypirc", ".ENV"],
)  # fmt: skip
def test_key_files_are_refused(tmp_path: Path, name: str) -> None:
    write(tmp_path, name, "OPENAI_API_KEY=sk-live-123\n")
    with pytest.raises(ToolError, match=re.escape(f"{name} is a key file")) as refused:
        read(tmp_path, name)
    assert "sk-live-123" not in str(refused.value) and "read the code" in str(refused.value).lower()


def test_a_symlink_to_a_key_file_is_refused(tmp_path: Path) -> None:
    write(tmp_path, ".env", "OPENAI_API_KEY=sk-live-123\n")
    (tmp_path / "notes.txt").symlink_to(".env")
    with pytest.raises(ToolError, match="is a key file"):
        read(tmp_path, "notes.txt")


@pytest.mark.parametrize("path", [".env/bin/activate", "a/deploy.key/config", "link/activate"])
def test_files_in_a_folder_named_like_a_key_file_are_refused(tmp_path: Path, path: str) -> None:
    # grep never searches below .env/ (ripgrep's exclusion of .env covers the folder): read_file
    # does not read there either, however the path is spelt.
    write(tmp_path, ".env/bin/activate", "OPENAI_API_KEY=sk-live-123\n")
    write(tmp_path, "a/deploy.key/config", "OPENAI_API_KEY=sk-live-123\n")
    (tmp_path / "link").symlink_to(".env/bin")
    with pytest.raises(ToolError, match="named like one") as refused:
        read(tmp_path, path)
    assert "sk-live-123" not in str(refused.value)


@pytest.mark.parametrize("name", ["env.txt", ".envrc.md", "keys.py", "monkey", "pem.txt"])
def test_names_that_only_look_alike_are_read(tmp_path: Path, name: str) -> None:
    write(tmp_path, name, "x\n")
    assert read(tmp_path, name).startswith(f"{name} (lines 1-1 of 1)")


# -- a growing file ends ------------------------------------------------------------------------


def reader_of(path: Path, own: int) -> int | None:
    """The descriptor other than `own` on which this process holds `path` open (Linux)."""
    for name in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):
            if int(name) != own and os.readlink(f"/proc/self/fd/{name}") == str(path):
                return int(name)
    return None


def position_of(fd: int) -> int:
    """How far the kernel says descriptor `fd` has read: the "pos:" line of its fdinfo."""
    with contextlib.suppress(OSError):
        for line in Path(f"/proc/self/fdinfo/{fd}").read_text().splitlines():
            if line.startswith("pos:"):
                return int(line.split()[1])
    return 0


@pytest.mark.timeout(60)
@pytest.mark.skipif(not os.path.isdir("/proc/self/fdinfo"), reason="needs /proc to watch reads")
def test_a_file_appended_to_while_it_is_read_ends(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Another thread keeps the log 64 KB ahead of wherever read_file has read to, like a log
    # written faster than it is read. The old reader chased it until the writer gave up at
    # 4 MB; this one stops at the size the file had when it was opened.
    monkeypatch.setattr(textfile, "CHUNK", 1)  # slow enough for the writer to keep ahead
    path = write(tmp_path, "live.log", "first\n" * 20_000).resolve()  # 120 KB
    stop, capped = threading.Event(), threading.Event()

    def append() -> None:
        with open(path, "ab", buffering=0) as log:
            written, reader = 0, None
            while not stop.wait(0.0005):
                reader = reader or reader_of(path, log.fileno())
                if reader is None or position_of(reader) < os.fstat(log.fileno()).st_size - 65536:
                    continue  # not opened yet, or still far from the end
                if written >= 4 << 20:
                    capped.set()
                    return
                log.write(b"more\n" * 13_107)  # 64 KB
                written += 65535

    monkeypatch.setattr(textfile, "TIME_BUDGET_S", 60.0)  # 1-byte chunks: slow on purpose
    writer = threading.Thread(target=append)
    writer.start()
    try:
        header = read(tmp_path, "live.log", limit=1).split("\n")[0]
    finally:
        stop.set()
        writer.join()
    assert not capped.is_set(), "read_file followed the writer to its end"
    assert header == "live.log (lines 1-1 of 20000)"


# -- pages without recounting --------------------------------------------------------------------


def test_the_line_count_is_remembered_per_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = textfile.IndexCache(64)
    monkeypatch.setattr(textfile, "INDEXES", cache)
    monkeypatch.setattr(textfile, "SETTLED_NS", 0)  # settled at once, not 2 s after its ctime
    write(tmp_path, "big.txt", "".join(f"row {n}\n" for n in range(1, 1001)))
    assert read(tmp_path, "big.txt", limit=1).startswith("big.txt (lines 1-1 of 1000)")
    assert read(tmp_path, "big.txt", offset=401, limit=1).split("\n")[1] == "401  row 401"
    assert (cache.misses, cache.hits) == (1, 1)


# -- what was opened is checked, not only what was named ------------------------------------------


@pytest.fixture
def swappable(tmp_path: Path) -> Path:
    """root/sub/f.txt inside, and outside/f.txt with the same name: a swap turns one into the
    other."""
    root = tmp_path / "root"
    write(root, "sub/f.txt", "inside\n")
    write(tmp_path, "outside/f.txt", "OUTSIDE-SECRET\n")
    return root


def swap_out(root: Path) -> None:
    """Replace the directory root/sub by a symlink to ../outside."""
    os.rename(root / "sub", root / "sub.real")
    (root / "sub").symlink_to(root.parent / "outside")


def swap_back(root: Path) -> None:
    os.unlink(root / "sub")
    os.rename(root / "sub.real", root / "sub")


def test_a_directory_swapped_after_the_check_is_refused(
    swappable: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_resolve = module.resolve_inside

    def resolve_then_swap(root: Path, path: str) -> Path:
        target = real_resolve(root, path)  # the check passes on the real directory ...
        swap_out(swappable)  # ... which then becomes a symlink leading out
        return target

    monkeypatch.setattr(module, "resolve_inside", resolve_then_swap)
    with pytest.raises(ToolError, match="changed while it was being opened") as refused:
        read(swappable, "sub/f.txt")
    assert "OUTSIDE-SECRET" not in str(refused.value)


SWAPPER = """
import os, sys
root = sys.argv[1]
sub, real, out = os.path.join(root, "sub"), os.path.join(root, "sub.real"), sys.argv[2]
print("ready", flush=True)
while True:
    os.rename(sub, real)
    os.symlink(out, sub)
    os.unlink(sub)
    os.rename(real, sub)
"""


@pytest.mark.timeout(120)
def test_a_directory_swapped_in_a_loop_is_never_read_through(swappable: Path) -> None:
    # Another process (truly in parallel: no shared GIL) swaps the directory back and forth.
    outside = swappable.parent / "outside"
    swapper = subprocess.Popen(
        [sys.executable, "-c", SWAPPER, str(swappable), str(outside)],
        stdout=subprocess.PIPE,
        text=True,
    )
    outcomes: list[str] = []
    try:
        assert swapper.stdout is not None and swapper.stdout.readline() == "ready\n"
        for _ in range(1000):
            try:
                outcomes.append(read(swappable, "sub/f.txt"))
            except ToolError as refused:
                outcomes.append(str(refused))
        assert swapper.poll() is None  # it swapped all along
    finally:
        swapper.kill()
        swapper.wait()
    assert not [text for text in outcomes if "OUTSIDE-SECRET" in text]


# -- a configured key is redacted before a long line is cut ----------------------------------------

KEY = "sk-proj-ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"  # 44 characters


@pytest.fixture
def known_key(monkeypatch: pytest.MonkeyPatch) -> None:
    """KEY is a key this process read (as settings register one), for this test only."""
    monkeypatch.setattr(redaction, "_KNOWN", set())
    redaction.remember_secrets([KEY])


def read_with_key(root: Path, path: str) -> str:
    return run_read_file(ReadFileArgs(path=path), ToolContext(root)).content


def test_a_key_across_the_500_character_cut_leaves_no_prefix(
    tmp_path: Path, known_key: None
) -> None:
    write(tmp_path, "a.txt", "k = '" + "x" * 480 + KEY + "'\n")
    line = read_with_key(tmp_path, "a.txt").split("\n")[1]
    assert line == "1  k = '" + "x" * 480 + "[redacted]'"


def test_a_key_cut_where_the_line_stopped_being_kept_leaves_no_prefix(
    tmp_path: Path, known_key: None
) -> None:
    # A line's first 500 characters and the longest spelling of a key more are kept, so the last
    # key kept may be cut part-way. Redacted, the line is short, and that part would show.
    write(tmp_path, "a.txt", f"{KEY} " * 20 + "\n")
    line = read_with_key(tmp_path, "a.txt").split("\n")[1]
    kept = line.removeprefix("1  ").removesuffix("… [line cut at 500 of 900 characters]")
    assert kept != line and set(kept.split(" ")) <= {"[redacted]", ""}  # whole keys, then the cut


# -- a large file: the first page without counting the whole file; every call within its budget --


def bytes_read_by(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """A list that each read of a page adds its byte count to (textfile's `_bounded` reads)."""
    seen: list[int] = []
    bounded = textfile._bounded

    def counting(file, size):  # type: ignore[no-untyped-def]
        read = bounded(file, size)

        def counted(n: int) -> bytes:
            data = read(n)
            seen.append(len(data))
            return data

        return counted

    monkeypatch.setattr(textfile, "_bounded", counting)
    return seen


def test_the_first_page_of_a_large_file_does_not_count_it_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # 12 MB of 12-byte lines: the old reader counted all 1,000,000 lines before answering.
    path = tmp_path / "big.txt"
    path.write_bytes(b"".join(b"row %07d\n" % n for n in range(1, 1_000_001)))
    seen = bytes_read_by(monkeypatch)
    lines = read(tmp_path, "big.txt", limit=3).split("\n")
    assert sum(seen) <= textfile.CHUNK  # the chunk the page ends in, not 12 MB
    assert lines[0] == "big.txt (lines 1-3 of at least 87,381; the file is 12.0 MB)"
    assert lines[1:] == [
        "1  row 0000001",
        "2  row 0000002",
        "3  row 0000003",
        "(more lines remain; read on with offset=4)",
    ]


def test_a_small_file_is_still_counted_exactly(tmp_path: Path) -> None:
    write(tmp_path, "mid.txt", "".join(f"{n}\n" for n in range(300_000)))  # 1.9 MB
    assert read(tmp_path, "mid.txt", limit=1).split("\n")[0] == "mid.txt (lines 1-1 of 300000)"


def test_a_page_deep_in_a_large_file_is_exact_once_a_page_reached_the_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(textfile, "INDEXES", textfile.IndexCache(64))
    monkeypatch.setattr(textfile, "SETTLED_NS", 0)
    write(tmp_path, "big.txt", "".join(f"row {n}\n" for n in range(1, 700_001)))  # 6.6 MB
    last = read(tmp_path, "big.txt", offset=700_000).split("\n")
    assert last[:2] == ["big.txt (lines 700000-700000 of 700000)", "700000  row 700000"]
    # The end was reached: the first page now knows the total, from the remembered index.
    assert read(tmp_path, "big.txt", limit=1).split("\n")[0] == "big.txt (lines 1-1 of 700000)"


@pytest.mark.timeout(60)
def test_a_100_gb_sparse_file_is_answered_within_one_chunk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Hole: the whole file was counted first (82 s for 10 GB). Text first, then 100 GB of zeros
    # (a hole in the file: no disk used): the first chunk read holds NUL bytes, so it is binary,
    # as grep says, and nothing past that chunk is read.
    path = tmp_path / "sparse.log"
    path.write_bytes(b"start\n" * 2000)
    try:
        os.truncate(path, 100 * 10**9)
    except OSError:
        pytest.skip("this file system cannot hold a 100 GB sparse file")
    monkeypatch.setattr(textfile, "INDEXES", textfile.IndexCache(64))
    seen = bytes_read_by(monkeypatch)
    for offset in (1, 2001, 5000):
        with pytest.raises(ToolError, match=r"sparse.log is a binary file \(100,000,000,000 bytes"):
            read(tmp_path, "sparse.log", offset=offset, limit=2)
    assert sum(seen) <= 3 * textfile.CHUNK


class SteppingClock:
    """A stand-in for the time module whose monotonic clock moves `step` seconds at each look
    (and whose wall clock says every file changed just now: no index is remembered)."""

    def __init__(self, step: float) -> None:
        self.now, self.step = 0.0, step

    def monotonic(self) -> float:
        self.now += self.step
        return self.now

    def time_ns(self) -> int:
        return 0


def test_a_line_longer_than_the_time_allows_is_cut_and_said_to_be_a_lower_bound(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # One 16 MiB text line, and a clock that moves 10 ms at each look: the budget (0.15 s) runs
    # out inside the line, so the page says what was read of it, cut, as a lower bound.
    write(tmp_path, "one.log", b"start\n" + b"a" * (16 << 20) + b"\nend\n")
    monkeypatch.setattr(textfile, "time", SteppingClock(0.01))
    monkeypatch.setattr(textfile, "CHUNK", 64 << 10)
    monkeypatch.setattr(textfile, "INDEXES", textfile.IndexCache(64))
    seen = bytes_read_by(monkeypatch)
    lines = read(tmp_path, "one.log", offset=2).split("\n")
    assert lines[0] == (
        "one.log (lines 2-2 of at least 2; the file is 16.8 MB; reading stopped after 0.15 s)"
    )
    assert re.fullmatch(r"2  a{500}… \[line cut at 500 of at least [\d,]+ characters\]", lines[1])
    assert sum(seen) < 16 << 20  # stopped by the time budget, not by the line's end


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="needs Linux's /proc")
def test_a_file_whose_size_says_zero_is_read_bounded() -> None:
    # Hole: /proc/self/status has size 0 and read as "(empty file)".
    assert os.stat("/proc/self/status").st_size == 0
    lines = read(Path("/proc"), "self/status").split("\n")
    assert re.fullmatch(r"\d+/status \(lines 1-\d+ of \d+\)", lines[0])
    assert lines[1].split()[1:2] == ["Name:"]


def test_a_truly_empty_file_is_still_empty(tmp_path: Path) -> None:
    write(tmp_path, "empty.txt", "")
    assert read(tmp_path, "empty.txt") == "empty.txt (empty file)"


@pytest.mark.parametrize(
    ("line", "length"),
    [
        (b"c" * 600 + b"\r\n", 600),  # CRLF: the \r belongs to the line break
        (b"\xff" * 600 + b"\n", 600),  # each invalid byte shows as one U+FFFD
        (b"\xc0\x80" * 300 + b"\n", 600),  # an overlong sequence: two U+FFFD, not one
        (b"\x80" * 600 + b"\n", 600),  # lone continuation bytes: one U+FFFD each
        ("é".encode() * 600 + b"\r\n", 600),
    ],
)
def test_the_cut_note_counts_the_characters_shown(tmp_path: Path, line: bytes, length: int) -> None:
    write(tmp_path, "cut.txt", line + b"next\r\n")
    shown = read(tmp_path, "cut.txt").split("\n")
    assert shown[1].endswith(f"… [line cut at 500 of {length} characters]")
    assert shown[2] == "2  next"
    # What it counts is what `sed` shows of the line, decoded as the page decodes it.
    expected = line.rstrip(b"\n").removesuffix(b"\r").decode("utf-8", "replace")
    assert len(expected) == length and shown[1][3:503] == expected[:500]


def test_a_crlf_line_of_exactly_500_characters_is_not_cut(tmp_path: Path) -> None:
    write(tmp_path, "edge.txt", b"b" * 500 + b"\r\n")
    assert read(tmp_path, "edge.txt").split("\n")[1] == "1  " + "b" * 500
