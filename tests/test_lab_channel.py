"""A sandboxed kernel swaps one of its sockets for a symlink to a listening unix socket of the
test's, then drops the grader's connections to it so that the grader reconnects: the grader
reaches only the socket the kernel made (its own link to it), never the test's, and grading goes
on. Afterwards the connection folder is gone, the symlink's target untouched."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import stat
from pathlib import Path

import pytest
from code_cells import notebook, streamed

from course_agent.lab.channel import ChannelError, grader_side, kernel_side, new_channel, take
from course_agent.lab.jail import GB, Limits, kernel_manager, sandbox_problem
from course_agent.lab.private import discard, private_folder

pytestmark = [
    pytest.mark.skipif(bool(sandbox_problem()), reason="needs the grading sandbox"),
    pytest.mark.timeout(300),
]

LIMITS = Limits(memory=1 * GB, processes=64, cpu_seconds=60, wall_seconds=120)

# The kernel's control socket: its name replaced by a symlink to BAIT, then every connection
# accepted on it shut down (the socket itself stays listening, nameless), so the grader's zmq
# reconnects by whatever path it holds. One JSON line says what was done.
SWAP = """\
import json, os, socket, sys, time
_info = json.load(open(sys.argv[sys.argv.index('-f') + 1]))
_path = f"{_info['ip']}-{_info['control_port']}"
os.unlink(_path)
os.symlink(BAIT, _path)
_shut = 0
for _fd in os.listdir('/proc/self/fd'):
    try:
        _sock = socket.socket(fileno=os.dup(int(_fd)))
    except OSError:
        continue
    try:
        _listening = _sock.getsockopt(socket.SOL_SOCKET, socket.SO_ACCEPTCONN)
        if _sock.family == socket.AF_UNIX and _sock.getsockname() == _path and not _listening:
            _sock.shutdown(socket.SHUT_RDWR)
            _shut += 1
    except OSError:
        pass
    _sock.close()
time.sleep(2)  # zmq reconnects within 0.1 s
print(json.dumps({'shut': _shut, 'symlink': os.path.islink(_path)}))
"""


def test_a_swapped_socket_steers_no_connection(tmp_path: Path) -> None:
    from nbclient import NotebookClient

    bait = tmp_path / "bait.sock"
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(bait))
    listener.listen(8)
    listener.setblocking(False)
    folder = private_folder()
    km = kernel_manager(folder, limits=LIMITS)
    nb = notebook(SWAP.replace("BAIT", repr(str(bait))), "print('still graded')")
    try:
        NotebookClient(nb, km=km, timeout=60, shutdown_kernel="immediate").execute(cleanup_kc=True)
    finally:
        km.release()
        discard(folder)
    try:
        reached, _ = listener.accept()
        reached.close()
        reached_bait = True
    except BlockingIOError:
        reached_bait = False
    finally:
        listener.close()
    said = json.loads(streamed(nb.cells[0]).strip().splitlines()[-1])
    assert said["shut"] >= 2 and said["symlink"] is True  # the grader's two control connections
    assert not reached_bait
    assert streamed(nb.cells[1]) == "still graded\n"  # the kernel's own socket still answers
    assert km.channel is not None and not os.path.lexists(km.channel)
    assert stat.S_ISSOCK(bait.lstat().st_mode)  # removed as a link, its target left alone


@pytest.mark.parametrize("kind", ["symlink", "file"])
def test_a_name_that_is_not_a_socket_of_the_kernel_s_is_refused(tmp_path: Path, kind: str) -> None:
    bait = tmp_path / "bait.sock"
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(bait))
    channel = new_channel()
    try:
        planted = kernel_side(channel) / "kernel-ipc-1"
        if kind == "symlink":
            planted.symlink_to(bait)
        else:
            planted.write_text("not a socket")
        with pytest.raises(ChannelError, match="kernel-ipc-1 is not a socket it made"):
            asyncio.run(take(channel, ["kernel-ipc-1"], lambda: True))
        assert list(grader_side(channel).iterdir()) == []
    finally:
        listener.close()
        discard(channel)
