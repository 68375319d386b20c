"""The key is cut out exactly, whatever its length or encoding."""

import json
from urllib.parse import quote, quote_plus

from hypothesis import given
from hypothesis import strategies as st

from course_agent.redaction import REDACTED, redact


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
