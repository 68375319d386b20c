"""The three caps on a tool call's arguments, one for each stage they pass, each with its why.

Streamed in (the gateway's reader holds them), parsed (before json.loads), validated (each string
field of a tool's argument class, so the schema the model sees states it too). Deliberately not
handled: the caps on the rest of what a gateway sends (providers/gateway/limits.py).
"""

from __future__ import annotations

__all__ = ["MAX_ARGUMENTS", "MAX_ARGUMENTS_CHARS", "MAX_FIELD_CHARS"]

# Characters of one call's arguments held while they stream in: memory, whatever the tool; a
# tool that writes files would take whole files, and 1 MiB is a 25,000-line file.
MAX_ARGUMENTS = 1 << 20
# Characters of a call's raw JSON read by json.loads: parsing work, for the tools here, whose
# arguments fit in a few KB (a 5000-digit number or deep nesting is refused apart).
MAX_ARGUMENTS_CHARS = 65_536
# Characters of one string field (a path, a pattern, a glob): Linux's PATH_MAX, so no longer path
# can be opened anyway, and far more than any real pattern, so matching work stays bounded.
MAX_FIELD_CHARS = 4096
