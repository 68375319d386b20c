import re

from hypothesis import given
from hypothesis import strategies as st

from course_agent.protocol import ToolResult
from course_agent.truncate import HEAD_RATIO, MAX_RESULT_CHARS, truncate_result


def test_course_figure_20000_becomes_8054_and_says_12000_were_cut():
    result = truncate_result(ToolResult("x" * 20000))
    assert len(result.content) == 8054
    assert "12000 of 20000 chars cut" in result.content
    assert result.meta == {"truncated": True, "originalChars": 20000}


def test_short_result_is_returned_untouched():
    result = ToolResult("y" * MAX_RESULT_CHARS, meta={"tool": "glob"})
    assert truncate_result(result) is result


def test_keeps_head_and_tail_and_existing_meta_and_ok():
    text = "".join(f"{n:06d}\n" for n in range(5000))
    result = truncate_result(ToolResult(text, ok=False, meta={"tool": "grep"}))
    head = int(MAX_RESULT_CHARS * HEAD_RATIO)
    assert result.content.startswith(text[:head])
    assert result.content.endswith(text[-(MAX_RESULT_CHARS - head) :])
    assert result.ok is False
    assert result.meta["tool"] == "grep" and result.meta["originalChars"] == len(text)


@given(st.text(min_size=0, max_size=30000))
def test_any_text_is_bounded_keeps_both_ends_and_states_true_numbers(text):
    result = truncate_result(ToolResult(text))
    if len(text) <= MAX_RESULT_CHARS:
        assert result.content == text
        return
    removed = len(text) - MAX_RESULT_CHARS
    note = f"\n[...{removed} of {len(text)} chars cut; use offset for middle]\n"
    head = int(MAX_RESULT_CHARS * HEAD_RATIO)
    assert result.content == text[:head] + note + text[head + removed :]
    assert len(result.content) == MAX_RESULT_CHARS + len(note)


@given(
    length=st.integers(MAX_RESULT_CHARS - 2, MAX_RESULT_CHARS + 2)
    | st.sampled_from([9_999, 10_000, 18_000, 18_001, 107_999, 108_000, 1_000_000]),
    ok=st.booleans(),
    meta=st.dictionaries(
        st.sampled_from(["tool", "files", "truncated"]), st.integers(), max_size=2
    ),
)
def test_at_the_ceiling_and_where_the_numbers_grow_a_digit(length, ok, meta):
    text = "".join(f"{n:07d}\n" for n in range(length // 8 + 1))[:length]  # every slice distinct
    result = truncate_result(ToolResult(text, ok=ok, meta=meta))
    assert result.ok is ok
    if length <= MAX_RESULT_CHARS:
        assert result == ToolResult(text, ok=ok, meta=meta)
        return
    head = int(MAX_RESULT_CHARS * HEAD_RATIO)
    tail = MAX_RESULT_CHARS - head
    note = result.content[head:-tail]
    removed, total = (int(n) for n in re.findall(r"\d+", note))
    assert (removed, total) == (length - MAX_RESULT_CHARS, length)  # kept + removed == total
    assert note == f"\n[...{removed} of {total} chars cut; use offset for middle]\n"
    assert result.content == text[:head] + note + text[-tail:]
    assert result.meta == {**meta, "truncated": True, "originalChars": length}


def test_a_result_whose_meta_is_none_is_cut_as_the_course_cuts_it() -> None:
    # The course's code does `result.meta or {}`: a result built with meta=None is cut too.
    cut = truncate_result(ToolResult("x" * 20_000, meta=None))  # type: ignore[arg-type]
    assert len(cut.content) == 8054 and cut.meta == {"truncated": True, "originalChars": 20_000}
