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

from bureau.memory.relevance.answer_types import gives_type
from bureau.memory.relevance.language import CJK, CJK_RUN, PERSONAL_EN, PERSONAL_ZH, tag
from bureau.memory.relevance.times import time_phrases
from bureau.memory.relevance.words import (
    POSSESSIVE,
    CardWords,
    contradicted,
    hard_match,
    is_modifier,
    is_predicate,
    lemma,
    lists,
    says,
)
from bureau.scope.relevance import RULE_NAMES as RULE_SIGNALS

__all__ = ["RULE_SIGNALS", "Coverage", "cover", "question_words"]

# Single-word cosines (the encoder's) that count as a match in meaning: a predicate that close is matched
# for `known` ("turned" / "switched" off); any word that close anchors an `uncertain` answer (a translation,
# a synonym of the thing asked about). Chosen from word pairs written here (turned/switched 0.72, stole/bought
# 0.47) and the calibration half's cross-language questions (米娅/Mia 0.53, 撬棍/crowbar 0.48).
SOFT_MATCH = 0.6
SOFT_ANCHOR = 0.45


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
        key = POSSESSIVE.sub("", word.casefold())
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
        elif is_modifier(key, tags.get(word, tags.get(key, ""))):
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


def gives_attribute(card: CardWords, kind: str, persons: frozenset[str], asked: Sequence[str], content: str) -> bool:
    """The card answers an attribute named by a noun: a colour word, or a name (the ones the question says
    do not count). Other kinds are the answer types of `answer_types.gives_type`."""
    said = {POSSESSIVE.sub("", w.casefold()) for w in asked}
    if kind == "colour":
        colours = lists().kinds.get("red", frozenset()) | {"red"}
        rest = [w for w in colours - said if says(card, w)]
        return bool(rest) or _COLOURS.search(card.text) is not None
    if kind == "money":
        currency = lists().kind_names.get("money", frozenset())
        return _CURRENCY.search(card.text) is not None or any(says(card, w) for w in currency)
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
