"""A grader's and a hand-in's start skip jsonschema's IRI grammar, and lose nothing else by it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from lab_class import HANDIN, LABS, RELEASE

REPO = LABS.parent

IMPORTED_LATER = """
import sys
from course_agent.lab.iri_grammar import skip_iri_grammar
skip_iri_grammar()
import jsonschema
checker = jsonschema.FormatChecker()
print("iri" in checker.checkers, checker.conforms("2026-12-02", "date"))
print(checker.conforms("not a date", "date"))
try:
    import rfc3987_syntax
except ImportError:
    print("blocked")
"""


def imported_modules(stderr: str) -> dict[str, int]:
    """`-X importtime`'s lines, "import time: self | cumulative | name": name -> microseconds."""
    lines = [line.split("|") for line in stderr.splitlines() if line.count("|") == 2]
    return {name.strip(): int(total) for _, total, name in lines if total.strip().isdigit()}


def test_the_hand_in_starts_without_building_the_grammar(tmp_path: Path) -> None:
    # A clone's layout: pyproject.toml (whose addopts load the plugin) above labs/.
    (tmp_path / "labs").mkdir()
    (tmp_path / "pyproject.toml").write_bytes((REPO / "pyproject.toml").read_bytes())
    (tmp_path / "labs" / "conftest.py").write_bytes((LABS / "conftest.py").read_bytes())
    (tmp_path / "labs" / "day03-lab.ipynb").write_bytes(RELEASE.read_bytes())
    words = HANDIN.split()[1:]
    command = [sys.executable, "-X", "importtime", *words, "--collect-only", "-q"]
    done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert "tests collected" in done.stdout, done.stdout + done.stderr[-2000:]
    imported = imported_modules(done.stderr)
    assert "nbval.kernel" in imported and "jsonschema" in imported
    assert "lark" not in imported and imported.get("rfc3987_syntax", 0) < 1000


def test_jsonschema_still_loads_and_only_that_import_fails() -> None:
    done = subprocess.run(
        [sys.executable, "-c", IMPORTED_LATER], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    # The one format left unchecked is "iri"; the others (a date, say) still are.
    assert done.stdout.splitlines() == ["False True", "False", "blocked"]


def test_the_hand_in_reads_no_option_the_students_install_lacks(tmp_path: Path) -> None:
    # The student's `lab` install has no pytest-timeout (nor anything else of `test`): every
    # pyproject option must be one core pytest or nbval knows, or it warns in every hand-in.
    (tmp_path / "labs").mkdir()
    (tmp_path / "pyproject.toml").write_bytes((REPO / "pyproject.toml").read_bytes())
    (tmp_path / "labs" / "conftest.py").write_bytes((LABS / "conftest.py").read_bytes())
    (tmp_path / "labs" / "day03-lab.ipynb").write_bytes(RELEASE.read_bytes())
    without = ["-p", "no:timeout", "-p", "no:xdist", "-p", "no:hypothesispytest"]
    command = [sys.executable, *HANDIN.split()[1:], *without, "--collect-only", "-q", "-W", "error"]
    done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "Unknown config option" not in done.stdout + done.stderr, (
        done.stdout[-2000:] + done.stderr[-2000:]
    )
