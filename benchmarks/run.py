"""Measure the tools, the client and start-up, each against a peer in the same run; print a table.

Run by hand, never by pytest: `.venv/bin/python benchmarks/run.py [--quick] [--only NAME ...]`.
Everything it builds (a hard-linked tree, 1 GB files) lives in one temporary folder, removed at
the end. It exits 1 when a figure is INVALID (its call stopped at a budget). Deliberately not
handled: storing results, or failing on a missed target.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from big_file import grep_memory_rows, read_file_rows, read_one_line_rows
from corpus import PLANTED, build_tree, make_big_file, scratch_dir
from first_page import first_page_rows
from ignores import ignore_rows
from measure import gnu_time
from report import Row, format_table
from search import glob_rows, grep_rows
from startup import startup_rows
from streaming import client_rows, merge_rows

from course_agent.tools.grep_files import find_rg

__all__ = ["SUITES", "describe_machine", "main", "parse_args"]

SUITES = ["grep", "glob", "ignores", "read_file", "grep_memory", "client", "startup"]


def _version(command: list[str]) -> str:
    try:
        done = subprocess.run(command, capture_output=True, text=True)
    except OSError:
        return "missing"
    return (done.stdout or done.stderr).splitlines()[0].strip()


def describe_machine() -> list[str]:
    import openai

    load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
    return [
        f"python {platform.python_version()} on {platform.platform()}, {os.cpu_count()} cores, "
        f"load average {load}",
        f"{_version([find_rg() or 'rg', '--version'])}; {_version(['grep', '--version'])}; "
        f"{_version(['find', '--version'])}; openai-python {openai.__version__}",
        f"locale {os.environ.get('LC_ALL') or os.environ.get('LANG') or 'unset'}; "
        f"GNU time {'found' if gnu_time() else 'missing: memory peers skipped'}",
    ]


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="3 runs per figure, no 1-line file")
    parser.add_argument(
        "--only",
        nargs="+",
        choices=SUITES,
        metavar="NAME",
        help="one or more of: " + ", ".join(SUITES),
    )
    parser.add_argument("--repeat", type=int, help="timed runs per figure (default 7, quick 3)")
    args = parser.parse_args(argv)
    args.repeat = args.repeat or (3 if args.quick else 7)
    args.only = args.only or SUITES
    return args


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    started = time.perf_counter()
    print("\n".join(describe_machine()))
    print(f"each figure: the median of {args.repeat} runs after one warm-up run (warm caches)")
    rows: list[Row] = []
    notes: list[str] = []
    scratch = scratch_dir()

    def suite(name: str, run: Callable[[], list[Row]]) -> None:
        if name in args.only:
            begun = time.perf_counter()
            rows.extend(run())
            print(f"  {name}: {time.perf_counter() - begun:.0f} s", flush=True)

    try:
        if {"grep", "glob", "ignores"} & set(args.only):
            tree = build_tree(scratch)
            sources = " + ".join(str(path) for path in tree.sources.values())
            copied = f", {tree.copied:,} copied" if tree.copied else ""
            print(
                f"tree: {tree.files:,} files, {tree.size / 1e9:.2f} GB, hard-linked from "
                f"{sources} in {tree.seconds:.1f} s{copied}; {tree.planted:,} of them in "
                f"planted {', '.join(PLANTED)}, which every tool and peer skips",
                flush=True,
            )
            suite("grep", lambda: grep_rows(tree, args.repeat, notes))
            suite("glob", lambda: glob_rows(tree, args.repeat, notes))
            suite("glob", lambda: first_page_rows(scratch, args.repeat, notes))
            # Last: it plants ignore files in the tree the rows above measured without them.
            suite("ignores", lambda: ignore_rows(tree, args.repeat, notes))
        if {"read_file", "grep_memory"} & set(args.only):
            big = make_big_file(scratch / "lines")
            one_line = None if args.quick else make_big_file(scratch / "one-line", one_line=True)
            print(f"big files: {big.size / 1e9:.2f} GB of {big.lines:,} lines", flush=True)
            suite("read_file", lambda: read_file_rows(big, args.repeat, notes))
            if one_line:
                suite("read_file", lambda: read_one_line_rows(one_line, args.repeat))
            suite("grep_memory", lambda: grep_memory_rows(big, args.repeat, notes))
            if one_line:
                # rg and GNU grep each take seconds and a GB here; memory barely varies: 3 runs.
                suite("grep_memory", lambda: grep_memory_rows(one_line, 3, notes))
        suite("client", lambda: client_rows(args.repeat, notes))
        suite("client", lambda: merge_rows(args.repeat, notes))
        suite("startup", lambda: startup_rows(args.repeat, notes))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    print()
    print(format_table(rows))
    print()
    print("\n".join(f"- {note}" for note in notes))
    print(f"\n{Path(__file__).name} took {time.perf_counter() - started:.0f} s; removed {scratch}")
    invalid = [row for row in rows if row.invalid]
    if invalid:
        print(
            f"\n!! {len(invalid)} figure(s) INVALID: a call stopped at a budget, so it did less",
            file=sys.stderr,
        )
        for row in invalid:
            print(f"!! {row.figure} against {row.peer}: {row.invalid}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
