"""RelevanceScorer: the signals of every candidate card, measured several ways.

Per-card features (terms, content words, word vectors, names, persons, literal terms) are computed once,
when a card that may be evidence is written (no other card is ever judged), and cached **in this process
only**, keyed by card id, bounded (least recently used out; a miss is recomputed, never skipped) and dropped
when a card is deleted or its case erased or reset: nothing derived from a card is ever written to disk.

Every text the encoder sees (a sentence, a card's content words, a single word) is embedded once per case
and process: `vectors` keeps them in a bounded LRU keyed by (case, text), so a word that recurs across
questions and cards, or a question asked again, costs no encoder time. The vectors are the encoder's own,
stored as they came; a case's entries go when any of its cards is deleted (they are recomputed on demand)
and when the case is erased. The session-record retention deletes without dropping them: those records say
only the questions, which the case record keeps until the erase anyway.
"""

from __future__ import annotations

import threading
import unicodedata
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import replace

import numpy as np
from langchain_core.embeddings import Embeddings

from bureau.memory.relevance.answer_types import addressed, answer_types, gives_type, persons
from bureau.memory.relevance.coverage import cover, question_words
from bureau.memory.relevance.features import (
    CardFeatures,
    Question,
    best_per_word,
    content_cosine,
    content_text,
    lexical_coverage,
    unit_rows,
    word_coverage,
)
from bureau.memory.relevance.language import CJK, question_language, stemmer
from bureau.memory.relevance.lexical import TextFeatures, analyse, bm25_scores, content_key
from bureau.memory.relevance.words import card_words
from bureau.memory.types import Candidate, StoredCard

CARD_CACHE_SIZE = 20_000
VECTOR_CACHE_SIZE = 8_192  # texts (sentences, content words, words); 4 KB each as float64
_EMBED_BATCH = 256


class RelevanceScorer:
    """Measures the signals of every candidate. Runs on the gateway's memory worker, like every embedding."""

    def __init__(self, embedder: Embeddings, *, words: bool = True) -> None:
        self._embedder = embedder
        self._words = words  # word vectors need a local embedder: never one remote call per word
        self._cards: OrderedDict[str, CardFeatures] = OrderedDict()
        self._vectors: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()
        # Erased cases: nothing of theirs is cached again, not even by a search that was already running when
        # the erase began (it would otherwise refill the caches after they were dropped).
        self._erased: set[str] = set()
        self._lock = threading.Lock()
        self.texts_embedded = 0  # every text handed to the encoder (a test counts what a case costs again)

    # -- vectors ----------------------------------------------------------------------------------------
    def vectors(self, case_id: str, texts: Iterable[str]) -> dict[str, list[float]]:
        """The encoder's vector of each text; the ones this case has not embedded before go through the
        encoder together, in one batch (per 256 texts)."""
        wanted = list(dict.fromkeys(texts))
        found: dict[str, list[float]] = {}
        with self._lock:
            for text in wanted:
                cached = self._vectors.get((case_id, text))
                if cached is not None:
                    self._vectors.move_to_end((case_id, text))
                    found[text] = cached.tolist()
        missing = [text for text in wanted if text not in found]
        for start in range(0, len(missing), _EMBED_BATCH):
            batch = missing[start : start + _EMBED_BATCH]
            embedded = dict(zip(batch, self._embed(batch), strict=True))
            found.update(embedded)
            with self._lock:
                if case_id in self._erased:
                    continue
                for text, vector in embedded.items():
                    self._vectors[(case_id, text)] = np.asarray(vector, dtype=np.float64)
                while len(self._vectors) > VECTOR_CACHE_SIZE:
                    self._vectors.popitem(last=False)
        return found

    def _pieces(self, text: str, features: TextFeatures) -> list[str]:
        """What the signals embed of a text besides its sentence: its content words, together and one by one."""
        return [content_text(features.words, text), *features.words] if self._words else []

    def card_vectors(
        self, case_id: str, contents: Sequence[str], unfeatured: Sequence[str] = ()
    ) -> dict[str, list[float]]:
        """The sentence vectors of texts about to be stored, with every piece their features will need
        embedded in the same encoder batch (so `remember_many` finds them all); `unfeatured` texts get their
        sentence vector only. A text given twice (a bulk write repeats some) is analysed once."""
        pieces = [piece for content in dict.fromkeys(contents) for piece in self._pieces(content, analyse(content))]
        return self.vectors(case_id, [*contents, *unfeatured, *pieces])

    # -- per-card features ------------------------------------------------------------------------------
    def remember(self, card: StoredCard) -> CardFeatures:
        return self.remember_many([card])[0]

    def remember_many(self, cards: Sequence[StoredCard]) -> list[CardFeatures]:
        """Features of many cards; each distinct word is embedded once, in batches (a reset writes many)."""
        texts = {card.content: analyse(card.content) for card in cards}
        contents = {content: content_text(text.words, content) for content, text in texts.items()}
        vectors: dict[tuple[str, str], list[float]] = {}
        for case_id in dict.fromkeys(card.case_id for card in cards):
            mine = {card.content for card in cards if card.case_id == case_id}
            pieces = [piece for content in mine for piece in self._pieces(content, texts[content])]
            vectors.update(((case_id, t), v) for t, v in self.vectors(case_id, pieces).items())
        out = []
        for card in cards:
            text = texts[card.content]
            rows = [vectors[card.case_id, w] for w in text.words] if self._words else []
            whole = unit_rows([vectors[card.case_id, contents[card.content]]] if self._words else [])
            who = persons(unicodedata.normalize("NFKC", card.content))
            literal = frozenset(text.terms) | frozenset(CJK.findall(card.content))
            out.append(
                CardFeatures(
                    card.case_id,
                    card.content,
                    text,
                    unit_rows(rows),
                    who,
                    literal,
                    whole,
                    card_words(card.content),
                )
            )
        with self._lock:
            for card, features in zip(cards, out, strict=True):
                if card.case_id in self._erased:
                    continue
                self._cards[card.id] = features
                self._cards.move_to_end(card.id)
            while len(self._cards) > CARD_CACHE_SIZE:
                self._cards.popitem(last=False)
        return out

    def _features(self, card: StoredCard) -> CardFeatures:
        with self._lock:
            cached = self._cards.get(card.id)
            if cached is not None and cached.content == card.content and cached.case_id == card.case_id:
                self._cards.move_to_end(card.id)
                return cached
        return self.remember(card)

    def forget(self, case_id: str, card_ids: Iterable[str]) -> None:
        """Cards of one case were deleted: their features go, and the case's cached vectors with them
        (which of those a card's words fed cannot be told apart; they are recomputed when next needed)."""
        with self._lock:
            for card_id in card_ids:
                self._cards.pop(card_id, None)
            self._drop_vectors(case_id)

    def forget_case(self, case_id: str) -> None:
        """The case is being erased: its features and vectors go, and none are kept for it from now on."""
        with self._lock:
            self._erased.add(case_id)
            for card_id in [k for k, v in self._cards.items() if v.case_id == case_id]:
                del self._cards[card_id]
            self._drop_vectors(case_id)

    def _drop_vectors(self, case_id: str) -> None:
        for key in [key for key in self._vectors if key[0] == case_id]:
            del self._vectors[key]

    def cached_vector_cases(self) -> set[str]:
        """Cases with vectors in the cache (in memory only): for erasure checks."""
        with self._lock:
            return {case_id for case_id, _ in self._vectors}

    def cached_card_ids(self) -> set[str]:
        with self._lock:
            return set(self._cards)

    def _embed(self, texts: list[str]) -> list[list[float]]:
        self.texts_embedded += len(texts)
        return self._embedder.embed_documents(texts) if texts else []

    # -- per question -----------------------------------------------------------------------------------
    def question(self, text: str, case_id: str = "", *, claim: bool = False) -> Question:
        """The question's sentence vector, its content words' vector and its word vectors; what the case has
        not embedded yet goes through the embedder in one batch. A `claim` (a finding's statement) asks for no
        type of answer: what it states must be covered word for word instead (memory/coverage.py)."""
        features = analyse(text)
        pieces = self._pieces(text, features)
        found = self.vectors(case_id, [text, *pieces])
        vectors = [found[piece] for piece in [text, *pieces]]
        return Question(
            text,
            question_language(text),
            frozenset() if claim else answer_types(text),
            vectors[0],
            features,
            unit_rows(vectors[2:]),
            addressed(text),
            tuple(w if CJK.search(w) else stemmer().stemWord(w) for w in features.words),
            unit_rows(vectors[1:2]),
            question_words(features.words, text, statement=claim),
        )

    def score(self, question: Question, candidates: Sequence[Candidate]) -> list[Candidate]:
        """The candidates with their signals. Derived session records are measured but compete with nothing
        and enter no statistics, so asking the same question again cannot change another card's signals."""
        features = {c.card.id: self._features(c.card) for c in candidates}
        evidence = [c for c in candidates if c.card.may_be_evidence]
        distinct = list({content_key(c.card.content): features[c.card.id] for c in evidence}.values())
        bm25 = bm25_scores(question.features, [(c.content, c.text) for c in distinct])
        asked = (*question.features.words, *question.addressed)
        scored = []
        for candidate in candidates:
            card = features[candidate.card.id]
            key = content_key(candidate.card.content)
            mean, minimum = word_coverage(question.word_vectors, card.word_vectors)
            covered = cover(
                question.focus,
                question.asks,
                asked,
                card.cover,
                candidate.card.content,
                card.persons,
                best_per_word(question, card),
            )
            shared = question.features.entities & card.text.entities
            missing = question.features.entities - card.text.entities
            gives = [gives_type(candidate.card.content, kind, card.persons, asked) for kind in question.asks]
            signals = {
                "cosine": round(candidate.score, 6),
                "coverage_mean": round(mean, 6),
                "coverage_min": round(minimum, 6),
                "content_cosine": round(content_cosine(question, card), 6),
                "lexical_coverage": round(lexical_coverage(question, card), 6),
                "bm25": 0.0 if not candidate.card.may_be_evidence else bm25.get(key, 0.0),
                "entity_match": 1.0 if shared else 0.0,
                "entity_miss": 1.0 if missing else 0.0,
                "type_match": 1.0 if any(gives) else 0.0,
                "type_miss": 1.0 if gives and not any(gives) else 0.0,
                **covered.signals(),
            }
            scored.append(replace(candidate, signals=signals, gaps=covered.gaps))
        return scored
