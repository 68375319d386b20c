"""grep and glob over a large real tree, each against the command-line tools that do the same job.

Ours is timed in this process, as a kernel calls it; the peers run as fresh processes with the same
directories skipped, their output drained through a pipe. The main peers are command lines written
here, as a person would type them (`rg -uu`, `rg --files`, `find`, GNU grep); rg run with the tool's
own command line is shown too, which measures only our wrapper. Deliberately not handled: cold
caches (one warm-up run first) and trees other than the one corpus.build_tree makes.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from corpus import Tree
from measure import run_command, time_together
from report import Row, budget_stops

from course_agent.protocol import ToolContext, ToolResult
from course_agent.tools import GLOB_TOOL, GREP_TOOL, SKIP_DIRS
from course_agent.tools.grep_files import find_rg
from course_agent.tools.guards.ripgrep import ripgrep_command

__all__ = [
    "GLOB_CASES",
    "GREP_CASES",
    "find_command",
    "glob_rows",
    "gnu_grep_command",
    "grep_rows",
    "rg_files_command",
    "rg_uu_command",
]

# (figure, the tool's arguments): a full scan, a capped common word, alternation in *.py only.
GREP_CASES = [
    ("no-match full scan", {"pattern": "zq_no_such_identifier_9x"}),
    ("rare identifier", {"pattern": "getpreferredencoding"}),
    ("common identifier, 50-match cap", {"pattern": "isinstance"}),
    ("regex `def \\w+\\(self, \\w+: int`", {"pattern": r"def \w+\(self, \w+: int"}),
    ("alternation + glob `*.py`", {"pattern": "TODO|FIXME|XXX", "glob": "*.py"}),
]
# (figure, the tool's arguments, the same as a file-name glob, how deep the peers look)
GLOB_CASES = [
    ("`**/*.py`", {"pattern": "**/*.py"}, "*.py", None),
    ("`*.txt` at the root, which matches nothing", {"pattern": "*.txt"}, "*.txt", 1),
    ("`**/*.zq9`, which matches nothing", {"pattern": "**/*.zq9"}, "*.zq9", None),
]


def _rg() -> str:
    rg = find_rg()
    if rg is None:
        raise RuntimeError("ripgrep is not installed: pip install ripgrep")
    return rg


def _rg_skips() -> list[str]:
    return [f"--glob=!{name}" for name in sorted(SKIP_DIRS)]  # later globs win: these stay out


def rg_uu_command(rg: str, arguments: dict[str, str], count: bool = False) -> list[str]:
    """rg as one would type it for the same search: every file, hidden ones too, no ignore files
    (-uu), the same folders skipped, at most 50 lines per file; or with `count`, the matching
    lines per file."""
    scope = [f"--glob={arguments['glob']}"] if "glob" in arguments else []
    mode = ["--count"] if count else ["--line-number", "--max-count=50"]
    flags = ["--no-config", "-uu", "--with-filename", *mode, *scope, *_rg_skips()]
    return [rg, *flags, "--regexp", arguments["pattern"], "."]


def gnu_grep_command(arguments: dict[str, str]) -> list[str]:
    """GNU grep doing what our tool asks of rg: same skips, binary files skipped (-I), at most
    50 lines per file (-m, as our --max-count), extended regexes for the alternation."""
    skips = [f"--exclude-dir={name}" for name in sorted(SKIP_DIRS)]
    scope = [f"--include={arguments['glob']}"] if "glob" in arguments else []
    return ["grep", "-rnIE", *skips, *scope, "-m", "50", "-e", arguments["pattern"], "."]


def find_command(name: str, max_depth: int | None = None) -> list[str]:
    """find listing the files and symlinks called `name` (a glob), skipped folders pruned."""
    names: list[str] = []  # -name .git -o -name dist -o -name node_modules ...
    for skipped in sorted(SKIP_DIRS):
        names += [*(["-o"] if names else []), "-name", skipped]
    depth = ["-maxdepth", str(max_depth)] if max_depth is not None else []
    prune = ["-type", "d", "(", *names, ")", "-prune"]
    wanted = ["-name", name, "(", "-type", "f", "-o", "-type", "l", ")", "-print"]
    return ["find", ".", *depth, *prune, "-o", *wanted]


def rg_files_command(rg: str, name: str, max_depth: int | None = None) -> list[str]:
    """rg listing the files called `name` (a glob, at any depth), hidden ones too, no ignore
    files, the same folders skipped."""
    depth = [f"--max-depth={max_depth}"] if max_depth is not None else []
    return [rg, "--no-config", "--files", "-uu", *depth, f"--glob={name}", *_rg_skips(), "."]


def _run_tool(tool_name: str, arguments: dict[str, str], root: Path) -> ToolResult:
    tool = GREP_TOOL if tool_name == "grep" else GLOB_TOOL
    return tool.run(tool.args.model_validate(arguments), ToolContext(root))


def _recording(tool_name: str, arguments: dict[str, str], root: Path, metas: list[Any]) -> Callable:
    """A call of the tool that keeps each result's meta, to check every timed run's."""

    def call() -> None:
        metas.append(_run_tool(tool_name, arguments, root).meta)

    return call


def grep_rows(tree: Tree, repeat: int, notes: list[str]) -> list[Row]:
    rg = _rg()
    rows = []
    for figure, arguments in GREP_CASES:
        metas: list[dict[str, Any]] = []
        # The tool's counting pass, the one that reads the whole tree.
        own_line = ripgrep_command(rg, arguments["pattern"], arguments.get("glob"), mode="count")
        ours, uu, theirs_grep, wrapped = time_together(
            [
                _recording("grep", arguments, tree.root, metas),
                lambda a=arguments: run_command(rg_uu_command(rg, a), tree.root),
                lambda a=arguments: run_command(gnu_grep_command(a), tree.root),
                lambda c=own_line: run_command(c, tree.root),
            ],
            repeat,
        )
        invalid = budget_stops(metas)
        label = f"grep: {figure}"
        rows += [
            Row.timed(label, ours, "`rg -uu`, same skips", uu, at_most=1.0, invalid=invalid),
            Row.timed(label, ours, "`grep -rnIE`, same skips", theirs_grep, invalid=invalid),
            Row.timed(label, ours, "`rg`, the tool's own command line", wrapped, invalid=invalid),
        ]
        # path:count per file, counted by the independent rg over the whole tree
        counted = run_command(rg_uu_command(rg, arguments, count=True), tree.root)
        truth = sum(map(int, re.findall(rb":(\d+)\n", counted)))
        result = metas[-1]
        agree = "agrees" if result["matches"] == truth else "DISAGREES"
        notes.append(
            f"grep {arguments}: {result['matches']:,} matches reported; "
            f"`rg -uu --count` over the whole tree {agree} ({truth:,})"
        )
    return rows


def glob_rows(tree: Tree, repeat: int, notes: list[str]) -> list[Row]:
    rg = _rg()
    rows = []
    for figure, arguments, name, depth in GLOB_CASES:
        metas: list[dict[str, Any]] = []
        find, files = find_command(name, depth), rg_files_command(rg, name, depth)
        ours, theirs_find, theirs_rg = time_together(
            [
                _recording("glob", arguments, tree.root, metas),
                lambda c=find: run_command(c, tree.root),
                lambda c=files: run_command(c, tree.root),
            ],
            repeat,
        )
        invalid = budget_stops(metas)
        # A count past the walk budget is a bound by design (not a stop): say so beside it.
        bound = any(meta.get("exact") is False for meta in metas)
        label = f"glob: {figure}" + (", withheld count a bound" if bound else "")
        rg_peer = "`rg --files -uu`, same skips"
        rows += [
            Row.timed(
                label, ours, "`find`, same prunes", theirs_find, at_most=1.0, invalid=invalid
            ),
            Row.timed(label, ours, rg_peer, theirs_rg, at_most=1.5, invalid=invalid),
        ]
        found = run_command(find, tree.root).count(b"\n")
        listed = run_command(files, tree.root).count(b"\n")
        counted, exact = metas[-1]["matches"], metas[-1]["exact"]
        if exact:
            agree = "they agree" if counted == found == listed else "they DISAGREE"
        else:  # a bound: at most the true count, which the peers agree on
            agree = "a true lower bound" if counted <= found == listed else "NOT a lower bound"
        notes.append(
            f"glob {arguments['pattern']}: ours counts {counted:,} matches"
            f"{'' if exact else ' (walk budget reached)'}; find prints {found:,}, "
            f"rg --files {listed:,}: {agree}"
        )
    return rows
