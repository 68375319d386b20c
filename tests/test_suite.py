"""The suite itself: it never reads a student's working copy, and it marks its slow tests.

A student solves labs/day03-lab.ipynb in the clone and runs the README's test command there, so no
test may open labs/day03-*.ipynb: they use starters released from labs/source/ (tests/starters.py).
Not checked: a path to the labs spelled some other way than these patterns (review catches those).
"""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import extension_lab
import lab_class
import test_lab
from conftest import is_slow

from course_agent.lab.kernel import run_notebook

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent
# A path into the checkout's labs/ that names a student notebook: LABS / "day03-...",
# REPO / "labs" / "day03-...", or REPO / "labs/day03-...". A tmp clone's `repo / ...` is fine.
WORKING_COPY = re.compile(
    r"""\bLABS\s*/\s*["']day03-"""
    r"""|\bREPO\s*/\s*["']labs["']\s*/\s*["']day03-"""
    r"""|\bREPO\s*/\s*["']labs/day03-"""
)


def test_no_test_builds_a_path_to_a_student_notebook_in_the_checkout() -> None:
    found = [
        f"{path.name}:{number}: {line.strip()}"
        for path in sorted(TESTS.glob("*.py"))
        if path.name != "test_suite.py"
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if WORKING_COPY.search(line)
    ]
    assert not found, "use tests/starters.py instead:\n" + "\n".join(found)


def test_the_pattern_finds_each_way_of_writing_it() -> None:
    for line in [
        'RELEASE = LABS / "day03-lab.ipynb"',
        'REPO / "labs" / "day03-extensions.ipynb"',
        'nbformat.read(REPO / "labs/day03-lab.ipynb")',
    ]:
        assert WORKING_COPY.search(line), line
    assert not WORKING_COPY.search('hand_in(notebook, root, at="labs/day03-lab.ipynb")')
    assert not WORKING_COPY.search('(repo / "labs" / "day03-lab.ipynb").unlink()')  # a tmp clone


def test_the_starters_the_tests_use_are_outside_the_checkout() -> None:
    for starter in (lab_class.RELEASE, extension_lab.RELEASE, test_lab.RELEASE):
        assert not starter.resolve().is_relative_to(REPO), starter
        assert starter.name in ("day03-lab.ipynb", "day03-extensions.ipynb")


def start_a_kernel() -> object:  # a helper of a test module, as a new test file would have one
    return run_notebook


def item(function: object, filename: str = "test_new.py", fixtures: tuple = ()) -> Any:
    """A collected test as conftest.is_slow reads it."""
    defs = {getattr(f, "__name__", "f"): [SimpleNamespace(func=f)] for f in fixtures}
    info = SimpleNamespace(name2fixturedefs=defs)
    return SimpleNamespace(path=TESTS / filename, function=function, _fixtureinfo=info)


# What a new test file might hold, compiled at run time: this test's own code names no kernel, so
# it stays in the quick subset (conftest reads the names a test's code uses).
NEW_FILE = """
def quick():
    assert lab_class.solved()

def through_a_helper():
    assert start_a_kernel()

def fixture_handing_in():
    lab_class.hand_in
"""


def test_a_new_test_is_slow_by_what_it_uses_not_by_its_name() -> None:
    # The helper by its name as a string: a name in this test's code would make it slow too.
    new: dict[str, Any] = {"lab_class": lab_class, "start_a_kernel": globals()["start_a_kernel"]}
    exec(compile(NEW_FILE, "<a new test file>", "exec"), new)
    quick, through_a_helper = new["quick"], new["through_a_helper"]
    assert not is_slow(item(quick))
    assert is_slow(item(through_a_helper))  # followed into the helper
    assert is_slow(item(quick, fixtures=(new["fixture_handing_in"],)))  # and into its fixtures
    assert is_slow(item(quick, filename="test_lab_handin.py"))  # a file whose helpers hide them
    assert not is_slow(item(test_a_new_test_is_slow_by_what_it_uses_not_by_its_name))
