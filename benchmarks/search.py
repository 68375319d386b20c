"""grep and glob over a large real tree, each against the command-line tools that do the same job.

Ours is timed in this process, as a kernel calls it; the peers run as fresh processes with the same
directories skipped, their output drained through a pipe. Deliberately not handled: cold caches
(one warm-up run first) and trees other than the one corpus.build_tree makes.
"""

from __future__ import annotations

import re
from pathlib import Path

from corpus import Tree
from measure import run_command, time_together
from report import Row

from course_agent.protocol import ToolContext, ToolResult
from course_agent.tools import GLOB_TOOL, GREP_TOOL, SKIP_DIRS
from course_agent.tools.grep_files import find_rg, ripgrep_command

__all__ = ["GREP_CASES", "find_command", "glob_rows", "gnu_grep_command", "grep_rows"]

# (figure, the tool's arguments): a full scan, a capped common word, alternation in *.py only.
GREP_CASES = [
    ("no-match full scan", {"pattern": "zq_no_such_identifier_9x"}),
    ("common identifier, 50-match cap", {"pattern": "isinstance"}),
    ("alternation + glob `*.py`", {"pattern": "TODO|FIXME|XXX", "glob": "*.py"}),
]


def gnu_grep_command(arguments: dict[str, str]) -> list[str]:
    """GNU grep doing what our tool asks of rg: same skips, binary files skipped (-I), at most
    50 lines per file (-m, as our --max-count), extended regexes for the alternation."""
    skips = [f"--exclude-dir={name}" for name in sorted(SKIP_DIRS)]
    scope = [f"--include={arguments['glob']}"] if "glob" in arguments else []
    return ["grep", "-rnIE", *skips, *scope, "-m", "50", "-e", arguments["pattern"], "."]


def find_command(suffix: str) -> list[str]:
    """find listing what glob **/*<suffix> lists: files and symlinks, skipped folders pruned."""
    names: list[str] = []  # -name .git -o -name dist -o -name node_modules
    for name in sorted(SKIP_DIRS):
        names += [*(["-o"] if names else []), "-name", name]
    prune = ["-type", "d", "(", *names, ")", "-prune"]
    wanted = ["-name", f"*{suffix}", "(", "-type", "f", "-o", "-type", "l", ")", "-print"]
    return ["find", ".", *prune, "-o", *wanted]


def _run_tool(tool_name: str, arguments: dict[str, str], root: Path) -> ToolResult:
    tool = GREP_TOOL if tool_name == "grep" else GLOB_TOOL
    return tool.run(tool.args.model_validate(arguments), ToolContext(root))


def grep_rows(tree: Tree, repeat: int, notes: list[str]) -> list[Row]:
    rg = find_rg()
    if rg is None:
        raise RuntimeError("ripgrep is not installed: pip install ripgrep")
    rows = []
    for figure, arguments in GREP_CASES:
        rg_command = ripgrep_command(rg, GREP_TOOL.args.model_validate(arguments))
        ours, theirs_rg, theirs_grep = time_together(
            [
                lambda a=arguments: _run_tool("grep", a, tree.root),
                lambda c=rg_command: run_command(c, tree.root),
                lambda a=arguments: run_command(gnu_grep_command(a), tree.root),
            ],
            repeat,
        )
        # Only the full scan has targets: the others show what our post-processing costs.
        full_scan = figure.startswith("no-match")
        rows += [
            Row(f"grep: {figure}", ours, "`rg`, same flags", theirs_rg, 1.5 if full_scan else None),
            Row(f"grep: {figure}", ours, "`grep -rnI`", theirs_grep, 1.0 if full_scan else None),
        ]
        result = _run_tool("grep", arguments, tree.root)
        count = ripgrep_command(rg, GREP_TOOL.args.model_validate(arguments), count=True)
        # path\0count\n per file: a path may hold a newline, never a NUL
        truth = sum(map(int, re.findall(rb"\0(\d+)\n", run_command(count, tree.root))))
        agree = "agrees" if result.meta["matches"] == truth else "DISAGREES"
        notes.append(
            f"grep {arguments}: {result.meta['matches']:,} matches reported; "
            f"rg --count over the whole tree {agree} ({truth:,})"
        )
    return rows


def glob_rows(tree: Tree, repeat: int, notes: list[str]) -> list[Row]:
    arguments = {"pattern": "**/*.py"}
    ours, theirs = time_together(
        [
            lambda: _run_tool("glob", arguments, tree.root),
            lambda: run_command(find_command(".py"), tree.root),
        ],
        repeat,
    )
    result = _run_tool("glob", arguments, tree.root)
    found = run_command(find_command(".py"), tree.root).count(b"\n")
    agree = "agree" if result.meta["matches"] == found else "DISAGREE"
    notes.append(
        f"glob **/*.py: ours counts {result.meta['matches']:,} matches, ending "
        f"{result.content.splitlines()[-1]}; find prints {found:,}: they {agree}"
    )
    return [Row("glob: `**/*.py`, exact withheld count", ours, "`find`, same prunes", theirs, 2.0)]
