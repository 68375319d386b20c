"""The wiring of the faces: settings (options and environment into a model) and the .env reader."""

__all__: list[str] = []
