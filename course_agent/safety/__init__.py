"""What every edge shares: cutting secrets out of text, and streamed pieces held in bounded memory.

Imports nothing else of the package, so any edge (gateway, tool reader, face) can use it."""

__all__: list[str] = []
