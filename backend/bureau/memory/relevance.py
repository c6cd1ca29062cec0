"""Relevance signals: how well each candidate card answers the question, measured several ways.

A sentence cosine alone cannot tell "Who did the night porter see?" (an answer is in memory) from "Who is
allergic to shellfish?" against the peanut card (none is). Each candidate therefore gets:

- `cosine`         the store's sentence similarity (one USE vector per text);
- `coverage_mean`, `coverage_min`
                   word-level coverage: each content word of the question against every word of the card
                   (USE cosine of the single words; the best match per question word), mean and minimum;
- `content_cosine` the sentence similarity of the content words alone (stop words out), question vs card;
- `lexical_coverage` the share of the question's content words the card says literally (English stems,
                   Chinese by the share of each word's characters in the card);
- `bm25`           lexical BM25 (rank-bm25's Okapi) over the searched candidates plus a fixed background
                   corpus, normalised by the score a card holding every question term once would get.
                   English: words, Snowball-stemmed; Chinese: rjieba words plus character bigrams;
- (no margin to the next candidate: two tips that both answer — conflicting intel — must both stay known)
- `entity_match`, `entity_miss`
                   whether the question's names and numbers appear in the card (1/0 each);
- `type_match`, `type_miss`
                   whether the card gives the kind of answer asked (a time, a number, a person, a place, a
                   reason) in words the question does not already say.

`scope.relevance` turns the signals into a verdict. Per-card features (terms, content words, word vectors,
names, persons, literal terms) are computed once, when a card that may be evidence is written (no other card
is ever judged), and cached **in this process only**, keyed by card id, bounded (least recently used out; a
miss is recomputed, never skipped) and dropped when a card is deleted or its case erased or reset: nothing
derived from a card is ever written to disk.

Every text the encoder sees (a sentence, a card's content words, a single word) is embedded once per case
and process: `vectors` keeps them in a bounded LRU keyed by (case, text), so a word that recurs across
questions and cards, or a question asked again, costs no encoder time. The vectors are the encoder's own,
stored as they came; a case's entries go when any of its cards is deleted (they are recomputed on demand)
and when the case is erased. The session-record retention deletes without dropping them: those records say
only the questions, which the case record keeps until the erase anyway.
"""

from __future__ import annotations

import json
import re
import threading
import unicodedata
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from functools import cache
from importlib import resources
from typing import Any

import numpy as np
from langchain_core.embeddings import Embeddings

from bureau.config import DEFAULT_THRESHOLDS, Settings
from bureau.memory.coverage import CardWords, QuestionWords, card_words, cover, question_words
from bureau.memory.types import Candidate, StoredCard
from bureau.scope.relevance import LogisticPolicy, RelevancePolicy, ThresholdPolicy, policy_from_data

SIGNALS: tuple[str, ...] = (
    "cosine",
    "coverage_mean",
    "coverage_min",
    "content_cosine",
    "lexical_coverage",
    "bm25",
    "entity_match",
    "entity_miss",
    "type_match",
    "type_miss",
)
CARD_CACHE_SIZE = 20_000
VECTOR_CACHE_SIZE = 8_192  # texts (sentences, content words, words); 4 KB each as float64
_EMBED_BATCH = 256

_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_CJK_RUN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
_LATIN_WORD = re.compile(r"[A-Za-z0-9]+(?:['’][A-Za-z]+)?")
_DIGITS = re.compile(r"[0-9]+")


def _word_set(words: str) -> frozenset[str]:
    return frozenset(words.split())


# Function words: never content words, never names. English question and auxiliary words included.
_STOP_EN = _word_set(
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
_STOP_ZH = _word_set(
    """的 了 是 在 吗 呢 吧 啊 呀 么 着 过 把 被 给 和 与 跟 及 或 都 也 就 还 又 要 会 能 可以 没 没有 不
    有 有没有 是不是 这 那 这个 那个 这些 那些 一个 个 我 你 他 她 它 我们 你们 他们 她们 自己 什么
    谁 哪 哪里 哪儿 哪个 哪些 哪天 几 多少 怎么 怎样 怎么样 为什么 如何 吗 嘛 呢 之 其 所 而 得 地 对
    从 向 到 于 让 叫 请 说 上 下 里 中 时候 几点 多少 多大 多长 多久 几次 几号 哪天 为何 哪家 哪位 哪种 哪样
    什么样 几时"""
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


_CALENDAR = _word_set(
    "monday tuesday wednesday thursday friday saturday sunday january february march april may june july "
    "august september october november december"
)


# Who a card names: rjieba's person-name tags, and the personal pronouns of a first- or third-person note.
_PERSON_TAGS = frozenset({"nr", "nrt", "nrfg"})
_PERSONAL_EN = _word_set("i me my we us our he him his she her they them someone somebody")
_PERSONAL_ZH = _word_set("我 我们 你 你们 他 她 他们 她们 有人 别人")
_YOU_EN = _word_set("you your yours yourself")
_FIRST_PERSON_EN = _word_set("i me my we us our")
_FIRST_PERSON_ZH = _word_set("我 我们")


def _persons(text: str) -> frozenset[str]:
    """The card's words that name a person: capitalised English names, personal pronouns, and Chinese words
    rjieba tags as person names. Computed once per card (part of its features)."""
    found = {
        w.casefold()
        for w in _LATIN_WORD.findall(text)
        if w.casefold() in _PERSONAL_EN
        or (w[0].isupper() and w.casefold() not in _STOP_EN and w.casefold() not in _CALENDAR)
    }
    for run in _CJK_RUN.findall(text):
        found.update(w for w, tag in _tag(run) if tag in _PERSON_TAGS or w in _PERSONAL_ZH)
    return frozenset(found)


def _without(card: str, words: Iterable[str]) -> str:
    """The card with the question's own content words blanked out: a number or name the question already
    says ("What is the code of locker 42?") is no answer to it."""
    out = card
    for word in sorted(words, key=len, reverse=True):
        if _CJK.search(word):
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


def _addressed(question: str) -> frozenset[str]:
    """The card's first person when the question says "you": asked of the suspect, "Who will pay you back
    for the cake?" is not answered by the "I" of "I paid 35 euros for the cake"."""
    words = {w.casefold() for w in _LATIN_WORD.findall(question)}
    found: set[str] = set()
    if words & _YOU_EN:
        found |= _FIRST_PERSON_EN
    if "你" in question:
        found |= _FIRST_PERSON_ZH
    return frozenset(found)


def question_language(text: str) -> str:
    """`zh` when the text contains Chinese characters, else `en`: the question's language, not the case's."""
    return "zh" if _CJK.search(text) else "en"


@cache
def _stemmer() -> Any:
    import snowballstemmer

    return snowballstemmer.stemmer("english")


def _segment(run: str) -> list[str]:
    import rjieba

    return [w for w in rjieba.cut(run) if w.strip()]


def _tag(run: str) -> list[tuple[str, str]]:
    import rjieba

    return [(w, t) for w, t in rjieba.tag(run) if w.strip()]


@dataclass(frozen=True, slots=True)
class TextFeatures:
    terms: tuple[str, ...]  # BM25 terms
    words: tuple[str, ...]  # distinct content words, for coverage
    entities: frozenset[str]  # names and numbers, normalised


def analyse(text: str) -> TextFeatures:
    """Terms, content words and names of one text; English and Chinese parts each by their own rules."""
    norm = unicodedata.normalize("NFKC", text)
    latin = _CJK_RUN.sub(" ", norm)
    terms: list[str] = []
    words: list[str] = []
    entities: set[str] = set(_DIGITS.findall(norm))
    english = [w.replace("’", "'") for w in _LATIN_WORD.findall(latin)]
    for word in english:
        lower = word.casefold()
        if lower in _STOP_EN:
            continue
        words.append(lower)
        if word[0].isupper() and not word.isdigit():
            entities.add(lower)
    terms += _stemmer().stemWords([w for w in words])
    for run in _CJK_RUN.findall(norm):
        segmented = [w for w in _segment(run) if w not in _STOP_ZH]
        words += segmented
        terms += segmented
        terms += [run[i : i + 2] for i in range(len(run) - 1)]
    return TextFeatures(terms=tuple(terms), words=tuple(dict.fromkeys(words)), entities=frozenset(entities))


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


def _unit_rows(vectors: Sequence[Sequence[float]]) -> np.ndarray:
    if not vectors:
        return np.zeros((0, 1), dtype=np.float32)
    matrix = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix / np.where(norms == 0, 1.0, norms)


def _content_key(text: str) -> str:
    return re.sub(r"\W+", " ", text.casefold()).strip()


@cache
def _background_terms() -> tuple[tuple[str, ...], ...]:
    source = resources.files("bureau.memory").joinpath("data/lexical_background.txt").read_text("utf-8")
    lines = [line.strip() for line in source.splitlines()]
    return tuple(analyse(line).terms for line in lines if line and not line.startswith("#"))


def _coverage(question: np.ndarray, card: np.ndarray) -> tuple[float, float]:
    if question.shape[0] == 0 or card.shape[0] == 0 or question.shape[1] != card.shape[1]:
        return 0.0, 0.0
    best = (question @ card.T).max(axis=1)
    return float(best.mean()), float(best.min())


def _content_text(words: Sequence[str], text: str) -> str:
    """The content words as one text (Chinese words run together, others spaced); the text itself when it
    has none."""
    out = ""
    for word in words:
        if out and not (_CJK.match(out[-1]) and _CJK.match(word[0])):
            out += " "
        out += word
    return out or text


def _content_cosine(question: Question, card: CardFeatures) -> float:
    if question.content_vector.shape[0] == 0 or card.content_vector.shape != question.content_vector.shape:
        return 0.0
    return float(question.content_vector[0] @ card.content_vector[0])


def _lexical_coverage(question: Question, card: CardFeatures) -> float:
    """The share of the question's content words the card says literally: an English word by its stem, a
    Chinese word by the share of its characters in the card (码头街的仓库里放着什么？ against 存放在码头街的仓库)."""
    if not question.features.words:
        return 0.0
    found = []
    for word, stem in zip(question.features.words, question.stems, strict=True):
        chars = _CJK.findall(word)
        found.append(sum(c in card.literal for c in chars) / len(chars) if chars else float(stem in card.literal))
    return sum(found) / len(found)


def _best_per_word(question: Question, card: CardFeatures) -> dict[str, float]:
    """Each question word's best single-word cosine against the card's words (the soft match)."""
    q, c = question.word_vectors, card.word_vectors
    if q.shape[0] != len(question.features.words) or c.shape[0] == 0 or q.shape[1] != c.shape[1]:
        return {}
    best = (q @ c.T).max(axis=1)
    return {re.sub(r"['’]s$", "", w): float(b) for w, b in zip(question.features.words, best, strict=True)}


def _bm25_scores(question: TextFeatures, pool: list[CardFeatures]) -> dict[str, float]:
    """Normalised BM25 per distinct card text: the pool plus the background corpus give the statistics."""
    from rank_bm25 import BM25Okapi

    query = list(dict.fromkeys(question.terms))
    if not query or not pool:
        return {}
    background = _background_terms()
    index = BM25Okapi([*background, *(c.text.terms or ("\u0000",) for c in pool)])
    # Ceiling: every query term once in a card of average length. A term no text holds counts at full idf.
    unseen_idf = float(np.log((index.corpus_size + 0.5) / 0.5))
    ceiling = sum(max(index.idf.get(t, unseen_idf), 0.0) for t in query) or 1.0
    scores = index.get_batch_scores(query, list(range(len(background), len(background) + len(pool))))
    return {_content_key(c.content): round(float(s) / ceiling, 6) for c, s in zip(pool, scores, strict=True)}


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
        return [_content_text(features.words, text), *features.words] if self._words else []

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
        contents = {content: _content_text(text.words, content) for content, text in texts.items()}
        vectors: dict[tuple[str, str], list[float]] = {}
        for case_id in dict.fromkeys(card.case_id for card in cards):
            mine = {card.content for card in cards if card.case_id == case_id}
            pieces = [piece for content in mine for piece in self._pieces(content, texts[content])]
            vectors.update(((case_id, t), v) for t, v in self.vectors(case_id, pieces).items())
        out = []
        for card in cards:
            text = texts[card.content]
            rows = [vectors[card.case_id, w] for w in text.words] if self._words else []
            whole = _unit_rows([vectors[card.case_id, contents[card.content]]] if self._words else [])
            persons = _persons(unicodedata.normalize("NFKC", card.content))
            literal = frozenset(text.terms) | frozenset(_CJK.findall(card.content))
            out.append(
                CardFeatures(
                    card.case_id,
                    card.content,
                    text,
                    _unit_rows(rows),
                    persons,
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
            _unit_rows(vectors[2:]),
            _addressed(text),
            tuple(w if _CJK.search(w) else _stemmer().stemWord(w) for w in features.words),
            _unit_rows(vectors[1:2]),
            question_words(features.words, text, statement=claim),
        )

    def score(self, question: Question, candidates: Sequence[Candidate]) -> list[Candidate]:
        """The candidates with their signals. Derived session records are measured but compete with nothing
        and enter no statistics, so asking the same question again cannot change another card's signals."""
        features = {c.card.id: self._features(c.card) for c in candidates}
        evidence = [c for c in candidates if c.card.may_be_evidence]
        distinct = list({_content_key(c.card.content): features[c.card.id] for c in evidence}.values())
        bm25 = _bm25_scores(question.features, distinct)
        asked = (*question.features.words, *question.addressed)
        scored = []
        for candidate in candidates:
            card = features[candidate.card.id]
            key = _content_key(candidate.card.content)
            mean, minimum = _coverage(question.word_vectors, card.word_vectors)
            covered = cover(
                question.focus,
                question.asks,
                asked,
                card.cover,
                candidate.card.content,
                card.persons,
                _best_per_word(question, card),
            )
            shared = question.features.entities & card.text.entities
            missing = question.features.entities - card.text.entities
            gives = [gives_type(candidate.card.content, kind, card.persons, asked) for kind in question.asks]
            signals = {
                "cosine": round(candidate.score, 6),
                "coverage_mean": round(mean, 6),
                "coverage_min": round(minimum, 6),
                "content_cosine": round(_content_cosine(question, card), 6),
                "lexical_coverage": round(_lexical_coverage(question, card), 6),
                "bm25": 0.0 if not candidate.card.may_be_evidence else bm25.get(key, 0.0),
                "entity_match": 1.0 if shared else 0.0,
                "entity_miss": 1.0 if missing else 0.0,
                "type_match": 1.0 if any(gives) else 0.0,
                "type_miss": 1.0 if gives and not any(gives) else 0.0,
                **covered.signals(),
            }
            scored.append(replace(candidate, signals=signals, gaps=covered.gaps))
        return scored


@cache
def load_policy(embedder: str) -> LogisticPolicy | None:
    """The calibrated logistic policy for this embedder, or None when none was fitted for it."""
    source = resources.files("bureau.memory").joinpath("data/relevance_model.json")
    if not source.is_file():
        return None
    return policy_from_data(json.loads(source.read_text("utf-8")), embedder)


def policy_for(settings: Settings, embedder: str) -> RelevancePolicy:
    """The calibrated model for this embedder. The single cosine threshold (with its band) when the embedder
    has no calibrated model, or when `BUREAU_RELEVANCE_THRESHOLD` is set explicitly."""
    if settings.relevance_threshold is None:
        model = load_policy(embedder)
        if model is not None:
            return model
    threshold = settings.relevance_threshold
    if threshold is None:
        threshold = DEFAULT_THRESHOLDS.get(embedder, DEFAULT_THRESHOLDS["local"])
    return ThresholdPolicy(threshold=threshold, band=settings.borderline_band)
