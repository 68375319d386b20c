"""Every tool against a hostile tree, through the registry the loop uses.

Symlinks out and round in circles, FIFOs and devices, a 1 GB sparse file, a 50 MB line, broken
encodings, odd file names, unreadable files, catastrophic regexes and a million matches.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import course_agent
from course_agent.protocol import ToolCall, ToolContext, ToolResult
from course_agent.registry import default_registry
from course_agent.tools import grep_files
from course_agent.tools.grep_files import find_rg
from course_agent.tools.guards import ripgrep
from course_agent.tools.guards import walk as walk_module

SECRET = "TOP-SECRET-VALUE"
MEMORY_BOUND_MB = 200  # generous: a bound on what a tree can make us hold, not a benchmark

needs_rg = pytest.mark.skipif(find_rg() is None, reason="ripgrep is not installed")


def execute(root: Path, tool: str, **args: object) -> ToolResult:
    return default_registry().execute(ToolCall("call_1", tool, json.dumps(args)), ToolContext(root))


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """tmp/app, with every way out of it planted inside, next to secrets that must not leak."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "passwd").write_text(f"{SECRET}\n")
    (tmp_path / "app-secrets").mkdir()
    (tmp_path / "app-secrets" / "key.txt").write_text(f"{SECRET}\n")
    app = tmp_path / "app"
    (app / "src" / "deeper").mkdir(parents=True)
    (app / "src" / "calc.js").write_text("export const divide = (a, b) => a / b\n")
    (app / "link-out.txt").symlink_to(outside / "passwd")
    (app / "dir-out").symlink_to(outside)
    (app / "src" / "deeper" / "nested-out").symlink_to("../../../outside")
    (app / "loop").symlink_to("loop")
    (app / "ping").symlink_to("pong")
    (app / "pong").symlink_to("ping")
    (app / "src" / "cycle").symlink_to("..")  # a directory loop: src/cycle/src/cycle/...
    return app


HOSTILE_PATHS = [
    "../outside/passwd",
    "../app-secrets/key.txt",
    "/etc/passwd",
    "link-out.txt",
    "dir-out/passwd",
    "src/deeper/nested-out/passwd",
    "loop",
    "ping",
    "loop/../dir-out/passwd",  # a loop, then .. : resolve() alone would let this one out
    "src/calc.js\0",
    "~/.bashrc",
    "",
]


@pytest.mark.parametrize("path", HOSTILE_PATHS)
def test_read_file_refuses_every_way_out(root: Path, path: str) -> None:
    result = execute(root, "read_file", path=path)
    assert result.ok is False and SECRET not in result.content


@pytest.mark.parametrize("path", [*HOSTILE_PATHS, "../*", "dir-out/*", "/*", "../app-secrets/**"])
def test_glob_never_lists_or_leaks_outside(root: Path, path: str) -> None:
    result = execute(root, "glob", pattern=path)
    assert SECRET not in result.content
    if result.ok:  # nothing refused outright, so nothing may have been found either
        assert result.content.startswith("no files match")


@needs_rg
@pytest.mark.parametrize("glob", [None, *HOSTILE_PATHS[:6], "**"])
def test_grep_never_reads_outside(root: Path, glob: str | None) -> None:
    result = execute(root, "grep", pattern=SECRET, **({"glob": glob} if glob else {}))
    assert not re.search(rf"^[^\n]*:\d+:{SECRET}", result.content, re.MULTILINE)


def test_an_absolute_path_inside_is_fine(root: Path) -> None:
    result = execute(root, "read_file", path=str(root / "src" / "calc.js"))
    assert result.ok and result.content.startswith("src/calc.js (lines 1-1 of 1)")


@pytest.mark.parametrize("held", [64, 0])  # by name in its parent, or by path and checked
def test_a_directory_swapped_during_a_walk_is_not_listed_through(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, held: int
) -> None:
    # The walk lists the root, sees the folder sub/, and only then opens sub: in between,
    # another process swaps sub for a symlink leading out. Its names must not come back.
    root = tmp_path / "app"
    (root / "sub").mkdir(parents=True)
    (root / "sub" / "inside.txt").write_text("x\n")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / f"{SECRET}.txt").write_text("x\n")
    real_open = walk_module._open_folder

    def swap_then_open(root_: Path, path: str, name: str, parent: int | None) -> int | None:
        if name == "sub" and not (root / "sub").is_symlink():
            os.rename(root / "sub", root / "sub.real")
            (root / "sub").symlink_to(tmp_path / "outside")
        return real_open(root_, path, name, parent)

    monkeypatch.setattr(walk_module, "_open_folder", swap_then_open)
    monkeypatch.setattr(walk_module, "_HELD_LEVELS", held)
    content = execute(root, "glob", pattern="**/*").content
    assert (root / "sub").is_symlink() and SECRET not in content


# Each state lasts about as long as a walk takes from seeing sub/ to listing it.
SWAPPER = """
import os, sys, time
root, out = sys.argv[1], sys.argv[2]
sub, real = os.path.join(root, "sub"), os.path.join(root, "sub.real")
print("ready", flush=True)
while True:
    os.rename(sub, real)
    os.symlink(out, sub)
    time.sleep(0.0005)
    os.unlink(sub)
    os.rename(real, sub)
    time.sleep(0.0005)
"""


@pytest.mark.timeout(120)
def test_a_directory_swapped_in_a_loop_is_never_listed_through(tmp_path: Path) -> None:
    # Another process (truly in parallel: no shared GIL) swaps the folder back and forth.
    # Files listed before sub/ leave time for a swap between seeing sub/ and listing it.
    root = tmp_path / "app"
    (root / "sub" / "d0").mkdir(parents=True)
    (root / "sub" / "d0" / "inside.txt").write_text("x\n")
    for n in range(500):
        (root / f"a{n:03}.txt").write_text("x\n")
    (tmp_path / "outside" / "d0").mkdir(parents=True)
    (tmp_path / "outside" / "d0" / f"{SECRET}.txt").write_text("x\n")
    swapper = subprocess.Popen(
        [sys.executable, "-c", SWAPPER, str(root), str(tmp_path / "outside")],
        stdout=subprocess.PIPE,
        text=True,
    )
    listed = []
    try:
        assert swapper.stdout is not None and swapper.stdout.readline() == "ready\n"
        for _ in range(200):
            listed.append(execute(root, "glob", pattern="**/*", limit=2000).content)
        assert swapper.poll() is None  # it swapped all along
    finally:
        swapper.kill()
        swapper.wait()
    assert not [content for content in listed if SECRET in content]


@pytest.mark.timeout(30)
def test_walks_terminate_despite_loops(root: Path) -> None:
    assert execute(root, "glob", pattern="**").content == "src/calc.js"
    if find_rg():
        assert execute(root, "grep", pattern="divide").content.startswith("src/calc.js:1:")


# -- special files: refused or skipped, never blocking ------------------------------------------


@pytest.mark.timeout(10)
def test_fifo_neither_blocks_nor_is_listed(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("divide\n")
    os.mkfifo(tmp_path / "pipe")
    (tmp_path / "pipe-link").symlink_to("pipe")
    for path in ("pipe", "pipe-link"):
        result = execute(tmp_path, "read_file", path=path)
        assert not result.ok and "FIFO" in result.content
    assert execute(tmp_path, "glob", pattern="*").content == "a.txt"
    if find_rg():
        assert execute(tmp_path, "grep", pattern="divide").content == "a.txt:1:divide"


@pytest.mark.timeout(10)
def test_device_files_are_refused(tmp_path: Path) -> None:
    (tmp_path / "zero").symlink_to("/dev/zero")
    (tmp_path / "null").symlink_to("/dev/null")
    for path in ("zero", "null", "/dev/zero", "/dev/stdin"):
        assert not execute(tmp_path, "read_file", path=path).ok
    try:
        os.mknod(tmp_path / "zero-here", 0o600 | 0o020000, os.makedev(1, 5))  # S_IFCHR
    except (PermissionError, AttributeError):
        return  # not root, or no mknod: the symlinks above are the case that matters
    result = execute(tmp_path, "read_file", path="zero-here")
    assert not result.ok and "a device" in result.content
    if find_rg():
        assert execute(tmp_path, "grep", pattern="x").content == "no matches for x"


# -- sizes: a 1 GB sparse file, a 50 MB line, a million matches ---------------------------------


def measure(root: Path, tool: str, **args: object) -> dict[str, object]:
    """Run one call in a fresh interpreter; report its result and peak memory (self, children)."""
    script = textwrap.dedent(
        """
        import json, resource, sys
        from pathlib import Path
        from course_agent.protocol import ToolCall, ToolContext
        from course_agent.registry import default_registry
        root, tool, args = sys.argv[1], sys.argv[2], sys.argv[3]
        result = default_registry().execute(ToolCall("1", tool, args), ToolContext(Path(root)))
        scale = 1024 * 1024 if sys.platform == "darwin" else 1024  # ru_maxrss: bytes or KiB
        # Linux keeps ru_maxrss across exec, so RUSAGE_SELF would report pytest's own size at
        # fork; VmHWM belongs to this interpreter's memory map alone.
        status = Path("/proc/self/status")
        lines = status.read_text().splitlines() if status.exists() else []
        hwm = [line.split()[1] for line in lines if line.startswith("VmHWM:")]
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        self_kib = int(hwm[0]) if hwm else peak
        print(json.dumps({
            "ok": result.ok,
            "content": result.content,
            "self_mb": self_kib / scale,
            "children_mb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / scale,
        }))
        """
    )
    env = {**os.environ, "PYTHONPATH": str(Path(course_agent.__file__).parents[1])}
    done = subprocess.run(
        [sys.executable, "-c", script, str(root), tool, json.dumps(args)],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    return json.loads(done.stdout)


HEAD = b"".join(b"start %d\n" % n for n in range(1, 1001))


@pytest.fixture
def sparse(tmp_path: Path) -> Path:
    """1000 text lines, a 1 GB hole (one enormous line of NULs), then 10 more lines."""
    with open(tmp_path / "huge.log", "wb") as file:
        file.write(HEAD)
        file.truncate(1 << 30)
        file.seek(0, os.SEEK_END)
        file.write(b"\n" + b"".join(b"end %d\n" % n for n in range(1, 11)))
    return tmp_path


@pytest.mark.timeout(120)
@pytest.mark.parametrize("offset", [1, 1000])
def test_sparse_gigabyte_is_binary_within_one_chunk(sparse: Path, offset: int) -> None:
    # The 1 GB hole reads as NUL bytes: binary, as grep says, from the first chunk read (a
    # page deep in the file is no longer a way to read past them).
    run = measure(sparse, "read_file", path="huge.log", offset=offset, limit=3)
    assert not run["ok"] and run["self_mb"] < MEMORY_BOUND_MB
    assert run["content"] == (
        "huge.log is a binary file (1,073,741,886 bytes); read_file shows text only"
    )


@needs_rg
@pytest.mark.timeout(120)
def test_grep_over_a_sparse_gigabyte_stays_small(sparse: Path) -> None:
    (sparse / "a.txt").write_text("start here\n")
    run = measure(sparse, "grep", pattern="start|end")
    assert run["content"] == "a.txt:1:start here"  # the NUL-filled file is binary: skipped
    assert run["self_mb"] < MEMORY_BOUND_MB and run["children_mb"] < MEMORY_BOUND_MB


@pytest.mark.timeout(120)
def test_a_single_50_mb_line(tmp_path: Path) -> None:
    size = 50 << 20
    with open(tmp_path / "bundle.min.js", "wb") as file:
        file.write(b"var a=1;" * (size // 8) + b"needle\nsecond\n")
    run = measure(tmp_path, "read_file", path="bundle.min.js")
    assert run["ok"] and run["self_mb"] < MEMORY_BOUND_MB
    lines = str(run["content"]).split("\n")
    assert lines[0] == "bundle.min.js (lines 1-2 of 2)"
    assert (
        lines[1]
        == "1  " + ("var a=1;" * 63)[:500] + f"… [line cut at 500 of {size + 6} characters]"
    )
    if find_rg():
        # rg needs 146 MB for a 50 MB line: capped at 64 MB it gives up on the file, and the
        # search says so instead of taking the machine's memory.
        (tmp_path / "small.js").write_text("needle\n")
        run = measure(tmp_path, "grep", pattern="needle")
        assert run["content"] == (
            "small.js:1:needle\n(files over 40MB were not searched: one of them holds a line too "
            "long to search within 64 MB of memory)"
        )
        assert run["children_mb"] < 100


@pytest.fixture(scope="module")
def two_long_lines(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two files, each 39 MB on one line between short ones: under the 40 MB cut-off, so both
    must be searched, but rg's two threads cannot hold both lines within 64 MB."""
    root = tmp_path_factory.mktemp("long")
    chunk = b"x" * (1 << 20)
    for name in ("a.txt", "b.txt"):
        with open(root / name, "wb") as file:
            file.write(b"needle 1\nneedle 2\n")
            for _ in range(39):
                file.write(chunk)
            file.write(b" needle 3\nneedle 4\n")
    return root


@needs_rg
@pytest.mark.timeout(60)
def test_two_files_of_39_mb_lines_are_searched_whole(two_long_lines: Path) -> None:
    run = measure(two_long_lines, "grep", pattern="needle")
    long_line = "x" * 120 + "…"
    assert str(run["content"]).split("\n") == [
        f"{name}:{n}:{long_line if n == 3 else f'needle {n}'}"
        for name in ("a.txt", "b.txt")
        for n in range(1, 5)
    ]  # all eight lines, and no note claiming that a file was left out
    assert run["children_mb"] < 100


@needs_rg
@pytest.mark.timeout(60)
def test_the_counting_pass_is_checked_for_memory_too(two_long_lines: Path) -> None:
    # With limit 2 the first pass stops before the long lines; the count must read them.
    run = measure(two_long_lines, "grep", pattern="needle", limit=2)
    assert run["content"] == (
        "a.txt:1:needle 1\na.txt:2:needle 2\n"
        "(6 more matches withheld; narrow with glob or a stricter pattern)"
    )


@needs_rg
@pytest.mark.timeout(60)
def test_running_out_of_memory_on_every_pass_is_said_as_such(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "a.txt").write_bytes(b"needle\n" + b"x" * (16 << 20) + b" needle\n")
    monkeypatch.setattr(ripgrep, "RG_MEMORY", 8 << 20)  # half the line: no pass can hold it
    monkeypatch.setattr(grep_files, "RG_MEMORY", 8 << 20)  # and the note says so
    result = default_registry().execute(
        ToolCall("1", "grep", json.dumps({"pattern": "needle"})), ToolContext(tmp_path)
    )
    assert "files over 40MB were not searched" not in result.content
    assert result.content.endswith(
        "(ripgrep ran out of its 8 MB of memory even with files over 40MB left out: "
        "the matches above may be incomplete)"
    )


@needs_rg
@pytest.mark.timeout(120)
def test_a_million_matches_are_counted_exactly_in_bounded_memory(tmp_path: Path) -> None:
    (tmp_path / "many.txt").write_bytes(b"match here\n" * 1_000_000)
    run = measure(tmp_path, "grep", pattern="match")
    lines = str(run["content"]).split("\n")
    assert lines[:2] == ["many.txt:1:match here", "many.txt:2:match here"] and len(lines) == 51
    assert lines[-1] == "(999950 more matches withheld; narrow with glob or a stricter pattern)"
    assert run["self_mb"] < MEMORY_BOUND_MB and run["children_mb"] < MEMORY_BOUND_MB


# -- encodings and line endings: grep's line numbers are read_file's line numbers --------------


@needs_rg
def test_grep_line_numbers_agree_with_read_file(tmp_path: Path) -> None:
    files = {
        "crlf.txt": b"one\r\ntwo\r\nneedle crlf\r\n",
        "mixed.txt": b"a\rb\nneedle after a lone cr\n\r\nneedle last",
        "bad-utf8.txt": b"caf\xe9\n\xff\xfe\nneedle \xc3\n",
        "utf16.txt": "\ufeffx\r\ny\r\nneedle utf16\r\n".encode("utf-16-le"),
        "bom8.txt": b"\xef\xbb\xbffirst\nneedle bom\n",
    }
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
    found = execute(tmp_path, "grep", pattern="needle").content.split("\n")
    assert len(found) == 6, found
    for line in found:
        path, number, content = line.split(":", 2)
        page = execute(tmp_path, "read_file", path=path, offset=int(number), limit=1)
        assert page.content.split("\n")[1] == f"{number}  {content}", (path, number)


# -- file names ---------------------------------------------------------------------------------


def test_odd_file_names(tmp_path: Path) -> None:
    (tmp_path / "new\nline.txt").write_text("needle\n")
    (tmp_path / "données").mkdir()
    (tmp_path / "données" / "résumé.txt").write_text("needle\n")
    (tmp_path / "colon:name.txt").write_text("needle\n")
    os.close(os.open(os.path.join(os.fsencode(tmp_path), b"caf\xe9.txt"), os.O_CREAT | os.O_WRONLY))
    listed = execute(tmp_path, "glob", pattern="**").content.split("\n")
    assert listed == ["caf\\xe9.txt", "colon:name.txt", "données/résumé.txt", "new\\nline.txt"]
    if find_rg():
        found = execute(tmp_path, "grep", pattern="needle").content.split("\n")
        assert found == [
            "colon:name.txt:1:needle",
            "données/résumé.txt:1:needle",
            "new\\nline.txt:1:needle",
        ]
    page = execute(tmp_path, "read_file", path="new\nline.txt").content
    assert page.startswith("new\\nline.txt (lines 1-1 of 1)")
    assert execute(tmp_path, "read_file", path="données/résumé.txt").ok


# -- unreadable files ---------------------------------------------------------------------------


def run_unprivileged(root: Path, tool: str, **args: object) -> ToolResult:
    """As root, permissions do not apply: run the call with the override capabilities dropped."""
    if os.geteuid() != 0:
        return execute(root, tool, **args)
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root without setpriv: chmod 000 cannot be tested")
    caps = "-dac_override,-dac_read_search"
    script = (
        "import json, sys; from pathlib import Path; "
        "from course_agent.protocol import ToolCall, ToolContext; "
        "from course_agent.registry import default_registry; "
        "r = default_registry().execute(ToolCall('1', sys.argv[2], sys.argv[3]), "
        "ToolContext(Path(sys.argv[1]))); print(json.dumps([r.ok, r.content]))"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(course_agent.__file__).parents[1])}
    command = [setpriv, f"--inh-caps={caps}", f"--bounding-set={caps}", sys.executable, "-c"]
    done = subprocess.run(
        [*command, script, str(root), tool, json.dumps(args)],
        capture_output=True,
        text=True,
        env=env,
    )
    if done.returncode != 0:
        pytest.skip(f"setpriv could not drop capabilities here: {done.stderr.strip()[:200]}")
    ok, content = json.loads(done.stdout)
    return ToolResult(content, ok=ok)


def test_unreadable_files(tmp_path: Path) -> None:
    (tmp_path / "open.txt").write_text("needle\n")
    locked = tmp_path / "locked.txt"
    locked.write_text("needle\n")
    locked.chmod(0)
    try:
        result = run_unprivileged(tmp_path, "read_file", path="locked.txt")
        assert not result.ok and result.content == "cannot read locked.txt: Permission denied"
        if find_rg():
            result = run_unprivileged(tmp_path, "grep", pattern="needle")
            assert result.ok
            assert result.content.split("\n")[0] == "open.txt:1:needle"
            assert "(some files could not be read: rg: ./locked.txt: Permission denied" in (
                result.content
            )
    finally:
        locked.chmod(0o600)


# -- catastrophic regexes -----------------------------------------------------------------------


@needs_rg
@pytest.mark.timeout(60)
@pytest.mark.parametrize(
    "pattern", ["(a+)+$", "(a*)*b", "(a|aa)+$", "(.*a){12}", "^(a?){25}a{25}$"]
)
def test_catastrophic_regexes_come_back(tmp_path: Path, pattern: str) -> None:
    (tmp_path / "as.txt").write_text("a" * 50_000 + "!\n" + "a" * 25 + "\n")
    result = execute(tmp_path, "grep", pattern=pattern)
    assert result.content  # it returned: ripgrep's engine is linear in the input


def test_unreadable_directories_are_skipped_and_grep_says_so(tmp_path: Path) -> None:
    (tmp_path / "open").mkdir()
    (tmp_path / "open" / "a.txt").write_text("needle\n")
    locked = tmp_path / "locked"
    (locked / "inner").mkdir(parents=True)
    (locked / "b.txt").write_text("needle\n")
    locked.chmod(0)
    try:
        assert run_unprivileged(tmp_path, "glob", pattern="**").content == "open/a.txt"
        if find_rg():
            result = run_unprivileged(tmp_path, "grep", pattern="needle")
            assert result.content.split("\n") == [
                "open/a.txt:1:needle",
                "(some files could not be read: rg: ./locked: Permission denied (os error 13))",
            ]
    finally:
        locked.chmod(0o700)


# -- control characters in the arguments --------------------------------------------------------


@pytest.mark.parametrize(
    ("tool", "args", "words"),
    [
        ("grep", {"pattern": "a\0b"}, "pattern or glob contains a NUL byte"),
        ("grep", {"pattern": "a", "glob": "*.txt\0"}, "pattern or glob contains a NUL byte"),
        ("grep", {"pattern": "a\nb"}, 'the literal "\\n" is not allowed in a regex'),
        ("glob", {"pattern": "*.txt\0"}, "pattern contains a NUL byte"),
        ("read_file", {"path": "a.txt\0.js"}, "path contains a NUL byte"),
    ],
)
def test_nul_and_newline_in_arguments_are_refused_in_words(
    tmp_path: Path, tool: str, args: dict[str, str], words: str
) -> None:
    if tool == "grep" and find_rg() is None:
        pytest.skip("ripgrep is not installed")
    (tmp_path / "a.txt").write_text("a\nb\n")
    result = execute(tmp_path, tool, **args)
    assert not result.ok and words in result.content


@needs_rg
@pytest.mark.timeout(10)
@pytest.mark.parametrize("glob", ["pipe", "pipe-link", "*"])
def test_grep_aimed_at_a_fifo_does_not_block(tmp_path: Path, glob: str) -> None:
    os.mkfifo(tmp_path / "pipe")
    (tmp_path / "pipe-link").symlink_to("pipe")
    result = execute(tmp_path, "grep", pattern="x", glob=glob)
    assert result.ok and result.content == f"no matches for x in files matching {glob}"
