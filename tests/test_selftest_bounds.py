"""Extension checks 4-5: the generated trees reach every bound, and the tools' own answers are
what a student's page must match."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from extension_lab import namespace, solved

from course_agent.selftest.bounds import GLOB_PAGE, GREP_PAGE, glob_cases, grep_cases
from course_agent.selftest.judge import CheckFailed, run_part


@pytest.fixture(scope="module")
def pages() -> dict:
    names = namespace(solved())
    return {"glob": names["page_paths"], "grep": names["page_matches"]}


def test_the_glob_trees_reach_each_bound(tmp_path: Path) -> None:
    wants = [case.want for case in glob_cases(tmp_path, random.Random(5))]
    last_lines = [want.splitlines()[-1] for want in wants]
    assert "(the working directory holds 1 file)" in wants[1]
    assert wants[2] == "no files match **/*.js (the working directory holds 0 files)"
    assert not last_lines[4].startswith("(")  # exactly the limit: nothing withheld
    assert last_lines[5] == "(1 more withheld; narrow the pattern or raise limit)"
    assert len(wants[6].splitlines()) == 201 and "more withheld" in last_lines[6]


def test_the_grep_trees_reach_each_bound(tmp_path: Path) -> None:
    cases = grep_cases(tmp_path, random.Random(5))
    assert cases[0].want == "no matches for needle"
    assert any(line.endswith("…") for line in cases[2].want.splitlines())
    assert any(len(line.split(":", 2)[2]) == 120 for line in cases[2].want.splitlines())
    assert len(cases[4].want.splitlines()) == 50  # exactly the default: nothing withheld
    assert (
        cases[5]
        .want.splitlines()[-1]
        .endswith("more matches withheld; narrow with glob or a stricter pattern)")
    )
    assert len(cases[6].want.splitlines()) == 6  # a limit of 5, then the count


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_labs_solution_pages_as_the_tools_do_on_any_draw(pages: dict, seed: int) -> None:
    assert "8 trees paged as glob" in run_part(
        GLOB_PAGE, {"page_paths": pages["glob"]}, random.Random(seed)
    )
    assert "7 trees paged as grep" in run_part(
        GREP_PAGE, {"page_matches": pages["grep"]}, random.Random(seed)
    )


def test_a_page_that_is_not_text_is_told_to_be_text() -> None:
    with pytest.raises(CheckFailed, match="returned \\['a'\\]; return the text"):
        run_part(
            GLOB_PAGE,
            {"page_paths": lambda matches, limit, pattern, total: ["a"]},
            random.Random(1),
        )
