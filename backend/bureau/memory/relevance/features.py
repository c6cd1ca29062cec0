"""What the signals read of a card and of a question, and the measures of one (question, card) pair.

A card's features are computed once, when it is written (memory/relevance/scorer.py keeps them); a
question's once per search.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from bureau.memory.relevance.coverage import QuestionWords
from bureau.memory.relevance.language import CJK
from bureau.memory.relevance.lexical import TextFeatures
from bureau.memory.relevance.words import CardWords


@dataclass(frozen=True, slots=True)
class CardFeatures:
    case_id: str
    content: str
    text: TextFeatures
    word_vectors: np.ndarray  # (len(words), dims), L2-normalised
    persons: frozenset[str]  # words that name a person (for "who" questions)
    literal: frozenset[str]  # BM25 terms (English stems) and single Chinese characters, for lexical coverage
    content_vector: np.ndarray  # the content words' sentence vector, L2-normalised (empty without word vectors)
    cover: CardWords  # what the coverage rule reads of the card


@dataclass(frozen=True, slots=True)
class Question:
    text: str
    language: str
    asks: frozenset[str]
    vector: list[float]
    features: TextFeatures
    word_vectors: np.ndarray
    addressed: frozenset[str]  # the card's first person, when the question says "you"
    stems: tuple[str, ...]  # per content word: its Snowball stem (Chinese words as they are)
    content_vector: np.ndarray
    focus: QuestionWords  # focus words, common words, attribute nouns (the coverage rule)


def unit_rows(vectors: Sequence[Sequence[float]]) -> np.ndarray:
    if not vectors:
        return np.zeros((0, 1), dtype=np.float32)
    matrix = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix / np.where(norms == 0, 1.0, norms)


def content_text(words: Sequence[str], text: str) -> str:
    """The content words as one text (Chinese words run together, others spaced); the text itself when it
    has none."""
    out = ""
    for word in words:
        if out and not (CJK.match(out[-1]) and CJK.match(word[0])):
            out += " "
        out += word
    return out or text


def word_coverage(question: np.ndarray, card: np.ndarray) -> tuple[float, float]:
    """Mean and minimum over the question's words of each one's best cosine against the card's words."""
    if question.shape[0] == 0 or card.shape[0] == 0 or question.shape[1] != card.shape[1]:
        return 0.0, 0.0
    best = (question @ card.T).max(axis=1)
    return float(best.mean()), float(best.min())


def content_cosine(question: Question, card: CardFeatures) -> float:
    if question.content_vector.shape[0] == 0 or card.content_vector.shape != question.content_vector.shape:
        return 0.0
    return float(question.content_vector[0] @ card.content_vector[0])


def lexical_coverage(question: Question, card: CardFeatures) -> float:
    """The share of the question's content words the card says literally: an English word by its stem, a
    Chinese word by the share of its characters in the card (码头街的仓库里放着什么？ against 存放在码头街的仓库)."""
    if not question.features.words:
        return 0.0
    found = []
    for word, stem in zip(question.features.words, question.stems, strict=True):
        chars = CJK.findall(word)
        found.append(sum(c in card.literal for c in chars) / len(chars) if chars else float(stem in card.literal))
    return sum(found) / len(found)


def best_per_word(question: Question, card: CardFeatures) -> dict[str, float]:
    """Each question word's best single-word cosine against the card's words (the soft match)."""
    q, c = question.word_vectors, card.word_vectors
    if q.shape[0] != len(question.features.words) or c.shape[0] == 0 or q.shape[1] != c.shape[1]:
        return {}
    best = (q @ c.T).max(axis=1)
    return {re.sub(r"['’]s$", "", w): float(b) for w, b in zip(question.features.words, best, strict=True)}
