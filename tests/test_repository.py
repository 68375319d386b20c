import hashlib
import re

from hypothesis import given
from hypothesis import strategies as st

from course_agent.offline.repository import BIG_FILE, BUGGY_FILE, build_sandbox, sandbox_files


def test_sandbox_is_the_same_bytes_every_time(tmp_path):
    first = build_sandbox(tmp_path / "a")
    second = build_sandbox(tmp_path / "b")
    digest = lambda root: hashlib.sha256(  # noqa: E731
        b"".join(p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file())
    ).hexdigest()
    assert digest(first) == digest(second)


def test_big_file_is_over_38000_characters_and_buggy_file_has_13_lines(tmp_path):
    root = build_sandbox(tmp_path)
    assert len((root / BIG_FILE).read_text()) > 38000
    assert (root / BUGGY_FILE).read_text().count("\n") == 13  # the course's "lines 1-13 of 13"
    assert "Math.floor(a / b)" in (root / BUGGY_FILE).read_text()


def test_sandbox_holds_a_red_test_and_a_skipped_dependency(tmp_path):
    files = sandbox_files()
    assert "divide(7, 2), 3.5" in files["test/calc.test.js"]
    assert any(path.startswith("node_modules/") for path in files)
    assert build_sandbox(tmp_path).name == "sandbox"


@given(st.integers(min_value=0, max_value=2**31))
def test_a_seed_changes_digits_never_lengths(seed):
    # The grader's seed makes answers recorded elsewhere useless, while every figure the course
    # prints (38,xxx chars in, 8054 fed back; 50, 361, 386 in the offline run) stays the same.
    course, seeded = sandbox_files(), sandbox_files(seed)
    assert {path: len(text) for path, text in seeded.items()} == {
        path: len(text) for path, text in course.items()
    }
    assert seeded[BIG_FILE] != course[BIG_FILE]
    assert seeded == sandbox_files(seed)


def test_a_seeded_repository_keeps_its_red_test_and_its_bug(tmp_path):
    root = build_sandbox(tmp_path, seed=7)
    test_js = (root / "test/calc.test.js").read_text()
    half = re.search(r"divide\((\d), (\d)\), (\d\.\d)\)", test_js)
    assert half and int(half[1]) / int(half[2]) == float(half[3]) != int(half[1]) // int(half[2])
    assert "Math.floor(a / b)" in (root / BUGGY_FILE).read_text()
