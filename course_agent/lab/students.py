"""Who handed each notebook in, and which one notebook per student is graded: both decided by
where the file lies below the folder the instructor named, never by anything inside it.

The student is the first folder below that folder (nbgrader's `submitted/`: `submitted/alice/
day03/day03-lab.ipynb` is alice's; a `gh classroom clone` folder `day03-lab-alice`, with `strip=
"day03-lab-"`: alice); a notebook right in it, or a notebook named on its own, is named by its
file. A student with several notebooks gets one row: the one named as the lab (`day03-lab.ipynb`),
with a note listing the others; without one so named, a row without a score saying so.
Deliberately not handled: rosters (matching a folder to an LMS account is the instructor's).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from course_agent.lab.rows import GradeRow

__all__ = ["Submission", "one_per_student", "student_id", "student_rows"]


@dataclass(frozen=True)
class Submission:
    """One student's notebook to grade (`path`, None when none of theirs can be chosen)."""

    student: str
    path: Path | None
    note: str = ""  # the other notebooks found, or why none was chosen
    folder: Path | None = None  # the student's folder, for a row without a notebook


def _place(path: Path, roots: Sequence[Path]) -> tuple[Path, tuple[str, ...]] | None:
    """The root `path` lies in (the deepest of them) and its parts below it."""
    best = None
    for root in (Path(root).absolute() for root in roots):
        if root in path.parents and (best is None or len(root.parts) > len(best[0].parts)):
            best = (root, path.relative_to(root).parts)
    return best


def student_id(submission: str | Path, roots: Sequence[Path] = (), strip: str = "") -> str:
    """Who handed `submission` in: the first folder below the root it was found in (`strip` cut
    off the front of its name), else the file's name without `.ipynb`."""
    path = Path(submission).absolute()
    place = _place(path, roots)
    if place is not None and len(place[1]) > 1:
        folder = place[1][0]
        return folder.removeprefix(strip) or folder
    return path.stem


def _choose(student: str, paths: list[Path], names: Sequence[str], folder: Path) -> Submission:
    """The one of a student's several notebooks named as a lab, the nearest the top first."""
    below = {path: str(path.absolute().relative_to(folder)) for path in paths}
    named = [path for path in paths if path.name in names]
    named.sort(key=lambda path: (names.index(path.name), len(path.parts), str(path)))
    if not named:
        found = ", ".join(sorted(below.values()))
        note = (
            f"not graded: {len(paths)} notebooks ({found}) and none named "
            f"{' or '.join(names)}: hand in one notebook, or name the lab's so"
        )
        return Submission(student, None, note, folder)
    chosen = named[0]
    others = sorted(below[path] for path in paths if path != chosen)
    note = f"also in {student}'s folder, not graded: {', '.join(others)}"
    return Submission(student, chosen, note, folder)


def one_per_student(
    paths: Sequence[Path], roots: Sequence[Path], names: Sequence[str], strip: str = ""
) -> list[Submission]:
    """One Submission per student among `paths` (as find_notebooks lists them), in the order of
    each student's first notebook; `names` are the lab files' names, the preferred first."""
    groups: dict[Path, list[Path]] = {}  # a student's folder, or a notebook that is its own
    for path in paths:
        place = _place(path.absolute(), roots)
        if place is None or len(place[1]) == 1:  # named itself, or right in the folder named
            groups.setdefault(path.absolute(), []).append(path)
        else:
            groups.setdefault(place[0] / place[1][0], []).append(path)
    chosen = []
    for folder, group in groups.items():
        student = student_id(group[0], roots, strip)
        if len(group) == 1:
            chosen.append(Submission(student, group[0]))
        else:
            chosen.append(_choose(student, group, names, folder))
    return chosen


def student_rows(chosen: Sequence[Submission], graded: Mapping[Path, GradeRow]) -> list[GradeRow]:
    """One row per student: its notebook's row from `graded`, or one saying why none was graded;
    each with its student and the note about the notebooks not graded."""
    rows = []
    for submission in chosen:
        if submission.path is None:
            folder = str(submission.folder)
            note, student = submission.note, submission.student
            rows.append(GradeRow(folder, None, None, (), (), 0.0, note, student=student))
        else:
            row = graded[submission.path]
            note = "; ".join(filter(None, [row.note, submission.note]))
            rows.append(replace(row, student=submission.student, note=note))
    return rows
