"""What a kernel sends, counted in bytes on the wire before it is parsed, and refused past bounds.

Every channel of a lab's kernel (shell, iopub, stdin, control) is read through `read_message`:
all frames of a message counted as they are taken, one over LARGEST_MESSAGE or a run over
SENT_LIMIT stops the kernel (its row then says so), and so does a message the session cannot
read (a bad signature, JSON nested too deep). A dict's len() counts its keys and an error's
traceback counted nothing: bytes are what costs the grader memory.
Deliberately not handled: a message of many frames, which zmq holds whole before any of it can
be read (docs/sandbox.md says what that costs).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

__all__ = [
    "LARGEST_FRAME",
    "LARGEST_MESSAGE",
    "QUEUED_MESSAGES",
    "SENT_LIMIT",
    "Wire",
    "bounded",
    "bounded_client",
    "read_message",
]

# One message, all its frames: a lab's largest is an answer, at most ANSWER_LIMIT (2 MB) of JSON.
# 8 MB of JSON parses to about 145 MB of Python objects in the grader (a dict of 570,000 keys).
LARGEST_MESSAGE = 8_000_000  # bytes
# Bytes a notebook may send in all, every channel (a solved lab sends well under 1 MB).
SENT_LIMIT = 50_000_000
# What may wait unread from one kernel (zmq's high-water mark, in messages): past it the kernel's
# side drops them. A frame over LARGEST_FRAME cuts that connection (zmq's MAXMSGSIZE, per frame).
QUEUED_MESSAGES = 32
LARGEST_FRAME = 64_000_000  # bytes


class Wire:
    """What one run's kernel has sent, in bytes, and what to do when it sends too much."""

    def __init__(self, stop: Callable[[str], None] = lambda why: None) -> None:
        self.sent = 0  # bytes, every frame of every message so far
        self.stop = stop  # stops the kernel; `why` is in the student's terms
        self.stopped = ""  # why it was stopped, once it was

    def refuse(self, why: str) -> None:
        if not self.stopped:
            self.stopped = why
            self.stop(why)


def bounded(sock: Any) -> Any:
    """A zmq socket that queues at most QUEUED_MESSAGES and takes no frame over LARGEST_FRAME."""
    import zmq

    sock.setsockopt(zmq.RCVHWM, QUEUED_MESSAGES)
    sock.setsockopt(zmq.MAXMSGSIZE, LARGEST_FRAME)
    return sock


async def read_message(sock: Any, session: Any, wire: Wire) -> dict[str, Any]:
    """The next message on `sock` within the bounds, parsed by `session`; each one past them
    stops the kernel (`wire.refuse`) and is dropped unparsed, as is all that comes after."""
    while True:
        frames, size = [], 0
        while True:
            frame = await sock.recv(copy=False)
            size += len(frame.buffer)
            if size <= LARGEST_MESSAGE:
                frames.append(frame.bytes)
            if not frame.more:
                break
        wire.sent += size
        if size > LARGEST_MESSAGE:
            wire.refuse(
                f"the notebook sent {size:,} bytes of output at once, over the "
                f"{LARGEST_MESSAGE:,} one message may hold"
            )
        elif wire.sent > SENT_LIMIT:
            wire.refuse(f"the notebook sent more than {SENT_LIMIT:,} bytes of output in all")
        if wire.stopped:
            continue  # the kernel is being stopped: nothing more it says is read
        try:
            _, message = session.feed_identities(frames)
            parsed = session.deserialize(message)
        except RecursionError:
            wire.refuse("the notebook sent a message nested too deep to read")
            continue
        except (ValueError, TypeError, KeyError, IndexError):  # "Invalid Signature", bad JSON
            wire.refuse(
                "the kernel's messages came garbled, as when processes forked from the kernel "
                "(os.fork, multiprocessing) write to its channel too"
            )
            continue
        parsed["wire_bytes"] = size  # what it cost, for the output cap (kernel.output_kept)
        return parsed


@functools.cache
def bounded_client() -> type:
    """jupyter_client's async client, its sockets `bounded` and every channel read through
    `read_message`, counted on its manager's `wire` (a Wire of its own when it has none)."""
    import zmq.asyncio
    from jupyter_client.asynchronous import AsyncKernelClient
    from jupyter_client.channels import AsyncZMQSocketChannel
    from traitlets import Type, default

    class BoundedSockets(zmq.asyncio.Context):
        wire = Wire()  # replaced per client, below

        # Set before each socket connects, where it takes effect.
        def socket(self, *args: Any, **kwargs: Any) -> Any:
            return bounded(super().socket(*args, **kwargs))

    class BoundedChannel(AsyncZMQSocketChannel):
        async def _recv(self, **kwargs: Any) -> dict[str, Any]:
            return await read_message(self.socket, self.session, self.socket.context.wire)

    class BoundedClient(AsyncKernelClient):
        shell_channel_class = Type(BoundedChannel)
        iopub_channel_class = Type(BoundedChannel)
        stdin_channel_class = Type(BoundedChannel)
        control_channel_class = Type(BoundedChannel)

        @default("context")
        def _context_default(self) -> zmq.asyncio.Context:
            self._created_context = True  # so that the client destroys it when done
            context = BoundedSockets()
            # The manager that made this client: jupyter_client passes itself as the parent.
            context.wire = getattr(self.parent, "wire", None) or Wire()
            return context

    return BoundedClient
