"""The grading kernels' package: the lab's answers stripped from its source and its bytecode."""

from __future__ import annotations

import compileall
import importlib.util
import marshal
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from lab_class import kernel_env

from course_agent.lab import strip
from course_agent.lab.labs import LABS
from course_agent.lab.strip import NOT_AVAILABLE, strip_functions, stripped_package


def test_the_stripped_copy_keeps_the_loop_and_tools_and_drops_only_the_answers() -> None:
    folder = stripped_package(LABS["day03-lab"])
    code = (
        "from course_agent.selftest.lab import run_selftest\n"
        "from course_agent.truncate import truncate_result\n"
        "from course_agent.accumulator import ToolCallAccumulator\n"
        "from course_agent import ToolResult\n"
        "import course_agent, json\n"
        "try:\n    truncate_result(ToolResult('x'))\nexcept NotImplementedError as exc:\n"
        "    said = str(exc)\n"
        "print(json.dumps([course_agent.__file__, said, ToolCallAccumulator().by_index]))"
    )
    env = {**kernel_env(), "PYTHONPATH": str(folder)}
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout.startswith(f'["{folder}/course_agent/__init__.py", "{NOT_AVAILABLE}", {{}}]')


def test_stripping_replaces_bodies_by_name_and_refuses_a_name_it_cannot_find() -> None:
    source = "class A:\n    def f(self):\n        'Doc.'\n        return 1\n\n\n"
    source += "def f():\n    return 2\n"
    stripped = strip_functions(source, {"A.f"})
    assert "return 1" not in stripped and "return 2" in stripped and "Doc." in stripped
    with pytest.raises(ValueError, match=r"no function B\.g"):
        strip_functions(source, {"B.g"})


@pytest.mark.parametrize("lab", sorted(LABS))
def test_the_copys_bytecode_is_fresh_and_holds_no_answer(lab: str) -> None:
    folder = stripped_package(LABS[lab])
    sources = sorted((folder / "course_agent").rglob("*.py"))
    # No bytecode without its source: a renamed module's old .pyc may hold an older answer.
    for compiled in (folder / "course_agent").rglob("__pycache__/*.pyc"):
        assert (compiled.parent.parent / f"{compiled.name.split('.')[0]}.py").exists(), compiled
    # Each module has bytecode a kernel can load as is: it records the source's time and size.
    for source in sources:
        compiled = Path(importlib.util.cache_from_source(str(source)))
        header = compiled.read_bytes()[8:16]
        stat = source.stat()
        assert header == (
            int(stat.st_mtime).to_bytes(4, "little") + stat.st_size.to_bytes(4, "little")
        ), source
    # Every .pyc of a stripped module, whatever interpreter wrote it, is the stripped code.
    for module, name in LABS[lab].stripped:
        path = folder.joinpath(*module.split(".")).with_suffix(".py")
        files = sorted((path.parent / "__pycache__").glob(f"{path.stem}.*.pyc"))
        assert files, path
        for compiled in files:
            namespace: dict = {"__name__": module}
            exec(marshal.loads(compiled.read_bytes()[16:]), namespace)
            function = namespace[name.split(".")[0]]
            for part in name.split(".")[1:]:
                function = getattr(function, part)
            assert NOT_AVAILABLE in function.__code__.co_consts, (compiled, name)


def test_bytecode_left_by_a_removed_module_is_not_copied(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = tmp_path / "course_agent"
    shutil.copytree(strip.PACKAGE, package, ignore=shutil.ignore_patterns("__pycache__"))
    compileall.compile_dir(package, quiet=2)
    cache = package / "__pycache__"
    answers = (cache / next(p.name for p in cache.glob("accumulator.*.pyc"))).read_bytes()
    (cache / "old_accumulator.cpython-311.pyc").write_bytes(answers)  # a module since renamed
    (package / "accumulator.pyc").write_bytes(answers)  # legacy bytecode beside its source
    monkeypatch.setattr(strip, "PACKAGE", package)
    folder = strip._stripped.__wrapped__(LABS["day03-lab"])
    assert (folder / "course_agent" / "__pycache__").is_dir()
    assert not (
        folder / "course_agent" / "__pycache__" / "old_accumulator.cpython-311.pyc"
    ).exists()
    assert not (folder / "course_agent" / "accumulator.pyc").exists()
