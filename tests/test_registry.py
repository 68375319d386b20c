"""The registry: list() is exactly what the model sees; execute() never raises, whatever it gets."""

from __future__ import annotations

import dataclasses
import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ConfigDict, Field

import course_agent
from course_agent.offline.repository import build_sandbox
from course_agent.protocol import ToolCall, ToolContext, ToolDef, ToolError, ToolResult
from course_agent.registry import ToolRegistry, default_registry, describe_parameters, execute_call
from course_agent.safety import redaction

# The model-facing JSON of the three tools, pinned: a change here is a change to every prompt.
EXPECTED_TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "glob",
            "description": (
                "List files in the working directory whose relative path matches a "
                "wildcard, sorted, one per line. ** matches across directories, * any "
                "characters within one directory, ? one character, [abc] one of a set, "
                "{js,ts} either alternative: for example **/*.js, src/**/*.{js,ts} or "
                "test/*.test.js. Lists files only, dotfiles included; skips "
                "node_modules, .git and dist at any depth."
            ),
            "parameters": {
                "type": "object",
                "properties": {
                    "pattern": {
                        "type": "string",
                        "description": (
                            "wildcard matched against the whole relative path, e.g. **/*.js, "
                            "src/**/*.{js,ts} or test/*.test.js"
                        ),
                        "maxLength": 4096,
                    },
                    "limit": {
                        "type": "integer",
                        "description": "maximum paths returned; default 200",
                        "default": 200,
                        "maximum": 2000,
                        "minimum": 1,
                    },
                },
                "required": ["pattern"],
                "additionalProperties": False,
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "grep",
            "description": (
                "Search the contents of files in the working directory with a regular "
                "expression (ripgrep syntax), returning matching lines as "
                "path:line:content sorted by path and line. Examples: pattern "
                '"divide\\(" (escape ( . [ for literal text), "TODO|FIXME", "(?i)error";'
                ' glob "*.js" or "src/**/*.ts" narrows the files searched. At most 50 '
                "lines by default, each cut at 120 characters; binary files and "
                "node_modules, .git and dist are skipped."
            ),
            "parameters": {
                "type": "object",
                "properties": {
                    "pattern": {
                        "type": "string",
                        "description": (
                            "regular expression (ripgrep syntax), e.g. divide\\( or class "
                            "\\w+Error; case-sensitive, start with (?i) to ignore case"
                        ),
                        "maxLength": 4096,
                    },
                    "glob": {
                        "type": "string",
                        "description": (
                            "only search files matching this wildcard, e.g. *.js (any depth) or "
                            "src/**/*.ts; default all files"
                        ),
                        "maxLength": 4096,
                    },
                    "limit": {
                        "type": "integer",
                        "description": "maximum matching lines returned; default 50",
                        "default": 50,
                        "maximum": 500,
                        "minimum": 1,
                    },
                },
                "required": ["pattern"],
                "additionalProperties": False,
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "read_file",
            "description": (
                "Read a text file in the working directory as numbered lines under a "
                "header such as 'src/calc.js (lines 1-13 of 13)'; each line is its "
                "number, two spaces, then the text. Shows 400 lines by default: for a "
                "long file page on with offset, e.g. offset=401. Lines over 500 "
                "characters are cut. Directories and binary files are refused: use glob"
                " to find files and grep to find lines."
            ),
            "parameters": {
                "type": "object",
                "properties": {
                    "path": {
                        "type": "string",
                        "description": (
                            "file path relative to the working directory, e.g. src/calc.js"
                        ),
                        "maxLength": 4096,
                    },
                    "offset": {
                        "type": "integer",
                        "description": "first line to show, counting from 1; default 1",
                        "default": 1,
                        "maximum": 1000000000,
                        "minimum": 1,
                    },
                    "limit": {
                        "type": "integer",
                        "description": "maximum lines to show; default 400",
                        "default": 400,
                        "maximum": 2000,
                        "minimum": 1,
                    },
                },
                "required": ["path"],
                "additionalProperties": False,
            },
        },
    },
]


def test_list_is_pinned() -> None:
    listed = default_registry().list()
    assert listed == EXPECTED_TOOLS
    # Key order too: type and description first, as people (and models) read them.
    assert json.dumps(listed) == json.dumps(EXPECTED_TOOLS)


def test_schemas_read_like_the_hand_written_ones() -> None:
    for tool in default_registry().tools.values():
        schema = tool.parameters
        assert "title" not in json.dumps(schema)
        assert schema["additionalProperties"] is False and schema["required"]
        for name, prop in schema["properties"].items():
            assert list(prop)[:2] == ["type", "description"], name
            if name not in schema["required"] and "default" in prop:
                assert f"default {prop['default']}" in prop["description"]


def test_describe_parameters() -> None:
    tools = default_registry().tools
    assert (
        describe_parameters(tools["glob"])
        == "pattern (string, required), limit (integer, default 200)"
    )
    assert describe_parameters(tools["grep"]) == (
        "pattern (string, required), glob (string, optional), limit (integer, default 50)"
    )


class EchoArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    text: str = Field(description="what to say back")
    times: int = Field(1, ge=1, le=3, description="how often; default 1")


def run_echo(args: EchoArgs, ctx: ToolContext) -> ToolResult:
    if args.text == "refuse":
        raise ToolError("refused: say something else")
    if args.text == "crash":
        raise RuntimeError("boom")
    return ToolResult(args.text * args.times)


ECHO = ToolDef(name="echo", description="Say text back.", args=EchoArgs, run=run_echo)
TOOLS = {"echo": ECHO}


def call(name: str, args: str) -> ToolResult:
    return execute_call(TOOLS, ToolCall("call_1", name, args), ToolContext(Path(".")))


def test_a_good_call_runs() -> None:
    assert call("echo", '{"text": "hi", "times": 2}') == ToolResult("hihi")


@pytest.mark.parametrize(
    ("name", "args", "words"),
    [
        # 1. an unknown tool: name the ones that exist
        ("edit_file", "{}", "there is no tool named edit_file. Available: echo"),
        # 2. arguments that are not JSON (a stream cut short), or not an object
        ("echo", '{"text": "h', "not valid JSON"),
        ("echo", '["hi"]', "must be a JSON object, got list"),
        # 3. arguments that fail the schema: which field, what was sent, what is expected
        ("echo", "{}", "text: Field required"),
        ("echo", '{"text": "hi", "times": 9}', "times: Input should be less than or equal to 3"),
        ("echo", '{"text": "hi", "loud": true}', "loud: Extra inputs are not permitted"),
        # 4. a tool that raised: an expected refusal as it is, anything else with its class
        ("echo", '{"text": "refuse"}', "refused: say something else"),
        ("echo", '{"text": "crash"}', "echo failed: RuntimeError: boom"),
    ],
)
def test_the_four_failures_come_back_as_results(name: str, args: str, words: str) -> None:
    result = call(name, args)
    assert result.ok is False
    assert words in result.content


def test_schema_failures_list_the_parameters() -> None:
    assert call("echo", "{}").content.endswith(
        "Parameters: text (string, required), times (integer, default 1)"
    )


def test_empty_arguments_mean_an_empty_object() -> None:
    assert "text: Field required" in call("echo", "").content


def test_execute_truncates_every_result() -> None:
    registry = ToolRegistry([ECHO], run_call=lambda tools, c, ctx: ToolResult("x" * 20000))
    result = registry.execute(ToolCall("1", "echo", "{}"), ToolContext(Path(".")))
    assert len(result.content) == 8054 and result.meta["truncated"] is True


def test_execute_survives_a_plugged_in_run_call_that_raises() -> None:
    def broken(tools: object, c: ToolCall, ctx: ToolContext) -> ToolResult:
        raise KeyError("students write these")

    result = ToolRegistry([ECHO], run_call=broken).execute(ToolCall("1", "echo", "{}"), None)
    assert result.ok is False and "KeyError" in result.content


@pytest.fixture
def sandbox(tmp_path: Path) -> Path:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "calc.js").write_text("export const divide = (a, b) => a / b\n")
    (tmp_path / "README.md").write_text("# calc\n")
    return tmp_path


ARGUMENTS = st.one_of(
    st.text(max_size=60),  # anything at all, mostly not JSON
    st.dictionaries(
        st.sampled_from(["path", "pattern", "glob", "limit", "offset", "extra"]),
        st.one_of(
            st.text(max_size=30),
            st.integers(-(10**12), 10**12),
            st.none(),
            st.booleans(),
            st.floats(allow_nan=False),
            st.sampled_from(["..", "/", "~", "**", "src/calc.js", "(a+)+$", "[", "{", "\\"]),
        ),
        max_size=4,
    ).map(json.dumps),
)


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    name=st.one_of(st.sampled_from(["glob", "grep", "read_file"]), st.text(max_size=20)),
    args=ARGUMENTS,
)
def test_execute_never_raises_and_answers_once(sandbox: Path, name: str, args: str) -> None:
    result = default_registry().execute(ToolCall("call_1", name, args), ToolContext(sandbox))
    assert isinstance(result, ToolResult)
    assert isinstance(result.content, str) and result.content
    assert len(result.content) <= 8054 + 100  # the ceiling, plus the note


# Any JSON value a model could send, with the values that tend to break things mixed in.
JSON_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(-(10**40), 10**40),
    st.floats(),  # NaN and Infinity too: json.dumps writes them, json.loads reads them back
    st.text(max_size=40),
    st.sampled_from(["..", "../outside.txt", "/etc/passwd", "src", "**", "(a+)+$", "\\", "é"]),
)
JSON_VALUES = st.recursive(
    JSON_SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=8,
)
JSON_OBJECTS = st.dictionaries(
    st.sampled_from(["path", "pattern", "glob", "limit", "offset"]) | st.text(max_size=12),
    JSON_VALUES,
    max_size=5,
)
# Calls close to valid ones, so that many get past validation and into the tools themselves.
TEXT = st.text(max_size=30) | st.sampled_from(
    ["src/calc.js", "data/rates.csv", "**", "*.js", "out", "loop", "pipe", "blob.bin", "TOP"]
)
NUMBER = st.integers(-3, 3000) | JSON_SCALARS
CALLS = st.one_of(
    st.tuples(
        st.sampled_from(["glob", "grep"]),
        st.fixed_dictionaries({"pattern": TEXT}, optional={"glob": TEXT, "limit": NUMBER}),
    ),
    st.tuples(
        st.just("read_file"),
        st.fixed_dictionaries({"path": TEXT}, optional={"offset": NUMBER, "limit": NUMBER}),
    ),
    st.tuples(
        st.sampled_from(["glob", "grep", "read_file"]) | st.text(max_size=20),
        JSON_OBJECTS | JSON_VALUES,
    ),
)


@pytest.fixture
def hostile_tree(tmp_path: Path) -> Path:
    """The lab's sandbox plus what a tree may hold: a way out, a FIFO, a binary, odd names."""
    (tmp_path / "outside.txt").write_text("TOP-SECRET\n")
    root = build_sandbox(tmp_path)
    (root / "out").symlink_to(tmp_path / "outside.txt")
    (root / "loop").symlink_to("loop")
    os.mkfifo(root / "pipe")
    (root / "blob.bin").write_bytes(bytes(range(256)) * 4)
    (root / "new\nline é.txt").write_text("TOP\n")
    return root


@settings(max_examples=200, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(call=CALLS)
def test_any_json_to_the_real_tools_gives_one_sendable_result(
    hostile_tree: Path, call: tuple[str, object]
) -> None:
    name, args = call
    result = default_registry().execute(
        ToolCall("call_1", name, json.dumps(args)), ToolContext(hostile_tree)
    )
    assert isinstance(result, ToolResult) and isinstance(result.ok, bool)
    assert result.content and len(result.content) <= 8000 + 100  # the ceiling plus its note
    result.content.encode("utf-8")  # it can be sent: no lone surrogate from a name or an echo
    if "SECRET" not in json.dumps(args):  # an echo of the arguments may hold anything
        assert "TOP-SECRET" not in result.content


# -- keys: cut where text enters, so the lesson's registry holds none to cut --------------------

KEY = "sk-test-KEY/with+odd=chars"


@pytest.fixture
def known_key() -> Iterator[str]:
    """KEY remembered as settings remember a configured key, and forgotten after the test."""
    before = set(redaction._KNOWN)
    redaction.remember_secrets([KEY])
    yield KEY
    redaction._KNOWN.clear()
    redaction._KNOWN.update(before)


def test_the_context_knows_no_secrets() -> None:
    assert [f.name for f in dataclasses.fields(ToolContext)] == ["root"]


def test_the_lesson_files_never_name_secrets() -> None:
    # Redaction happens at the edges (providers/, the tools' readers): a student reading the
    # lesson meets none of it.
    lesson = Path(course_agent.__file__).parent
    for name in ["protocol", "accumulator", "registry", "truncate", "loop", "paths"]:
        text = (lesson / f"{name}.py").read_text(encoding="utf-8")
        assert not re.search(r"\bsecrets?\b|safety\.redaction|redact\(", text), name


def test_the_real_tools_cut_a_remembered_key(sandbox: Path, known_key: str) -> None:
    # NAME=tools moves the tools' readers to safety.redaction.known_secrets(); until then this
    # fails, which is the point: the registry no longer redacts on their behalf.
    (sandbox / "config.txt").write_text(f"token = {known_key}\n")
    ctx = ToolContext(sandbox)
    page = default_registry().execute(ToolCall("1", "read_file", '{"path": "config.txt"}'), ctx)
    assert page.content == "config.txt (lines 1-1 of 1)\n1  token = [redacted]"


@pytest.mark.parametrize(
    ("name", "args"), [("glob", {"pattern": "**/*"}), ("grep", {"pattern": "needle"})]
)
def test_a_file_named_after_the_key_is_shown_redacted(
    tmp_path: Path, name: str, args: dict[str, str], known_key: str
) -> None:
    # A file name cannot hold "/" as the key does: its URL-encoded form, cut all the same by the
    # tool that reads names from the disk, in a listing and before grep's ":". (A path the model
    # sends comes cut already: the gateway's text is redacted where it enters, providers/.)
    (tmp_path / "keys").mkdir()
    (tmp_path / "keys" / f"{quote(KEY, safe='')}.txt").write_text("needle\n")
    result = default_registry().execute(
        ToolCall("1", name, json.dumps(args)), ToolContext(tmp_path)
    )
    assert "KEY%2F" not in result.content
    if name == "glob":
        assert "[redacted].txt" in result.content
    else:  # grep searches no file whose name spells a key (tools/guards/holders.py)
        assert result.content == "no matches for needle"
