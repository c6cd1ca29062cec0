"""The model's reply: parsed strictly, then mapped back to card ids and checked against the rules."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from bureau.answering.base import Answer, AnswerRequest
from bureau.answering.grounding import ungrounded_claims
from bureau.answering.role_voice.packet import EvidencePacket
from bureau.scope.vocabulary import Certainty, FallbackReason


class MalformedOutputError(ValueError):
    pass


# The reply's JSON schema, sent as `response_format` where the provider takes one (small models return
# valid JSON only when the request carries it); `parse_reply` checks the same shape either way.
REPLY_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "answer": {"type": "string", "minLength": 1, "maxLength": 600},
        "certainty": {"type": "string", "enum": [Certainty.KNOWN.value, Certainty.UNKNOWN.value]},
        "cited": {"type": "array", "items": {"type": "string"}, "maxItems": 8},
        "borderline": {"type": "object", "additionalProperties": {"type": "boolean"}},
    },
    "required": ["answer", "certainty", "cited"],
    "additionalProperties": False,
}


@dataclass(frozen=True, slots=True)
class ModelReply:
    answer: str
    certainty: Certainty
    cited: tuple[str, ...]
    borderline: dict[str, bool]


_FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.DOTALL)
_THINK = re.compile(r"^\s*<think>.*?</think>\s*", re.DOTALL)


def _message_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content blocks
        return "".join(
            b.get("text", "") if isinstance(b, dict) else str(b)
            for b in content
            if not isinstance(b, dict) or b.get("type") in (None, "text")
        )
    raise MalformedOutputError("unsupported content type")


def parse_reply(content: Any) -> ModelReply:
    text = _THINK.sub("", _message_text(content)).strip()
    fenced = _FENCE.match(text)
    if fenced:
        text = fenced.group(1)
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise MalformedOutputError("not JSON") from exc
    if not isinstance(data, dict):
        raise MalformedOutputError("not an object")
    answer, certainty = data.get("answer"), data.get("certainty")
    cited = data.get("cited", [])
    verdicts = data.get("borderline", {})
    if verdicts is None:
        verdicts = {}
    if not isinstance(answer, str) or not answer.strip():
        raise MalformedOutputError("answer missing")
    if certainty not in (Certainty.KNOWN, Certainty.UNKNOWN):
        raise MalformedOutputError("certainty invalid")
    if not isinstance(cited, list) or not all(isinstance(r, str) for r in cited):
        raise MalformedOutputError("cited invalid")
    if not isinstance(verdicts, dict) or not all(isinstance(v, bool) for v in verdicts.values()):
        raise MalformedOutputError("borderline invalid")
    return ModelReply(
        answer=answer.strip(),
        certainty=Certainty(certainty),
        cited=tuple(dict.fromkeys(r.strip() for r in cited)),
        borderline={str(k).strip(): v for k, v in verdicts.items()},
    )


class ValidationFailure(Exception):
    def __init__(self, reason: FallbackReason) -> None:
        super().__init__(reason)
        self.reason = reason


def validate_reply(request: AnswerRequest, packet: EvidencePacket, reply: ModelReply) -> Answer:
    """Map the model's reply back to card ids and enforce the rules; raise ValidationFailure(reason)."""
    borderline_refs = {i.ref: i for i in packet.borderline}
    # Strict: a borderline ref without an explicit `true` is rejected.
    verdicts = {ref: reply.borderline.get(ref) is True for ref in borderline_refs}
    usable = {i.ref: i for i in packet.hits}
    usable.update({ref: borderline_refs[ref] for ref, ok in verdicts.items() if ok})
    borderline_verdicts = {borderline_refs[ref].card_id: ok for ref, ok in verdicts.items()}

    if reply.certainty == Certainty.KNOWN and not usable:
        raise ValidationFailure(FallbackReason.CLAIMED_KNOWN_WITHOUT_EVIDENCE)
    if any(ref not in usable for ref in reply.cited):
        raise ValidationFailure(FallbackReason.CITATION_OUTSIDE_EVIDENCE)
    if reply.certainty == Certainty.KNOWN:
        if not reply.cited:
            raise ValidationFailure(FallbackReason.UNGROUNDED_CLAIM)
        sources = [usable[ref].candidate.card.content for ref in reply.cited]
    else:
        # "I don't know" may echo the question and mention usable evidence, but invent nothing.
        sources = [request.question, *(i.candidate.card.content for i in usable.values())]
    if ungrounded_claims(reply.answer, sources):
        raise ValidationFailure(FallbackReason.UNGROUNDED_CLAIM)
    evidence = tuple(usable[ref].card_id for ref in reply.cited) if reply.certainty == Certainty.KNOWN else ()
    return Answer(
        text=reply.answer,
        certainty=reply.certainty,
        evidence=evidence,
        responder="role_voice",
        borderline_verdicts=borderline_verdicts,
        filtered=dict(packet.filtered),
    )
