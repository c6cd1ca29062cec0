"""The words of the coverage rule (coverage.py): the word lists, an English word's forms (lemma and stem), what a
card says, and the two ways a question word meets a card: matched (`hard_match`) or contradicted by another
member of its kind (`contradicted`)."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources

import yaml

from bureau.memory.relevance.language import CJK, stemmer
from bureau.memory.relevance.times import time_phrases

_LATIN = re.compile(r"[A-Za-z0-9]+")
POSSESSIVE = re.compile(r"['’]s$")


@dataclass(frozen=True, slots=True)
class Lists:
    common: frozenset[str]
    attributes: Mapping[str, str]  # attribute noun -> kind
    equivalents: Mapping[str, frozenset[str]]  # word -> its group (itself included)
    kinds: Mapping[str, frozenset[str]]  # word -> the other members of every kind it belongs to
    kind_phrases: frozenset[str]  # Chinese members of two characters or more, found in a question's text
    persons: frozenset[str]  # words that name a person (a card saying one answers "who")
    kind_names: Mapping[str, frozenset[str]]  # a kind's name -> its members ("vehicle" -> van, car, …)


@cache
def lists() -> Lists:
    raw = yaml.safe_load(resources.files("bureau.memory").joinpath("data/coverage_words.yaml").read_text("utf-8"))
    common = frozenset(" ".join(raw["common"].values()).split())
    attributes = {str(w): kind for kind, words in raw["attributes"].items() for w in words}
    equivalents: dict[str, frozenset[str]] = {}
    for group in raw["equivalents"]:
        members = frozenset(str(w).casefold() for w in group)
        for w in members:
            equivalents[w] = equivalents.get(w, frozenset()) | members
    kinds: dict[str, frozenset[str]] = {}
    by_kind: dict[str, frozenset[str]] = {}
    for kind in {*raw["kinds"], *raw["more_kinds"]}:
        words = [*raw["kinds"].get(kind, ()), *raw["more_kinds"].get(kind, ())]
        members = frozenset(str(w).casefold() for w in words)
        by_kind[kind] = members
        for w in members:
            kinds[w] = kinds.get(w, frozenset()) | (members - {w})
    kind_names = {str(n).casefold(): by_kind[kind] for kind, names in raw["kind_names"].items() for n in names}
    phrases = frozenset(w for w in kinds if CJK.search(w) and len(w) > 1)
    persons = frozenset(" ".join(raw["persons"].values()).casefold().split())
    return Lists(common, attributes, equivalents, kinds, phrases, persons, kind_names)


@cache
def _lemmas(word: str) -> dict[str, tuple[str, ...]]:
    """lemminflect's lemmas of an English word by part of speech ({} for a word it does not know: a name)."""
    import lemminflect

    return {str(pos): tuple(str(x).casefold() for x in forms) for pos, forms in lemminflect.getAllLemmas(word).items()}


def lemma(word: str) -> str:
    """The word's lemma: as a verb when it can be one ("saw" -> "see"), else its first one."""
    found = _lemmas(word)
    for pos in ("VERB", "NOUN", "ADJ", "ADV", "AUX"):
        if pos in found:
            return found[pos][0]
    return word.casefold()


# Parts of speech that make a word the predicate (what is done or said of the thing), not the thing asked about.
_PREDICATE_EN = frozenset({"VERB", "ADJ", "ADV", "AUX"})
_PREDICATE_ZH = re.compile(r"^(?:v|vd|vg|vi|a|ad|d|f|t|q|p|c|u.*|y|zg|r|e|o)$")


def is_modifier(word: str, tag: str) -> bool:
    """An adverb: English words lemminflect knows only as adverbs, Chinese words rjieba tags `d`."""
    if CJK.search(word):
        return tag in ("d", "ad")
    found = set(_lemmas(word))
    return found == {"ADV"}


def is_predicate(word: str, tag: str = "") -> bool:
    """A verb, adjective or adverb (English: every part of speech lemminflect knows for it; Chinese: rjieba's
    tag). Nouns, names, numbers and unknown words are focus words."""
    if CJK.search(word):
        return bool(tag) and _PREDICATE_ZH.match(tag) is not None
    if word.isdigit():
        return False
    found = set(_lemmas(word))
    return bool(found) and found <= _PREDICATE_EN


@cache
def _stem(word: str) -> str:
    return str(stemmer().stemWord(word))


def _forms(word: str) -> set[str]:
    """The word, its lemma and its stem (English); a Chinese word as it is."""
    word = POSSESSIVE.sub("", word.casefold())
    if CJK.search(word):
        return {word}
    return {word, _stem(word), *(x for forms in _lemmas(word).values() for x in forms)}


@dataclass(frozen=True, slots=True)
class CardWords:
    """What the rule needs of a card, computed once per card (with its other features)."""

    text: str  # NFKC, casefolded
    forms: frozenset[str]  # every English word's forms
    chars: frozenset[str]  # Chinese characters
    times: frozenset[str] = frozenset()  # the clock times and dates it states, normalised (times.py)


def card_words(content: str) -> CardWords:
    text = unicodedata.normalize("NFKC", content).casefold()
    forms: set[str] = set()
    for word in _LATIN.findall(text):
        forms |= _forms(word)
    times = frozenset(time_phrases(text).values())
    return CardWords(text, frozenset(forms), frozenset(CJK.findall(text)), times)


def says(card: CardWords, word: str) -> bool:
    """The card says this word: any of its forms (English), or the word inside its text (Chinese)."""
    if CJK.search(word):
        return word in card.text
    return bool(_forms(word) & card.forms)


def hard_match(card: CardWords, word: str) -> bool:
    """Matched for `known`: the word, its lemma or stem, a listed equivalent, or all of a Chinese word's
    characters."""
    table = lists()
    group = table.equivalents.get(word.casefold(), frozenset()) | {word.casefold()}
    if any(says(card, w) for w in group):
        return True
    cjk = CJK.search(word) is not None
    members = table.kind_names.get(POSSESSIVE.sub("", word.casefold()), frozenset())
    if any((CJK.search(m) is not None) == cjk and says(card, m) for m in members):
        return True  # a kind's name, answered by a member of the kind ("what vehicle" by "a van")
    # A Chinese word is also matched by its characters (segmentation differs between texts), unless it is a
    # member of a kind: 周四 is not said by a card with 周五 and 四点, nor 前年 by 年底之前.
    chars = [c for c in CJK.findall(word) if c not in FUNCTION_CHARS]
    if word.casefold() in table.kinds:
        return False
    return len(chars) > 1 and all(c in card.chars for c in chars)


def contradicted(card: CardWords, word: str) -> bool:
    """The card holds another member of the word's kind, and not the word itself."""
    others = lists().kinds.get(POSSESSIVE.sub("", word.casefold()), frozenset())
    if not others and not CJK.search(word):
        others = lists().kinds.get(lemma(word), frozenset())
    # Only members in the question word's own script: 包 against an English card's "bag" is a translation.
    cjk = CJK.search(word) is not None
    others = frozenset(o for o in others if (CJK.search(o) is not None) == cjk)
    return bool(others) and not hard_match(card, word) and any(says(card, other) for other in others)


# Characters that carry grammar, not meaning: never required of a card.
FUNCTION_CHARS = frozenset("的了着过")
