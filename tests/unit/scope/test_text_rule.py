"""The input rules of `scope/limits.py`: the table of characters that draw nothing is Unicode 14.0's, NFKC's
growth is what the module says, the schema's pattern is exactly the rule (as Python's `re` and pydantic's
Rust engine read it), and a text the schema lets through still draws something once the game normalises it."""

from __future__ import annotations

import re
import sys
import unicodedata
from typing import Annotated

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import Field, TypeAdapter, ValidationError

from bureau.scope.content_policy import normalise_whisper
from bureau.scope.limits import (
    BLANK_LETTERS,
    CONTROL_CHARACTERS,
    INVISIBLE,
    NFKC_MAX_GROWTH,
    ONE_LINE_PATTERN,
    TEXT_PATTERN,
    draws_nothing,
    draws_something,
    words_pattern,
)

EVERY_CODE_POINT = range(sys.maxunicode + 1)
SURROGATE = range(0xD800, 0xE000)


def _noncharacter(code_point: int) -> bool:
    return 0xFDD0 <= code_point <= 0xFDEF or code_point & 0xFFFE == 0xFFFE


def _invisible_by_category(code_point: int) -> bool:
    """What the table says, from the running Python's Unicode data: separators, controls, format, surrogates
    and private use (every category Z and C but unassigned), the blank letters, the noncharacters."""
    category = unicodedata.category(chr(code_point))
    return (category[0] in "ZC" and category != "Cn") or chr(code_point) in BLANK_LETTERS or _noncharacter(code_point)


def test_the_table_is_the_characters_that_draw_nothing_in_unicode_14() -> None:
    table = {code_point for start, end in INVISIBLE for code_point in range(start, end + 1)}
    if unicodedata.unidata_version == "14.0.0":  # Python 3.11, the Dockerfile's: the table's own version
        assert table == {cp for cp in EVERY_CODE_POINT if _invisible_by_category(cp)}
    else:  # a later Unicode assigns more format characters; none of the table's may change category
        assert table <= {cp for cp in EVERY_CODE_POINT if _invisible_by_category(cp)}
    assert {cp for cp in EVERY_CODE_POINT if draws_nothing(chr(cp))} == table


def test_nfkc_makes_at_most_nfkc_max_growth_code_points_of_one() -> None:
    growth = max(len(unicodedata.normalize("NFKC", chr(cp))) for cp in EVERY_CODE_POINT if cp not in SURROGATE)
    assert growth == NFKC_MAX_GROWTH
    assert len(unicodedata.normalize("NFKC", "\ufdfa")) == NFKC_MAX_GROWTH  # ﷺ
    assert unicodedata.normalize("NFKC", "㍿") == "株式会社"


def test_a_character_that_draws_something_still_does_once_the_game_normalises_it() -> None:
    """So a text the schema lets through (one such character at least) never becomes blank in the game."""
    blanked = [
        hex(cp)
        for cp in EVERY_CODE_POINT
        if cp not in SURROGATE and not draws_nothing(chr(cp)) and not draws_something(normalise_whisper(chr(cp)))
    ]
    assert blanked == []


def _follows_the_rule(text: str, *, one_line: bool = False) -> bool:
    breaks = one_line and ("\n" in text or "\r" in text)
    return CONTROL_CHARACTERS.search(text) is None and not breaks and draws_something(text)


RustChecked = TypeAdapter(Annotated[str, Field(pattern=TEXT_PATTERN)])  # pydantic's default engine: Rust regex
# Python's `re` reads a closing `$` as "the end, or before a final line feed"; JSON Schema (ECMA-262) and Rust
# read it as the end. A Python reader of the pattern uses `fullmatch` (schemathesis writes `\Z` for it).
PYTHON = re.compile(TEXT_PATTERN)
ONE_LINE = re.compile(ONE_LINE_PATTERN)
SAMPLES = [
    "a",
    " a ",
    "谁",
    "\U00067ed2",  # unassigned in Unicode 14: drawn as a replacement glyph, so it counts
    "ﷺ",
    "\ufeff\u200b\u2800x",
    "",
    " \t\n",
    "\u200b\u2800\u3164",
    "\U000e0041\U000e0020",  # tag characters
    "\U000f0000",  # private use, plane 15
    "\ufffe",
    "a\x00",
    "a\x85b",  # a C1 control
    "line one\nline two",
]


@pytest.mark.parametrize("text", SAMPLES, ids=repr)
def test_the_pattern_is_the_rule_on_chosen_texts(text: str) -> None:
    expected = _follows_the_rule(text)
    assert (PYTHON.fullmatch(text) is not None) == expected
    try:
        RustChecked.validate_python(text)
        assert expected
    except ValidationError:
        assert not expected


@settings(max_examples=500, deadline=None)
@given(st.text(max_size=12))
def test_the_pattern_is_the_rule_on_any_text(text: str) -> None:
    expected = _follows_the_rule(text)
    assert (PYTHON.fullmatch(text) is not None) == expected
    assert (ONE_LINE.fullmatch(text) is not None) == _follows_the_rule(text, one_line=True)
    try:
        RustChecked.validate_python(text)
        assert expected
    except ValidationError:
        assert not expected


def test_a_one_line_text_holds_no_line_break() -> None:
    assert ONE_LINE.fullmatch("The grey van left the harbour.\t") is not None
    one_line = TypeAdapter(Annotated[str, Field(pattern=ONE_LINE_PATTERN)])
    for broken in ("The grey van left.\nThe harbour was empty.", "two\rlines", "trailing\n"):
        assert ONE_LINE.fullmatch(broken) is None
        with pytest.raises(ValidationError):  # as the server reads it
            one_line.validate_python(broken)


def test_words_are_taken_in_any_letter_case_and_nothing_else() -> None:
    pattern = re.compile(words_pattern(("en", "english", "中文")))
    assert [bool(pattern.search(t)) for t in ("en", "EN", "English", "中文")] == [True] * 4
    assert [bool(pattern.search(t)) for t in ("klingon", " en", "en ", "englishx", "")] == [False] * 5
