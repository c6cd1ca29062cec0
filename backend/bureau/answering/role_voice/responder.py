"""The role voice responder: build the packet, call the role's agent within the budget, validate the reply;
anything wrong, slow or failing falls back to the evidence responder with a specific `fallback_reason`."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import threading
from typing import Any

from bureau.answering.base import Answer, AnswerRequest, ResponderName
from bureau.answering.evidence import evidence_answer
from bureau.answering.role_voice.agent import (
    RECURSION_LIMIT,
    REPLY_FORMATS,
    build_chat_model,
    build_role_agent,
    classify_error,
    last_ai_content,
    refused_format,
)
from bureau.answering.role_voice.budget import CallBudget, SharedBudget
from bureau.answering.role_voice.packet import EvidencePacket, build_packet
from bureau.answering.role_voice.prompt import render_prompt
from bureau.answering.role_voice.reply import (
    AnswerPlan,
    MalformedOutputError,
    ValidationFailure,
    parse_reply,
    plan_answer,
    validate_reply,
)
from bureau.config import Settings
from bureau.memory.types import Candidate
from bureau.scope import ROLES
from bureau.scope.phrases import LANGUAGES, spoken_language
from bureau.scope.vocabulary import FallbackReason

log = logging.getLogger("bureau.answering.role_voice")


class RoleVoiceResponder:
    name: ResponderName = "role_voice"

    def __init__(
        self,
        settings: Settings,
        *,
        slot_wait_s: float = 0.5,
        degraded_after: int = 3,
        guard_margin_s: float = 0.5,
        shared_budget: SharedBudget | None = None,
    ) -> None:
        self.settings = settings
        self.guard_margin_s = guard_margin_s
        self.budget = CallBudget(settings, slot_wait_s=slot_wait_s, degraded_after=degraded_after, shared=shared_budget)
        self._format_tier = 0  # index into REPLY_FORMATS: detected once, on the first refusal
        self._models: dict[int, Any] = {}
        self._agents: dict[tuple[int, str, str], Any] = {}
        self._agents_lock = threading.Lock()

    @property
    def reply_format(self) -> dict[str, Any] | None:
        return REPLY_FORMATS[self._format_tier]

    # -- health ------------------------------------------------------------------------------------
    @property
    def requests_used(self) -> int:
        return self.budget.requests_used

    @property
    def budget_exhausted(self) -> bool:
        return self.budget.exhausted

    @property
    def degraded(self) -> bool:
        """True when the budget is spent or the last N provider calls all failed."""
        return self.budget.degraded

    # -- agents ------------------------------------------------------------------------------------
    def agent_for(self, role: str, language: str) -> Any:
        tier, language = self._format_tier, spoken_language(language)
        with self._agents_lock:
            agent = self._agents.get((tier, role, language))
            if agent is None:
                if tier not in self._models:
                    self._models[tier] = build_chat_model(self.settings, REPLY_FORMATS[tier])
                agent = build_role_agent(self._models[tier], role, language)
                self._agents[(tier, role, language)] = agent
            return agent

    def warm_up(self) -> None:
        """Import LangChain and build every (role, language) agent now (~1.5 s once), not on the first
        question. Call it at start-up (e.g. in a thread from the app lifespan); safe to skip."""
        for role in ROLES:
            for language in LANGUAGES:
                self.agent_for(role, language)

    # -- answering ---------------------------------------------------------------------------------
    def speaks(self, language: str) -> bool:
        """Whether the model speaks this case's language (`BUREAU_LLM_LANGUAGES`); other cases stay in
        evidence mode."""
        return spoken_language(language) in self.settings.llm_language_set

    async def answer(self, request: AnswerRequest) -> Answer:
        if not self.speaks(request.language):
            return evidence_answer(request)  # this case's mode is evidence: not a fallback
        packet = EvidencePacket(hits=(), borderline=(), filtered={})
        try:
            packet = build_packet(request)
            return await self._answer(request, packet)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # never raise to the caller
            log.warning("role voice failed unexpectedly (%s); falling back", type(exc).__name__)
            return self._fallback(request, packet, FallbackReason.PROVIDER_ERROR)

    async def _answer(self, request: AnswerRequest, packet: EvidencePacket) -> Answer:
        if self.budget.exhausted:
            return self._fallback(request, packet, FallbackReason.BUDGET_EXHAUSTED)
        slots = await self.budget.acquire_slot()
        if slots is None:
            return self._fallback(request, packet, FallbackReason.BUSY)
        try:
            if not await self.budget.take():
                return self._fallback(request, packet, FallbackReason.BUDGET_EXHAUSTED)
            plan = plan_answer(packet)  # certainty and evidence: decided here, before the model is called
            try:
                content = await self._call_model(request, plan)
                reply = parse_reply(content)
            except MalformedOutputError:
                self.budget.record(False)
                return self._fallback(request, packet, FallbackReason.MALFORMED_OUTPUT)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                self.budget.record(False)
                reason = classify_error(exc)
                log.warning("role voice provider call failed: %s (%s)", reason, type(exc).__name__)
                return self._fallback(request, packet, reason)
            self.budget.record(True)
        finally:
            slots.release()
        try:
            answer = validate_reply(request, packet, plan, reply)
        except ValidationFailure as failure:
            return self._fallback(request, packet, failure.reason)
        return answer

    async def _call_model(self, request: AnswerRequest, plan: AnswerPlan) -> Any:
        """One call within the timeout. A provider that refuses the reply format is asked the next way
        (remembered for every later call), inside the same deadline."""
        from langchain_core.messages import HumanMessage

        loop = asyncio.get_running_loop()
        deadline: float | None = None
        while True:
            tier = self._format_tier
            agent = self.agent_for(request.role, request.language)  # built once per format, outside the clock
            if deadline is None:
                deadline = loop.time() + self.settings.llm_timeout_s + self.guard_margin_s
            call = agent.ainvoke(
                {"messages": [HumanMessage(content=render_prompt(request, plan))]},
                config={"recursion_limit": RECURSION_LIMIT},
            )
            try:
                result = await asyncio.wait_for(call, timeout=max(0.0, deadline - loop.time()))
            except Exception as exc:
                if not refused_format(exc) or tier + 1 >= len(REPLY_FORMATS):
                    raise
                if self._format_tier == tier:
                    self._format_tier = tier + 1
                    log.info("provider refused reply format %d; using format %d from now on", tier, tier + 1)
                continue
            return last_ai_content(result)

    def _fallback(self, request: AnswerRequest, packet: EvidencePacket, reason: FallbackReason) -> Answer:
        log.info("role voice fell back to evidence: %s (case=%s role=%s)", reason, request.case_id, request.role)

        # Withheld cards (unsafe content, derived session / task-state memories) are not evidence in the
        # fallback either, so the answer never quotes or cites what `filtered` reports.
        def usable(candidates: tuple[Candidate, ...]) -> tuple[Candidate, ...]:
            return tuple(c for c in candidates if c.card.id not in packet.filtered and c.card.may_be_evidence)

        request = dataclasses.replace(request, hits=usable(request.hits), borderline=usable(request.borderline))
        answer = evidence_answer(request, fallback_reason=reason)
        return dataclasses.replace(answer, filtered=dict(packet.filtered))
