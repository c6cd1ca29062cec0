"""What kind of answer a question asks for (a time, a number, a person, a place, a reason), and whether a
card gives one in words the question does not already say."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence

from bureau.memory.relevance.language import (
    CALENDAR,
    CJK,
    CJK_RUN,
    FIRST_PERSON_EN,
    FIRST_PERSON_ZH,
    LATIN_WORD,
    PERSON_TAGS,
    PERSONAL_EN,
    PERSONAL_ZH,
    STOP_EN,
    YOU_EN,
    tag,
)

_I = re.IGNORECASE
# What kind of answer a question asks for, and how a card that gives one reads (English | Chinese).
_ASKS: dict[str, re.Pattern[str]] = {
    "reason": re.compile(r"\bwhy\b|\bhow come\b|为什么|为何|怎么会", _I),
    "time": re.compile(
        r"\bwhen\b|\bwhat (?:time|hour|day|date)\b|\bwhich day\b|\bsince when\b|"
        r"什么时候|几点|哪天|几号|何时|星期几|周几",
        _I,
    ),
    "number": re.compile(
        r"\bhow (?:much|many|often|old|big|tall|long|far)\b|\bwhat (?:size|price)\b|"
        r"多少|多大|多长|多久|多高|几[个次位人岁块号颗条根名]",
        _I,
    ),
    "person": re.compile(r"\bwho(?:m|se)?\b|谁", _I),
    "place": re.compile(
        r"\bwhere\b|\bwhich (?:city|place|building|website|forum)\b|哪里|哪儿|在哪|什么地方|哪座城市", _I
    ),
}
_GIVES: dict[str, re.Pattern[str]] = {
    "reason": re.compile(r"\b(?:because|since|so that|in order to|due to)\b|因为|为了|由于|所以", _I),
    "time": re.compile(
        r"\d\s*(?:am|pm)\b|\d:\d\d|o'clock|\b(?:midnight|noon|morning|afternoon|evening|night|tonight|today|"
        r"yesterday|tomorrow|monday|tuesday|wednesday|thursday|friday|saturday|sunday|week|weekend|month|year|"
        r"january|february|march|april|may|june|july|august|september|october|november|december|ago|since|"
        r"before|after|until)\b|[点分月号年]|周[一二三四五六日天末]|[周天年月]前|星期|早上|上午|中午|下午|晚上|午夜|凌晨|昨天|今天|明天|"
        r"之前|以前|之后",
        _I,
    ),
    "number": re.compile(
        r"\d|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|forty|fifty|"
        r"hundred|thousand|once|twice|dozen|half)\b|[一二三四五六七八九十百千万两]",
        _I,
    ),
    "person": re.compile(
        r"\b(?:man|woman|porter|courier|driver|collector|brother|sister|cleaner|gardener|neighbour|neighbor|agent|"
        r"owner|buyer|handler|mother|father|friend|colleague|manager|guard|someone|somebody|mr|mrs|ms)\b|"
        r"员|先生|女士|探员|老板|司机|邻居|园丁|收藏家|哥哥|姐姐|弟弟|妹妹|锁匠|经理|同事|科长|有人|·",
        _I,
    ),
    "place": re.compile(
        r"\b(?:in|at|behind|near|outside|inside|under|beside|next to|across|on a|on the|holds|contains)\b|"
        r"在.{0,12}(?:里|上|外面|外|附近|后面|旁边|下)|到.{1,10}[去来]|[街路室库店厅场站港城楼窗]|"
        r"(?<=[\u4e00-\u9fff])(?:上|里|外面|附近|后面|旁边|下面)(?![线次周个月])"
    ),
}


# Chinese number characters that name no quantity: months (三月), weekdays (周四, 星期一) and the article
# 一 before a measure word (一条项链, "a necklace"). A "how much / how many" question needs a real number.
_NOT_A_NUMBER = re.compile(
    r"[一二三四五六七八九十]+月|(?:周|星期|礼拜)[一二三四五六日天]|一(?=[个条部辆把份位张只件家座本台间])"
)


def answer_types(question: str) -> frozenset[str]:
    return frozenset(kind for kind, pattern in _ASKS.items() if pattern.search(question))


def persons(text: str) -> frozenset[str]:
    """The card's words that name a person: capitalised English names, personal pronouns, and Chinese words
    rjieba tags as person names. Computed once per card (part of its features)."""
    found = {
        w.casefold()
        for w in LATIN_WORD.findall(text)
        if w.casefold() in PERSONAL_EN
        or (w[0].isupper() and w.casefold() not in STOP_EN and w.casefold() not in CALENDAR)
    }
    for run in CJK_RUN.findall(text):
        found.update(w for w, t in tag(run) if t in PERSON_TAGS or w in PERSONAL_ZH)
    return frozenset(found)


def _without(card: str, words: Iterable[str]) -> str:
    """The card with the question's own content words blanked out: a number or name the question already
    says ("What is the code of locker 42?") is no answer to it."""
    out = card
    for word in sorted(words, key=len, reverse=True):
        if CJK.search(word):
            out = out.replace(word, " ")
        else:
            out = re.sub(rf"(?<![\w']){re.escape(word)}(?![\w'])", " ", out, flags=re.IGNORECASE)
    return out


def gives_type(card: str, kind: str, persons: frozenset[str], asked: Sequence[str]) -> bool:
    """Whether the card reads like an answer of this kind (a time, a number, a person, a place, a reason)
    beyond what the question itself says (`asked`: its content words, and the card's "I" for a "you")."""
    rest = _without(unicodedata.normalize("NFKC", card), asked)
    if kind == "number":
        rest = _NOT_A_NUMBER.sub(" ", rest)
    if _GIVES[kind].search(rest) is not None:
        return True
    return kind == "person" and bool(persons - {w.casefold() for w in asked})


def addressed(question: str) -> frozenset[str]:
    """The card's first person when the question says "you": asked of the suspect, "Who will pay you back
    for the cake?" is not answered by the "I" of "I paid 35 euros for the cake"."""
    words = {w.casefold() for w in LATIN_WORD.findall(question)}
    found: set[str] = set()
    if words & YOU_EN:
        found |= FIRST_PERSON_EN
    if "你" in question:
        found |= FIRST_PERSON_ZH
    return frozenset(found)
