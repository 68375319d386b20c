"""The notebook face: `%%agent` asks, the model's text streams in, each finished call shows a card.

Also %agent_tools, %agent_selftest, %agent_demo and %agent_cost. Options are parsed with shlex and
argparse; misuse is one UsageError line. Deliberately not handled: choosing the model (that is
settings.choose, as for the CLI) and drawing anything (that is cards, cost_view, fragments_demo).
"""

from __future__ import annotations

import argparse
import inspect
import os
import shlex
import sys
from collections.abc import Callable
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from IPython.core.error import UsageError
from IPython.core.magic import Magics, cell_magic, line_magic, magics_class, no_var_expand
from IPython.display import display

from course_agent.accumulator import ToolCallAccumulator
from course_agent.app.channels import RedactingModel, RedactingRegistry, redacting, shown_events
from course_agent.app.guard import RunDeadline, run_guarded
from course_agent.app.notes import NotedRegistry
from course_agent.app.options import DEFAULT_RUN_SECONDS, RUN_DEADLINE_VARIABLE, seconds_from
from course_agent.app.settings import Setup, add_model_options, choose
from course_agent.notebook.cards import FragmentLog, LiveCards, ToolsView, show_events
from course_agent.notebook.cost_view import CostView
from course_agent.notebook.fragments_demo import SOURCES, FragmentDemo
from course_agent.notebook.pace import PACE_VARIABLE, choose_pace, paced
from course_agent.offline.scripted import ScriptedModel
from course_agent.protocol import GatewayError
from course_agent.providers.replay import ReplayModel
from course_agent.registry import default_registry
from course_agent.render.terminal import printable
from course_agent.selftest.lab import run_selftest

__all__ = ["AgentMagics", "Conversation", "register"]

F = TypeVar("F", bound=Callable[..., Any])


class _Parser(argparse.ArgumentParser):
    """argparse that reports misuse as a one-line UsageError instead of exiting the kernel."""

    def __init__(self, prog: str, description: str) -> None:
        super().__init__(prog=prog, description=description, add_help=False, allow_abbrev=False)

    def error(self, message: str) -> Any:
        raise UsageError(f"{self.prog}: {message}; see {self.prog}? for the options")

    def parse_line(self, line: str) -> argparse.Namespace:
        try:
            words = shlex.split(line)  # shlex, not magic_arguments: quotes must not reach a path
        except ValueError as exc:  # "No closing quotation"
            raise UsageError(f"{self.prog}: {exc} in {line.strip()!r}") from None
        return self.parse_args(words)


def _usage_from(parser: _Parser) -> Callable[[F], F]:
    """Append the parser's help to a magic's docstring, so `%%agent?` lists the options."""

    def decorate(method: F) -> F:
        method.__doc__ = f"{inspect.cleandoc(method.__doc__ or '')}\n\n{parser.format_help()}"
        return method

    return decorate


AGENT = _Parser("%%agent", "Ask the agent the question written in the rest of the cell.")
add_model_options(AGENT)  # the same options, defaults and help as the CLI's
AGENT.add_argument(
    "--new", action="store_true", help="start a new conversation (and read keys and .env again)"
)
AGENT.add_argument(
    "--pace",
    type=float,
    metavar="SECONDS",
    help=f"offline: wait SECONDS before each streamed word or fragment (default ${PACE_VARIABLE}, "
    "else 0.05 in JupyterLab; 0 is full speed)",
)

SELFTEST = _Parser("%agent_selftest", "The lab's seven checks, optionally on your own code.")
SELFTEST.add_argument("--accumulator", metavar="NAME", help="your ToolCallAccumulator class")
SELFTEST.add_argument("--run-call", metavar="NAME", help="your execute_call function")
SELFTEST.add_argument("--truncate", metavar="NAME", help="your truncate_result function")

DEMO = _Parser("%agent_demo", "Replay a stream's call fragments and merge them three ways.")
DEMO.add_argument(
    "stream",
    nargs="?",
    default="claude",
    choices=list(SOURCES),
    help="which stream (default claude)",
)
DEMO.add_argument("--static", action="store_true", help="every step as a table, no widgets")

# The %%agent options that choose the model and root: changing one starts a new conversation.
CHOICE = ("mock", "inject", "provider", "model", "base_url", "root", "record", "replay")

# A paced run shows each card "running" for this many paces before the call runs.
HOLD_PACES = 10

TOOLS = _Parser("%agent_tools", "The tools exactly as the model sees them.")
COST = _Parser("%agent_cost", "Characters re-sent per model request in this conversation.")


@dataclass
class Conversation:
    """A chat that goes on across cells while the options that chose its model stay the same."""

    choice: dict[str, Any]  # the options settings.choose was called with
    setup: Setup
    messages: list[dict[str, Any]] = field(default_factory=list)
    fragments: FragmentLog = field(default_factory=FragmentLog)  # each turn's, for the cards

    def asked_again(self, question: str) -> bool:
        """The same question again after its run broke off (a gateway error, an interrupt, out
        of turns): it goes on from the kept transcript instead of being asked twice."""
        for message in reversed(self.messages):
            if message["role"] == "user":
                return message.get("content") == question
            if message["role"] == "assistant" and not message.get("tool_calls"):
                return False  # the question was answered: asking it again is a new question
        return False


@magics_class
class AgentMagics(Magics):
    """The magics and the one conversation they share."""

    conversation: Conversation | None = None

    @no_var_expand
    @cell_magic
    @_usage_from(AGENT)
    def agent(self, line: str, cell: str | None = None) -> None:
        """Ask the agent; the rest of the cell is the question. The chat continues across cells."""
        args = AGENT.parse_line(line)
        question = (cell or "").strip()
        if not question:
            raise UsageError("%%agent: the cell has no question; write it on the lines below")
        if args.max_turns < 1:
            raise UsageError(f"%%agent: --max-turns must be at least 1, not {args.max_turns}")
        if args.root is not None and not Path(args.root).expanduser().is_dir():
            raise UsageError(f"%%agent: --root {args.root} is not a directory")

        live = self._notebook_frontend()
        try:
            pace = choose_pace(args.pace, os.environ, live)
        except ValueError as exc:
            raise UsageError(f"%%agent: {exc}") from None
        conversation = self._conversation(args)
        setup = conversation.setup
        model = setup.model
        if isinstance(model, (ScriptedModel, ReplayModel)):  # a real gateway has its own pace
            model = paced(model, pace)
        registry, ctx = RedactingRegistry(NotedRegistry(default_registry())), setup.tool_context()
        try:
            seconds = seconds_from(
                os.environ, RUN_DEADLINE_VARIABLE, DEFAULT_RUN_SECONDS, args.deadline
            )
        except ValueError as exc:
            raise UsageError(f"%%agent: {exc}") from None
        deadline = RunDeadline(seconds)
        deadline.bind(setup.model)  # a gateway's request ends with the run
        # Each channel out (text, fragments, calls, results, errors) leaves with known keys cut.
        events = shown_events(
            run_guarded(
                None if conversation.asked_again(question) else question,  # None: go on
                conversation.fragments.watch(RedactingModel(model)),
                registry,
                ctx,
                messages=conversation.messages,
                max_turns=args.max_turns,
                accumulator=redacting(ToolCallAccumulator),
                deadline=deadline,
            )
        )
        # A replay runs through the same registry and root, and never touches the transcript.
        cards = LiveCards(
            lambda call: registry.execute(call, ctx), conversation.fragments, hold=HOLD_PACES * pace
        )
        try:
            with closing(events):  # closing it gives every call of a broken-off turn its result
                show_events(events, display, sys.stdout, sys.stderr, cards if live else None)
        except KeyboardInterrupt:
            print("! interrupted; the conversation is kept and can go on", file=sys.stderr)

    def _notebook_frontend(self) -> bool:
        """Was this cell sent by a notebook frontend, which draws widgets and updates a display in
        place? JupyterLab (and Notebook 7, built on it) sends the cell's id with it; nbclient,
        nbval and plain IPython do not, and get static cards as calls finish (nbval would compare
        a card's first display: it ignores updates)."""
        kernel = getattr(self.shell, "kernel", None)
        request = kernel.get_parent() if kernel is not None else None  # the execute_request
        return "cellId" in ((request or {}).get("metadata") or {})

    def _conversation(self, args: argparse.Namespace) -> Conversation:
        """The current conversation, or a fresh one when asked for or when the options changed."""
        choice = {name: getattr(args, name) for name in CHOICE}
        current = self.conversation
        if current is not None and not args.new and current.choice == choice:
            print(f"(continuing: {len(current.messages)} messages so far; --new starts afresh)")
            return current
        try:
            setup = choose(**choice)
        except (GatewayError, ValueError) as exc:  # no key, a bad --base-url, a bad --replay
            raise UsageError(f"%%agent: {exc}") from None
        for line in (setup.origin, setup.notice):  # the gateway and where it came from, first
            if line:
                print(printable(line))
        if current is not None:
            current.fragments.clear()  # kept only while their conversation lives
        self.conversation = Conversation(choice, setup)
        return self.conversation

    @no_var_expand
    @line_magic
    @_usage_from(TOOLS)
    def agent_tools(self, line: str) -> None:
        """Show each tool's name, description and JSON Schema: all the model knows of it."""
        TOOLS.parse_line(line)
        display(ToolsView(default_registry().list()))

    @no_var_expand
    @line_magic
    @_usage_from(SELFTEST)
    def agent_selftest(self, line: str) -> None:
        """Run the seven checks; name your own implementations (defined in this notebook) to grade
        them, e.g. `%agent_selftest --accumulator MyAccumulator --truncate my_truncate`."""
        args = SELFTEST.parse_line(line)
        plugged = {
            option: self._user_callable(f"--{option.replace('_', '-')}", name)
            for option, name in vars(args).items()
            if name is not None
        }
        print(run_selftest(**plugged))

    def _user_callable(self, flag: str, name: str) -> Callable[..., Any]:
        """`name` (or `module.name`) from the notebook's namespace, or a UsageError."""
        head, *attributes = name.split(".")
        if head not in self.shell.user_ns:
            raise UsageError(
                f"%agent_selftest: {flag} {name}: no such name in this notebook; "
                "run the cell that defines it first"
            )
        found = self.shell.user_ns[head]
        for attribute in attributes:
            if not hasattr(found, attribute):
                raise UsageError(f"%agent_selftest: {flag} {name}: {head} has no {attribute}")
            found = getattr(found, attribute)
        if not callable(found):
            raise UsageError(
                f"%agent_selftest: {flag} {name} is not callable (its type is "
                f"{type(found).__name__}); name a class or a function"
            )
        return found

    @no_var_expand
    @line_magic
    @_usage_from(DEMO)
    def agent_demo(self, line: str) -> None:
        """Replay a recorded stream fragment by fragment: slots by index beside two wrong merges.

        With a live kernel: Step and Play controls, with the table of every step beside them; a
        saved notebook keeps the table (notebook/saving.py). --static shows the table alone.
        """
        args = DEMO.parse_line(line)
        demo = FragmentDemo(args.stream)
        display(demo.player() if self._notebook_frontend() and not args.static else demo)

    @no_var_expand
    @line_magic
    @_usage_from(COST)
    def agent_cost(self, line: str) -> None:
        """Characters of each kind re-sent by every model request of the current conversation."""
        COST.parse_line(line)
        if self.conversation is None:
            raise UsageError("%agent_cost: no conversation yet; ask something with %%agent first")
        display(CostView(self.conversation.messages))


def register(ipython: Any) -> AgentMagics:
    """Called by `%load_ext course_agent`."""
    magics = AgentMagics(shell=ipython)
    ipython.register_magics(magics)
    return magics
