"""The grading sandbox, attacked from inside a real kernel in real bubblewrap.

One notebook makes every attack that leaves its kernel alive, then allocates 3 GB (the kernel's
last act); the tests read what each cell printed. Each attack succeeds in a plain kernel.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import site
import socket
import subprocess
import sys
import sysconfig
import time
from pathlib import Path
from typing import Any

import pytest
from code_cells import notebook, streamed
from lab_class import kernel_env, submission
from nbclient.exceptions import DeadKernelError

import course_agent.lab.score
from course_agent.lab.cgroups import cgroup_folders
from course_agent.lab.jail import (
    GB,
    Limits,
    jail_command,
    kernel_manager,
    sandbox_problem,
)
from course_agent.lab.kernel import run_notebook

KEY = "sk-jail-probe-0123456789"
LIMITS = Limits(memory=1 * GB, processes=64, cpu_seconds=60, wall_seconds=120)
# The names a sandboxed kernel's environment may hold: the sandbox's, then ipykernel's own.
SANDBOX_NAMES = {"HOME", "LANG", "PATH", "PWD", "PYTHONNOUSERSITE", "TMPDIR", "USER"}
SANDBOX_NAMES |= {"PYTHONPATH", "LC_ALL", "LC_CTYPE", "TZ"}
SANDBOX_NAMES |= {"PYDEVD_USE_FRAME_EVAL", "TERM", "CLICOLOR", "FORCE_COLOR", "CLICOLOR_FORCE"}
SANDBOX_NAMES |= {"PAGER", "GIT_PAGER", "MPLBACKEND"}
FORKS = 300  # a fork bomb's attempts: far above LIMITS.processes, small enough to be harmless


@pytest.fixture(autouse=True, scope="module")
def sandbox_here() -> None:
    # Not a skip: grading refuses to run without a sandbox, and .ci/run installs bubblewrap.
    assert sandbox_problem() == "", sandbox_problem()


def attacks(where: dict[str, Any]) -> dict[str, str]:
    """Cells by name: each prints one JSON line of what it found or did (`where`: the targets)."""
    said = "print(json.dumps(_found))"
    # Sleeps, then forges the CSV; its command line carries a marker to look for afterwards.
    grandchild = f"import time; time.sleep(60)  # {where['marker']}\n"
    grandchild += f"open({where['csv']!r}, 'w').write('forged')"
    return {
        "imports": "import json, os, signal, site, socket, subprocess, sys, time",
        "environment": "_found = {'env': dict(os.environ), 'cwd': os.getcwd(), "
        "'files': os.listdir('.'), 'pids': [p for p in os.listdir('/proc') if p.isdigit()]}\n"
        + said,
        "parent": "_found = {'ppid': os.getppid()}\n"
        "for _name in ('environ', 'cmdline'):\n"
        "    try:\n"
        "        _found[_name] = open(f'/proc/{os.getppid()}/{_name}', 'rb').read().decode()\n"
        "    except OSError as _error:\n"
        "        _found[_name] = repr(_error)\n" + said,
        "package": "_found = {}\n"
        f"for _path in ({where['score']!r}, {where['pth']!r}):\n"
        "    try:\n"
        "        with open(_path, 'a') as _file:\n"
        "            _file.write('\\n# written by a submission\\n')\n"
        "        _found[_path] = 'written'\n"
        "    except OSError as _error:\n"
        "        _found[_path] = type(_error).__name__\n" + said,
        "classmate": "_found = {'visible': os.path.exists("
        f"{where['classmate']!r}), 'folder': os.path.exists({where['class']!r})}}\n"
        "try:\n"
        f"    open({where['classmate']!r}, 'w').write('{{}}')\n"
        "    _found['overwritten'] = True\n"
        "except OSError as _error:\n"
        "    _found['overwritten'] = type(_error).__name__\n" + said,
        "neighbour": "try:\n"
        f"    os.kill({where['neighbour']}, signal.SIGKILL)\n"
        "    _found = {'killed': True}\n"
        "except OSError as _error:\n"
        "    _found = {'killed': type(_error).__name__}\n" + said,
        "network": "_found = {}\n"
        "try:\n"
        f"    socket.create_connection(('127.0.0.1', {where['port']}), timeout=2).close()\n"
        "    _found['connected'] = True\n"
        "except OSError as _error:\n"
        "    _found['connected'] = type(_error).__name__\n" + said,
        # A grandchild in its own session, its parent gone: it would outlive the kernel and
        # rewrite the grader's CSV afterwards. Its command line carries a marker to look for.
        "detached": "if os.fork() == 0:\n"
        "    os.setsid()\n"
        "    if os.fork() == 0:\n"
        f"        _code = {grandchild!r}\n"
        "        os.execv(sys.executable, [sys.executable, '-c', _code])\n"
        "    os._exit(0)\n"
        f"_found = {{'csv folder': os.path.exists({str(Path(where['csv']).parent)!r})}}\n" + said,
        "fork bomb": "_found = {'forked': 0}\n"
        f"for _ in range({FORKS}):\n"
        "    try:\n"
        "        _pid = os.fork()\n"
        "    except OSError as _error:\n"
        "        _found['refused'] = type(_error).__name__\n"
        "        break\n"
        "    if _pid == 0:\n"
        "        time.sleep(30)\n"
        "        os._exit(0)\n"
        "    _found['forked'] += 1\n" + said,
        "3 GB": "_big = bytearray(3 * 1024**3)\nprint(json.dumps({'granted': len(_big)}))",
    }


@pytest.fixture(scope="module")
def attacked(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Run the attacks once in a sandbox, keys in the grader's environment, a class beside it."""
    folder = tmp_path_factory.mktemp("class")
    classmate = submission(folder / "classmate.ipynb")
    (folder / ".env").write_text(f"OPENAI_API_KEY={KEY}\n")
    csv = tmp_path_factory.mktemp("grades") / "grades.csv"
    csv.write_text("submission,passed\n")
    listener = socket.create_server(("127.0.0.1", 0))
    neighbour = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    where = {
        "score": course_agent.lab.score.__file__,
        "pth": str(Path(site.getsitepackages()[0]) / "zz-course-agent-probe.pth"),
        "classmate": str(classmate),
        "class": str(folder),
        "neighbour": neighbour.pid,
        "port": listener.getsockname()[1],
        "csv": str(csv),
        "marker": f"jail-probe-{os.getpid()}",
    }
    cells = attacks(where)
    nb = notebook(*cells.values())
    saved = dict(os.environ)
    os.environ.update(OPENAI_API_KEY=KEY, GITHUB_TOKEN=KEY, MY_SECRET=KEY)
    score_before = Path(where["score"]).read_bytes()
    try:
        stopped = run_notebook(nb, timeout=60, limits=LIMITS, sandbox=True)
    finally:
        os.environ.clear()
        os.environ.update(saved)
        listener.close()
    alive = neighbour.poll() is None
    neighbour.kill()
    neighbour.wait()
    time.sleep(0.5)  # what the grandchild would do first, had it survived
    found = {}
    for name, cell in zip(cells, nb.cells, strict=True):
        texts = [output.get("text", "") for output in cell.outputs]
        lines = [line for text in texts for line in text.splitlines() if line.startswith("{")]
        errors = [output.get("ename") for output in cell.outputs if "ename" in output]
        found[name] = json.loads(lines[-1]) if lines else {"errors": errors}
    return {
        "found": found,
        "stopped": stopped,
        "where": where,
        "neighbour alive": alive,
        "score unchanged": Path(where["score"]).read_bytes() == score_before,
        "csv": csv.read_text(),
        "survivors": _processes_with(where["marker"]),
    }


def _processes_with(marker: str) -> list[int]:
    """The pids of this machine's processes whose command line holds `marker`."""
    found = []
    for entry in Path("/proc").iterdir():
        with contextlib.suppress(OSError):
            if entry.name.isdigit() and marker in (entry / "cmdline").read_text():
                found.append(int(entry.name))
    return found


def test_the_kernel_sees_no_key_and_only_its_own_folder(attacked: dict[str, Any]) -> None:
    seen = attacked["found"]["environment"]
    assert KEY not in json.dumps(seen)
    assert set(seen["env"]) <= SANDBOX_NAMES, seen["env"]
    assert seen["files"] == []  # nothing of anyone else
    assert seen["pids"] == ["1", "2"]  # bwrap's init and the kernel


def test_the_kernels_parent_is_the_sandboxes_init_not_the_grader(
    attacked: dict[str, Any],
) -> None:
    parent = attacked["found"]["parent"]
    assert parent["ppid"] == 1
    assert KEY not in parent["environ"]
    assert "pytest" not in parent["cmdline"] and "pytest" not in parent["environ"]
    assert str(os.getpid()) not in parent["environ"].replace("JPY_PARENT_PID", "")


def test_the_package_and_site_packages_are_read_only(attacked: dict[str, Any]) -> None:
    where = attacked["where"]
    assert attacked["found"]["package"] == {where["score"]: "OSError", where["pth"]: "OSError"}
    assert attacked["score unchanged"] and not Path(where["pth"]).exists()


def test_a_classmates_notebook_is_not_there(attacked: dict[str, Any]) -> None:
    found = attacked["found"]["classmate"]
    assert found["visible"] is False and found["folder"] is False
    assert found["overwritten"] == "FileNotFoundError"
    assert "exercise-1" in Path(attacked["where"]["classmate"]).read_text()


def test_no_other_process_can_be_killed(attacked: dict[str, Any]) -> None:
    assert attacked["found"]["neighbour"] == {"killed": "ProcessLookupError"}
    assert attacked["neighbour alive"]


def test_there_is_no_network(attacked: dict[str, Any]) -> None:
    assert attacked["found"]["network"]["connected"] in ("OSError", "ConnectionRefusedError")


def test_a_detached_child_does_not_outlive_the_grade(attacked: dict[str, Any]) -> None:
    assert attacked["found"]["detached"] == {"csv folder": False}
    assert attacked["survivors"] == []
    assert attacked["csv"] == "submission,passed\n"


def test_a_fork_bomb_is_capped(attacked: dict[str, Any]) -> None:
    found = attacked["found"]["fork bomb"]
    assert found["forked"] < LIMITS.processes and found["refused"] == "BlockingIOError"


def test_three_gigabytes_are_not_granted(attacked: dict[str, Any]) -> None:
    # A memory cgroup lets the kernel die of it, and the run says so; RLIMIT_AS refuses the call.
    found, stopped = attacked["found"]["3 GB"], attacked["stopped"]
    assert "granted" not in found
    if "memory" in cgroup_folders():
        assert stopped == "stopped: the sandbox's memory limit (1 GB) was reached, in cell 10"
    else:
        assert found == {"errors": ["MemoryError"]}


def test_a_cpu_burner_stops_at_the_cpu_limit() -> None:
    nb = notebook("while True:\n    pass")
    stopped = run_notebook(nb, timeout=60, limits=Limits(cpu_seconds=2), sandbox=True)
    if "cpuacct" in cgroup_folders():  # the whole notebook's CPU, counted by its cgroup
        assert stopped == "stopped: the notebook used its CPU limit of 2 s, in cell 1"
    else:  # RLIMIT_CPU, each process's
        assert stopped == "stopped: a process ran over its CPU limit of 2 s, in cell 1"


def test_the_sandbox_binds_no_checkout_and_no_etc_beyond_the_loaders(tmp_path: Path) -> None:
    command = jail_command(tmp_path, Limits())
    bound = [command[i + 1] for i, arg in enumerate(command) if arg in ("--ro-bind", "--bind")]
    package = str(Path(course_agent.lab.score.__file__).parent.parent)
    assert package in bound and str(Path(package).parent) not in bound
    assert [path for path in bound if path.startswith("/etc")] == [
        path for path in bound if path.startswith("/etc/l") or path == "/etc/mime.types"
    ]
    writable = [command[i + 1 : i + 3] for i, arg in enumerate(command) if arg == "--bind"]
    assert writable == [[str(tmp_path), str(tmp_path)]]


def test_of_python_only_the_interpreters_own_paths_are_bound_never_a_prefix(
    tmp_path: Path,
) -> None:
    # All of sys.prefix was bound: an editable install under <venv>/src/ showed its whole
    # checkout, .env included, and a key kept in <venv>/bin/activate was readable.
    command = jail_command(tmp_path, Limits())
    bound = {command[i + 2] for i, arg in enumerate(command) if arg == "--ro-bind"}
    prefixes = {sys.prefix, sys.base_prefix, str(Path(sys.executable).parent)}
    assert not bound & prefixes
    stdlib = sysconfig.get_path("stdlib")
    sites = {str(Path(folder)) for folder in site.getsitepackages()}
    package = Path(course_agent.lab.score.__file__).parent.parent
    allowed = [stdlib, *sites, *{str(package), str(package.resolve())}, "/usr", "/etc/"]
    allowed += [str(Path(sys.executable).parent / name) for name in ("python3", "rg")]
    allowed += [str(Path(sys.prefix, "pyvenv.cfg")), sysconfig.get_config_var("LIBDIR")]
    allowed += [str(Path(sys.executable).resolve())]
    outside = [path for path in bound if not any(path.startswith(place) for place in allowed)]
    assert outside == []


def test_grade_stops_a_long_notebook_at_its_wall_limit_and_says_so(tmp_path: Path) -> None:
    # 3,000 cells of a tenth of a second each at --timeout 1: no cell runs over, the notebook does.
    path = submission(tmp_path / "long.ipynb", extra=["import time\ntime.sleep(0.1)"] * 3000)
    out = tmp_path / "grades.csv"
    command = [sys.executable, "-m", "course_agent", "grade", str(path), "--timeout", "1"]
    command += ["--notebook-timeout", "4", "--csv", str(out)]
    done = subprocess.run(command, env=kernel_env(), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    row = out.read_text().splitlines()[1]
    assert "stopped: the notebook ran over its wall limit of 4 s, in cell " in row
    assert ",,," in row  # no score


def test_grade_refuses_without_a_sandbox_unless_told(tmp_path: Path) -> None:
    path = submission(tmp_path / "starter.ipynb")
    env = kernel_env(PATH=str(tmp_path))  # no bwrap on it
    command = [sys.executable, "-m", "course_agent", "grade", str(path), "--timeout", "30"]
    refused = subprocess.run(command, env=env, capture_output=True, text=True, timeout=60)
    assert refused.returncode == 2 and refused.stdout == ""
    assert refused.stderr == (
        "course-agent grade: no sandbox: bubblewrap is not installed "
        "(Debian: apt-get install bubblewrap); or pass --no-sandbox\n"
    )
    unjailed = subprocess.run(
        [*command, "--no-sandbox"], env=env, capture_output=True, text=True, timeout=120
    )
    assert unjailed.returncode == 0, unjailed.stderr
    assert unjailed.stderr.startswith("--no-sandbox: each kernel runs as this user")
    assert "2/7" in unjailed.stdout


def test_a_dead_kernels_sandbox_leaves_no_cgroup_and_no_folder(tmp_path: Path) -> None:
    from nbclient import NotebookClient

    km = kernel_manager(tmp_path, limits=LIMITS)
    nb = notebook("import os\n\nos._exit(1)")
    with pytest.raises(DeadKernelError):
        NotebookClient(nb, km=km, timeout=30).execute(cleanup_kc=True)
    assert km.cgroups is not None and km.cgroups.folders.keys() == cgroup_folders().keys()
    assert not any(folder.exists() for folder in km.cgroups.folders.values())
    assert km.channel is not None and not km.channel.exists()  # the sockets' folder


def test_without_cgroups_resource_limits_cap_memory_and_cpu(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A grader that may create no cgroup (a user without delegation): RLIMIT_AS refuses the
    # allocation, RLIMIT_CPU stops the process.
    monkeypatch.setattr("course_agent.lab.jail.cgroup_folders", dict)
    nb = notebook("print('started')", "_big = bytearray(3 * 1024**3)", "while True:\n    pass")
    limits = Limits(memory=GB, cpu_seconds=3)
    stopped = run_notebook(nb, timeout=60, limits=limits, sandbox=True)
    assert streamed(nb.cells[0]) == "started\n"
    assert nb.cells[1].outputs[0]["ename"] == "MemoryError"
    assert stopped == "stopped: a process ran over its CPU limit of 3 s, in cell 3"


def test_a_sandbox_that_fails_to_start_leaves_nothing_behind(tmp_path: Path) -> None:
    km = kernel_manager(tmp_path / "missing", limits=LIMITS)
    with pytest.raises(FileNotFoundError):  # its cgroups were made, then the launch failed
        asyncio.run(km.start_kernel(cwd=str(tmp_path)))
    assert km.cgroups is not None and km.cgroups.folders.keys() == cgroup_folders().keys()
    assert not any(folder.exists() for folder in km.cgroups.folders.values())
    assert km.channel is not None and not km.channel.exists()
