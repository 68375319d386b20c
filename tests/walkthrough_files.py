"""The notebooks the suite reads, by name: the walkthrough's seven and the labs' sources.

The README invites a new notebook in notebooks/ (for the demo) and a student saves their lab in
labs/, so no test lists those folders: each takes its notebooks from here, a fixed manifest.
Deliberately not handled: a walkthrough notebook renamed or added (add it to WALKTHROUGH_NAMES;
tests/test_notebooks.py checks the manifest against what git tracks).
"""

from __future__ import annotations

from pathlib import Path

from course_agent.lab.labs import LABS

__all__ = ["LAB_SOURCES", "WALKTHROUGH", "WALKTHROUGH_NAMES"]

REPO = Path(__file__).resolve().parent.parent
# One per part of the course text, in its order.
WALKTHROUGH_NAMES = (
    "01-tool-protocol.ipynb",
    "02-streamed-fragments.ipynb",
    "03-bad-arguments.ipynb",
    "04-read-only-tools.ipynb",
    "05-truncation.ipynb",
    "06-the-loop.ipynb",
    "07-two-wire-formats.ipynb",
)
WALKTHROUGH = tuple(REPO / "notebooks" / name for name in WALKTHROUGH_NAMES)
# The solution notebooks a release is made from, one per lab the package ships.
LAB_SOURCES = tuple(REPO / "labs" / "source" / lab.notebook for lab in LABS.values())
