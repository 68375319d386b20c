"""The offline question, plain and with bad arguments injected, run on a student's three functions.

The course's acceptance ticks 2 (glob, grep and read_file cards, then a conclusion) and 5
(`INJECT=bad_args` finishing with exit code 0) happen on the lab's own code: the scripted model on
a generated sandbox, the registry built with the student's `execute_call` and `truncate_result`,
the student's accumulator merging each turn, the cards as `%%agent --mock` draws them.
Deliberately not handled: a real gateway (that is `%%agent`) and grading (the self-test).
"""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from IPython.core.getipython import get_ipython
from IPython.display import display

from course_agent.app.guard import run_guarded
from course_agent.notebook.cards.fragments import FragmentLog
from course_agent.notebook.cards.show import LiveCards, show_events
from course_agent.offline.repository import QUESTION, build_sandbox
from course_agent.offline.scripted import ScriptedModel
from course_agent.protocol import Accumulator, AgentStopped, ToolContext, ToolResult
from course_agent.registry import RunCall, ToolRegistry, default_registry

__all__ = ["run_mine"]


def _notebook_frontend() -> bool:
    """A notebook frontend sends the cell's id with each request (magics.py says why it matters):
    then the cards are live widgets; under nbclient or nbval they are static."""
    shell = get_ipython()
    kernel = getattr(shell, "kernel", None)
    request = kernel.get_parent() if kernel is not None else None
    return "cellId" in ((request or {}).get("metadata") or {})


def run_mine(
    accumulator: Callable[[], Accumulator],
    run_call: RunCall,
    truncate: Callable[[ToolResult], ToolResult],
    *,
    inject: str | None = None,
) -> AgentStopped:
    """Ask the offline question through the loop with the three functions given; show its text,
    a card per call, then how it ended (done: the CLI's exit code 0). `inject="bad_args"`: the
    script sends bad arguments first, as `INJECT=bad_args` does."""
    tools = default_registry().tools.values()
    registry = ToolRegistry(tools, run_call=run_call, truncate=truncate)
    log = FragmentLog()
    # Kept until the kernel stops, as %%agent --mock keeps its sandbox: a live card re-runs calls.
    workdir = tempfile.mkdtemp(prefix="day03-mine-")
    ctx = ToolContext(build_sandbox(Path(workdir)))
    model = log.watch(ScriptedModel(inject))
    print(f"? {QUESTION}" + (f"   (INJECT={inject})" if inject else ""))
    events = run_guarded(QUESTION, model, registry, ctx, accumulator=accumulator)
    live = LiveCards(lambda call: registry.execute(call, ctx), log)
    stopped = show_events(
        events, display, sys.stdout, sys.stderr, live if _notebook_frontend() else None
    )
    command = "MOCK=1" + (f" INJECT={inject}" if inject else "") + " course-agent"
    if stopped.reason == "done":
        print(f"ended: done, with your three functions (`{command}` exits 0)")
    else:
        print(f"ended: {stopped.reason} (`{command}` would not exit 0)")
    return stopped
