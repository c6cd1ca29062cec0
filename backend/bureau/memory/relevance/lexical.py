"""The lexical side of relevance: a text's terms, content words and names, and BM25 over the candidates.

English: words, Snowball-stemmed; Chinese: rjieba words plus character bigrams. BM25 is rank-bm25's Okapi
over the searched candidates plus a fixed background corpus (`memory/data/lexical_background.txt`),
normalised by the score a card holding every question term once would get.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources

import numpy as np

from bureau.memory.relevance.language import CJK_RUN, DIGITS, LATIN_WORD, STOP_EN, STOP_ZH, segment, stemmer


@dataclass(frozen=True, slots=True)
class TextFeatures:
    terms: tuple[str, ...]  # BM25 terms
    words: tuple[str, ...]  # distinct content words, for coverage
    entities: frozenset[str]  # names and numbers, normalised


def analyse(text: str) -> TextFeatures:
    """Terms, content words and names of one text; English and Chinese parts each by their own rules."""
    norm = unicodedata.normalize("NFKC", text)
    latin = CJK_RUN.sub(" ", norm)
    terms: list[str] = []
    words: list[str] = []
    entities: set[str] = set(DIGITS.findall(norm))
    english = [w.replace("’", "'") for w in LATIN_WORD.findall(latin)]
    for word in english:
        lower = word.casefold()
        if lower in STOP_EN:
            continue
        words.append(lower)
        if word[0].isupper() and not word.isdigit():
            entities.add(lower)
    terms += stemmer().stemWords([w for w in words])
    for run in CJK_RUN.findall(norm):
        segmented = [w for w in segment(run) if w not in STOP_ZH]
        words += segmented
        terms += segmented
        terms += [run[i : i + 2] for i in range(len(run) - 1)]
    return TextFeatures(terms=tuple(terms), words=tuple(dict.fromkeys(words)), entities=frozenset(entities))


def content_key(text: str) -> str:
    """One key per card text, whatever its case and punctuation: equal texts compete once in BM25."""
    return re.sub(r"\W+", " ", text.casefold()).strip()


@cache
def _background_terms() -> tuple[tuple[str, ...], ...]:
    source = resources.files("bureau.memory").joinpath("data/lexical_background.txt").read_text("utf-8")
    lines = [line.strip() for line in source.splitlines()]
    return tuple(analyse(line).terms for line in lines if line and not line.startswith("#"))


@dataclass(frozen=True, slots=True)
class _Background:
    """What the background corpus adds to every question's BM25 statistics, counted once."""

    documents: int
    terms: int  # their total length
    holding: dict[str, int]  # term -> how many background documents hold it


@cache
def _background() -> _Background:
    documents = _background_terms()
    holding: dict[str, int] = {}
    for document in documents:
        for term in dict.fromkeys(document):
            holding[term] = holding.get(term, 0) + 1
    return _Background(len(documents), sum(len(document) for document in documents), holding)


K1, B, EPSILON = 1.5, 0.75, 0.25  # rank-bm25's BM25Okapi defaults


def bm25_scores(question: TextFeatures, pool: Sequence[tuple[str, TextFeatures]]) -> dict[str, float]:
    """Normalised BM25 per distinct card text (`pool`: each card's content and features): the pool plus the
    background corpus give the statistics. rank-bm25's Okapi BM25, computed for the question's terms only: the
    library indexes the whole corpus again for every question (about 1 ms), where only the question's terms'
    statistics and the pool's lengths enter the scores. The figures are the library's to the last bit (a test
    compares them); when a question term is in more than half the documents, its idf takes the library's floor,
    which needs every term's idf, so the library computes that question."""
    query = list(dict.fromkeys(question.terms))
    if not query or not pool:
        return {}
    background = _background()
    documents = [text.terms or ("\u0000",) for _, text in pool]
    counts = [Counter(document) for document in documents]
    corpus_size = background.documents + len(documents)
    holding = {term: background.holding.get(term, 0) + sum(1 for c in counts if term in c) for term in query}
    idf = {t: math.log(corpus_size - n + 0.5) - math.log(n + 0.5) for t, n in holding.items() if n}
    if any(value < 0 for value in idf.values()):
        return library_bm25(query, pool)
    average_length = (background.terms + sum(len(document) for document in documents)) / corpus_size
    lengths = np.array([len(document) for document in documents])
    scores = np.zeros(len(documents))
    for term in query:
        frequency = np.array([c.get(term) or 0 for c in counts])
        scores += (idf.get(term) or 0) * (
            frequency * (K1 + 1) / (frequency + K1 * (1 - B + B * lengths / average_length))
        )
    # Ceiling: every query term once in a card of average length. A term no text holds counts at full idf.
    unseen_idf = float(np.log((corpus_size + 0.5) / 0.5))
    ceiling = sum(max(idf.get(t, unseen_idf), 0.0) for t in query) or 1.0
    return {content_key(content): round(float(s) / ceiling, 6) for (content, _), s in zip(pool, scores, strict=True)}


def library_bm25(query: list[str], pool: Sequence[tuple[str, TextFeatures]]) -> dict[str, float]:
    """The same figures from rank-bm25 itself, over the whole corpus (the reference; see `bm25_scores`)."""
    from rank_bm25 import BM25Okapi

    background = _background_terms()
    index = BM25Okapi([*background, *(text.terms or ("\u0000",) for _, text in pool)], k1=K1, b=B, epsilon=EPSILON)
    unseen_idf = float(np.log((index.corpus_size + 0.5) / 0.5))
    ceiling = sum(max(index.idf.get(t, unseen_idf), 0.0) for t in query) or 1.0
    scores = index.get_batch_scores(query, list(range(len(background), len(background) + len(pool))))
    return {content_key(content): round(float(s) / ceiling, 6) for (content, _), s in zip(pool, scores, strict=True)}
