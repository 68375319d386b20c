"""A tool card as a live widget: it runs, finishes in place, replays edited calls, shows fragments.

Displayed, one output carries the widget and the static card beside it, marked so that a saved
notebook keeps only the static card (see notebook/saving.py): the card with the replays and the
fragments list it shows at the save (notebook/shown_forms.py). ipywidgets is imported only when a
card is made. Deliberately not handled: sending a replay to the model (it never is).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from course_agent.notebook.cards.fragments import TurnFragments, fragments_html
from course_agent.notebook.cards.static import MONO, ToolCard, text_html
from course_agent.notebook.shown_forms import remember, saved_static
from course_agent.protocol import ToolCall, ToolResult

__all__ = ["MAX_REPLAYS", "LiveCard"]

MAX_REPLAYS = 10  # replays a card keeps on show; older ones are dropped from the widget
REPLAY_NOTE = (
    "Runs the edited call through the same registry.execute, in this kernel. "
    "Not sent to the model: the transcript is untouched."
)


class LiveCard:
    """One call's card: header (the static card), edit-and-run, and the fragments behind it.

    `replay` runs a call (the run's registry.execute); `turn` and `position` say which fragments
    built this call (the `position`-th call of that turn).
    """

    def __init__(
        self,
        call: ToolCall,
        replay: Callable[[ToolCall], ToolResult],
        turn: TurnFragments | None = None,
        position: int = 0,
    ) -> None:
        import ipywidgets as widgets

        self.card = ToolCard(call)
        self.replay, self.turn, self.position = replay, turn, position
        self.replays: list[ToolCard] = []  # the last MAX_REPLAYS, oldest first
        self.replay_count = 0
        self.header = widgets.HTML(self.card._repr_html_())
        self.name = widgets.Text(call.name, description="tool")
        self.args = widgets.Textarea(
            call.args, description="arguments", layout=widgets.Layout(width="95%")
        )
        run = widgets.Button(description="Run", tooltip="not sent to the model")
        run.on_click(lambda _: self.run())
        self.replayed = widgets.HTML("")
        self.replay_box = widgets.VBox(
            [widgets.HTML(f'<div style="{MONO}">{text_html(REPLAY_NOTE)}</div>'), self.name,
             self.args, run, self.replayed],
            layout=widgets.Layout(display="none"),
        )  # fmt: skip
        self.fragments = widgets.HTML("", layout=widgets.Layout(display="none"))
        count = len(turn.deltas) if turn else 0
        compact = {"layout": widgets.Layout(width="auto")}
        edit = widgets.ToggleButton(
            description="edit & run", tooltip="replay with other arguments", **compact
        )
        unfold = widgets.ToggleButton(
            description=f"fragments ({count})", tooltip="the fragments that built it", **compact
        )
        edit.observe(lambda change: self._show(self.replay_box, change["new"]), names="value")
        unfold.observe(lambda change: self._unfold(change["new"]), names="value")
        self.box = widgets.VBox(
            [self.header, widgets.HBox([edit, unfold]), self.replay_box, self.fragments]
        )

    def __repr__(self) -> str:
        return f"LiveCard({self.card})"

    @staticmethod
    def _show(widget: Any, visible: bool) -> None:
        widget.layout.display = "" if visible else "none"

    def _unfold(self, visible: bool) -> None:
        if visible:  # drawn on demand: a turn's list can be long, and most cards stay folded
            self.fragments.value = (
                fragments_html(self.turn, self.position)
                if self.turn is not None
                else f'<div style="{MONO}">no fragments were recorded for this call</div>'
            )
        self._show(self.fragments, visible)
        self._remember()

    def finish(self, result: ToolResult) -> None:
        self.card = ToolCard(self.card.call, result)
        self.header.value = self.card._repr_html_()
        self._remember()

    def stop(self, reason: str) -> None:
        self.card = ToolCard(self.card.call, stopped=reason)
        self.header.value = self.card._repr_html_()
        self._remember()

    def run(self) -> ToolCard:
        """Execute the edited call and show its card under the earlier ones."""
        self.replay_count += 1
        number = self.replay_count
        call = ToolCall(f"{self.card.call.id}-replay-{number}", self.name.value, self.args.value)
        try:
            result = self.replay(call)
        except Exception as exc:  # registry.execute does not raise; a plugged-in one might
            result = ToolResult(f"the replay raised {type(exc).__name__}: {exc}", ok=False)
        replayed = ToolCard(call, result)
        self.replays = [*self.replays, replayed][-MAX_REPLAYS:]
        self.replayed.value = "".join(
            f'<div style="{MONO}">{text_html(label)}</div>{card._repr_html_()}'
            for label, card in self._replays()
        )
        self._remember()
        return replayed

    def _replays(self) -> list[tuple[str, ToolCard]]:
        first = self.replay_count - len(self.replays) + 1
        return [
            (f"replay {first + k}, not sent to the model:", card)
            for k, card in enumerate(self.replays)
        ]

    def static_bundle(self) -> dict[str, str]:
        """What the card shows now, as a page without a kernel shows it: the card, its replays,
        and the fragments list while it is unfolded."""
        shown = self._replays()
        plain = "\n".join([str(self.card), *(f"{label}\n{card}" for label, card in shown)])
        page = self.card._repr_html_() + self.replayed.value
        if self.fragments.layout.display != "none":
            page += self.fragments.value
        return {"text/plain": plain, "text/html": page}

    def _remember(self) -> None:
        remember(self.box.model_id, self.static_bundle())

    def _repr_mimebundle_(
        self, include: Any = None, exclude: Any = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        view = self.box._repr_mimebundle_() or {}
        return {**view, **self.static_bundle()}, saved_static()
