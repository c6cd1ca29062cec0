"""What a text the operator writes may be, written once: how long (and how that is counted) and which
characters it may hold. The API's request schema states these rules (`maxLength`, `pattern`: a request that
breaks one is a 422 with the field's path), the game checks them again on every text it takes in, HTTP or
not, and the web reads the limits from the generated client (`web/src/api/rules.ts`, `make client`).

**Counting.** A limit counts the code points of the text as it arrives, before any normalising: what
JSON Schema's `maxLength` counts, and what the game counts too. The game stores the text normalised (NFKC,
controls and zero-width characters removed, whitespace collapsed, trimmed); that only shortens a text,
except where NFKC writes out a compatibility character ("㍿" is 4 characters, "ﷺ" 18), so a stored text
is at most `NFKC_MAX_GROWTH` times its limit.

**Characters.** A text holds no control character (C0 but tab, line feed and carriage return; DEL; C1),
and at least one character that draws something: one outside `INVISIBLE` (separators, controls, format
characters, surrogates, private use, noncharacters and the letters that draw nothing). The table is frozen
at Unicode 14.0 (Python 3.11's), so the rule and the OpenAPI document do not change with the Python that
runs them; a code point unassigned in 14.0 counts as drawing something (a replacement glyph). A lone
surrogate is no Unicode text at all: pydantic refuses it before any pattern (422 `string_unicode`).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterable

# -- limits, in code points of the text as sent -------------------------------------------------------
MAX_CARD_CHARS = 280  # a card's text: a whisper, a scenario card
SOURCE_MAX_CHARS = 80  # a whisper's optional source: who told it ("the night porter")
QUESTION_MAX_CHARS = 500  # an interrogation's or a cross-examination's question
CLAIM_MAX_CHARS = 240  # a finding's claim
SCENARIO_ID_MAX_CHARS = 64  # a scenario's id: its files' (game/scenario_schema.py) and a new case's request
CARD_ID_MAX_CHARS = 64  # a card id a request names (the store's ids are far shorter)
RECORD_PAGE_MAX, RECORD_PAGE_DEFAULT = 200, 50  # entries of a record page (the timeline asks for the default)
MAX_EVENT_ID = 2**62  # the largest event or record cursor a request may name: bigger would overflow the ledger
NFKC_MAX_GROWTH = 18  # the most code points NFKC makes of one (U+FDFA); a test measures it over all of Unicode

Ranges = tuple[tuple[int, int], ...]

# -- characters ---------------------------------------------------------------------------------------
# Control characters (Cc) but tab, line feed and carriage return: a text may not hold them; the game drops
# any that reach it by another way than HTTP.
CONTROLS: Ranges = ((0x00, 0x08), (0x0B, 0x0C), (0x0E, 0x1F), (0x7F, 0x9F))
LINE_BREAKS: Ranges = ((0x0A, 0x0A), (0x0D, 0x0D))  # and none of these in a one-line text (a claim)

_SEPARATORS: Ranges = (  # Zs, Zl, Zp, and the whitespace among the controls
    (0x09, 0x0D),
    (0x1C, 0x20),
    (0x85, 0x85),
    (0xA0, 0xA0),
    (0x1680, 0x1680),
    (0x2000, 0x200A),
    (0x2028, 0x2029),
    (0x202F, 0x202F),
    (0x205F, 0x205F),
    (0x3000, 0x3000),
)
_FORMAT: Ranges = (  # Cf in Unicode 14.0
    (0xAD, 0xAD),
    (0x600, 0x605),
    (0x61C, 0x61C),
    (0x6DD, 0x6DD),
    (0x70F, 0x70F),
    (0x890, 0x891),
    (0x8E2, 0x8E2),
    (0x180E, 0x180E),
    (0x200B, 0x200F),
    (0x202A, 0x202E),
    (0x2060, 0x2064),
    (0x2066, 0x206F),
    (0xFEFF, 0xFEFF),
    (0xFFF9, 0xFFFB),
    (0x110BD, 0x110BD),
    (0x110CD, 0x110CD),
    (0x13430, 0x13438),
    (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A),
    (0xE0001, 0xE0001),
    (0xE0020, 0xE007F),
)
# Letters by category that draw nothing: Hangul fillers, Khmer inherent vowels, Braille blank.
BLANK_LETTERS = "\u115f\u1160\u17b4\u17b5\u2800\u3164\uffa0"
SURROGATES: Ranges = ((0xD800, 0xDFFF),)
_PRIVATE_USE: Ranges = ((0xE000, 0xF8FF), (0xF0000, 0xFFFFD), (0x100000, 0x10FFFD))
_NONCHARACTERS: Ranges = (
    (0xFDD0, 0xFDEF),
    *((plane | 0xFFFE, plane | 0xFFFF) for plane in range(0, 0x110000, 0x10000)),  # the last two of each plane
)


def merged(*tables: Iterable[tuple[int, int]]) -> Ranges:
    """The code points of every table as sorted, disjoint ranges (adjacent ones joined)."""
    result: list[tuple[int, int]] = []
    for start, end in sorted(pair for table in tables for pair in table):
        if result and start <= result[-1][1] + 1:
            result[-1] = (result[-1][0], max(result[-1][1], end))
        else:
            result.append((start, end))
    return tuple(result)


INVISIBLE: Ranges = merged(
    CONTROLS,
    _SEPARATORS,
    _FORMAT,
    ((ord(char), ord(char)) for char in BLANK_LETTERS),
    SURROGATES,
    _PRIVATE_USE,
    _NONCHARACTERS,
)
_INVISIBLE_STARTS = [start for start, _ in INVISIBLE]


def draws_nothing(char: str) -> bool:
    """Whether a character is in `INVISIBLE`."""
    index = bisect_right(_INVISIBLE_STARTS, ord(char)) - 1
    return index >= 0 and ord(char) <= INVISIBLE[index][1]


def draws_something(text: str) -> bool:
    """Whether the text holds at least one character outside `INVISIBLE`."""
    return not all(map(draws_nothing, text))


# -- the rule as a regular expression ------------------------------------------------------------------
# For the request schema. Code points above U+FFFF are written \UXXXXXXXX, which Python's `re` (the fuzzer's
# generator) and Rust's `regex` (pydantic's validator, the fuzzer's checker) read; ECMA-262 would want \u{…}.
def _escape(code_point: int) -> str:
    return f"\\u{code_point:04x}" if code_point <= 0xFFFF else f"\\U{code_point:08x}"


def character_class(ranges: Ranges) -> str:
    """The inside of a regular-expression character class matching exactly these code points."""
    return "".join(_escape(a) if a == b else f"{_escape(a)}-{_escape(b)}" for a, b in ranges)


def _without(ranges: Ranges, gone: Ranges) -> Ranges:
    """`ranges` minus the code points of `gone` (here: the surrogates, which no regex engine in Rust takes)."""
    result: list[tuple[int, int]] = []
    for start, end in ranges:
        for cut_start, cut_end in gone:
            if start <= cut_end and cut_start <= end:
                if start < cut_start:
                    result.append((start, cut_start - 1))
                start = cut_end + 1
        if start <= end:
            result.append((start, end))
    return tuple(result)


def text_pattern(*, one_line: bool = False) -> str:
    """The whole text: no control character (nor a line break, for one line) anywhere, and at least one
    character that draws something."""
    forbidden = character_class(merged(CONTROLS, LINE_BREAKS if one_line else ()))
    visible = character_class(_without(INVISIBLE, SURROGATES))
    return f"^[^{forbidden}]*[^{visible}][^{forbidden}]*$"


TEXT_PATTERN = text_pattern()
ONE_LINE_PATTERN = text_pattern(one_line=True)
CONTROL_CHARACTERS = re.compile(f"[{character_class(CONTROLS)}]")  # what the game drops from a text


def words_pattern(words: Iterable[str]) -> str:
    """Exactly one of `words`, in any letter case (a JSON Schema pattern has no flags, so each cased letter
    becomes a class of both its cases)."""

    def any_case(word: str) -> str:
        return "".join(
            f"[{char.lower()}{char.upper()}]" if char.lower() != char.upper() else re.escape(char) for char in word
        )

    return "^(?:" + "|".join(any_case(word) for word in words) + ")$"
