"""The fragments behind each call: every ToolCallDelta of a turn, kept while the conversation lives.

`FragmentLog.watch(model)` records what the model streams, one turn per request, within a bound;
`fragments_html` lists a turn's fragments in arrival order, coloured by the call they build.
Deliberately not handled: text deltas (only call fragments are kept) and keeping them on disk.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from course_agent.notebook.cards.static import MONO, text_html
from course_agent.protocol import Model, ModelEvent, ToolCallDelta

__all__ = [
    "FRAGMENT_COST",
    "MAX_KEPT_CHARS",
    "FragmentLog",
    "TurnFragments",
    "fragments_html",
    "slot_order",
]

# The bound on what one conversation keeps: its fragments' text plus FRAGMENT_COST for each one,
# which is about what CPython spends on a small ToolCallDelta (see the README's bound table).
MAX_KEPT_CHARS = 256_000
FRAGMENT_COST = 200
SHOWN_FRAGMENTS = 400  # rows in one card's list; a turn with more says how many were left out
# index colours, cycled; every row also says its index in words, so colour is never the only signal
COLOURS = ("#0969da", "#bc4c00", "#8250df", "#1a7f37", "#bf3989", "#6e7781")
CELL = "padding:0 6px;vertical-align:top;text-align:left;white-space:pre-wrap;line-height:1.45"


def _cost(delta: ToolCallDelta) -> int:
    text = (delta.id or "") + (delta.name or "") + (delta.args_delta or "")
    return len(text) + FRAGMENT_COST


@dataclass
class TurnFragments:
    """One model request's call fragments in arrival order; `left_out` counts those not kept."""

    number: int
    deltas: list[ToolCallDelta] = field(default_factory=list)
    left_out: int = 0
    forgotten: str = ""  # why the list is empty now, once the log let the turn go

    def cost(self) -> int:
        return sum(_cost(delta) for delta in self.deltas)


class FragmentLog:
    """A conversation's fragments turn by turn, at most `limit` chars; old turns go first."""

    def __init__(self, limit: int = MAX_KEPT_CHARS) -> None:
        self.limit = limit
        self.turns: list[TurnFragments] = []
        self.kept = 0  # the cost of everything kept, as counted by _cost

    def __repr__(self) -> str:
        return f"FragmentLog({len(self.turns)} turns, {self.kept} of {self.limit} chars kept)"

    def start_turn(self) -> TurnFragments:
        turn = TurnFragments(number=len(self.turns) + 1)
        self.turns.append(turn)
        return turn

    def add(self, turn: TurnFragments, delta: ToolCallDelta) -> None:
        cost = _cost(delta)
        # Make room by forgetting whole older turns; the turn being streamed is never cut short
        # by its own past, only by itself growing past the limit.
        while self.kept + cost > self.limit and self.turns and self.turns[0] is not turn:
            self._forget(self.turns.pop(0), "left out: the conversation kept newer turns")
        if self.kept + cost > self.limit:
            turn.left_out += 1
            return
        turn.deltas.append(delta)
        self.kept += cost

    def clear(self, reason: str = "left out: the conversation they belong to has ended") -> None:
        """Let every turn go (a new conversation began); cards still holding one say why."""
        for turn in self.turns:
            self._forget(turn, reason)
        self.turns.clear()

    def _forget(self, turn: TurnFragments, reason: str) -> None:
        self.kept -= turn.cost()
        turn.forgotten = reason
        turn.left_out += len(turn.deltas)
        turn.deltas = []

    def watch(self, model: Model) -> Model:
        """`model`, its streams recorded here: the loop sees every event unchanged."""
        return _Recorded(model, self)


class _Recorded:
    """A model whose call fragments are copied into a FragmentLog on their way to the loop."""

    def __init__(self, model: Model, log: FragmentLog) -> None:
        self.model, self.log = model, log
        self.label = model.label

    def __repr__(self) -> str:
        return f"{self.model!r} (fragments recorded)"

    def stream(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]
    ) -> Iterator[ModelEvent]:
        turn = self.log.start_turn()  # the loop asks once per turn
        for event in self.model.stream(messages, tools):
            if isinstance(event, ToolCallDelta):
                self.log.add(turn, event)
            yield event


def slot_order(deltas: list[ToolCallDelta]) -> tuple[list[int], list[int]]:
    """Each fragment's slot (its index: the wire gives one to every fragment), and the slots in
    drain order. The k-th call the loop runs in a turn is built by the fragments of the k-th slot
    in drain order (the loop drains in index order).
    """
    slots = [delta.index for delta in deltas]
    return slots, sorted(set(slots))


def _row(number: int, slot: int, delta: ToolCallDelta, mine: bool) -> str:
    parts = [f"index={delta.index}"]
    parts += [f"{key}={value}" for key, value in (("id", delta.id), ("name", delta.name)) if value]
    style = f"color:{COLOURS[slot % len(COLOURS)]}" + ("" if mine else ";opacity:.55")
    weight = "font-weight:bold;" if mine else ""
    return (
        f'<tr style="{style}"><td style="{CELL}">{number}</td>'
        f'<td style="{CELL};{weight}">{text_html(" ".join(parts))}</td>'
        f'<td style="{CELL}">args+=<code>{text_html(delta.args_delta or "")}</code></td></tr>'
    )


def fragments_html(turn: TurnFragments, position: int) -> str:
    """The turn's fragments in arrival order; those of its `position`-th call in bold."""
    if not turn.deltas:
        why = turn.forgotten or "the model sent this call's fragments in no stream we saw"
        return f'<div style="{MONO}">fragments of turn {turn.number}: {text_html(why)}</div>'
    slots, order = slot_order(turn.deltas)
    mine = order[position] if position < len(order) else None
    rows = [
        _row(number, slot, delta, slot == mine)
        for number, (slot, delta) in enumerate(zip(slots, turn.deltas, strict=True), start=1)
    ][:SHOWN_FRAGMENTS]
    count = len(turn.deltas)
    notes = []
    if count > SHOWN_FRAGMENTS:
        notes.append(f"{count - SHOWN_FRAGMENTS} more not shown")
    if turn.left_out:
        notes.append(f"{turn.left_out} not kept (each conversation keeps {MAX_KEPT_CHARS} chars)")
    head = (
        f"turn {turn.number}: {count} fragments for {len(order)} calls, in arrival order; "
        f"in bold, this call (index {mine})"
    )
    tail = f"<div>{text_html('; '.join(notes))}</div>" if notes else ""
    return (
        f'<div style="{MONO}"><div>{text_html(head)}</div>'
        f'<table style="border-collapse:collapse">{"".join(rows)}</table>{tail}</div>'
    )
