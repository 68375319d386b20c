"""The kernel's wire: whatever a kernel sends, the grader's memory stays bounded and the run says
what happened, in the student's terms (a grader process of its own, its peak RSS read)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from lab_class import kernel_env

from course_agent.lab.wire import LARGEST_MESSAGE, SENT_LIMIT

# The grader as a process of its own, its peak resident memory read at its end.
GRADER = """
import json, resource, sys
from code_cells import notebook
from course_agent.lab.jail import Limits, sandbox_problem
from course_agent.lab.kernel import run_notebook

nb = notebook("x = 1", sys.argv[1], "print('after')")
said = run_notebook(nb, 60, sandbox=not sandbox_problem(), limits=Limits(wall_seconds=120))
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(json.dumps({"said": said, "peak": peak}))
"""
PEAK_RSS = 400_000_000  # bytes: the grader alone runs a lab at about 70 MB

FLOODS = {
    # what the kernel sends: (the cell, what the run's line must say)
    "one stream message over LARGEST_MESSAGE": (
        "print('x' * 9_000_000)",
        r"stopped: the notebook sent 9,000,\d{3} bytes of output at once, over the "
        f"{LARGEST_MESSAGE:,} one message may hold, in cell 2",
    ),
    "an execute_result over LARGEST_MESSAGE": ("'x' * 9_000_000", "over the 8,000,000 one message"),
    "an error whose traceback is 30 MB": ("raise ValueError('x' * 30_000_000)", "in cell 2"),
    "display_data of dicts, 4 MB each, past SENT_LIMIT": (
        "from IPython.display import display\n"
        "for i in range(100):\n"
        "    display({'application/json': {str(k): k for k in range(300_000)}}, raw=True)",
        f"stopped: the notebook sent more than {SENT_LIMIT:,} bytes of output in all, in cell 2",
    ),
    "a message of forged frames (a bad signature)": (
        "k = get_ipython().kernel\n"
        "k.iopub_socket.send_multipart([b'<IDS|MSG>', b'0' * 64, b'{}', b'{}', b'{}', b'{}'])\n"
        "import time; time.sleep(3)",
        "stopped: the kernel's messages came garbled",
    ),
}


@pytest.mark.slow
@pytest.mark.parametrize("flood", FLOODS, ids=str)
def test_whatever_a_kernel_sends_the_grader_stays_bounded_and_says_what_happened(
    flood: str, tmp_path: Path
) -> None:
    source, said = FLOODS[flood]
    (tmp_path / "grader.py").write_text(GRADER)
    tests = Path(__file__).parent
    env = kernel_env(PYTHONPATH=os.pathsep.join([str(tests), kernel_env()["PYTHONPATH"]]))
    done = subprocess.run(
        [sys.executable, str(tmp_path / "grader.py"), source],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout.splitlines()[-1])
    assert re.search(said, result["said"]), result["said"]
    assert result["peak"] < PEAK_RSS, f"{result['peak']:,} bytes at the peak"
