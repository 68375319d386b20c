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
