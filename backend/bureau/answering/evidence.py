"""Evidence mode: no model. The answer is the hits themselves, stated plainly; with no hit but a close
candidate, it says so out loud ("I might know …") and never guesses."""

from __future__ import annotations

from bureau.answering.base import Answer, AnswerRequest
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
