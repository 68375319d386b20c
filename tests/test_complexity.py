"""No function in the package is more complex than radon's grade C (cyclomatic complexity 20).

The course's functions read as a few named steps on one screen; a function graded D or worse has
become a maze. Deliberately not handled: the few listed below, kept at their figure until their
modules' owners split them (a listed one that grows, or a new one above C, fails).
"""

from __future__ import annotations

from pathlib import Path

from radon.complexity import cc_rank, cc_visit

PACKAGE = Path(__file__).resolve().parent.parent / "course_agent"
# path:function -> the complexity it may not exceed while it waits to be split.
WAITING = {
    "safety/redaction.py:_Cutter.__init__": 24,
}


def complexities() -> dict[str, int]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        for block in cc_visit(path.read_text(encoding="utf-8")):
            found[f"{path.relative_to(PACKAGE)}:{block.fullname}"] = block.complexity
    return found


def test_radon_grades_as_the_test_reads_it() -> None:
    assert (cc_rank(20), cc_rank(21)) == ("C", "D")


def test_no_function_is_graded_above_c() -> None:
    above = {
        name: score
        for name, score in complexities().items()
        if cc_rank(score) not in "ABC" and score > WAITING.get(name, 20)
    }
    assert above == {}, "split these into named steps: " + ", ".join(
        f"{name} ({cc_rank(score)} {score})" for name, score in sorted(above.items())
    )
