"""The words of a text, English and Chinese: the helpers the relevance signals and the coverage rule share.

Scripts by regular expression, English stems by Snowball, Chinese words and their tags by rjieba, and the
word lists that are never content words (stop words) or that name a person (pronouns).
"""

from __future__ import annotations

import re
from functools import cache
from typing import Any

CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
CJK_RUN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
LATIN_WORD = re.compile(r"[A-Za-z0-9]+(?:['’][A-Za-z]+)?")
DIGITS = re.compile(r"[0-9]+")


def word_set(words: str) -> frozenset[str]:
    return frozenset(words.split())


# Function words: never content words, never names. English question and auxiliary words included.
STOP_EN = word_set(
    """a an the and or but if of to in on at by for from with about into onto over under after before
    since until than then so as is are was were be been being am do does did done doing have has had having
    will would shall should can could may might must i me my mine myself you your yours yourself he him his
    she her hers it its we us our they them their this that these those there here what which who whom
    whose when where why how any some anyone someone anything something every each all no not nor also
    too very just only own same other such again else ever s t don't didn't isn't wasn't aren't weren't
    doesn't haven't hasn't hadn't won't can't couldn't wouldn't shouldn't i'm you're he's she's it's
    we're they're i've you've we've they've i'll you'll what's who's where's how's let's up out off
    down still yet much many more most time"""
)
STOP_ZH = word_set(
    """的 了 是 在 吗 呢 吧 啊 呀 么 着 过 把 被 给 和 与 跟 及 或 都 也 就 还 又 要 会 能 可以 没 没有 不
    有 有没有 是不是 这 那 这个 那个 这些 那些 一个 个 我 你 他 她 它 我们 你们 他们 她们 自己 什么
    谁 哪 哪里 哪儿 哪个 哪些 哪天 几 多少 怎么 怎样 怎么样 为什么 如何 吗 嘛 呢 之 其 所 而 得 地 对
    从 向 到 于 让 叫 请 说 上 下 里 中 时候 几点 多少 多大 多长 多久 几次 几号 哪天 为何 哪家 哪位 哪种 哪样
    什么样 几时"""
)
CALENDAR = word_set(
    "monday tuesday wednesday thursday friday saturday sunday january february march april may june july "
    "august september october november december"
)

# Who a card names: rjieba's person-name tags, and the personal pronouns of a first- or third-person note.
PERSON_TAGS = frozenset({"nr", "nrt", "nrfg"})
PERSONAL_EN = word_set("i me my we us our he him his she her they them someone somebody")
PERSONAL_ZH = word_set("我 我们 你 你们 他 她 他们 她们 有人 别人")
YOU_EN = word_set("you your yours yourself")
FIRST_PERSON_EN = word_set("i me my we us our")
FIRST_PERSON_ZH = word_set("我 我们")


def question_language(text: str) -> str:
    """`zh` when the text contains Chinese characters, else `en`: the question's language, not the case's."""
    return "zh" if CJK.search(text) else "en"


@cache
def stemmer() -> Any:
    """The English Snowball stemmer (imported on first use: a start that never judges needs none)."""
    import snowballstemmer

    return snowballstemmer.stemmer("english")


def segment(run: str) -> list[str]:
    """rjieba's words of a run of Chinese characters."""
    import rjieba

    return [w for w in rjieba.cut(run) if w.strip()]


def tag(run: str) -> list[tuple[str, str]]:
    """rjieba's (word, part-of-speech tag) pairs of a run of Chinese characters."""
    import rjieba

    return [(w, t) for w, t in rjieba.tag(run) if w.strip()]
