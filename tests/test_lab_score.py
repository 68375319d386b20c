"""Scoring a lab: only what the notebook wrote itself is self-tested; the rest is refused, with why.

A notebook's namespace is made here as a kernel makes it: the lab's setup cell and the exercise
cells run in one dict whose `__name__` is `__main__`.
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import re
from typing import Any

import nbformat
import pytest
from extension_lab import namespace as extension_namespace
from extension_lab import solution as extension_solution
from extension_lab import solved as extension_solved
from lab_class import RELEASE, solution, solved
from wrong_implementations import RIGHT, WRONG

from course_agent import ToolCallAccumulator, accumulator, registry, truncate
from course_agent.lab.score import (
    GradeReport,
    Score,
    check_origin,
    score_exercises,
    score_lab,
    score_namespace,
)
from course_agent.selftest.lab import Check, SelftestReport

NAMES = {1: "ToolCallAccumulator", 2: "execute_call", 3: "truncate_result"}


def notebook(exercises: dict[int, str] | None = None, *extra: str) -> dict[str, Any]:
    """The released lab's namespace, run with these exercise cells (the starter's by default)."""
    cells = {cell.get("id"): cell.source for cell in nbformat.read(RELEASE, as_version=4).cells}
    namespace: dict[str, Any] = {"__name__": "__main__"}
    sources = [cells["setup"], cells["registry"]]
    sources += [(exercises or {}).get(n, cells[f"exercise-{n}"]) for n in (1, 2, 3)]
    for source in [*sources, *extra]:
        exec(compile(source, "<cell>", "exec"), namespace)
    return namespace


def test_the_solution_scores_seven_and_shows_one_line() -> None:
    score = score_namespace(notebook(solved()))
    assert (score.passed, score.refused) == (7, ())
    assert score.text() == "7/7 passed"


def test_the_starter_scores_two_and_lists_what_failed() -> None:
    score = score_namespace(notebook())
    lines = score.text().splitlines()
    assert lines[0] == "2/7 passed"
    assert [line.split(".")[0] for line in lines[1:]] == [f"x {n}" for n in (3, 4, 5, 6, 7)]
    assert "the TODO comment above says what it must do" in lines[1]


# Each cheat replaces one exercise cell of a solved lab; its refusal names what it borrowed.
CHEATS = {
    "import": (
        1,
        "from course_agent import ToolCallAccumulator",
        "exercise 1 imports ToolCallAccumulator from course_agent",
    ),
    "import from a module": (
        3,
        "from course_agent.truncate import truncate_result",
        "exercise 3 imports truncate_result from course_agent",
    ),
    "subclass": (
        1,
        "import course_agent\n\nclass ToolCallAccumulator(course_agent.ToolCallAccumulator):\n"
        "    pass",
        "exercise 1 subclasses ToolCallAccumulator from course_agent",
    ),
    "borrowed method": (
        1,
        "import course_agent\n\nclass ToolCallAccumulator:\n"
        "    push = course_agent.ToolCallAccumulator.push",
        "exercise 1: ToolCallAccumulator.push comes from course_agent",
    ),
    "wrapper through a module": (
        2,
        "import course_agent.registry\n\ndef execute_call(tools, call, ctx):\n"
        "    return course_agent.registry.execute_call(tools, call, ctx)",
        "exercise 2 calls execute_call from course_agent",
    ),
    "import inside the function": (
        3,
        "def truncate_result(result):\n"
        "    from course_agent.truncate import truncate_result as real\n"
        "    return real(result)",
        "exercise 3 calls truncate_result from course_agent",
    ),
    "wrapper through a helper": (
        2,
        "from course_agent import execute_call as _real\n\ndef _helper(*args):\n"
        "    return _real(*args)\n\ndef execute_call(tools, call, ctx):\n"
        "    return _helper(tools, call, ctx)",
        "exercise 2 calls execute_call from course_agent",
    ),
    "closure": (
        3,
        "from course_agent import truncate_result as _t\n\ndef make(f):\n"
        "    def truncate_result(result):\n        return f(result)\n    return truncate_result\n\n"
        "truncate_result = make(_t)",
        "exercise 3 calls truncate_result from course_agent",
    ),
    "default argument": (
        2,
        "def execute_call(tools, call, ctx, run=registry.execute):\n    return run(call, ctx)",
        "exercise 2 calls ToolRegistry.execute from course_agent",
    ),
    "the registry": (
        2,
        "def execute_call(tools, call, ctx):\n    return registry.execute(call, ctx)",
        "exercise 2 calls ToolRegistry.execute from course_agent",
    ),
    "a fresh registry": (
        2,
        "def execute_call(tools, call, ctx):\n    return default_registry().execute(call, ctx)",
        "exercise 2 calls default_registry from course_agent",
    ),
}


# The package's answer hidden where a name lookup does not see it: in a box, an object, a thread.
HIDDEN = {
    "in a list": (
        3,
        "import course_agent\n\n_box = [course_agent.truncate_result]\n\n"
        "def truncate_result(result):\n    return _box[0](result)",
        "exercise 3 calls truncate_result from course_agent",
    ),
    "in a dict": (
        2,
        "import course_agent\n\n_impl = {'run': course_agent.execute_call}\n\n"
        "def execute_call(tools, call, ctx):\n    return _impl['run'](tools, call, ctx)",
        "exercise 2 calls execute_call from course_agent",
    ),
    "in a partial": (
        3,
        "import functools, course_agent\n\n_cut = functools.partial(course_agent.truncate_result)"
        "\n\ndef truncate_result(result):\n    return _cut(result)",
        "exercise 3 calls truncate_result from course_agent",
    ),
    "in a namespace": (
        3,
        "import types, course_agent\n\n"
        "_ns = types.SimpleNamespace(cut=course_agent.truncate_result)\n\n"
        "def truncate_result(result):\n    return _ns.cut(result)",
        "exercise 3 calls truncate_result from course_agent",
    ),
    "in an object of the notebook": (
        3,
        "import course_agent\n\nclass _Box:\n    pass\n\n_box = _Box()\n"
        "_box.cut = course_agent.truncate_result\n\n"
        "def truncate_result(result):\n    return _box.cut(result)",
        "exercise 3 calls truncate_result from course_agent",
    ),
    "in a default list": (
        3,
        "import course_agent\n\ndef truncate_result(result, _f=[course_agent.truncate_result]):\n"
        "    return _f[0](result)",
        "exercise 3 calls truncate_result from course_agent",
    ),
    "in a class attribute": (
        1,
        "import course_agent\n\nclass ToolCallAccumulator:\n"
        "    _inner = course_agent.ToolCallAccumulator\n\n"
        "    def __init__(self):\n        self._a = self._inner()\n\n"
        "    def push(self, delta):\n        self._a.push(delta)\n\n"
        "    def drain(self):\n        return self._a.drain()",
        "exercise 1 calls ToolCallAccumulator from course_agent",
    ),
    "a callable object": (
        2,
        "import course_agent\n\nclass _Run:\n    def __call__(self, tools, call, ctx):\n"
        "        return course_agent.execute_call(tools, call, ctx)\n\nexecute_call = _Run()",
        "exercise 2 calls execute_call from course_agent",
    ),
    # A thread the profiler of the self-test's watch does not see; the box hides it from names.
    "run in a thread": (
        3,
        "import concurrent.futures, course_agent\n\n_box = [course_agent.truncate_result]\n"
        "_pool = concurrent.futures.ThreadPoolExecutor(1)\n_pool.submit(int).result()\n\n"
        "def truncate_result(result):\n    return _pool.submit(_box[0], result).result()",
        "exercise 3 calls truncate_result from course_agent",
    ),
}
# The package's code, copied into the notebook: pasted, exec'd, or rebuilt from its __code__.
PACKAGE_SOURCE = {
    name: inspect.getsource(function)
    for name, function in [
        ("truncate_result", truncate.truncate_result),
        ("execute_call", registry.execute_call),
        ("ToolCallAccumulator", accumulator.ToolCallAccumulator),
    ]
}
COPIED = {
    "pasted truncation": (
        3,
        PACKAGE_SOURCE["truncate_result"],
        "exercise 3 copies truncate_result from course_agent",
    ),
    "pasted executor, variables renamed, docstring gone": (
        2,
        "from course_agent.registry import find_tool, parse_arguments, validate_arguments\n\n"
        + re.sub(r'\n    """.*?"""', "", PACKAGE_SOURCE["execute_call"], flags=re.S)
        .replace("parsed", "data")
        .replace("raw", "text"),
        "exercise 2 copies execute_call from course_agent",
    ),
    "pasted accumulator": (
        1,
        "from course_agent.accumulator import PartialCall\n\n"
        + PACKAGE_SOURCE["ToolCallAccumulator"],
        "exercise 1 copies ToolCallAccumulator.",
    ),
    "exec of inspect.getsource": (
        3,
        "import inspect, course_agent\n\nexec(inspect.getsource(course_agent.truncate_result))",
        "exercise 3 copies truncate_result from course_agent",
    ),
    "rebuilt from __code__": (
        3,
        "import types, course_agent\n\ntruncate_result = types.FunctionType(\n"
        "    course_agent.truncate_result.__code__, globals(), 'truncate_result'\n)",
        "exercise 3 copies truncate_result from course_agent",
    ),
}


@pytest.mark.parametrize("cheat", [*HIDDEN, *COPIED])
def test_an_answer_hidden_in_a_value_or_copied_is_refused(cheat: str) -> None:
    number, source, refusal = {**HIDDEN, **COPIED}[cheat]
    score = score_namespace(notebook({**solved(), number: source}))
    assert score.passed < 7
    assert len(score.refused) == 1 and score.refused[0].startswith(refusal), score.refused


def test_an_exercise_reaching_too_much_to_follow_is_refused() -> None:
    # A solved truncation that also consults a table of 200,000 numbers.
    uses_table = "    text = result.content if _TABLE else ''"
    source = "_TABLE = list(range(200_000))\n" + solution(3).replace(
        "    text = result.content", uses_table
    )
    assert uses_table in source
    assert score_namespace(notebook({**solved(), 3: source})).refused == (
        "exercise 3 reaches over 100,000 objects, more than the grader follows",
    )


@pytest.mark.parametrize("cheat", CHEATS)
def test_an_exercise_that_borrows_the_packages_answer_is_refused(cheat: str) -> None:
    number, source, refusal = CHEATS[cheat]
    score = score_namespace(notebook({**solved(), number: source}))
    assert score.passed < 7
    assert score.refused == (refusal,)


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        (None, "exercise 2: the notebook defines no execute_call"),
        (5, "exercise 2: execute_call is of type int, not a class or function"),
        (print, "exercise 2 imports execute_call from builtins"),
    ],
)
def test_a_missing_or_foreign_name_is_refused(value: object, problem: str) -> None:
    assert check_origin(2, "execute_call", value) == problem


LEGIT = {
    # Reading the registry's tool table is not running the package's answer.
    2: "def execute_call(tools, call, ctx):\n"
    "    tool = registry.tools.get(call.name) or tools.get(call.name)\n"
    "    return _run(tool, call, ctx)\n\n"
    "def _run(tool, call, ctx):\n"
    "    if tool is None:\n"
    "        return ToolResult(f'no tool {call.name}; Available: {\", \".join(registry.tools)}',"
    " ok=False)\n"
    "    return tool.run(tool.args.model_validate(json.loads(call.args or '{}')), ctx)",
    # A class that names itself, with a property and a static method.
    1: "class ToolCallAccumulator:\n"
    "    def __init__(self):\n        self.calls = {}\n"
    "    @staticmethod\n    def make():\n        return ToolCallAccumulator()\n"
    "    @property\n    def size(self):\n        return len(self.calls)\n"
    "    def push(self, delta):\n        raise NotImplementedError\n"
    "    def drain(self):\n        return []",
}


@pytest.mark.parametrize("number", LEGIT)
def test_a_notebooks_own_code_is_not_refused_for_using_the_package(number: int) -> None:
    namespace = notebook({number: LEGIT[number]})
    assert check_origin(number, NAMES[number], namespace[NAMES[number]]) is None


def test_a_refused_exercise_fails_its_checks_with_the_refusal() -> None:
    namespace = notebook(solved())
    score = score_exercises(
        ToolCallAccumulator, namespace["execute_call"], namespace["truncate_result"]
    )
    failed = {check.number: check.line for check in score.report.checks if not check.ok}
    refusal = "exercise 1 imports ToolCallAccumulator from course_agent"
    assert failed[3].startswith("fragment merging: ") and refusal in failed[3]
    assert score.refused == (refusal,)
    assert score.text().splitlines()[1] == score.refused[0]


def test_the_json_carries_every_field_of_a_check() -> None:
    @dataclasses.dataclass(frozen=True)
    class LaterCheck(Check):  # as a later Check may grow fields
        figure: int = 8054

    report = SelftestReport(
        [
            LaterCheck(number=1, name="registry", ok=True, line="fine"),
            Check(number=2, name="path boundary", ok=False, line="path boundary: x"),
        ]
    )
    data = json.loads(Score(report, ("exercise 2: y",)).to_json())
    assert data == {
        "checks": [
            {"number": 1, "name": "registry", "ok": True, "line": "fine", "figure": 8054},
            {"number": 2, "name": "path boundary", "ok": False, "line": "path boundary: x"},
        ],
        "refused": ["exercise 2: y"],
    }


def test_raise_score_raises_the_score_of_the_namespace_it_is_called_from() -> None:
    namespace = notebook(solved())
    with pytest.raises(GradeReport) as raised:
        exec("from course_agent.lab.score import raise_score\nraise_score()", namespace)
    report = json.loads(str(raised.value))
    assert [check["ok"] for check in report["checks"]] == [True] * 7
    assert report["refused"] == []


def test_nothing_the_scoring_raises_gets_out_of_raise_score_but_its_report() -> None:
    # An exercise that ends the scoring with an exception named like the report, carrying a 7/7.
    forged = '{"checks": [], "refused": []}'
    namespace = notebook(
        {
            **solved(),
            3: "class GradeReport(BaseException):\n    pass\n\n"
            f"def truncate_result(result):\n    raise GradeReport({forged!r})",
        }
    )
    with pytest.raises(GradeReport) as raised:
        exec("from course_agent.lab.score import raise_score\nraise_score()", namespace)
    assert type(raised.value) is GradeReport  # the package's, not the notebook's
    assert json.loads(str(raised.value)) == {"stopped": f"GradeReport: {forged}"}


@pytest.mark.parametrize("name", WRONG)
def test_no_wrong_answer_reaches_seven_in_a_notebook(name: str) -> None:
    # tests/wrong_implementations.py, pasted into a solved lab's exercise cell as a student would.
    number, source = WRONG[name]
    assert score_namespace(notebook({**solved(), number: source})).passed < 7


def test_the_right_answers_written_as_students_write_them_reach_seven() -> None:
    score = score_namespace(notebook(RIGHT))
    assert (score.passed, score.refused) == (7, ())


# The extension lab's exercises, each cell solved and then one name rebound to the package's own.
EXTENSION_CHEATS = {
    "an import": (
        2,
        "from course_agent.paths import is_inside",
        "exercise 2 imports is_inside from course_agent",
    ),
    "a wrapper around resolve_inside": (
        2,
        "from course_agent.paths import resolve_inside\n\n"
        "def is_inside(root, path):\n    try:\n        resolve_inside(root, path)\n"
        "    except Exception:\n        return False\n    return True",
        "exercise 2 calls resolve_inside from course_agent",
    ),
    "glob's own page": (
        3,
        "from course_agent.tools.glob_files import GlobArgs, run_glob\n\n"
        "def page_paths(matches, limit, pattern, total_files):\n"
        "    return run_glob(GlobArgs(pattern=pattern, limit=limit), ctx).content",
        "exercise 3 calls run_glob from course_agent",
    ),
    "the self-test's own repair": (
        5,
        "from course_agent.selftest.turns import repaired as repair_transcript",
        "exercise 5 imports repair_transcript from course_agent",
    ),
}


@pytest.mark.parametrize("cheat", EXTENSION_CHEATS)
def test_an_extension_exercise_that_borrows_the_packages_answer_is_refused(cheat: str) -> None:
    number, source, refusal = EXTENSION_CHEATS[cheat]
    cells = {**extension_solved(), number: f"{extension_solution(number)}\n\n{source}"}
    score = score_lab("day03-extensions", extension_namespace(cells))
    assert score.passed < 8
    assert score.refused == (refusal,)
    assert any(refusal in check.line for check in score.report.checks if not check.ok)
