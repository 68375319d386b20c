"""textfile: pages agree with the definition of a line, from a fresh pass or from the remembered
index; the index is used, bounded, and forgotten when the file changes; a growing file ends."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import IO

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from course_agent.tools.guards import textfile
from course_agent.tools.guards.textfile import IndexCache, LineIndex, Page, read_page

KEEP = 100
LONG_AGO = 1_600_000_000  # an mtime well in the past: the file has settled, its count is kept


@pytest.fixture(autouse=True)
def fresh_cache(monkeypatch: pytest.MonkeyPatch) -> Iterator[IndexCache]:
    cache = IndexCache(64)
    monkeypatch.setattr(textfile, "INDEXES", cache)
    # A file counts as settled 2 s after its last change (its ctime, which no one can set
    # back): here at once, so tests need not wait; the test of fresh files puts it back.
    monkeypatch.setattr(textfile, "SETTLED_NS", 0)
    yield cache


def settled(path: Path, data: bytes, mtime: int = LONG_AGO) -> Path:
    path.write_bytes(data)
    os.utime(path, (mtime, mtime))
    return path


class Counting:
    """A file that counts the bytes read from it: the cost of a page, measured without a clock."""

    def __init__(self, file: IO[bytes]) -> None:
        self.file, self.bytes_read = file, 0

    def read(self, n: int = -1) -> bytes:
        data = self.file.read(n)
        self.bytes_read += len(data)
        return data

    def seek(self, offset: int) -> int:
        return self.file.seek(offset)

    def tell(self) -> int:
        return self.file.tell()


def page(path: Path, first: int, limit: int, encoding: str | None = None) -> tuple[Page, int]:
    """A page of `path` and how many bytes were read to get it."""
    with open(path, "rb") as raw:
        file = Counting(raw)
        if encoding is not None:
            file.seek(0)
        got = read_page(file, os.fstat(raw.fileno()), encoding, first, limit, KEEP)  # type: ignore[arg-type]
        return got, file.bytes_read


def reference(data: bytes) -> list[str]:
    """What the lines are, by definition: split on \\n, no empty line after a final \\n; the
    \\r of a CRLF belongs to the line break (a last line without \\n keeps its \\r)."""
    *ended, last = data.split(b"\n")
    lines = [line.removesuffix(b"\r") for line in ended] + ([last] if last else [])
    return [line.decode("utf-8", "replace")[:KEEP] for line in lines]


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    data=st.lists(
        st.sampled_from([b"a", b"\n", b"\r\n", b"\xc3\xa9", b"xyz", b"\n\n"]), max_size=60
    ).map(b"".join),
    chunk=st.sampled_from([1, 2, 3, 7, 1 << 20]),
    calls=st.lists(st.tuples(st.integers(1, 25), st.integers(1, 5)), min_size=2, max_size=5),
)
def test_pages_fresh_or_from_the_index_agree_with_the_definition(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    data: bytes,
    chunk: int,
    calls: list[tuple[int, int]],
) -> None:
    monkeypatch.setattr(textfile, "CHUNK", chunk)
    cache = IndexCache(64)
    monkeypatch.setattr(textfile, "INDEXES", cache)
    path = settled(tmp_path / "p.txt", data)
    expected = reference(data)
    for first, limit in calls:
        got, _ = page(path, first, limit)
        assert got.total == len(expected)
        assert [text for text, _ in got.lines] == expected[first - 1 : first - 1 + limit]
    # A file whose size says 0 may be /proc's, which reads differently each time: not remembered.
    assert (cache.misses, cache.hits) == ((1, len(calls) - 1) if data else (0, 0))


def test_the_second_page_reads_what_the_page_needs_not_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fresh_cache: IndexCache
) -> None:
    monkeypatch.setattr(textfile, "CHUNK", 4096)
    data = b"".join(b"row %06d\n" for n in range(50_000))  # 550,000 bytes
    path = settled(tmp_path / "big.txt", data)
    first, cost = page(path, 40_000, 10)
    assert first.total == 50_000 and cost == len(data)  # the first call counts every line
    again, cost = page(path, 40_000, 10)
    assert again == first and fresh_cache.hits == 1
    assert cost <= 2 * 4096  # from the line start remembered just before line 40,000


def test_a_changed_file_is_counted_afresh(tmp_path: Path, fresh_cache: IndexCache) -> None:
    path = settled(tmp_path / "a.txt", b"one\ntwo\n")
    assert page(path, 1, 1)[0].total == 2
    assert page(path, 1, 1)[0].total == 2 and fresh_cache.hits == 1
    settled(path, b"one\n\n\n\n", mtime=LONG_AGO + 1)  # same size, another mtime
    assert page(path, 1, 1)[0].total == 4 and fresh_cache.misses == 2


def test_a_file_rewritten_with_the_same_size_and_mtime_is_counted_afresh(
    tmp_path: Path, fresh_cache: IndexCache
) -> None:
    # Its mtime set back to what it was (os.utime), the rewrite kept (device, inode, size,
    # mtime): the old count came back. The ctime, which utime sets to now, tells them apart.
    path = settled(tmp_path / "a.txt", b"one\ntwo\n")
    changed = os.stat(path).st_ctime_ns
    assert page(path, 1, 1)[0].total == 2
    while os.stat(path).st_ctime_ns == changed:  # the next tick of the file system's clock
        settled(path, b"one\n\n\n\n\n")  # the same size and mtime
    assert page(path, 1, 1)[0].total == 5 and fresh_cache.misses == 2


def test_a_file_written_just_now_is_not_remembered(
    tmp_path: Path, fresh_cache: IndexCache, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Rewritten within the same tick of the clock and at the same size, it would look unchanged.
    # Its mtime set back does not make it settled: its ctime is now.
    monkeypatch.setattr(textfile, "SETTLED_NS", 2_000_000_000)
    path = settled(tmp_path / "fresh.txt", b"a\nb\n")
    page(path, 1, 1)
    page(path, 1, 1)
    assert (fresh_cache.misses, fresh_cache.hits, len(fresh_cache)) == (2, 0, 0)


def test_the_cache_is_bounded_and_drops_the_least_recently_used() -> None:
    cache = IndexCache(3)
    for n in range(5):
        cache.put((0, n, 0, 0), LineIndex(n))
        cache.get((0, 2, 0, 0))  # kept in use: never the one dropped
    assert len(cache) == 3
    assert cache.get((0, 0, 0, 0)) is None and cache.get((0, 1, 0, 0)) is None
    assert cache.get((0, 2, 0, 0)) == LineIndex(2)


def test_marks_per_file_are_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(textfile, "CHUNK", 64)
    path = settled(tmp_path / "many.txt", b"x\n" * 200_000)
    page(path, 1, 1)
    (index,) = textfile.INDEXES._indexes.values()
    assert 0 < len(index.marks) <= textfile.MARKS_PER_FILE


def test_utf16_pages_use_the_remembered_count(tmp_path: Path, fresh_cache: IndexCache) -> None:
    path = settled(tmp_path / "w.txt", "\ufeffa\nb\nc\n".encode("utf-16-le"))
    assert page(path, 2, 1, "utf-16")[0] == Page(2, [("b", 1)], 3)
    assert page(path, 3, 1, "utf-16")[0] == Page(3, [("c", 1)], 3)
    assert fresh_cache.hits == 1


# -- a growing file ends ------------------------------------------------------------------------


def test_lines_appended_after_opening_are_not_counted(tmp_path: Path) -> None:
    path = tmp_path / "log.txt"
    path.write_bytes(b"before\n" * 10)
    with open(path, "rb") as file:
        info = os.fstat(file.fileno())
        with open(path, "ab") as writer:  # another writer appends after we opened
            writer.write(b"after\n" * 100_000)
        got = read_page(file, info, None, 1, 3, KEEP)
    assert got.total == 10 and [text for text, _ in got.lines] == ["before"] * 3


class Endless:
    """A file that never ends, as a log written faster than it is read: every read has more."""

    def __init__(self) -> None:
        self.position = 0

    def read(self, n: int = -1) -> bytes:
        data = b"x\n" * max(1, n // 2)
        self.position += len(data)
        return data

    def seek(self, offset: int) -> int:
        self.position = offset
        return offset

    def tell(self) -> int:
        return self.position


@pytest.mark.timeout(30)
def test_a_file_that_never_ends_is_read_up_to_its_size_at_opening(tmp_path: Path) -> None:
    path = tmp_path / "size.txt"
    path.write_bytes(b"x\n" * 500)  # only its stat is used: 1000 bytes at opening
    got = read_page(Endless(), os.stat(path), None, 1, 2, KEEP)  # type: ignore[arg-type]
    assert got.total == 500 and got.lines == [("x", 1), ("x", 1)]


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    data=st.lists(st.sampled_from([b"a", b"\n", b"xyz", b"\n\n", b"\xc3\xa9"]), max_size=60).map(
        b"".join
    ),
    chunk=st.sampled_from([1, 2, 3, 7]),
    calls=st.lists(st.tuples(st.integers(1, 25), st.integers(1, 5)), min_size=1, max_size=6),
)
def test_uncounted_pages_agree_and_their_totals_are_true_lower_bounds(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    data: bytes,
    chunk: int,
    calls: list[tuple[int, int]],
) -> None:
    # Every file "large": counted only as far as its pages reach, from what earlier calls learnt.
    monkeypatch.setattr(textfile, "CHUNK", chunk)
    monkeypatch.setattr(textfile, "EXACT_BYTES", 0)
    monkeypatch.setattr(textfile, "INDEXES", IndexCache(64))
    path = settled(tmp_path / "p.txt", data)
    expected = reference(data)
    for first, limit in calls:
        got, _ = page(path, first, limit)
        assert [text for text, _ in got.lines] == expected[first - 1 : first - 1 + limit]
        assert got.total == len(expected) if got.exact else got.total <= len(expected)
        assert got.total >= first - 1 + len(got.lines) or not got.lines


def test_a_spent_budget_ends_the_page_and_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(textfile, "TIME_BUDGET_S", 0.0)
    path = settled(tmp_path / "p.txt", b"a\nb\n")
    got, cost = page(path, 1, 5)
    # Past the deadline one more read says whether the file ended; what it brought is uncounted.
    assert got == Page(1, [], 0, exact=False, stopped=True) and cost <= textfile.CHUNK


def test_a_file_that_ends_as_the_budget_runs_out_is_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # CI's flake: a 2-byte file, the machine busy between the first read and the one that finds
    # the end, was "lines 1-1 of at least 1; reading stopped after 0.15 s".
    clock = iter([0.0, 0.0])  # the deadline, then the first read's check; later ones are late
    late_clock = SimpleNamespace(monotonic=lambda: next(clock, 1.0), time_ns=time.time_ns)
    monkeypatch.setattr(textfile, "time", late_clock)
    path = settled(tmp_path / "p.txt", b"x\n")
    got, _ = page(path, 1, 5)
    assert got.stopped is False and got.exact is True and got.total == 1
