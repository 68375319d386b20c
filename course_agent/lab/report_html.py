"""Draw a ClassReport as one HTML page: inline CSS, inline SVG charts, no script, nothing fetched.

Built as an ElementTree and serialised by it, so every text and attribute is escaped by
construction: a submission named `<script>...` or a message holding markup stays text. It opens from
an email attachment or an LMS as it is. Deliberately not handled: the figures (report.py).
"""

from __future__ import annotations

from typing import Any
from xml.etree.ElementTree import Element, tostring

from course_agent.lab.rows import NO_SCORE, short_names, spreadsheet_text

# What is drawn is a report.ClassReport; it is not imported here, so that report.py can import
# this module and no import runs in a circle.
ClassReport = Any

__all__ = ["render_fragment", "render_page"]

# Scoped under .ca-report, so that inline in a notebook it styles nothing else.
STYLE = """
.ca-report { font: 14px/1.45 system-ui, sans-serif; color: #1f2328; max-width: 980px; }
.ca-report h2 { font-size: 1.3em; margin: 0.2em 0 0.3em; }
.ca-report h3 { font-size: 1.05em; margin: 1.4em 0 0.4em; }
.ca-report .summary { color: #57606a; margin: 0 0 0.8em; }
.ca-report table { border-collapse: collapse; margin: 0.3em 0 1em; }
.ca-report th, .ca-report td { border-bottom: 1px solid #d0d7de; padding: 3px 10px 3px 0;
  text-align: left; vertical-align: top; }
.ca-report th { font-weight: 600; }
.ca-report td.num { text-align: right; font-variant-numeric: tabular-nums; }
.ca-report td { white-space: nowrap; }
.ca-report td:last-child { white-space: normal; }
.ca-report td div + div { margin-top: 0.25em; }
.ca-report code { font: 12px/1.4 ui-monospace, monospace; white-space: pre-wrap;
  word-break: break-word; }
.ca-report .full { color: #1a7f37; font-weight: 600; }
.ca-report .none { color: #6e7781; }
.ca-report .legend { color: #57606a; margin: 0.2em 0; }
.ca-report svg text { font: 12px system-ui, sans-serif; fill: #1f2328; }
"""
FULL, PARTIAL, GREY, FAILED = "#1a7f37", "#0969da", "#8c959f", "#cf222e"


def node(tag: str, *children: Element | str | None, **attrs: object) -> Element:
    """An element: `class_=` is class, `text_anchor=` is text-anchor (None: left out); strings
    become text, escaped when serialised."""
    names = {key: key.rstrip("_").replace("_", "-") for key in attrs}
    element = Element(tag, {names[key]: str(v) for key, v in attrs.items() if v is not None})
    for child in children:
        if child is None:
            continue
        if isinstance(child, Element):
            element.append(child)
        elif len(element):
            element[-1].tail = (element[-1].tail or "") + child
        else:
            element.text = (element.text or "") + child
    return element


def _score_chart(report: ClassReport) -> Element:
    """One column per score, full marks in green and no score in grey, the count on top."""
    width, height, base = 64, 150, 170  # per column; tallest bar; the baseline's y
    top = max((count for _, count in report.scores), default=0) or 1
    svg = node(
        "svg",
        node("title", "How many submissions got each score"),
        width=width * len(report.scores) + 20,
        height=base + 24,
        role="img",
        aria_label="score distribution",
    )
    for i, (score, count) in enumerate(report.scores):
        passed, _, total = score.partition("/")
        color = GREY if score == NO_SCORE else FULL if passed == total else PARTIAL
        bar, x = round(height * count / top), 10 + i * width
        svg.append(
            node(
                "rect",
                node("title", f"{score}: {count}"),
                x=x + 8,
                y=base - bar,
                width=width - 16,
                height=bar,
                fill=color,
            )
        )
        middle = x + width // 2
        svg.append(node("text", str(count), x=middle, y=base - bar - 5, text_anchor="middle"))
        svg.append(node("text", score, x=middle, y=base + 16, text_anchor="middle"))
    return svg


def _checks_chart(report: ClassReport) -> Element:
    """One row per check, by name: how many of the scored submissions failed it."""
    label, length, row = 230, 420, 26  # label column, longest bar, row height
    scored = report.scored or 1
    svg = node(
        "svg",
        node("title", "How many submissions fail each check"),
        width=label + length + 150,
        height=row * len(report.checks) + 8,
        role="img",
        aria_label="failures per check",
    )
    for i, check in enumerate(report.checks):
        y = 4 + i * row
        name = f"{check.number}. {check.name}"
        svg.append(node("text", name, x=label - 8, y=y + 17, text_anchor="end"))
        bar = round(length * check.failed / scored)
        svg.append(
            node(
                "rect",
                node("title", f"{name}: {check.failed} of {report.scored} scored failed it"),
                x=label,
                y=y + 3,
                width=max(bar, 1),
                height=row - 8,
                fill=FAILED if check.failed else GREY,
            )
        )
        svg.append(node("text", f"{check.failed} of {report.scored}", x=label + bar + 6, y=y + 17))
    return svg


def _table(header: list[str], rows: list[list[Element | str]], numeric: set[int]) -> Element:
    """A table; each text cell as a spreadsheet shows it (a spreadsheet opens HTML tables too)."""
    table = node("table", node("tr", *(node("th", cell) for cell in header)))
    for cells in rows:
        tr = node("tr")
        for i, cell in enumerate(cells):
            text = spreadsheet_text(cell) if isinstance(cell, str) else cell
            tr.append(node("td", text, class_="num") if i in numeric else node("td", text))
        table.append(tr)
    return table


def _messages(report: ClassReport) -> Element:
    rows = [
        [
            f"{check.number}. {check.name}",
            str(check.failed),
            node(
                "div",
                *(
                    node(
                        "div", f"{failure.count} of {check.failed}: ", node("code", failure.example)
                    )
                    for failure in check.top
                ),
            ),
        ]
        for check in report.checks
        if check.failed
    ]
    if not rows:
        return node("p", "No check failed.", class_="none")
    header = ["check", "failed", "the most common failures (each as one student got it)"]
    return _table(header, rows, {1})


def _submissions(report: ClassReport) -> list[Element]:
    names = short_names([row.submission for row in report.rows])
    legend = "; ".join(f"{check.number} {check.name}" for check in report.checks)
    rows = []
    for row in report.rows:
        failed = node("span", "?" if row.passed is None else "-", class_="none")
        if row.failed:
            failed = node("span", " ".join(map(str, row.failed)))
        full = row.passed is not None and row.passed == row.total
        score = node("span", row.score, class_="full" if full else None)
        rows.append([names[row.submission], score, failed, f"{row.seconds:.1f}", row.note])
    return [
        node("p", "Checks: ", node("b", legend or "none ran"), ".", class_="legend"),
        node(
            "p",
            "score: checks passed of those run; failed: the numbers of the checks that failed "
            "(- none, ? no score: the note says why); seconds: the notebook's run; note: why a "
            "notebook has no score.",
            class_="legend",
        ),
        _table(["submission", "score", "failed", "seconds", "note"], rows, {3}),
    ]


def _written(report: ClassReport) -> list[Element]:
    """Every answer a person reads, by submission: the instructor grades them; no point is given."""
    names = short_names([row.submission for row in report.rows])
    rows = [
        [names[row.submission], title, text or node("span", "no answer", class_="none")]
        for row in report.rows
        for title, text in row.written
    ]
    if not rows:
        return []
    return [
        node("h3", "Written answers: yours to read and grade"),
        node(
            "p",
            "No point is given for these by the grader: the score above counts the checks only. "
            "Grade them in nbgrader's manual grading or in your gradebook.",
            class_="legend",
        ),
        _table(["submission", "answers", "text"], rows, set()),
    ]


def _summary(report: ClassReport) -> str:
    parts = [f"{len(report.rows)} submissions", f"{report.scored} scored"]
    parts.append(f"{report.full_marks} with full marks")
    if report.median is not None:
        parts.append(f"median {report.median:.0%} of checks passed")
    if report.seconds is not None:
        minutes, seconds = divmod(round(report.seconds), 60)
        parts.append(
            f"graded in {minutes} min {seconds} s" if minutes else f"graded in {seconds} s"
        )
    return ", ".join(parts) + "."


def _body(report: ClassReport) -> Element:
    unscored = [[reason, str(count)] for reason, count in report.unscored]
    return node(
        "div",
        node("style", STYLE),
        node("h2", "Class report"),
        node("p", _summary(report), class_="summary"),
        node("h3", "Scores"),
        _score_chart(report),
        node("h3", "Where the class is stuck: submissions failing each check"),
        _checks_chart(report),
        node("h3", "The most common failures of each check"),
        _messages(report),
        node("h3", "No score, and why") if unscored else None,
        _table(["why", "submissions"], unscored, {1}) if unscored else None,
        node("h3", "Every submission"),
        *_submissions(report),
        *_written(report),
        class_="ca-report",
    )


def render_fragment(report: ClassReport) -> str:
    """The report as one <div> with its own style: what a notebook shows inline."""
    return tostring(_body(report), encoding="unicode", method="html")


def render_page(report: ClassReport) -> str:
    """The report as a whole HTML document."""
    page = node(
        "html",
        node(
            "head",
            node("meta", charset="utf-8"),
            node("meta", name="viewport", content="width=device-width, initial-scale=1"),
            node("title", "Class report"),
        ),
        node("body", _body(report)),
        lang="en",
    )
    return "<!DOCTYPE html>\n" + tostring(page, encoding="unicode", method="html") + "\n"
