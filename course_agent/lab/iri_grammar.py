"""Grader processes start without jsonschema's IRI grammar: about 1 s of CPU saved at every start.

nbformat validates with jsonschema, whose format checker imports `rfc3987_syntax` when installed
(Jupyter's `jsonschema[format-nongpl]` brings it); that module builds some 35 Earley parsers (lark)
as it loads, for an "iri" format no notebook schema uses (python-jsonschema/jsonschema#1428,
opendatahub-io/notebooks#3532). Blocked, jsonschema leaves that one format unchecked.

Called by `course-agent grade` and `lab` (cli.py), and, as the pytest plugin pyproject.toml's
`addopts` names, by the hand-in before pytest imports nbval. Deliberately not handled: a process
that has imported jsonschema already (too late, and then harmless).
"""

from __future__ import annotations

import sys
from typing import Any

__all__ = ["pytest_addhooks", "skip_iri_grammar"]


def skip_iri_grammar() -> None:
    """Make `import rfc3987_syntax` fail fast in this process; jsonschema expects that it may."""
    sys.modules.setdefault("rfc3987_syntax", None)  # type: ignore[arg-type]


def pytest_addhooks(pluginmanager: Any) -> None:
    # pytest calls this as `-p course_agent.lab.iri_grammar` registers the plugin, which is before
    # it imports the installed plugins: nbval imports nbformat, and so jsonschema, on import.
    skip_iri_grammar()
