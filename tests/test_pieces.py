"""Pieces gives back exactly what was added, and holds it in about the memory of the text."""

import tracemalloc

from hypothesis import given
from hypothesis import strategies as st

from course_agent.safety.pieces import BATCH, Pieces


@given(st.lists(st.text(max_size=5), max_size=3 * BATCH))
def test_the_text_is_the_pieces_joined(pieces: list[str]) -> None:
    held = Pieces()
    for piece in pieces:
        held.add(piece)
    assert held.text() == "".join(pieces) == "".join(held)  # iterated, as a list of pieces is
    assert len(held) == len("".join(pieces))


def test_nothing_added_is_empty() -> None:
    assert Pieces().text() == "" and len(Pieces()) == 0


def test_a_few_pieces_show_as_their_list() -> None:
    held = Pieces()
    for piece in ['{"p', "a", 'ttern":']:
        held.add(piece)
    assert repr(held) == repr(['{"p', "a", 'ttern":'])  # as notebook 02 prints a PartialCall


def test_400_000_characters_in_2_character_pieces_hold_about_their_size() -> None:
    # As a list of fresh 2-character strings they held 12 MB.
    tracemalloc.start()
    try:
        held = Pieces()
        for n in range(200_000):
            held.add(str(10 + n % 90))  # a fresh string each time, as json.loads makes them
        size, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert size < 1 << 20 and peak < 1 << 20
    assert len(held.text()) == 400_000
