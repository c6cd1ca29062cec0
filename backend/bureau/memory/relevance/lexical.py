"""The lexical side of relevance: a text's terms, content words and names, and BM25 over the candidates.

English: words, Snowball-stemmed; Chinese: rjieba words plus character bigrams. BM25 is rank-bm25's Okapi
over the searched candidates plus a fixed background corpus (`memory/data/lexical_background.txt`),
normalised by the score a card holding every question term once would get.
"""

from __future__ import annotations

import re
import unicodedata
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


def bm25_scores(question: TextFeatures, pool: Sequence[tuple[str, TextFeatures]]) -> dict[str, float]:
    """Normalised BM25 per distinct card text (`pool`: each card's content and features): the pool plus the
    background corpus give the statistics."""
    from rank_bm25 import BM25Okapi

    query = list(dict.fromkeys(question.terms))
    if not query or not pool:
        return {}
    background = _background_terms()
    index = BM25Okapi([*background, *(text.terms or ("\u0000",) for _, text in pool)])
    # Ceiling: every query term once in a card of average length. A term no text holds counts at full idf.
    unseen_idf = float(np.log((index.corpus_size + 0.5) / 0.5))
    ceiling = sum(max(index.idf.get(t, unseen_idf), 0.0) for t in query) or 1.0
    scores = index.get_batch_scores(query, list(range(len(background), len(background) + len(pool))))
    return {content_key(content): round(float(s) / ceiling, 6) for (content, _), s in zip(pool, scores, strict=True)}
