"""The answer's plan (certainty and evidence, decided before the model is called) and the model's reply: parsed
strictly, then checked against the plan (grounded, and stating what was decided)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from bureau.answering.base import Answer, AnswerRequest
from bureau.answering.evidence import MAX_CITED
from bureau.answering.grounding import ungrounded_claims
from bureau.answering.role_voice.packet import EvidencePacket, PacketItem
from bureau.answering.statement import rambles, states_certainty
from bureau.scope.vocabulary import Certainty, FallbackReason


class MalformedOutputError(ValueError):
    pass


# The reply's JSON schema, sent as `response_format` where the provider takes one (llama.cpp turns it into a
# grammar, so even a 135M model can only write this object); `parse_reply` checks the same shape either way.
# The model writes the sentence and nothing else: certainty, evidence and citations are decided before it is
# called (`plan_answer`).
ANSWER_MAX_CHARS = 160
REPLY_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"answer": {"type": "string", "minLength": 1, "maxLength": ANSWER_MAX_CHARS}},
    "required": ["answer"],
    "additionalProperties": False,
}


@dataclass(frozen=True, slots=True)
class ModelReply:
    answer: str


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
    answer = data.get("answer")
    if not isinstance(answer, str) or not answer.strip():
        raise MalformedOutputError("answer missing")
    return ModelReply(answer=answer.strip())


class ValidationFailure(Exception):
    def __init__(self, reason: FallbackReason) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True, slots=True)
class AnswerPlan:
    """What the answer will be, decided by the server before the model is called: certainty is a retrieval
    fact (known iff usable hits, uncertain iff only close candidates, else unknown) and the evidence is the
    usable hits, best first (as in evidence mode), or the closest candidate."""

    certainty: Certainty
    cited: tuple[PacketItem, ...]


def plan_answer(packet: EvidencePacket) -> AnswerPlan:
    if packet.hits:
        return AnswerPlan(Certainty.KNOWN, packet.hits[:MAX_CITED])
    if packet.borderline:
        return AnswerPlan(Certainty.UNCERTAIN, packet.borderline[:1])
    return AnswerPlan(Certainty.UNKNOWN, ())


def validate_reply(request: AnswerRequest, packet: EvidencePacket, plan: AnswerPlan, reply: ModelReply) -> Answer:
    """Check the sentence against the plan; raise ValidationFailure(reason)."""
    facts = [item.candidate.card.content for item in plan.cited]
    # Every name, number and code must be in the cited cards (an unsure or unknown answer may echo the question).
    sources = facts if plan.certainty == Certainty.KNOWN else [request.question, *facts]
    if rambles(reply.answer):
        raise ValidationFailure(FallbackReason.MALFORMED_OUTPUT)
    if ungrounded_claims(reply.answer, sources):
        raise ValidationFailure(FallbackReason.UNGROUNDED_CLAIM)
    # It must say what was decided: the best cited fact (known), a hedge (uncertain), "I don't know" (unknown).
    if not states_certainty(reply.answer, plan.certainty, facts[0] if facts else None, request.question):
        raise ValidationFailure(FallbackReason.FACT_NOT_STATED)
    return Answer(
        text=reply.answer,
        certainty=plan.certainty,
        evidence=tuple(item.card_id for item in plan.cited),
        responder="role_voice",
        filtered=dict(packet.filtered),
    )
