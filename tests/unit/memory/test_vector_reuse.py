"""Each text is embedded once per case (the real encoder), and each text screened once per policy: what the
interrogation no longer recomputes on every question, and when it must be computed again."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest
import yaml
from langchain_core.embeddings import Embeddings

from bureau.memory.embedders import LocalUSEEmbeddings
from bureau.memory.relevance import RelevanceScorer
from bureau.memory.screening_memo import RememberedScreening
from bureau.memory.types import StoredCard
from bureau.scope.content_policy import ContentPolicy

QUESTION = "What is the safe combination?"
SESSION = "I was asked: What is the safe combination?"


class CountingEncoder(Embeddings):
    """The real offline encoder, counting the texts it is handed."""

    def __init__(self) -> None:
        self.inner = LocalUSEEmbeddings()
        self.texts: list[str] = []

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.texts += texts
        return self.inner.embed_documents(texts)

    def embed_query(self, text: str) -> list[float]:
        return self.embed_documents([text])[0]


@pytest.fixture(scope="module")
def encoder() -> CountingEncoder:
    return CountingEncoder()


def _card(case_id: str, card_id: str, content: str) -> StoredCard:
    return StoredCard(
        id=card_id,
        case_id=case_id,
        space="detective",
        content=content,
        topic="session",
        kind="note",
        visibility="private",
        memory_type="session",
        trust="low",
        created_by="system",
        created_at=datetime.now(UTC),
    )


def test_a_question_asked_again_costs_no_encoder_time_and_gets_the_same_vectors(encoder: CountingEncoder) -> None:
    scorer = RelevanceScorer(encoder)
    first = scorer.question(QUESTION, "case-a")
    assert encoder.texts[-4:] == [QUESTION, "safe combination", "safe", "combination"]
    asked = len(encoder.texts)
    again = scorer.question(QUESTION, "case-a")
    assert len(encoder.texts) == asked
    assert again.vector == first.vector
    assert np.array_equal(again.word_vectors, first.word_vectors)
    # The vectors are the encoder's own, not an approximation of them.
    fresh = encoder.inner.embed_documents([QUESTION, "safe combination", "safe", "combination"])
    assert first.vector == fresh[0]


def test_a_card_is_embedded_with_its_pieces_in_one_batch_and_its_features_reuse_them(encoder: CountingEncoder) -> None:
    scorer = RelevanceScorer(encoder)
    scorer.question(QUESTION, "case-b")
    before = len(encoder.texts)
    vectors = scorer.card_vectors("case-b", [SESSION])
    # The sentence and only what the question did not already embed: the card's content words and "asked".
    assert encoder.texts[before:] == [SESSION, "asked safe combination", "asked"]
    stored = len(encoder.texts)
    [features] = scorer.remember_many([_card("case-b", "1", SESSION)])
    assert len(encoder.texts) == stored
    assert features.word_vectors.shape == (3, len(vectors[SESSION]))


def test_another_case_embeds_for_itself_and_deleting_or_erasing_drops_a_cases_vectors(
    encoder: CountingEncoder,
) -> None:
    scorer = RelevanceScorer(encoder)
    scorer.question(QUESTION, "case-c")
    before = len(encoder.texts)
    scorer.question(QUESTION, "case-d")
    assert len(encoder.texts) == before + 4  # nothing crosses from one case to another
    scorer.remember_many([_card("case-c", "7", SESSION)])
    assert scorer.cached_vector_cases() == {"case-c", "case-d"}
    scorer.forget("case-c", ["7"])
    assert scorer.cached_vector_cases() == {"case-d"} and "7" not in scorer.cached_card_ids()
    scorer.forget_case("case-d")
    assert scorer.cached_vector_cases() == set()
    before = len(encoder.texts)
    scorer.question(QUESTION, "case-d")  # recomputed, never skipped
    assert len(encoder.texts) == before + 4


def test_remembered_screening_gives_the_policys_own_codes_for_every_labelled_line() -> None:
    labelled = yaml.safe_load((Path(__file__).parents[2] / "data" / "screening_set.yaml").read_text("utf-8"))
    lines = [item["text"] for group in ("positives", "negatives") for item in labelled[group]]
    policy = ContentPolicy.with_patterns([r"\bnightjar\b"])
    remembered = RememberedScreening(policy)
    for _ in range(2):  # the second pass answers from what was remembered
        assert [remembered.screen(line) for line in lines] == [policy.screen(line) for line in lines]
    assert remembered.screen("The nightjar sings at dawn.") == ["configured_pattern"]
    assert RememberedScreening(ContentPolicy()).screen("The nightjar sings at dawn.") == []
