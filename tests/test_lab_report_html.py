"""The class report's page: self-contained (no script, nothing fetched) and immune to markup in
what a submission brings (its file name, the messages its code raised). Parsed with html.parser.
"""

from __future__ import annotations

from html.parser import HTMLParser

from course_agent.lab.grade import GradeRow, row_from_report
from course_agent.lab.report import ClassReport

NAMES = ("registry", "path boundary", "fragment merging")
# Markup a student can put where the report shows it: a file name (no "/" in a file name) and a
# message their code raises (anything at all).
EVIL_NAME = "<img src=x onerror=alert(1)>&amp;<script>alert(2)<.script>"
EVIL_MESSAGE = "</code></td><script>alert(3)</script><a href='https://evil.example/'>x</a>"

TAGS = {
    "html", "head", "meta", "title", "body", "style", "div", "h2", "h3", "p", "b", "span",
    "table", "tr", "th", "td", "code", "svg", "rect", "text",
}  # fmt: skip


class Collected(HTMLParser):
    """Every tag and attribute of a page, and its text."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def parsed(html: str) -> Collected:
    collected = Collected()
    collected.feed(html)
    collected.close()
    return collected


def evil_class() -> ClassReport:
    checks = [
        {"number": 1, "name": NAMES[0], "ok": True, "line": "fine"},
        {"number": 2, "name": NAMES[1], "ok": True, "line": "fine"},
        {"number": 3, "name": NAMES[2], "ok": False, "line": f"{NAMES[2]}: {EVIL_MESSAGE}"},
    ]
    rows = [
        row_from_report(f"/class/{EVIL_NAME}.ipynb", {"checks": checks, "refused": []}, 2.0),
        GradeRow("/class/ok.ipynb", None, None, (), (), 1.0, f"could not run: {EVIL_MESSAGE}"),
    ]
    return ClassReport.from_rows(rows, 3.0)


def test_the_page_holds_no_script_and_fetches_nothing() -> None:
    page = parsed(evil_class().html())
    assert {tag for tag, _ in page.tags} <= TAGS
    attributes = {name for _, attrs in page.tags for name in attrs}
    assert not {name for name in attributes if name.startswith("on")}
    assert not {name for name in attributes if name in ("src", "href", "srcset", "action")}
    css = "".join(page.text)
    assert "@import" not in css and "url(" not in css


def test_markup_from_a_submission_stays_text() -> None:
    html = evil_class().html()
    page = parsed(html)
    text = "".join(page.text)
    assert f"{EVIL_NAME}.ipynb" in text  # shown, as text, exactly as the file is named
    assert text.count(EVIL_MESSAGE) == 2  # in the table of failures, and in the row's note
    assert "<script" not in html and "<img" not in html and "<a " not in html
    assert "&lt;img src=x onerror=alert(1)&gt;&amp;amp;&lt;script&gt;" in html


def test_the_page_has_both_charts_and_a_legend_with_the_checks_names() -> None:
    page = parsed(evil_class().html())
    svgs = [attrs for tag, attrs in page.tags if tag == "svg"]
    assert [attrs["aria-label"] for attrs in svgs] == ["score distribution", "failures per check"]
    rects = [attrs for tag, attrs in page.tags if tag == "rect"]
    assert len(rects) == 5 + 3  # bars for 0/3 .. 3/3 and no score; one per check
    text = "".join(page.text)
    assert "1 registry; 2 path boundary; 3 fragment merging" in text
    assert "3. fragment merging" in text  # the chart's label: the name, not only the number


def test_the_inline_fragment_is_the_pages_body() -> None:
    report = evil_class()
    assert report._repr_html_() in report.html()
    assert report._repr_html_().startswith('<div class="ca-report"><style>')
