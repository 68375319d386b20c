"""The key is cut out exactly, whatever its length or encoding."""

import itertools
import json
from urllib.parse import quote, quote_plus

import pytest
from hypothesis import given
from hypothesis import strategies as st

from course_agent.safety.redaction import (
    PREFIX_CHARS,
    REDACTED,
    StreamRedactor,
    redact,
    redact_cut,
)


def test_short_key_is_cut_even_inside_a_word() -> None:
    assert redact("auth=%20sk-SECRET123 and xsk-SECRET123y", ["sk-SECRET123"]) == (
        f"auth=%20{REDACTED} and x{REDACTED}y"
    )


def test_url_encoded_and_json_escaped_forms_are_cut() -> None:
    key = 'k/e y+"q\\'
    text = f"url={quote(key, safe='')} plus={quote_plus(key, safe='')} json={json.dumps(key)}"
    out = redact(text, [key])
    assert out == f'url={REDACTED} plus={REDACTED} json="{REDACTED}"'


def test_empty_secrets_change_nothing() -> None:
    assert redact("nothing to hide", ["", ""]) == "nothing to hide"


def test_a_key_that_contains_another_is_cut_whole() -> None:
    assert redact("sk-abcdef", ["sk-abc", "sk-abcdef"]) == REDACTED


# Keys drawn from characters that "[redacted]" does not use, so no key can re-form across it.
KEY_CHARS = st.characters(exclude_characters="[redacted]", codec="utf-8")


@given(
    key=st.text(KEY_CHARS, min_size=1, max_size=80),
    before=st.text(KEY_CHARS, max_size=40),
    after=st.text(KEY_CHARS, max_size=40),
)
def test_no_form_of_the_key_survives(key: str, before: str, after: str) -> None:
    for form in (key, quote(key, safe=""), json.dumps(key)[1:-1]):
        assert key not in redact(before + form + after, [key])


# -- cutting an excerpt: redact first, and leave no start of a key where the cut fell ------------

KEY = "sk-proj-ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"


def cut(text: str, limit: int, secrets: list[str], *, was_cut: bool = False) -> str:
    shown, ends_cut = redact_cut(text, limit, secrets, was_cut=was_cut)
    assert ends_cut == (was_cut or len(redact(text, secrets)) > limit)
    return shown


def test_a_cut_through_a_key_leaves_none_of_it() -> None:
    # Cut first and then redacted, the head would keep "sk-proj-ABCDEF".
    text = "x" * 100 + KEY + "y" * 100
    assert cut(text, 114, [KEY]) == "x" * 100 + REDACTED + "yyyy"
    # A key that starts within the cut but was not whole in the text (two keys, the second cut).
    assert cut(text[:114], 500, [KEY], was_cut=True) == "x" * 100 + REDACTED


def test_a_text_cut_before_it_arrived_loses_the_start_of_a_key_at_its_end() -> None:
    # ripgrep's 500-byte preview or read_file's kept head: the cut happened upstream.
    head = "k = " + KEY[:12]
    assert cut(head, 500, [KEY], was_cut=True) == "k = " + REDACTED
    assert cut(head, 500, [KEY]) == head  # not cut: the text simply ends so, and 12 is no leak


def test_whole_keys_before_the_cut_are_redacted_and_the_rest_kept() -> None:
    text = f"{KEY} {KEY} tail"
    assert cut(text, 100, [KEY]) == f"{REDACTED} {REDACTED} tail"


def test_the_first_three_characters_may_stay() -> None:
    # "sk-" is what every key of a vendor starts with; anything longer is cut.
    assert cut("abc sk-", 7, [KEY], was_cut=True) == "abc sk-"
    assert cut("abc sk-p", 8, [KEY], was_cut=True) == "abc " + REDACTED


def test_a_cut_through_an_encoded_form_leaves_none_of_it() -> None:
    key = "sk-test/with+odd=chars-0123456789"
    text = "url=" + quote(key, safe="") + "&x=1"
    assert cut(text, 20, [key]) == f"url={REDACTED}&x=1"
    shown = cut(text[:20], 20, [key], was_cut=True)
    assert shown == "url=" + REDACTED and "sk-test%2F" not in shown


@given(
    key=st.text(st.characters(exclude_characters="[redacted]~", codec="utf-8"), min_size=5),
    before=st.integers(0, 60),
    after=st.integers(0, 60),
    limit=st.integers(0, 140),
)
def test_no_cut_keeps_four_characters_of_a_key(
    key: str, before: int, after: int, limit: int
) -> None:
    shown = cut("~" * before + key + "~" * after, limit, [key])
    assert key[:4] not in shown and len(shown) <= limit + len(REDACTED)


@given(
    key=st.text(KEY_CHARS, min_size=8, max_size=40),
    before=st.text(KEY_CHARS, max_size=30),
    after=st.text(KEY_CHARS, max_size=30),
    cuts=st.lists(st.integers(0, 100), max_size=6),
)
def test_a_key_split_across_streamed_pieces_is_cut_whole(
    key: str, before: str, after: str, cuts: list[int]
) -> None:
    whole = before + key + after
    edges = sorted({0, len(whole), *(cut % (len(whole) + 1) for cut in cuts)})
    pieces = [whole[a:b] for a, b in itertools.pairwise(edges)]
    stream = StreamRedactor([key])
    shown = "".join(stream.feed(piece) for piece in pieces) + stream.flush()
    assert shown == redact(whole, [key])


def test_a_stream_without_secrets_passes_through_at_once() -> None:
    stream = StreamRedactor([])
    assert stream.feed("sk-") == "sk-"
    assert stream.flush() == ""


def test_what_could_start_a_key_is_held_until_the_next_piece() -> None:
    stream = StreamRedactor(["sk-secret-123"])
    assert stream.feed("answer: sk-sec") == "answer: "
    assert stream.feed("ond thing") == "sk-second thing"
    assert stream.feed(" sk-secret-1") == " "
    assert stream.feed("23.") == f"{REDACTED}."


def test_remembered_secrets_are_known_longest_first_and_empty_ones_ignored():
    from course_agent.safety import redaction

    before = set(redaction._KNOWN)
    try:
        redaction.remember_secrets(["sk-short-0123", "", "sk-short-0123-and-longer"])
        known = redaction.known_secrets()
        assert known.index("sk-short-0123-and-longer") < known.index("sk-short-0123")
        assert "" not in known
    finally:
        redaction._KNOWN.clear()
        redaction._KNOWN.update(before)


# -- hole 9: the other spellings a real leak takes ----------------------------------------------

LEAKY = "sk-test-Hole9Spelling-0123456789abcdef"


@pytest.mark.parametrize(
    "spelled",
    [
        LEAKY.upper(),  # a shell's ${KEY^^}, a log that upper-cases
        LEAKY.lower(),
        LEAKY.encode().hex(),  # xxd -p, a hex dump
        LEAKY.encode().hex().upper(),
        LEAKY[::-1],  # rev
        LEAKY.replace("-", "&#45;"),  # HTML character references: sk&#45;test-...
        LEAKY.replace("-", "&#x2d;"),
        "".join(f"&#{ord(ch)};" for ch in LEAKY),
        LEAKY[:30],  # a 30-character prefix
        LEAKY[:PREFIX_CHARS],
    ],
)
def test_other_spellings_of_a_key_are_cut(spelled: str) -> None:
    assert redact(f"before {spelled} after", [LEAKY]) == f"before {REDACTED} after"


def test_a_prefix_shorter_than_the_threshold_and_short_values_stay() -> None:
    short = LEAKY[: PREFIX_CHARS - 1]
    assert redact(f"x {short} y", [LEAKY]) == f"x {short} y"
    # "password1" is not key-shaped: its upper case and its reverse are ordinary text.
    assert redact("PASSWORD1 1drowssap password1", ["password1"]) == (
        f"PASSWORD1 1drowssap {REDACTED}"
    )


def test_a_streamed_prefix_is_held_until_the_stream_says_more() -> None:
    stream = StreamRedactor([LEAKY])
    shown = stream.feed("k=" + LEAKY[:25]) + stream.feed(LEAKY[25:] + " done") + stream.flush()
    assert shown == f"k={REDACTED} done"
    stream = StreamRedactor([LEAKY])
    assert stream.feed("k=" + LEAKY[:25]) + stream.flush() == f"k={REDACTED}"
