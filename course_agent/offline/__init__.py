"""The no-key run: the generated sandbox repository and the scripted models that answer offline.

They speak the same Model interface as a real gateway and stream the same wire chunks."""

__all__: list[str] = []
