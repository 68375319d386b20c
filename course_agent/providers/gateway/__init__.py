"""The gateway's bounds: errors, limits, deadlines, retries, the stream contract and SSE framing.

Only providers/ imports these; the loop and the lesson never see them."""

__all__: list[str] = []
