"""The coverage rule: a card is `known` only when it covers what the question is about (docs/retrieval.md).

Whatever the relevance model says, a candidate is `known` only when

- every **focus word** of the question (its nouns, names and numbers, less the common words and the attribute
  nouns) is matched in the card by the word itself, its lemma (`lemminflect`) or Snowball stem, a listed
  equivalent, a listed kind name answered by a member of the kind, or, for a Chinese word, its characters;
  its **predicates** (verbs, adjectives: lemminflect's parts of speech, rjieba's tags) the same way or in
  meaning (the encoder's single-word cosine ≥ `SOFT_MATCH`);
- the **attribute** asked for (who / when / how many / where / why, a colour, a name) is answered by a phrase
  of that type in the card, beyond what the question already says;
- nothing in the question **contradicts** the card: a question word whose card holds a *different* member of
  the same kind (another door, another allergen, another weekday) and not the word itself.

Otherwise it is `uncertain` at best; and `uncertain` needs at least one focus word matched, literally or
softly (single-word cosine ≥ `SOFT_ANCHOR`, or half a Chinese word's characters). A card that shares only a
common word ("that night") is plain `unknown`.

The outcome travels as four 0/1 rule signals (`RULE_SIGNALS`, shown in the X-ray, never fitted on) read by
`scope.relevance`, plus the question words the card does not cover (`Coverage.gaps`: question text, for the
answer and the sealed record, never for a content-free summary). The word lists are data
(`memory/data/coverage_words.yaml`), with their source written there.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from importlib import resources

import yaml

from bureau.memory.relevance.answer_types import gives_type
from bureau.memory.relevance.language import CJK, CJK_RUN, PERSONAL_EN, PERSONAL_ZH, stemmer, tag
from bureau.memory.relevance.times import time_phrases
from bureau.scope.relevance import RULE_NAMES as RULE_SIGNALS

__all__ = ["RULE_SIGNALS", "Coverage", "card_words", "cover", "question_words"]

# Single-word cosines (the encoder's) that count as a match in meaning: a predicate that close is matched
# for `known` ("turned" / "switched" off); any word that close anchors an `uncertain` answer (a translation,
# a synonym of the thing asked about). Chosen from word pairs written here (turned/switched 0.72, stole/bought
# 0.47) and the calibration half's cross-language questions (米娅/Mia 0.53, 撬棍/crowbar 0.48).
SOFT_MATCH = 0.6
SOFT_ANCHOR = 0.45

_LATIN = re.compile(r"[A-Za-z0-9]+")
_POSSESSIVE = re.compile(r"['’]s$")


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


def _modifier(word: str, tag: str) -> bool:
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
    word = _POSSESSIVE.sub("", word.casefold())
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


def _says(card: CardWords, word: str) -> bool:
    """The card says this word: any of its forms (English), or the word inside its text (Chinese)."""
    if CJK.search(word):
        return word in card.text
    return bool(_forms(word) & card.forms)


def hard_match(card: CardWords, word: str) -> bool:
    """Matched for `known`: the word, its lemma or stem, a listed equivalent, or all of a Chinese word's
    characters."""
    table = lists()
    group = table.equivalents.get(word.casefold(), frozenset()) | {word.casefold()}
    if any(_says(card, w) for w in group):
        return True
    cjk = CJK.search(word) is not None
    members = table.kind_names.get(_POSSESSIVE.sub("", word.casefold()), frozenset())
    if any((CJK.search(m) is not None) == cjk and _says(card, m) for m in members):
        return True  # a kind's name, answered by a member of the kind ("what vehicle" by "a van")
    # A Chinese word is also matched by its characters (segmentation differs between texts), unless it is a
    # member of a kind: 周四 is not said by a card with 周五 and 四点, nor 前年 by 年底之前.
    chars = [c for c in CJK.findall(word) if c not in _FUNCTION_CHARS]
    if word.casefold() in table.kinds:
        return False
    return len(chars) > 1 and all(c in card.chars for c in chars)


def contradicted(card: CardWords, word: str) -> bool:
    """The card holds another member of the word's kind, and not the word itself."""
    others = lists().kinds.get(_POSSESSIVE.sub("", word.casefold()), frozenset())
    if not others and not CJK.search(word):
        others = lists().kinds.get(lemma(word), frozenset())
    # Only members in the question word's own script: 包 against an English card's "bag" is a translation.
    cjk = CJK.search(word) is not None
    others = frozenset(o for o in others if (CJK.search(o) is not None) == cjk)
    return bool(others) and not hard_match(card, word) and any(_says(card, other) for other in others)


@dataclass(frozen=True, slots=True)
class Coverage:
    focus: tuple[str, ...]  # the things asked about (nouns, names, numbers): a literal match for `known`
    predicates: tuple[str, ...]  # verbs, adjectives, adverbs: a match in meaning is enough
    matched: tuple[str, ...]  # literal (word, lemma, stem, equivalent, characters)
    soft: tuple[str, ...]  # in meaning only (single-word cosine >= SOFT_ANCHOR, half a Chinese word's characters)
    close: tuple[str, ...]  # the soft ones with a cosine >= SOFT_MATCH (enough for a predicate)
    contradicted: tuple[str, ...]
    attributes_missing: tuple[str, ...]  # attribute kinds asked and not answered
    choices: tuple[frozenset[str], ...] = ()  # alternatives the question offers ("east or west"): one is enough

    @property
    def gaps(self) -> tuple[str, ...]:
        """What the question asked that the card does not say at all (not even softly), or contradicts: words,
        then attribute kinds (`kind:time`)."""
        said = set(self.matched) | set(self.soft)
        missing = [w for w in (*self.focus, *self.predicates) if w not in said]
        return (*dict.fromkeys(missing), *(f"kind:{kind}" for kind in self.attributes_missing))

    def signals(self) -> dict[str, float]:
        matched, soft = set(self.matched), set(self.soft)
        # An alternative the card does not say is not missing when another of its choice is said.
        chosen = {w for group in self.choices if group & matched for w in group}
        focus_missing = any(w not in matched | chosen for w in self.focus) or any(
            w not in matched | set(self.close) | chosen for w in self.predicates
        )
        anchors = self.focus or self.predicates  # a question without a noun is anchored by its predicate
        return {
            "rule_focus_missing": float(focus_missing),
            "rule_attribute_missing": float(bool(self.attributes_missing)),
            "rule_contradiction": float(bool(self.contradicted)),
            "rule_no_focus": float(not any(w in matched | soft for w in anchors)),
        }


@dataclass(frozen=True, slots=True)
class QuestionWords:
    focus: tuple[str, ...]
    predicates: tuple[str, ...]
    common: tuple[str, ...]  # common words of the question (kind checks only)
    attributes: frozenset[str]  # attribute kinds named by a noun (colour, name, …)
    times: Mapping[str, str] = field(default_factory=dict)  # clock times and dates said -> normalised
    choices: tuple[frozenset[str], ...] = ()  # the two sides of "X or Y" / X还是Y


def another_time(question: QuestionWords, card: CardWords) -> tuple[str, ...]:
    """The question's clock times (or dates) when the card states some of the same sort and none agrees."""
    found: list[str] = []
    for sort in ("clock:", "date:"):
        asked = {said: v for said, v in question.times.items() if v.startswith(sort)}
        stated = {v for v in card.times if v.startswith(sort)}
        if asked and stated and not set(asked.values()) & stated:
            found += asked
    return tuple(found)


def _tags(text: str) -> dict[str, str]:
    return {w: t for run in CJK_RUN.findall(text) for w, t in tag(run)}


def question_words(words: Sequence[str], text: str, *, statement: bool = False) -> QuestionWords:
    """Split the question's content words into focus words, predicates, common words and attribute nouns. A
    `statement` names no attribute it asks for: its nouns are all focus words."""
    table = lists()
    norm = unicodedata.normalize("NFKC", text)
    tags = _tags(norm) if CJK.search(norm) else {}
    attributes = {kind for noun, kind in table.attributes.items() if CJK.search(noun) and noun in norm}
    focus, predicates, common = [], [], []
    for word in words:
        key = _POSSESSIVE.sub("", word.casefold())
        if CJK.search(key):
            if _DEMONSTRATIVE.fullmatch(key):
                continue
            key = _PARTICLE_TAIL.sub("", key) if len(key) > 1 else key
            key = _FUNCTION_HEAD.sub("", key) if len(key) > 1 else key
            if not key:
                continue
        if key == "还" and "还是" in norm:
            continue  # the choice's marker (X还是Y), cut in two by segmentation
        if key in table.attributes:
            attributes.add(table.attributes[key])
        elif _ASKS_NUMBER.match(key):
            attributes.add("number")  # 几个, 多大码: the question's own "how many"
        elif _modifier(key, tags.get(word, tags.get(key, ""))):
            continue  # an adverb qualifies the predicate; it is not what the question is about
        elif key in table.common or lemma(key) in table.common:
            common.append(key)
        elif any(noun in key or key in noun for noun in table.attributes if CJK.search(noun) and noun in norm):
            continue  # part of an attribute phrase the question says (钱 of 多少钱)
        elif is_predicate(key, tags.get(word, tags.get(key, ""))) and key not in table.kinds:
            predicates.append(key)
        else:
            focus.append(key)
    # Chinese members of a kind as the question's text says them (segmentation may split 后门 into 后 + 门锁).
    said = [p for p in table.kind_phrases if p in norm and p not in focus]
    titles = {m.group(1).casefold() for m in _TITLE.finditer(norm) if m.group(1).casefold() in table.persons}
    asked_how = {m.group(1).casefold() for m in _HOW.finditer(norm)}
    focus = [w for w in focus if w not in titles and w not in asked_how]
    return QuestionWords(
        tuple(dict.fromkeys(focus)),
        tuple(dict.fromkeys(predicates)),
        (*common, *said, *titles),
        frozenset() if statement else frozenset(attributes),
        time_phrases(norm.casefold()),
        _choices(norm, [*focus, *predicates]),
    )


# "Agent Park", "Officer Reyes": a person noun before a name is the name's title, not a thing asked about.
_TITLE = re.compile(r"\b([A-Za-z]+)(?=\s+[A-Z][a-z]+)")
# "how long", "how far", "how old": the word after "how" is the question's own phrase (its attribute).
_HOW = re.compile(r"\bhow\s+([a-z]+)", re.IGNORECASE)
_CHOICE = re.compile(r"\s+or\s+|还是")


def _choices(text: str, words: Sequence[str]) -> tuple[frozenset[str], ...]:
    """The words on the two sides of each "or" / 还是: the question offers them as alternatives."""
    groups = []
    lowered = text.casefold()
    for match in _CHOICE.finditer(lowered):
        before, after = lowered[: match.start()], lowered[match.end() :]
        left = [w for w in words if before.endswith(w) or before.rstrip("?？ ").endswith(w)]
        right = [w for w in words if after.startswith(w)]
        if left and right:
            groups.append(frozenset({max(left, key=len), max(right, key=len)}))
    return tuple(groups)


_CURRENCY = re.compile(r"[$€£¥]\s*\d|\d\s*[元块]")
_AGE = re.compile(r"\d+\s*(?:years?\s+old|-year-old)|\baged?\s+\d+|[0-9零一二两三四五六七八九十]+岁")
_COLOURS = re.compile(r"[红蓝绿黄黑白灰棕紫橙粉银金]色")
_ASKS_NUMBER = re.compile(r"^(?:几|多[少大长久高远重])")
_DEMONSTRATIVE = re.compile(r"[这那哪每][辆个位家条次只张件本台间座把份种样些天]")
# Function characters segmentation glues onto a content word (约纳斯能 "Jonas can", 由谁来 "by whom", 谁的车
# "whose car"): the word is what remains; a word that was only function characters is none.
_PARTICLE_TAIL = re.compile(r"[是的了着过在把被给能吗呢吧]+$")
_FUNCTION_HEAD = re.compile(r"^(?:[由被把给]|[谁哪][的]?)+")
_FUNCTION_CHARS = frozenset("的了着过")


def gives_attribute(card: CardWords, kind: str, persons: frozenset[str], asked: Sequence[str], content: str) -> bool:
    """The card answers an attribute named by a noun: a colour word, or a name (the ones the question says
    do not count). Other kinds are the answer types of `answer_types.gives_type`."""
    said = {_POSSESSIVE.sub("", w.casefold()) for w in asked}
    if kind == "colour":
        colours = lists().kinds.get("red", frozenset()) | {"red"}
        rest = [w for w in colours - said if _says(card, w)]
        return bool(rest) or _COLOURS.search(card.text) is not None
    if kind == "money":
        currency = lists().kind_names.get("money", frozenset())
        return _CURRENCY.search(card.text) is not None or any(_says(card, w) for w in currency)
    if kind == "age":
        return _AGE.search(card.text) is not None
    if kind == "name":
        names = {p for p in persons if p not in said and p not in PERSONAL_EN | PERSONAL_ZH}
        return bool(names)
    if kind == "person" and _names_a_person(card, said):
        return True
    return gives_type(content, kind, persons, asked)


def _names_a_person(card: CardWords, said: set[str]) -> bool:
    """The card says a word that names a person (a plumber, 水管工), one the question does not say itself."""
    return any(word in card.text if CJK.search(word) else word in card.forms for word in lists().persons - said)


def cover(
    question: QuestionWords,
    asks: frozenset[str],
    asked: Sequence[str],
    card: CardWords,
    content: str,
    persons: frozenset[str],
    soft_scores: Mapping[str, float],
) -> Coverage:
    """The rule on one (question, card) pair. `asks`: the question's answer types; `asked`: its content words
    (a number or name the question says is no answer to it); `soft_scores`: best single-word cosine per
    question word."""
    matched, soft, close, against = [], [], [], []
    for word in (*question.focus, *question.predicates):
        if contradicted(card, word):
            against.append(word)
        elif hard_match(card, word):
            matched.append(word)
        elif soft_scores.get(word, 0.0) >= SOFT_ANCHOR or _half_chars(card, word):
            soft.append(word)
            if soft_scores.get(word, 0.0) >= SOFT_MATCH:
                close.append(word)
    against += [w for w in question.common if contradicted(card, w)]
    against += another_time(question, card)
    # "Was the van blue or green?" against a blue van: the other side of a choice is no contradiction.
    offered = {w for group in question.choices if group & set(matched) for w in group}
    against = [w for w in against if w not in offered]
    missing = [k for k in sorted(question.attributes) if not gives_attribute(card, k, persons, asked, content)]
    if asks and not any(gives_attribute(card, k, persons, asked, content) for k in sorted(asks)):
        missing += sorted(asks - question.attributes)
    return Coverage(
        question.focus,
        question.predicates,
        tuple(matched),
        tuple(soft),
        tuple(close),
        tuple(dict.fromkeys(against)),
        tuple(dict.fromkeys(missing)),
        question.choices,
    )


def _half_chars(card: CardWords, word: str) -> bool:
    if word.casefold() in lists().kinds:
        return False  # a member of a kind is said or not: 去年 is not half of 年底
    chars = CJK.findall(word)
    return bool(chars) and 2 * sum(c in card.chars for c in chars) >= len(chars)
