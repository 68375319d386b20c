import re

from course_agent.notebook.cost_view import CostView
from course_agent.render.cost import cost_lines, request_costs

MESSAGES = [
    {"role": "system", "content": "s" * 200},
    {"role": "user", "content": "u" * 50},
    {"role": "assistant", "content": "a" * 50},
    {"role": "tool", "tool_call_id": "c1", "content": "t" * 700},
    {"role": "assistant", "content": "done"},
]


def widths(bar_html: str) -> list[float]:
    return [float(w) for w in re.findall(r"width:([\d.]+)%;flex:none;background", bar_html)]


def test_text_plain_is_the_cost_table():
    bundle = CostView(MESSAGES)._repr_mimebundle_()
    assert bundle["text/plain"] == "\n".join(cost_lines(request_costs(MESSAGES)))


def test_one_bar_per_request_on_one_scale():
    html = CostView(MESSAGES)._repr_html_()
    rows = html.split("request ")[1:]
    assert [row[0] for row in rows] == ["1", "2"]
    first, second = widths(rows[0]), widths(rows[1])
    assert sum(second) == 100  # the biggest request fills the track
    assert first == [20.0, 5.0]  # 200 and 50 of 1000 characters
    assert "1000 chars (system 200, user 50, assistant 50, tool 700)" in rows[1]


def test_the_figures_survive_without_styles():
    html = CostView(MESSAGES)._repr_html_()
    text = re.sub(r"<[^>]+>", " ", html)
    assert "250 chars (system 200, user 50)" in text
    assert "2 requests re-sent 1250 characters in all" in text


def test_no_request_yet():
    view = CostView(MESSAGES[:2])
    assert str(view) == "no model request yet"
    assert "no model request yet" in view._repr_html_()


def test_each_row_stays_on_one_line():
    html = CostView(MESSAGES)._repr_html_()
    figures = re.findall(r'<span style="([^"]*)" title="[^"]*">\d+ chars', html)
    assert len(figures) == 2
    assert all(
        "white-space:nowrap" in style and "text-overflow:ellipsis" in style for style in figures
    )
