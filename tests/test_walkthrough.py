"""The walkthrough's quizzes, the course errata and the name table say what the package does.

Every walkthrough notebook ends with a quiz (two or three questions, each answer behind
`<details>`), and the quizzes cover the course's checklist and interview questions exactly as
notebooks/README.md maps them. The errata figures in docs/design.md and notebook 05 are recomputed
from the course's own samples, pasted below, and from the package. Not checked here: whether an
answer is right in prose (nbval checks the cells each answer rests on, in tests/test_notebooks.py).
"""

from __future__ import annotations

import dataclasses
import importlib
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import nbformat
import pytest
from walkthrough_files import WALKTHROUGH

from course_agent.offline.repository import build_sandbox
from course_agent.protocol import ToolCall, ToolContext, ToolDef, ToolResult
from course_agent.registry import default_registry
from course_agent.render.terminal import card_line
from course_agent.selftest.lab import run_selftest
from course_agent.tools import GLOB_TOOL
from course_agent.truncate import HEAD_RATIO, MAX_RESULT_CHARS, truncate_result

REPO = Path(__file__).resolve().parent.parent
# the quizzes' map, beside the notebooks: their links must open under `jupyter lab notebooks/`
LAB_DOC = (REPO / "notebooks" / "README.md").read_text(encoding="utf-8")
DESIGN = (REPO / "docs" / "design.md").read_text(encoding="utf-8")  # the errata, the name table
CHECKLIST_LINES = 6  # the course's "Checklist and Tomorrow" has six lines
INTERVIEW_QUESTIONS = 3

# One question: "**2.** *(checklist 3; interview question 2)* text?", then its answer in
# "<details><summary>Answer</summary> ... </details>", until the next question or the end.
QUESTION = re.compile(
    r"^\*\*(?P<number>\d+)\.\*\* \*\((?P<covers>[^)]*)\)\*(?P<question>.*?)"
    r"^<details><summary>Answer</summary>\n(?P<answer>.*?)^</details>",
    re.MULTILINE | re.DOTALL,
)
COVERS = re.compile(r"(checklist|interview questions?) ([\d, ]+)")


def covered(text: str) -> set[tuple[str, int]]:
    """{("checklist", 3), ("interview", 2)} from "checklist 3; interview question 2"."""
    found = set()
    for kind, numbers in COVERS.findall(flat(text)):
        for number in re.findall(r"\d+", numbers):
            found.add(("checklist" if kind == "checklist" else "interview", int(number)))
    return found


def quiz_of(notebook: Path) -> tuple[str, list[re.Match[str]]]:
    last = nbformat.read(notebook, as_version=4).cells[-1]
    source = last.source if last.cell_type == "markdown" else ""
    return source, list(QUESTION.finditer(source))


def section(text: str, heading: str) -> str:
    """The body of the `## heading` section of a markdown text, up to the next `## `."""
    start = text.index(f"## {heading}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end != -1 else len(text)]


def flat(text: str) -> str:
    """`text` with every run of whitespace one space: a figure may be wrapped onto the next line."""
    return " ".join(text.split())


@pytest.mark.parametrize("notebook", WALKTHROUGH, ids=lambda path: path.name)
def test_every_walkthrough_notebook_ends_with_a_quiz_of_two_or_three_answered_questions(
    notebook: Path,
) -> None:
    source, questions = quiz_of(notebook)
    assert source.startswith("## Quiz\n"), f"{notebook.name}: the last cell is not a '## Quiz' cell"
    assert [int(q["number"]) for q in questions] in ([1, 2], [1, 2, 3]), (
        f"{notebook.name}: want questions **1.**, **2.** (and **3.**), each followed by "
        f"<details><summary>Answer</summary>...</details>; found {len(questions)}"
    )
    assert source.count("<details>") == source.count("</details>") == len(questions)
    for q in questions:
        assert "?" in q["question"], f"{notebook.name} question {q['number']} asks nothing"
        assert covered(q["covers"]), f"{notebook.name} question {q['number']} names no checklist"
        assert len(q["answer"].split()) >= 25, f"{notebook.name} answer {q['number']} is a stub"


def test_the_quizzes_cover_the_checklist_and_interview_questions_as_the_readme_maps_them() -> None:
    table = section(LAB_DOC, "The walkthrough's quizzes")
    mapped = {
        row[0]: covered(row[1])
        for row in re.findall(r"^\| \[(\d\d)\]\([^)]*\) \| ([^|]*) \|$", table, re.MULTILINE)
    }
    in_quizzes = {
        notebook.name[:2]: set().union(*(covered(q["covers"]) for q in quiz_of(notebook)[1]))
        for notebook in WALKTHROUGH
    }
    assert mapped == in_quizzes
    everything = {("checklist", n) for n in range(1, CHECKLIST_LINES + 1)} | {
        ("interview", n) for n in range(1, INTERVIEW_QUESTIONS + 1)
    }
    assert set().union(*in_quizzes.values()) == everything


# -- the course's samples, pasted -------------------------------------------------------------


def course_truncate_result(result: ToolResult) -> ToolResult:
    """The course's Python truncate_result as printed, renamed; it leaves out `replace`'s import."""
    text = result.content
    if len(text) <= MAX_RESULT_CHARS:
        return result

    head = int(MAX_RESULT_CHARS * HEAD_RATIO)
    removed = len(text) - MAX_RESULT_CHARS
    # The middle note is for the model: it cannot read an ellipsis but can read an instruction
    note = (
        f"\n...({removed} characters truncated from the middle; {len(text)} in total; "
        "read again with an offset for the middle)...\n"
    )

    return replace(
        result,
        content=text[:head] + note + text[-(MAX_RESULT_CHARS - head) :],
        # Truncation is for humans and need not spend the model's tokens: meta is not fed back
        meta={**(result.meta or {}), "truncated": True, "originalChars": len(text)},
    )


def course_typescript_note(text: str) -> str:
    """The TypeScript sample's note, its template literal transcribed (`${x}` -> `{x}`)."""
    removed = len(text) - MAX_RESULT_CHARS
    return (
        f"\n...({removed} characters truncated from the middle; {len(text)} characters in total;"
        " read again with an offset for the middle)...\n"
    )


def errata_texts() -> dict[str, str]:
    """The errata section of docs/design.md and of notebook 05, by where they are."""
    cells = nbformat.read(REPO / "notebooks/05-truncation.ipynb", as_version=4).cells
    notebook = next(c.source for c in cells if c.source.startswith("## Course errata\n"))
    return {"docs/design.md": flat(section(DESIGN, "Course errata")), "notebook 05": flat(notebook)}


@pytest.mark.parametrize("where", ["docs/design.md", "notebook 05"])
def test_the_errata_state_the_course_notes_lengths_as_measured(where: str) -> None:
    errata = errata_texts()[where]
    text = "x" * 20_000
    python = len(course_truncate_result(ToolResult(text)).content)
    typescript = MAX_RESULT_CHARS + len(course_typescript_note(text))
    ours = len(truncate_result(ToolResult(text)).content)
    python_note, typescript_note = python - MAX_RESULT_CHARS, typescript - MAX_RESULT_CHARS
    assert ours == 8054 != python
    assert f"{python_note} (Python) / {typescript_note} (TypeScript) characters" in errata
    assert f"{python} / {typescript}" in errata


@pytest.mark.parametrize("where", ["docs/design.md", "notebook 05"])
def test_the_errata_state_what_the_course_truncation_scores_and_which_checks_fail(
    where: str,
) -> None:
    report = run_selftest(truncate=course_truncate_result)
    failed = [check.number for check in report.checks if not check.ok]
    errata = errata_texts()[where]
    assert f"**{report.summary().split()[0]}**" in errata
    for number in failed:
        assert f"check {number} fails" in errata
    for check in report.checks:
        if check.ok:
            assert f"check {check.number} fails" not in errata


@pytest.fixture
def sandbox(tmp_path: Path) -> ToolContext:
    return ToolContext(build_sandbox(tmp_path))


def test_the_errata_state_the_length_of_the_bad_argument_message(sandbox: ToolContext) -> None:
    call = ToolCall("call_1", "edit_file", '{"path":"src/calc.js","old":"a / b"}')
    content = default_registry().execute(call, sandbox).content
    assert f"`{content}` is {len(content)} characters" in flat(section(DESIGN, "Course errata"))


def test_the_errata_and_the_terminal_docstring_state_what_read_file_feeds_back(
    sandbox: ToolContext,
) -> None:
    call = ToolCall("call_1", "read_file", '{"path":"src/calc.js"}')
    result = default_registry().execute(call, sandbox)
    errata = flat(section(DESIGN, "Course errata"))
    assert f"248 in the course, {len(result.content)} here" in errata
    assert f"`{card_line(call, result)}`" in (card_line.__doc__ or "")


def test_the_errata_state_what_a_glob_call_without_pattern_gets(sandbox: ToolContext) -> None:
    assert "pattern" in GLOB_TOOL.parameters["required"]
    result = default_registry().execute(ToolCall("call_1", "glob", "{}"), sandbox)
    assert not result.ok
    assert f"`{result.content}`" in flat(section(DESIGN, "Course errata"))


def test_the_errata_state_what_the_courses_tooldef_call_raises() -> None:
    with pytest.raises(TypeError) as raised:
        ToolDef(name="glob", description="", parameters={}, read_only=True, run=print)  # type: ignore[call-arg]
    assert f"`TypeError: {raised.value}`" in flat(section(DESIGN, "Course errata"))


# -- the name table ---------------------------------------------------------------------------

# The names the issue asks the table to carry, both spellings where the course has two.
COURSE_NAMES = [
    "byIndex",
    "by_index",
    "argsDelta",
    "args_delta",
    "readOnly",
    "read_only",
    "truncateResult",
    "truncate_result",
    "MAX_RESULT_CHARS",
    "HEAD_RATIO",
    "ToolDef",
    "ToolCall",
    "drain",
    "push",
    "globTool",
    "GLOB_TOOL",
    "originalChars",
]


def resolve(dotted: str) -> Any:
    """`course_agent.x.Class.attr` -> the object; an instance attribute or field counts too."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            found: Any = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for name in parts[cut:]:
            if hasattr(found, name):
                found = getattr(found, name)
            elif dataclasses.is_dataclass(found) and name in {
                field.name for field in dataclasses.fields(found)
            }:
                found = name
            else:
                try:  # an attribute the constructor sets, e.g. by_index
                    found = vars(found())[name]
                except Exception:
                    raise AssertionError(f"the name table names {dotted}: no {name}") from None
        return found
    raise ModuleNotFoundError(dotted)


def test_the_name_table_carries_the_course_names_and_every_package_name_in_it_exists() -> None:
    table = section(DESIGN, "TypeScript to Python names")
    rows = [line for line in table.splitlines() if line.startswith("| ")]
    cells = "\n".join(rows)
    missing = [name for name in COURSE_NAMES if f"`{name}" not in cells and f"{name}`" not in cells]
    assert not missing, f"the name table lacks {missing}"
    ours = [name for row in rows for name in re.findall(r"`(course_agent(?:\.\w+)+)`", row)]
    assert len(ours) >= 15
    for dotted in ours:
        resolve(dotted)  # raises (and fails the test) for a name the package does not have
