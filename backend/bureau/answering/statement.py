"""Does the sentence say what the server decided? The grounding check (`grounding.py`) stops invented names and
numbers; this one stops the opposite failure, a sentence that leaves the fact out or denies it:

- **known**: the answer states the cited fact, meaning it contains the fact's *key*, and negates nothing the
  fact does not. The key is the fact's numbers, codes, proper names and quoted names that the question does
  not already contain; a fact with none of these (e.g. "The safe is hidden behind the oil painting") is keyed
  by its content words not in the question ("behind", "oil", "painting", "study"), one of which must appear.
  A spoken "no idea" on a known answer is therefore a fallback (`fact_not_stated`), never a success.
- **uncertain**: the answer hedges ("might", "not sure", 也许…).
- **unknown**: the answer says it does not know (a negation: "no", "don't", 不知道…).

Pure functions, no I/O; the result only rejects an answer and is never logged with its content.
"""

from __future__ import annotations

import re
from collections import Counter

from bureau.answering.grounding import extract_claims, normalise
from bureau.scope.vocabulary import Certainty

_WORD = re.compile(r"[a-z]+(?:['’][a-z]+)?")
# Small English stop list: words that carry no fact of the case.
_STOP = frozenset(
    [
        "a",
        "an",
        "the",
        "and",
        "or",
        "but",
        "of",
        "in",
        "on",
        "at",
        "to",
        "for",
        "from",
        "by",
        "with",
        "into",
        "onto",
        "over",
        "under",
        "about",
        "as",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "being",
        "am",
        "it",
        "its",
        "this",
        "that",
        "these",
        "those",
        "there",
        "here",
        "i",
        "me",
        "my",
        "you",
        "your",
        "he",
        "him",
        "his",
        "she",
        "her",
        "we",
        "our",
        "they",
        "them",
        "their",
        "what",
        "which",
        "who",
        "whom",
        "whose",
        "when",
        "where",
        "why",
        "how",
        "do",
        "does",
        "did",
        "done",
        "have",
        "has",
        "had",
        "having",
        "will",
        "would",
        "shall",
        "should",
        "can",
        "could",
        "may",
        "might",
        "must",
        "just",
        "so",
        "very",
        "too",
        "also",
        "then",
        "than",
        "up",
        "down",
        "out",
        "off",
        "all",
        "any",
        "some",
        "each",
        "every",
        "both",
        "only",
        "own",
        "same",
        "such",
        "more",
        "most",
        "other",
        "again",
        "once",
        "said",
        "says",
        "say",
        "tell",
        "told",
        "know",
        "knew",
        "known",
    ]
)
_NEGATIONS_EN = frozenset(
    [
        "no",
        "not",
        "never",
        "nothing",
        "nobody",
        "none",
        "neither",
        "nor",
        "cannot",
        "can't",
        "don't",
        "doesn't",
        "didn't",
        "isn't",
        "wasn't",
        "aren't",
        "weren't",
        "won't",
        "wouldn't",
        "haven't",
        "hasn't",
        "hadn't",
        "couldn't",
        "shouldn't",
        "unknown",
        "unsure",
    ]
)
_NEGATIONS_ZH = ("不知道", "不清楚", "不记得", "不确定", "没有", "不是", "不会", "不能", "无法", "并非", "没", "未")
_HEDGES_EN = frozenset(
    [
        "might",
        "maybe",
        "perhaps",
        "possibly",
        "probably",
        "may",
        "could",
        "unsure",
        "uncertain",
        "guess",
        "think",
        "suppose",
        "seems",
        "rumour",
        "rumor",
        "not",
    ]
)
# What an unsure or unknown answer may say besides the question's and the lead's own words.
_NOT_KNOWING_EN = frozenset(
    [
        "answer",
        "question",
        "idea",
        "clue",
        "sure",
        "certain",
        "certainly",
        "memory",
        "memories",
        "evidence",
        "information",
        "info",
        "anything",
        "something",
        "nothing",
        "knowledge",
        "aware",
        "heard",
        "hear",
        "seen",
        "see",
        "recall",
        "remember",
        "afraid",
        "sorry",
        "mind",
        "head",
        "file",
        "files",
        "record",
        "records",
        "note",
        "notes",
        "case",
        "lead",
        "leads",
        "maybe",
        "perhaps",
        "possibly",
        "probably",
        "might",
        "guess",
        "think",
        "suppose",
        "seem",
        "seems",
        "unsure",
        "uncertain",
        "unknown",
        "rumour",
        "rumor",
        "word",
        "words",
        "help",
        "can't",
        "cannot",
        "couldn't",
        "don't",
        "doesn't",
        "didn't",
        "isn't",
        "wasn't",
        "won't",
        "not",
        "never",
        "yet",
        "right",
        "now",
        "honestly",
        "really",
        "quite",
        "exactly",
        "detective",
        "informant",
        "suspect",
        "chief",
        "bureau",
        "board",
        "bulletin",
    ]
)
_HEDGES_ZH = ("可能", "也许", "或许", "大概", "好像", "似乎", "不确定", "不太确定", "说不准", "不一定")


def _words(text: str) -> list[str]:
    return _WORD.findall(normalise(text).casefold().replace("’", "'"))


def _stem(word: str) -> str:
    for suffix in ("ings", "ing", "es", "s", "ed"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def _has_cjk(text: str) -> bool:
    return any("\u4e00" <= ch <= "\u9fff" for ch in text)


def negations(text: str) -> set[str]:
    found = {w for w in _words(text) if w in _NEGATIONS_EN or w.endswith("n't")}
    found.update(p for p in _NEGATIONS_ZH if p in text)
    return found


def fact_keys(fact: str, question: str) -> set[str]:
    """What an answer must contain to state `fact`: its claims not in the question, else its content words."""
    claims = extract_claims(fact)
    asked = normalise(question).casefold()
    keys = {k for k in (*claims.numbers, *claims.codes, *claims.names, *claims.quoted) if k.casefold() not in asked}
    if keys:
        return keys
    asked_words = {_stem(w) for w in _words(question)}
    return {w for w in _words(fact) if w not in _STOP and len(w) > 2 and _stem(w) not in asked_words}


def _contains_key(answer: str, key: str) -> bool:
    norm = normalise(answer).casefold()
    if key.isdigit():
        return re.search(rf"(?<!\d){re.escape(key)}(?!\d)", norm) is not None
    if _has_cjk(key):
        return key.casefold() in norm
    if key.isalpha() and key.islower():  # a content word: any inflection ("paintings" states "painting")
        return _stem(key) in {_stem(w) for w in _words(answer)}
    return re.search(rf"(?<![a-z0-9]){re.escape(key.casefold())}(?![a-z0-9])", norm) is not None


def states_fact(answer: str, fact: str, question: str) -> bool:
    """Known: the answer contains the fact's key and no negation the fact itself does not contain."""
    if negations(answer) - negations(fact):
        return False
    keys = fact_keys(fact, question)
    if not keys:  # a fact with nothing beyond the question's own words: nothing more to require
        return True
    if _has_cjk(fact) and not extract_claims(fact):
        # Chinese facts without numbers / names: any two-character run of the fact not in the question.
        runs = {fact[i : i + 2] for i in range(len(fact) - 1) if _has_cjk(fact[i : i + 2])}
        return any(r in answer and r not in question for r in runs)
    return any(_contains_key(answer, key) for key in keys)


def invents_nothing(answer: str, sources: list[str]) -> bool:
    """An unsure or unknown answer says it does not know, and nothing else: each content word is in the
    question, the lead, or the small vocabulary of not knowing ("No idea. We ordered a cake." is refused)."""
    allowed = {_stem(w) for text in sources for w in _words(text)} | {_stem(w) for w in _NOT_KNOWING_EN}
    return all(w in _STOP or len(w) <= 2 or _stem(w) in allowed for w in _words(answer))


def rambles(answer: str) -> bool:
    """A small model's loop: the same three words three times or more ("I'm not sure. I'm not sure. …")."""
    words = _words(answer)
    triples = Counter(tuple(words[i : i + 3]) for i in range(len(words) - 2))
    return bool(triples) and max(triples.values()) >= 3


def states_certainty(answer: str, certainty: Certainty, fact: str | None, question: str) -> bool:
    """Whether `answer` says what the server decided for `certainty` (`fact`: the cited or closest card)."""
    if certainty == Certainty.KNOWN:
        return fact is not None and states_fact(answer, fact, question)
    if not invents_nothing(answer, [question, *([fact] if fact else [])]):
        return False
    if certainty == Certainty.UNCERTAIN:
        words = set(_words(answer))
        return bool(words & _HEDGES_EN or any(w.endswith("n't") for w in words)) or any(h in answer for h in _HEDGES_ZH)
    return bool(negations(answer))
