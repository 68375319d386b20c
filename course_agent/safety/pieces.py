"""Text that arrives in many small pieces, held in little more memory than the text itself.

A list of 2-character strings costs 60 bytes a piece (30 MB for 1 MB of text), and `text += piece`
copies all the text for every piece; `Pieces` joins each 256 pieces into one string as they come,
so every character is copied twice. Deliberately not handled: anything but adding and reading.
"""

from __future__ import annotations

from collections.abc import Iterator

__all__ = ["BATCH", "Pieces"]

BATCH = 256  # pieces joined at once: the list of small strings never holds more than this


class Pieces:
    """`pieces.add(piece)` as they come, `pieces.text()` for the whole; `len(pieces)` is its
    length in characters so far. Iterating gives strings that join to the text, so code written
    for a list of pieces (`"".join(slot.pieces)`) reads it unchanged."""

    def __init__(self) -> None:
        self.joined: list[str] = []  # each one the join of BATCH pieces, in order
        self.recent: list[str] = []  # the pieces since, fewer than BATCH
        self.length = 0

    def add(self, piece: str) -> None:
        self.recent.append(piece)
        self.length += len(piece)
        if len(self.recent) == BATCH:
            self.joined.append("".join(self.recent))
            self.recent.clear()

    def text(self) -> str:
        return "".join(self.joined + self.recent)

    def __iter__(self) -> Iterator[str]:
        return iter(self.joined + self.recent)

    def __len__(self) -> int:
        return self.length

    def __repr__(self) -> str:
        return repr(self.joined + self.recent)  # as the list of pieces it stands for
