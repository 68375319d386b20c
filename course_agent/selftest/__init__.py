"""The labs' checks: generated cases, judges and the one-line messages a student acts on.

`lab` holds the main lab's seven checks, `extensions` the extension lab's seven."""

__all__: list[str] = []
