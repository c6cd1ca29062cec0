"""Evidence mode: no model. The answer is the hits themselves, stated plainly."""

from __future__ import annotations

from bureau.answering.base import Answer, AnswerRequest
from bureau.scope import BOARD
from bureau.scope.vocabulary import Certainty

_UNKNOWN = {
    "en": "No evidence in {role}'s memory or on the bulletin board answers this.",
    "zh": "{role}的记忆和公告板中都没有能回答这个问题的证据。",
}
_KNOWN_PREFIX = {"en": "From {where}: ", "zh": "根据{where}："}
_WHERE = {
    "en": {"own": "own memory", "board": "the bulletin board"},
    "zh": {"own": "自己的记忆", "board": "公告板"},
}
_ROLE_NAMES = {
    "en": {"detective": "the detective", "informant": "the informant", "suspect": "the suspect"},
    "zh": {"detective": "侦探", "informant": "线人", "suspect": "嫌疑人"},
}
MAX_CITED = 3


class EvidenceResponder:
    name = "evidence"

    @property
    def degraded(self) -> bool:
        return False  # no model, nothing to fail

    def warm_up(self) -> None:
        pass

    async def answer(self, request: AnswerRequest) -> Answer:
        return evidence_answer(request)


def evidence_answer(request: AnswerRequest, fallback_reason: str | None = None) -> Answer:
    lang = request.language if request.language in _UNKNOWN else "en"
    if not request.hits:
        role = _ROLE_NAMES[lang].get(request.role, request.role)
        return Answer(
            text=_UNKNOWN[lang].format(role=role),
            certainty=Certainty.UNKNOWN,
            evidence=(),
            responder="evidence",
            fallback_reason=fallback_reason,
        )
    cited = sorted(request.hits, key=lambda c: c.score, reverse=True)[:MAX_CITED]
    parts = []
    for candidate in cited:
        where = _WHERE[lang]["board" if candidate.card.space == BOARD else "own"]
        parts.append(_KNOWN_PREFIX[lang].format(where=where) + candidate.card.content)
    return Answer(
        text=" ".join(parts),
        certainty=Certainty.KNOWN,
        evidence=tuple(c.card.id for c in cited),
        responder="evidence",
        fallback_reason=fallback_reason,
    )
