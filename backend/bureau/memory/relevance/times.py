"""Clock times and calendar dates a text states, in English and Chinese, normalised so two texts can be
compared: a question about "10 pm" / 晚上十点 against a card about "9 pm" / 九点 names another time, a
contradiction of the coverage rule (memory/relevance/coverage.py), like another weekday or another door.

Only explicit times count (a number with am/pm, o'clock or a clock colon; a number with 点/点钟; a month
with a day). A number alone ("at 10") is not read as a time.
"""

from __future__ import annotations

import re

_ZH_DIGITS = dict(zip("零〇一二两三四五六七八九", (0, 0, 1, 2, 2, 3, 4, 5, 6, 7, 8, 9), strict=True))
_ZH_NUMBER = r"[0-9]+|[零〇一二两三四五六七八九十]+"

_EN_CLOCK = re.compile(r"\b(\d{1,2})(?:[:.](\d{2}))?\s*(a\.?m\.?|p\.?m\.?|o'clock|o’clock)(?![a-z])", re.IGNORECASE)
_EN_COLON = re.compile(r"\b(\d{1,2}):(\d{2})\b")
_ZH_CLOCK = re.compile(rf"(上午|下午|晚上|早上|中午|凌晨|夜里|傍晚)?({_ZH_NUMBER})点(?:钟)?(半|({_ZH_NUMBER})分)?")
_EN_MONTHS = tuple(
    "january february march april may june july august september october november december".split()  # noqa: SIM905
)
_EN_DATE = re.compile(
    r"\b("
    + "|".join(_EN_MONTHS)
    + r")\s+(\d{1,2})(?:st|nd|rd|th)?\b|\b(\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?("
    + "|".join(_EN_MONTHS)
    + r")\b",
    re.IGNORECASE,
)
_ZH_DATE = re.compile(rf"({_ZH_NUMBER})月({_ZH_NUMBER})[日号]")


def zh_number(text: str) -> int | None:
    """A number in digits or in Chinese numerals up to 99 (十, 二十, 二十三, 两)."""
    if text.isdigit():
        return int(text)
    if "十" in text:
        tens, _, units = text.partition("十")
        high = _ZH_DIGITS.get(tens, -1) if tens else 1
        low = _ZH_DIGITS.get(units, -1) if units else 0
        return None if high < 0 or low < 0 else high * 10 + low
    if len(text) == 1 and text in _ZH_DIGITS:
        return _ZH_DIGITS[text]
    return None


def _dial(hour: int, minute: int) -> str:
    """The position on a 12-hour dial: 9 pm, 21:00 and 晚上九点 are one time (am/pm is left to the words)."""
    return f"h{hour % 12}:{minute:02d}"


def clock_times(text: str) -> frozenset[str]:
    """The clock times a text states, each as a 12-hour dial position (`h9:30`): "9:30 pm", 晚上九点半 and
    "21:30" all read `h9:30`, so a card and a question that say one time differently still agree."""
    found: set[str] = set()
    for match in _EN_CLOCK.finditer(text):
        found.add(_dial(int(match.group(1)), int(match.group(2) or 0)))
    for match in _EN_COLON.finditer(text):
        found.add(_dial(int(match.group(1)), int(match.group(2))))
    for match in _ZH_CLOCK.finditer(text):
        hour = zh_number(match.group(2))
        if hour is None or hour > 24:
            continue
        minute = 30 if match.group(3) == "半" else zh_number(match.group(4) or "0") or 0
        found.add(_dial(hour, minute))
    return frozenset(found)


def dates(text: str) -> frozenset[str]:
    """Calendar dates a text states (`M/D`): "March 3", "3rd of March", 三月三日, 3月3号."""
    found: set[str] = set()
    for match in _EN_DATE.finditer(text):
        name = (match.group(1) or match.group(4)).casefold()
        found.add(f"{_EN_MONTHS.index(name) + 1}/{int(match.group(2) or match.group(3))}")
    for match in _ZH_DATE.finditer(text):
        month, day = zh_number(match.group(1)), zh_number(match.group(2))
        if month and day:
            found.add(f"{month}/{day}")
    return frozenset(found)


def another_time(question: str, card: str) -> bool:
    """The question states a clock time or date, the card states one of the same sort, and none agree."""
    for read in (clock_times, dates):
        asked, stated = read(question), read(card)
        if asked and stated and not asked & stated:
            return True
    return False


def time_phrases(text: str) -> dict[str, str]:
    """Each explicit clock time or date the text states, as it says it, with its normalised reading
    (`clock:h9:30`, `date:3/3`): what a contradiction names."""
    found: dict[str, str] = {}
    for pattern in (_EN_CLOCK, _EN_COLON, _ZH_CLOCK):
        for match in pattern.finditer(text):
            for value in clock_times(match.group(0)):
                found.setdefault(match.group(0).strip(), f"clock:{value}")
    for pattern in (_EN_DATE, _ZH_DATE):
        for match in pattern.finditer(text):
            for value in dates(match.group(0)):
                found.setdefault(match.group(0).strip(), f"date:{value}")
    return found
