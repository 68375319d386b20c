"""Pin the public surface: a change to what `import course_agent` offers must be deliberate."""

import importlib
import pkgutil
import subprocess
import sys

import course_agent

PUBLIC = [
    "HEAD_RATIO",
    "MAX_RESULT_CHARS",
    "AgentStopped",
    "Finish",
    "GatewayError",
    "Model",
    "TextDelta",
    "ToolCall",
    "ToolCallAccumulator",
    "ToolCallDelta",
    "ToolContext",
    "ToolDef",
    "ToolError",
    "ToolFinished",
    "ToolRegistry",
    "ToolResult",
    "ToolStarted",
    "TurnStarted",
    "check_transcript",
    "default_registry",
    "execute_call",
    "load_ipython_extension",
    "run_agent",
    "run_selftest",
    "truncate_result",
]


def test_public_api_is_exactly_this():
    assert course_agent.__all__ == PUBLIC
    assert all(hasattr(course_agent, name) for name in PUBLIC)


def test_every_module_has_a_docstring_and_an_all_of_real_names():
    # That each __all__ is sorted is ruff's RUF022, run by tests/test_style.py.
    for info in pkgutil.walk_packages(course_agent.__path__, "course_agent."):
        if info.name.endswith("__main__"):
            continue
        module = importlib.import_module(info.name)
        assert module.__doc__, f"{info.name} has no docstring"
        names = getattr(module, "__all__", None)
        assert names is not None, f"{info.name} has no __all__"
        assert all(hasattr(module, name) for name in names), f"{info.name}.__all__ names a ghost"


def test_importing_the_core_pulls_in_no_notebook_machinery():
    code = (
        "import sys, course_agent, course_agent.cli; "
        "print(sorted(m for m in ('IPython', 'ipywidgets') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


# -- a light start: `import course_agent` and `%load_ext` import none of the heavy parts -----------

HEAVY = ("httpx", "pydantic", "IPython", "ipywidgets")


def fresh_python(code: str) -> str:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_importing_the_package_imports_nothing_heavy():
    code = (
        "import sys, course_agent\n"
        f"print(sorted(m for m in {HEAVY!r} if m in sys.modules), "
        "sorted(m for m in sys.modules if m.startswith('course_agent.')))"
    )
    assert fresh_python(code) == "[] []"


def test_every_public_name_imports_on_first_use_in_a_fresh_process():
    code = (
        "import course_agent\n"
        "from course_agent import *\n"
        "names = [n for n in course_agent.__all__ if n in globals()]\n"
        "print(names == course_agent.__all__, set(names) <= set(dir(course_agent)))"
    )
    assert fresh_python(code) == "True True"


def test_a_name_that_is_not_public_is_an_attribute_error():
    try:
        course_agent.run_agents  # noqa: B018
    except AttributeError as error:
        assert str(error) == "module 'course_agent' has no attribute 'run_agents'"
    else:
        raise AssertionError("course_agent.run_agents should not exist")


def test_load_ext_declares_the_magics_and_imports_them_on_first_use():
    code = (
        "import sys\n"
        "from IPython.core.interactiveshell import InteractiveShell\n"
        "shell = InteractiveShell.instance()\n"
        "shell.run_line_magic('load_ext', 'course_agent')\n"
        "print(sorted(m for m in ('httpx', 'pydantic', 'course_agent.notebook') "
        "if m in sys.modules))\n"
        "print(sorted(shell.magics_manager.lsmagic()['cell']).count('agent'))\n"
        # %%agent? lists the options before any magic ran: the placeholder loads the real one.
        "print('--max-turns' in shell.object_inspect('%%agent')['docstring'])\n"
        "print('pydantic' in sys.modules)\n"
    )
    assert fresh_python(code).splitlines() == ["[]", "1", "True", "True"]


def test_the_declared_magics_are_the_ones_the_class_defines():
    from course_agent.notebook.magics import AgentMagics

    defined = {name: kind for kind, names in AgentMagics.magics.items() for name in names}
    assert defined == course_agent._MAGICS


def test_an_ipython_without_lazy_magics_gets_them_registered_at_once(shell, monkeypatch):
    monkeypatch.setattr(course_agent, "_lazy_magics_listed", lambda: False)
    shell.magics_manager.magics["cell"].pop("agent")
    course_agent.load_ipython_extension(shell)
    assert type(shell.magics_manager.magics["cell"]["agent"]).__name__ == "method"
