"""Grading a class, end to end: the report's counts against a known mixture of submissions.

Two classes, both built at test time (tests/class_mixture.py):
- a small one, one submission of each kind, graded for real by `course-agent grade --jobs 2` (every
  notebook in its own kernel): its JSON must match the mixture, its rows must equal those the
  in-process scorer gives for the same files, and no output may hold a key;
- 120 submissions (12 starters, every wrong answer of the catalogue once, 6 imports of the
  package's answers, 4 endless loops, a killed kernel, 5 broken files, solved labs for the rest),
  scored in this process by the package's scorer and turned into rows by the grader's
  `row_from_report`, as after a kernel (an endless loop and a killed kernel get the note a
  kernel run gives; kernels for 120 would take minutes): its JSON must match the mixture, and
  its page is looked at in a real browser.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import nbformat
import pytest
from class_mixture import MIXTURE_120, build_class, expected_checks, score_without_kernel
from lab_class import kernel_env, solved, submission
from test_lab_feedback import KEY, LEAKY, MARKER
from wrong_implementations import WRONG

from course_agent.lab.report import ClassReport
from course_agent.lab.restore import released_path

ARTIFACTS = Path(__file__).parent / "artifacts"
CHROMIUM = Path("/usr/bin/chromium")
TIMEOUT = 10  # per cell: the endless loop's cost; the slowest lab cell takes about a second
SMALL = {
    "solved": 1,
    "starter": 1,
    "wrong: accumulator appends a repeated id": 1,
    "wrong: executor skips schema validation": 1,
    "wrong: truncation keeps only the head": 1,
    "imported: exercise 3": 1,
    "endless loop": 1,
    "broken JSON": 1,
}
OWN_CHECK = {"accumulator": 3, "executor": 4, "truncation": 5}  # a wrong answer fails at least its


@pytest.fixture(scope="module")
def reference() -> Any:
    return nbformat.read(released_path(), as_version=4)


def kind_fails(kinds: set[str], folder: Path, reference: Any) -> dict[str, set[int]]:
    """The checks each kind fails, from one notebook of it scored in this process."""
    fails = {}
    for kind in kinds - {"endless loop", "kernel killed", "broken JSON"}:
        (path,) = build_class(folder / kind.replace(":", "").replace(" ", "-"), {kind: 1})
        fails[kind] = set(score_without_kernel(path, kind, reference, TIMEOUT).failed)
    return fails


def check_counts(figures: dict[str, Any], mixture: dict[str, int], fails: dict[str, set[int]]):
    """The report's figures are the mixture's: per check, per score, and why none."""
    failed = expected_checks(fails, mixture)
    assert {c["number"]: c["failed"] for c in figures["checks"]} == {
        n: failed.get(n, 0) for n in range(1, 8)
    }
    scores = Counter(f"{7 - len(fails[kind])}/7" for kind in fails for _ in range(mixture[kind]))
    assert {s["score"]: s["count"] for s in figures["scores"] if s["score"] != "no score"} == {
        f"{n}/7": scores.get(f"{n}/7", 0) for n in range(8)
    }
    unscored = {
        "not a notebook": mixture.get("broken JSON", 0),
        "timeout": mixture.get("endless loop", 0),
        "kernel died in cell N": mixture.get("kernel killed", 0),
    }
    assert {r["reason"]: r["count"] for r in figures["unscored"]} == {
        reason: count for reason, count in unscored.items() if count
    }
    assert figures["submissions"] == sum(mixture.values())
    assert figures["scored"] == figures["submissions"] - sum(unscored.values())
    assert figures["full_marks"] == mixture.get("solved", 0)


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The small class, graded once by the command, every output asked for; a key in its env."""
    root = tmp_path_factory.mktemp("small")
    made = build_class(root / "class", SMALL)
    leaky = submission(root / "class" / "leaky.ipynb", exercises={**solved(), 1: LEAKY})
    out = root / "out"
    out.mkdir()
    command = [sys.executable, "-m", "course_agent", "grade", str(root / "class"), "--jobs", "2"]
    command += ["--timeout", str(TIMEOUT), "--csv", str(out / "grades.csv")]
    command += ["--report", str(out / "report.html"), "--json", str(out / "report.json")]
    command += ["--feedback", str(out / "feedback")]
    env = kernel_env(OPENAI_API_KEY=KEY)
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    return {
        "made": made,
        "leaky": leaky,
        "done": done,
        "out": out,
        "figures": json.loads((out / "report.json").read_text()),
    }


def test_the_small_classs_report_matches_its_mixture(small, reference, tmp_path) -> None:
    figures = small["figures"]
    fails = kind_fails(set(SMALL), tmp_path, reference)
    fails["leaky"] = {3, 7}  # its push raises: merging and the loop fail
    check_counts(figures, {**SMALL, "leaky": 1}, fails)
    assert [c["name"] for c in figures["checks"]][2:5] == [
        "fragment merging",
        "bad-argument feedback",
        "truncation",
    ]


def test_kernel_rows_equal_the_in_process_scorers(small, reference) -> None:
    """What justifies scoring the 120 in this process: the same rows as the kernels gave."""
    by_kernel = {Path(row["submission"]): row for row in small["figures"]["rows"]}
    for path, kind in small["made"].items():
        if kind in ("endless loop", "broken JSON"):
            continue
        here = score_without_kernel(path, kind, reference, TIMEOUT)
        kernel = by_kernel[path]
        assert (kernel["passed"], kernel["failed"], kernel["note"]) == (
            here.passed,
            list(here.failed),
            here.note,
        ), kind


def test_progress_went_to_stderr_one_line_per_notebook(small) -> None:
    lines = small["done"].stderr.splitlines()
    progress = [line for line in lines if line.startswith("graded ")]
    assert [line.split()[1] for line in progress] == [f"{n}/9" for n in range(1, 10)]
    assert "submissions graded in" in small["done"].stdout


def test_no_output_holds_the_key_and_no_feedback_another_students_data(small) -> None:
    out: Path = small["out"]
    texts = {path: path.read_text() for path in out.rglob("*") if path.is_file()}
    texts[out / "stdout"], texts[out / "stderr"] = small["done"].stdout, small["done"].stderr
    assert len([p for p in texts if p.suffix == ".md"]) == 9
    assert [path for path, text in texts.items() if KEY in text] == []
    assert f"[redacted] for {MARKER}" in (out / "feedback" / "leaky.md").read_text()
    for path, text in texts.items():
        if path.suffix == ".md" and path.stem != "leaky":
            assert MARKER not in text and "leaky" not in text, path
            others = [p.stem for p in small["made"] if p.stem != path.stem]
            assert not any(other in text for other in others), path


@pytest.fixture(scope="module")
def class120(tmp_path_factory: pytest.TempPathFactory, reference: Any) -> dict[str, Any]:
    folder = tmp_path_factory.mktemp("class120")
    made = build_class(folder, MIXTURE_120)
    rows = [score_without_kernel(path, kind, reference, 60) for path, kind in made.items()]
    return {"made": made, "rows": rows, "report": ClassReport.from_rows(rows)}


def test_the_120_report_counts_match_the_mixture(class120, reference, tmp_path) -> None:
    fails = kind_fails(set(MIXTURE_120), tmp_path, reference)
    # What the self-test promises of each kind, whatever the report says.
    assert fails["solved"] == set() and fails["starter"] == {3, 4, 5, 6, 7}
    for name in WRONG:
        assert OWN_CHECK[name.split()[0].removesuffix("'s")] in fails[f"wrong: {name}"], name
    figures = class120["report"].to_dict()
    assert len(figures["rows"]) == 120
    check_counts(figures, MIXTURE_120, fails)
    # Each row is its own file's: the kind written there, and the checks that kind fails.
    for row, kind in zip(class120["rows"], class120["made"].values(), strict=True):
        assert set(row.failed) == fails.get(kind, set()), (row.submission, kind)
    # The package's answer, imported, is not there where the grader asks: checks fail.
    assert all(fails[f"imported: exercise {n}"] for n in (1, 2, 3))
    # The starters' stub groups as one failure, counted once per starter, in each check it fails
    # (the exercises' headings, quoted, are parts a pattern leaves out: "in '…': write ...").
    stub = re.compile(
        r"in '…'(, '…')*( and '…')?: write this part: the TODO comment above says what it must do"
    )
    for check in figures["checks"]:
        counts = [
            failure["count"] for failure in check["top"] if stub.fullmatch(failure["pattern"])
        ]
        assert counts == ([12] if check["number"] in (3, 4, 5, 7) else []), check


def missing_browser() -> str | None:
    if not CHROMIUM.exists():
        return f"{CHROMIUM} is not installed (apt-get install chromium)"
    try:
        import playwright  # noqa: F401
    except ImportError:
        return "playwright is not installed (pip install -e '.[test]')"
    return None


def test_the_120_report_in_a_browser_shows_both_charts_and_every_row(class120) -> None:
    """Headless Chromium opens the page as a file; the screenshot is kept in tests/artifacts/."""
    reason = missing_browser()
    if reason:
        if os.environ.get("COURSE_AGENT_REQUIRE_BROWSER") == "1":
            pytest.fail(f"COURSE_AGENT_REQUIRE_BROWSER=1 but {reason}")
        pytest.skip(reason)
    from playwright.sync_api import sync_playwright

    ARTIFACTS.mkdir(exist_ok=True)
    page_file = ARTIFACTS / "class-report-120.html"
    page_file.write_text(class120["report"].html(), encoding="utf-8")
    requested: list[str] = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=["--no-sandbox", "--disable-gpu"]
        )
        try:
            page = browser.new_page(viewport={"width": 1100, "height": 1600})
            page.on("request", lambda request: requested.append(request.url))
            page.goto(page_file.as_uri())
            # The first screen (the charts, the failures, the table's start), then the whole page.
            page.screenshot(path=ARTIFACTS / "class-report-120-top.png")
            page.screenshot(path=ARTIFACTS / "class-report-120.png", full_page=True)
            charts = page.locator("svg").evaluate_all(
                "svgs => svgs.map(s => [s.getAttribute('aria-label'), "
                "s.getBoundingClientRect().width, s.querySelectorAll('rect').length])"
            )
            rows = page.locator("table").last.locator("tr").count()
            scripts = page.evaluate("document.scripts.length")
            labels = page.locator("svg").last.locator("text").all_text_contents()
        finally:
            browser.close()
    assert requested == [page_file.as_uri()]  # nothing fetched but the page itself
    assert scripts == 0
    assert [(label, rects) for label, _, rects in charts] == [
        ("score distribution", 9),
        ("failures per check", 7),
    ]
    assert all(width > 300 for _, width, _ in charts)
    assert rows == 1 + 120
    assert labels[:4] == ["1. registry", "0 of 110", "2. path boundary", "0 of 110"]
