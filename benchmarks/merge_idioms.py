"""Three ways to join one call's streamed arguments, timed on 400,000 characters in small pieces.

Why accumulator.py joins a list once: it is the fastest of the three (Pieces holds less memory,
and the gateway's caps bound what a list holds); the course's `slot["args"] += piece` is
quadratic in CPython (the in-place trick works only on a local name, not a dict slot).
Run by hand: `.venv/bin/python benchmarks/merge_idioms.py`. Deliberately not handled: anything
but timing and peak memory of the join itself (no stream, no parser).
"""

from __future__ import annotations

import time
import tracemalloc
from collections.abc import Callable, Iterable, Iterator

from course_agent.safety.pieces import Pieces

__all__ = ["CHARS", "PIECE", "main", "with_list", "with_pieces", "with_plus"]

CHARS = 400_000  # characters of arguments in one call
PIECE = "ab"  # a gateway may stream 2 characters a fragment


def with_list(pieces: Iterable[str]) -> str:
    slot: dict[str, list[str]] = {"args": []}
    for piece in pieces:
        slot["args"].append(piece)
    return "".join(slot["args"])


def with_pieces(pieces: Iterable[str]) -> str:
    slot = {"args": Pieces()}
    for piece in pieces:
        slot["args"].add(piece)
    return slot["args"].text()


def with_plus(pieces: Iterable[str]) -> str:
    slot = {"args": ""}  # the course's accumulator, as printed
    for piece in pieces:
        slot["args"] += piece
    return slot["args"]


def streamed() -> Iterator[str]:
    """Each piece a new string, as a parser makes them: a list of them keeps every one alive."""
    for n in range(CHARS // len(PIECE)):
        yield PIECE[0] + chr(97 + n % 26)


def best_of(merge: Callable[[Iterable[str]], str], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        merge(streamed())
        times.append(time.perf_counter() - start)
    return min(times)


def peak_bytes(merge: Callable[[Iterable[str]], str]) -> int:
    tracemalloc.start()
    merge(streamed())
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak


def main() -> None:
    if not with_list(streamed()) == with_pieces(streamed()) == with_plus(streamed()):
        raise RuntimeError("the three joins disagree")
    count = CHARS // len(PIECE)
    print(f"{CHARS:,} characters in {count:,} pieces of {len(PIECE)}, timed (best of) and peak:")
    for name, merge, runs in [
        ("list + join", with_list, 7),
        ("Pieces", with_pieces, 7),
        ('slot["args"] += (the course)', with_plus, 1),
    ]:
        seconds, peak = best_of(merge, runs), peak_bytes(merge)
        print(f"  {name:30} {seconds * 1000:10.1f} ms   peak {peak / 1e6:6.1f} MB")


if __name__ == "__main__":
    main()
