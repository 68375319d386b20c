"""Each field reader takes what the format promises and names what it got instead."""

import pytest

from course_agent.providers.gateway.contract import (
    BrokenChunk,
    BrokenJson,
    index_field,
    json_value,
    list_field,
    object_field,
    text_field,
)


def test_absent_or_null_fields_read_as_empty() -> None:
    assert object_field(None, "delta") == {}
    assert list_field(None, "choices") == []
    assert text_field(None, "id") is None
    assert index_field(None, "index") is None


def test_fields_of_the_promised_type_pass_as_they_are() -> None:
    assert object_field({"a": 1}, "delta") == {"a": 1}
    assert list_field([1], "choices") == [1]
    assert text_field("", "id") == ""
    assert index_field(-3, "index") == -3  # an opaque label: any whole number


@pytest.mark.parametrize(
    ("read", "value", "message"),
    [
        (object_field, "hi", "delta is a string, not an object"),
        (object_field, [], "delta is a list, not an object"),
        (list_field, {"index": 0}, "delta is an object, not a list"),
        (text_field, 7, "delta is a number, not a string"),
        (text_field, [], "delta is a list, not a string"),
        (index_field, "0", "delta is '0', not a whole number"),
        (index_field, 1.0, "delta is a number, not a whole number"),
        (index_field, True, "delta is a boolean, not a whole number"),
        (index_field, "9" * 50, "delta is a string, not a whole number"),
    ],
)
def test_anything_else_names_the_field_and_what_it_was(read, value, message) -> None:
    with pytest.raises(BrokenChunk) as caught:
        read(value, "delta")
    assert str(caught.value) == message


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("{", "Expecting property name"),
        ("[" * 100_000, "nested too deeply"),  # json.loads: RecursionError
        ("1" * 5000, "4300 digits"),  # json.loads: ValueError, not JSONDecodeError
    ],
)
def test_json_that_cannot_be_read_is_one_kind_of_error(text: str, reason: str) -> None:
    with pytest.raises(BrokenJson, match=reason):
        json_value(text)
