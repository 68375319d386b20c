"""The docs' links hold: every relative link and #anchor in the README, docs/ and the notebooks.

Plain Markdown read on GitHub or in the clone, so an anchor is GitHub's slug of a heading. Not
checked: links to the web (no network in the suite), and links inside code.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from walkthrough_files import LAB_SOURCES, WALKTHROUGH

REPO = Path(__file__).resolve().parent.parent
PAGES = sorted(
    [
        REPO / "README.md",
        *REPO.glob("docs/*.md"),
        *REPO.glob("*/README.md"),
        *WALKTHROUGH,  # by name: a notebook of one's own in notebooks/ is no page of the docs
        *LAB_SOURCES,
    ]
)
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^(```|~~~).*?^\1", re.MULTILINE | re.DOTALL)
CODE_SPAN = re.compile(r"`[^`\n]*`")
HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$", re.MULTILINE)


def markdown(page: Path) -> str:
    """The page's Markdown: a notebook's markdown cells, joined."""
    if page.suffix != ".ipynb":
        return page.read_text(encoding="utf-8")
    cells = json.loads(page.read_text(encoding="utf-8"))["cells"]
    return "\n\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, markup and punctuation dropped, spaces to '-'."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link keeps its text
    text = re.sub(r"[^\w\- ]", "", text.lower())
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    """Every anchor of a page; a repeated heading gets -1, -2, ... as on GitHub."""
    seen: dict[str, int] = {}
    found = set()
    for heading in HEADING.findall(FENCE.sub("", markdown(page))):
        base = slug(heading)
        count = seen.get(base, 0)
        found.add(base if count == 0 else f"{base}-{count}")
        seen[base] = count + 1
    return found


def links(page: Path) -> list[str]:
    text = CODE_SPAN.sub("", FENCE.sub("", markdown(page)))
    return [target for target in LINK.findall(text) if not re.match(r"[a-z]+:", target)]


def test_the_slug_is_githubs() -> None:
    assert slug("Why `grep` runs ripgrep") == "why-grep-runs-ripgrep"
    assert slug("The student's path") == "the-students-path"
    assert slug("Where the code departs from the sketch, and why") == (
        "where-the-code-departs-from-the-sketch-and-why"
    )
    assert slug("TypeScript to Python names") == "typescript-to-python-names"


def test_a_broken_link_or_anchor_is_found(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("# Top\n\n[ok](#top) [gone](#nowhere) [file](missing.md) `[code](x.md)`\n")
    assert anchors(page) == {"top"}
    assert links(page) == ["#top", "#nowhere", "missing.md"]


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(REPO)))
def test_every_relative_link_and_anchor_resolves(page: Path) -> None:
    broken = []
    for target in links(page):
        path, _, anchor = target.partition("#")
        resolved = (page.parent / path).resolve() if path else page
        if not resolved.exists():
            broken.append(f"{target}: no such file")
        elif anchor and resolved.suffix in (".md", ".ipynb") and anchor not in anchors(resolved):
            broken.append(f"{target}: no heading with that anchor in {resolved.name}")
    assert not broken, f"{page.relative_to(REPO)}: " + "; ".join(broken)


# Where the README starts JupyterLab for each notebook: it serves that folder and nothing above it
# (`jupyter lab notebooks/`); a lab opens from the repository root, or in a Classroom checkout,
# which holds labs/ and no docs/.
SERVED = {
    **{page: REPO / "notebooks" for page in WALKTHROUGH},
    **{p: REPO / "labs" for p in LAB_SOURCES},
}


@pytest.mark.parametrize("page", sorted(SERVED), ids=lambda page: page.name)
def test_a_notebooks_links_open_in_the_folder_jupyterlab_serves(page: Path) -> None:
    # Issue 33: under `jupyter lab notebooks/`, the quizzes' link to ../docs/lab.md was a 404.
    outside = [
        t for t in links(page) if not (page.parent / t).resolve().is_relative_to(SERVED[page])
    ]
    assert not outside, f"{page.name} links above {SERVED[page].name}/: {outside}"


def test_the_readme_is_a_page_and_links_every_doc() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 300
    for doc in REPO.glob("docs/*.md"):
        assert f"](docs/{doc.name})" in readme, f"the README does not link docs/{doc.name}"


def quickstart() -> list[str]:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("## Quickstart\n") :]
    start = section.index("```bash\n") + len("```bash\n")
    return section[start : section.index("\n```", start)].splitlines()


def test_the_quickstart_is_two_commands_and_ci_runs_the_second_word_for_word() -> None:
    offline, suite = quickstart()
    assert offline.endswith("MOCK=1 .venv/bin/course-agent") and "pytest" in suite
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert any(line.startswith(suite + " ||") or line == suite for line in ci), suite


def test_the_quickstart_installs_are_regular_so_saved_cards_work() -> None:
    # An editable install skips the data file that enables notebook/saving.py (docs/usage.md).
    for command in quickstart():
        assert "pip install -q " in command and " -e " not in command, command
