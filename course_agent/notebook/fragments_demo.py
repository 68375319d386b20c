"""For instructors: replay a stream's tool-call fragments one by one and merge them three ways.

Slots keyed by index fill up correctly; "array by subscript from 0" and "join in arrival order"
are shown beside them, so the class sees both break. Step and Play controls need a live widget
frontend; everywhere else the static table of every step is shown. Deliberately not handled: text
deltas (only the call fragments are replayed) and streams without an index (Mistral's).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from importlib.resources import files
from typing import Any

from course_agent.notebook.cards.static import text_html
from course_agent.notebook.demo_tools import OPENAI_TEST_TOOLS, course_tools
from course_agent.notebook.merges import (
    Slot,
    call_problem,
    merge_by_index,
    merge_by_subscript,
    merge_in_arrival_order,
)
from course_agent.notebook.shown_forms import saved_static
from course_agent.offline.repository import QUESTION
from course_agent.offline.scripted import ScriptedModel
from course_agent.protocol import ToolCallDelta, ToolDef
from course_agent.providers.openai_chunks import events_from_lines
from course_agent.render.terminal import printable

__all__ = ["SOURCES", "FragmentDemo", "FragmentPlayer", "recorded_fragments", "scripted_fragments"]

# -- where fragments come from -------------------------------------------------------------------


def recorded_fragments(filename: str) -> list[ToolCallDelta]:
    """The call fragments of a recorded stream shipped in offline/streams/ (see its README.txt)."""
    text = (files("course_agent.offline") / "streams" / filename).read_text(encoding="utf-8")
    events = events_from_lines(text.splitlines(), gateway=filename)
    return [event for event in events if isinstance(event, ToolCallDelta)]


def scripted_fragments() -> list[ToolCallDelta]:
    """The offline model's first turn of the course question: glob and grep, interleaved."""
    messages = [{"role": "user", "content": QUESTION}]
    events = ScriptedModel().stream(messages, tools=[])
    return [event for event in events if isinstance(event, ToolCallDelta)]


@dataclass(frozen=True)
class Source:
    title: str
    load: Callable[[], list[ToolCallDelta]]
    tools: Callable[[], Mapping[str, ToolDef]] = course_tools  # what the stream was recorded with


SOURCES = {
    "claude": Source(
        "claude-haiku-4-5 through an OpenAI-compatible gateway: one call, its index starts at 1",
        lambda: recorded_fragments("vercel-ai_claude-openai-compat_index1_after_text.sse"),
    ),
    "interleaved": Source(
        "the offline model's first turn: two calls, indexes 1 and 2, heads and arguments "
        "interleaved",
        scripted_fragments,
    ),
    "parallel": Source(
        "gpt-4o: two parallel calls, indexes 0 and 1, sent one after the other "
        "(every way works here, which is why the bug survives testing against OpenAI)",
        lambda: recorded_fragments("openai-python_parallel_tool_calls.sse"),
        lambda: OPENAI_TEST_TOOLS,
    ),
}


# -- showing it ------------------------------------------------------------------------------------

CELL = "border:1px solid #d0d7de;padding:2px 6px;vertical-align:top;text-align:left"
MONO = "font-family:monospace;font-size:12px;white-space:pre-wrap;margin:0"
BAD = "color:#cf222e"


def _fragment_text(delta: ToolCallDelta) -> str:
    """`index=1 id=call_a name=glob args+=`{"pat``: the characters exactly as they arrived."""
    parts = [f"index={delta.index}"]
    parts += [f"{key}={value}" for key, value in (("id", delta.id), ("name", delta.name)) if value]
    parts.append(f"args+=`{delta.args_delta or ''}`")
    return " ".join(parts)


def _slots_html(slots: list[tuple[str, Slot]], final: bool, tools: Mapping[str, ToolDef]) -> str:
    """One line per slot: `label: name args`; at the end of the stream, the registry's refusals
    in red."""
    lines = []
    for label, slot in slots:
        text = f"{label}: {slot.get('name') or '(no name)'} {slot.get('args', '')}"
        problem = call_problem(slot, tools) if final else None
        lines.append(
            f'<span style="{BAD}">x {text_html(text)} - {text_html(problem)}</span>'
            if problem
            else text_html(("v " if final else "") + text)
        )
    return f'<pre style="{MONO}">{"<br>".join(lines) or "(empty)"}</pre>'


class FragmentDemo:
    """One source's fragments and the three merges after any number of them (`step`)."""

    def __init__(self, source: str = "claude") -> None:
        if source not in SOURCES:
            raise ValueError(f"unknown stream {source!r}; choose one of {', '.join(SOURCES)}")
        self.source = source
        self.title = SOURCES[source].title
        self.fragments = SOURCES[source].load()
        self.tools = SOURCES[source].tools()  # the registry that judges each merged call

    def __repr__(self) -> str:
        return f"FragmentDemo({self.source!r})"

    def merges(self, step: int) -> dict[str, list[tuple[str, Slot]]]:
        """Strategy -> its (label, slot) pairs after the first `step` fragments."""
        seen = self.fragments[:step]
        return {
            "by index (dict)": [(f"{i}", s) for i, s in sorted(merge_by_index(seen).items())],
            "by subscript from 0 (list)": [
                (f"[{i}]", s) for i, s in enumerate(merge_by_subscript(seen))
            ],
            "in arrival order (list)": [
                (f"[{i}]", s) for i, s in enumerate(merge_in_arrival_order(seen))
            ],
        }

    def step_html(self, step: int) -> str:
        """The view at one step: the fragments so far (the newest in bold) and the three merges."""
        final = step == len(self.fragments)
        arrived = [text_html(_fragment_text(d)) for d in self.fragments[:step]]
        if arrived:
            arrived[-1] = f"<b>{arrived[-1]}</b>"
        columns = "".join(
            f'<td style="{CELL}"><b>{text_html(name)}</b>'
            f"{_slots_html(slots, final, self.tools)}</td>"
            for name, slots in self.merges(step).items()
        )
        return (
            f"<div><b>{text_html(self.source)}</b>: {text_html(self.title)}<br>"
            f"fragment {step} of {len(self.fragments)}"
            f'<pre style="{MONO}">{"<br>".join(arrived) or "(nothing yet)"}</pre>'
            f'<table style="border-collapse:collapse"><tr>{columns}</tr></table></div>'
        )

    def _repr_html_(self) -> str:
        """The static form: every step as a table row, for readers without a live kernel."""
        header = "".join(
            f'<th style="{CELL}">{text_html(name)}</th>'
            for name in ["#", "fragment", *self.merges(0)]
        )
        rows = []
        for step in range(1, len(self.fragments) + 1):
            cells = "".join(
                f'<td style="{CELL}">'
                f"{_slots_html(slots, step == len(self.fragments), self.tools)}</td>"
                for slots in self.merges(step).values()
            )
            fragment = text_html(_fragment_text(self.fragments[step - 1]))
            rows.append(
                f'<tr><td style="{CELL}">{step}</td>'
                f'<td style="{CELL}"><pre style="{MONO}">{fragment}</pre></td>{cells}</tr>'
            )
        return (
            f"<div><b>{text_html(self.source)}</b>: {text_html(self.title)}"
            f'<table style="border-collapse:collapse"><tr>{header}</tr>{"".join(rows)}</table>'
            "</div>"
        )

    def __str__(self) -> str:
        """The final state of each merge, one line per call, for plain-text readers."""
        lines = [f"{self.source}: {self.title}", f"{len(self.fragments)} fragments"]
        for name, slots in self.merges(len(self.fragments)).items():
            lines.append(f"{name}:")
            for label, slot in slots:
                problem = call_problem(slot, self.tools)
                mark = f"x ({problem})" if problem else "v"
                lines.append(
                    f"  {label}: {slot.get('name') or '(no name)'} {slot.get('args', '')} {mark}"
                )
        return printable("\n".join(lines))  # as the HTML shows it: controls escaped

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        return {"text/plain": str(self), "text/html": self._repr_html_()}

    def player(self) -> FragmentPlayer:
        return FragmentPlayer(self)


class FragmentPlayer:
    """Step and Play controls over a FragmentDemo (ipywidgets, imported only when one is made).

    Displayed, it offers the live widget and, in the same output, the static table, which
    nbconvert and GitHub show instead, and which a saved notebook keeps (notebook/saving.py).
    """

    def __init__(self, demo: FragmentDemo, interval_ms: int = 900) -> None:
        import ipywidgets as widgets

        self.demo = demo
        last = len(demo.fragments)
        self.slider = widgets.IntSlider(value=0, min=0, max=last, description="fragment")
        play = widgets.Play(value=0, min=0, max=last, interval=interval_ms, description="Play")
        widgets.jslink((play, "value"), (self.slider, "value"))
        back = widgets.Button(description="< step", tooltip="one fragment back")
        forward = widgets.Button(description="step >", tooltip="one fragment on")
        back.on_click(lambda _: self.go(self.slider.value - 1))
        forward.on_click(lambda _: self.go(self.slider.value + 1))
        self.view = widgets.HTML(demo.step_html(0))
        self.slider.observe(lambda change: self.show(change["new"]), names="value")
        self.box = widgets.VBox([widgets.HBox([play, back, forward, self.slider]), self.view])

    def go(self, step: int) -> None:
        self.slider.value = max(0, min(step, len(self.demo.fragments)))

    def show(self, step: int) -> None:
        self.view.value = self.demo.step_html(step)

    def _repr_mimebundle_(
        self, include: Any = None, exclude: Any = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        bundle = self.box._repr_mimebundle_() or {}
        return {**bundle, **self.demo._repr_mimebundle_()}, saved_static()
