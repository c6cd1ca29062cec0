"""Evidence mode: no model. The answer is the hits themselves, stated plainly; with no hit but a close
candidate, it says so out loud ("I might know …") and never guesses."""

from __future__ import annotations

from bureau.answering.base import Answer, AnswerRequest, ResponderName
from bureau.answering.conflicts import find_conflicts
from bureau.memory.types import StoredCard
from bureau.scope import BOARD
from bureau.scope.vocabulary import Certainty

_UNKNOWN = {
    "en": "No evidence in {role}'s memory or on the bulletin board answers this.",
    "zh": "{role}的记忆和公告板中都没有能回答这个问题的证据。",
}
_KNOWN_PREFIX = {"en": "From {where}: ", "zh": "根据{where}："}
_UNCERTAIN = {
    "en": "I might know — the closest memory is {where}: “{content}”, but it may not answer this.",
    "zh": "我可能知道——最接近的记忆是{where}：“{content}”，但它不一定能回答这个问题。",
}
_UNCERTAIN_WHERE = {
    "en": {"own": "in my own memory", "board": "on the bulletin board"},
    "zh": {"own": "我自己记忆里的这条", "board": "公告板上的这条"},
}
_WHERE = {
    "en": {"own": "own memory", "board": "the bulletin board"},
    "zh": {"own": "自己的记忆", "board": "公告板"},
}
_ROLE_NAMES = {
    "en": {"detective": "the detective", "informant": "the informant", "suspect": "the suspect"},
    "zh": {"detective": "侦探", "informant": "线人", "suspect": "嫌疑人"},
}
_CONFLICT_PREFIX = {"en": "Conflicting intel, the cards disagree.", "zh": "情报相互矛盾，这些卡片说法不一。"}
# Where a conflicting card came from and how far to trust it, so the listener can weigh the two.
_PROVENANCE = {"en": " ({source}trust: {trust})", "zh": "（{source}可信度：{trust}）"}
_FROM = {"en": "from {role}, ", "zh": "来自{role}，"}
_TRUST = {"en": {}, "zh": {"high": "高", "medium": "中", "low": "低"}}
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


def evidence_answer(request: AnswerRequest, fallback_reason: str | None = None) -> Answer:
    lang = request.language if request.language in _UNKNOWN else "en"
    if not request.hits and request.borderline:
        closest = request.borderline[0]  # the game passes them best-judged first
        where = _UNCERTAIN_WHERE[lang]["board" if closest.card.space == BOARD else "own"]
        return Answer(
            text=_UNCERTAIN[lang].format(where=where, content=closest.card.content),
            certainty=Certainty.UNCERTAIN,
            evidence=(closest.card.id,),
            responder="evidence",
            fallback_reason=fallback_reason,
        )
    if not request.hits:
        role = _ROLE_NAMES[lang].get(request.role, request.role)
        return Answer(
            text=_UNKNOWN[lang].format(role=role),
            certainty=Certainty.UNKNOWN,
            evidence=(),
            responder="evidence",
            fallback_reason=fallback_reason,
        )
    cited = request.hits[:MAX_CITED]  # best-judged first
    conflicts = find_conflicts(c.card for c in cited)
    disputed = {card_id for conflict in conflicts for card_id in conflict.card_ids}
    parts = [_CONFLICT_PREFIX[lang]] if conflicts else []
    for candidate in cited:
        where = _WHERE[lang]["board" if candidate.card.space == BOARD else "own"]
        provenance = _provenance(candidate.card, lang) if candidate.card.id in disputed else ""
        parts.append(_KNOWN_PREFIX[lang].format(where=where + provenance) + candidate.card.content)
    return Answer(
        text=_sentences(parts, lang),
        certainty=Certainty.KNOWN,
        evidence=tuple(c.card.id for c in cited),
        responder="evidence",
        fallback_reason=fallback_reason,
    )


def _provenance(card: StoredCard, lang: str) -> str:
    role = card.source_role
    source = _FROM[lang].format(role=_ROLE_NAMES[lang].get(role, role)) if role else ""
    return _PROVENANCE[lang].format(source=source, trust=_TRUST[lang].get(card.trust, card.trust))


def _sentences(parts: list[str], lang: str) -> str:
    """English sentences joined by a space; Chinese ones run on, each closed by full-width punctuation."""
    if lang != "zh":
        return " ".join(parts)
    return "".join(part if part.endswith(("。", "！", "？", "…")) else part + "。" for part in parts)
