"""Evidence mode: no model. The answer is the hits themselves, stated plainly; with no hit but a close
candidate, it says so out loud ("I might know …") and never guesses."""

from __future__ import annotations

from bureau.answering.base import Answer, AnswerRequest, ResponderName
from bureau.answering.conflicts import find_conflicts
from bureau.memory.types import StoredCard
from bureau.scope import BOARD
from bureau.scope.phrases import Phrasebook, phrasebook
from bureau.scope.vocabulary import Certainty, FallbackReason

MAX_CITED = 3


class EvidenceResponder:
    name: ResponderName = "evidence"

    @property
    def degraded(self) -> bool:
        return False  # no model, nothing to fail

    def warm_up(self) -> None:
        pass

    async def answer(self, request: AnswerRequest) -> Answer:
        return evidence_answer(request)


def evidence_answer(request: AnswerRequest, fallback_reason: FallbackReason | None = None) -> Answer:
    words = phrasebook(request.language)
    if not request.hits and request.borderline:
        closest = request.borderline[0]  # the game passes them best-judged first
        where = words.uncertain_where_board if closest.card.space == BOARD else words.uncertain_where_own
        return Answer(
            text=_uncertain(words, where, closest.card.content, closest.gaps),
            certainty=Certainty.UNCERTAIN,
            evidence=(closest.card.id,),
            responder="evidence",
            fallback_reason=fallback_reason,
        )
    if not request.hits:
        return Answer(
            text=words.unknown.format(role=words.role_name(request.role)),
            certainty=Certainty.UNKNOWN,
            evidence=(),
            responder="evidence",
            fallback_reason=fallback_reason,
        )
    cited = request.hits[:MAX_CITED]  # best-judged first
    conflicts = find_conflicts(c.card for c in cited)
    disputed = {card_id for conflict in conflicts for card_id in conflict.card_ids}
    parts = [words.conflict_prefix] if conflicts else []
    for candidate in cited:
        where = words.where_board if candidate.card.space == BOARD else words.where_own
        provenance = _provenance(candidate.card, words) if candidate.card.id in disputed else ""
        parts.append(words.known_prefix.format(where=where + provenance) + candidate.card.content)
    return Answer(
        text=_sentences(parts, words),
        certainty=Certainty.KNOWN,
        evidence=tuple(c.card.id for c in cited),
        responder="evidence",
        fallback_reason=fallback_reason,
    )


def _uncertain(words: Phrasebook, where: str, content: str, gaps: tuple[str, ...]) -> str:
    """What the role does know, and what the question asked that it does not ("… — but nothing about
    shellfish"); the plain "I might know" when the card says everything the question asked, only not surely."""
    if not gaps:
        return words.uncertain.format(where=where, content=content)
    said = [words.attribute_word(g.removeprefix("kind:")) if g.startswith("kind:") else g for g in gaps]
    return words.uncertain_gap.format(where=where, content=content, missing=words.gap_separator.join(said))


def _provenance(card: StoredCard, words: Phrasebook) -> str:
    """Where a conflicting card came from and how far to trust it, so the listener can weigh the two."""
    role = card.source_role
    source = words.from_role.format(role=words.role_name(role)) if role else ""
    return words.provenance.format(source=source, trust=words.trust_word(card.trust))


def _sentences(parts: list[str], words: Phrasebook) -> str:
    """English sentences joined by a space; Chinese ones run on, each closed by full-width punctuation."""
    if not words.sentences_run_on:
        return " ".join(parts)
    return "".join(part if part.endswith(("。", "！", "？", "…")) else part + "。" for part in parts)
