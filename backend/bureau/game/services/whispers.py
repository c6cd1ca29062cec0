"""Whispers: the operator tells a role something, under the memory policy; a refused write is audited, never
written."""

from __future__ import annotations

import logging

from bureau.game.commits import Commits
from bureau.game.contract import WhisperResult
from bureau.game.errors import UnsafeInputError
from bureau.game.inputs import checked_text
from bureau.game.keys import Keys
from bureau.game.views import card_event_view, card_view
from bureau.ledger.policy_audit import PolicyDecision
from bureau.ledger.repository import CaseRecord, LedgerError, PendingEvent, PolicyAuditRepository
from bureau.memory.gateway import MemoryGateway
from bureau.memory.types import CardDraft
from bureau.scope.keys import Role
from bureau.scope.limits import SOURCE_MAX_CHARS
from bureau.scope.memory_policy import MemoryPolicyError, WritePath, check_type, text_limit
from bureau.scope.vocabulary import CreatedBy, EventType, Kind, MemoryType, PolicyAction, PolicyCode

log = logging.getLogger("bureau.game")
# What a whispered card is, in the game's terms, by the memory type the operator chose.
_WHISPER_KIND = {
    MemoryType.LONG_TERM_KNOWLEDGE: Kind.SECRET,
    MemoryType.OPERATIONAL_MEMORY: Kind.NOTE,
    MemoryType.USER_PREFERENCE: Kind.PREFERENCE,
}


class WhisperService:
    def __init__(
        self, gateway: MemoryGateway, policy_audit: PolicyAuditRepository, keys: Keys, commits: Commits
    ) -> None:
        """`policy_audit`: where a rejected write's decision is recorded (its commit goes through `commits`)."""
        self.gateway, self.policy_audit, self.keys, self.commits = gateway, policy_audit, keys, commits

    async def whisper(
        self,
        case_id: str,
        role: Role,
        text: str,
        expected_version: int | None = None,
        memory_type: MemoryType = MemoryType.LONG_TERM_KNOWLEDGE,
        key: str | None = None,
        source: str | None = None,
    ) -> WhisperResult:
        creator = CreatedBy.OPERATOR
        try:
            # The type rule first: a forbidden type is refused whatever the text says (and without reading it).
            check_type(memory_type, creator, WritePath.ORDINARY, key)
            content = checked_text(text, text_limit(memory_type, key), screening=self.gateway.screening)
            told_by = checked_text(source, SOURCE_MAX_CHARS, screening=self.gateway.screening) if source else None
        except (MemoryPolicyError, UnsafeInputError) as exc:
            await self.audit(case_id, [_rejected(exc, memory_type, creator, role)])
            raise
        draft = CardDraft(
            content=content,
            topic=key or "whisper",
            kind=_WHISPER_KIND[memory_type],
            memory_type=memory_type,
            created_by=creator,
            key=key,
            told_by=told_by,
        )

        async def write(case: CaseRecord) -> WhisperResult:
            async with self.keys.whisper(case, role) as grant:
                try:
                    card = await self.gateway.write(grant, draft)  # checks the whole rule again, value schema too
                except MemoryPolicyError as exc:
                    await self.audit(case_id, [_rejected(exc, memory_type, creator, role)])
                    raise
                event = PendingEvent(EventType.MEMORY_WRITTEN, {"card": card_event_view(card)})
                accepted = PolicyDecision(PolicyAction.WRITE_ACCEPTED, PolicyCode.OK, memory_type, creator, role)
                await self.commits.commit_or_undo(
                    case_id,
                    grant,
                    [card],
                    [event],
                    expected_version=expected_version,
                    decisions=[accepted],
                    generation=case.generation,
                )
            return WhisperResult(card=card_view(card))

        return await self.commits.in_current_generation(case_id, expected_version, write)

    async def audit(self, case_id: str, decisions: list[PolicyDecision]) -> None:
        """Append a rejected write to the policy audit trail (an accepted one is audited in its command's
        commit). Best effort: a ledger fault here is logged, and the write stays rejected."""
        try:
            await self.policy_audit.record_policy(case_id, decisions)
        except LedgerError as exc:
            log.warning("policy audit not recorded: %s", type(exc).__name__)


def _rejected(
    exc: MemoryPolicyError | UnsafeInputError, memory_type: MemoryType, creator: CreatedBy, space: str
) -> PolicyDecision:
    """The audit row of a refused write: the rule's code and the screening's reason codes, never the text."""
    detail = ",".join(exc.reasons) if isinstance(exc, UnsafeInputError) else exc.detail
    return PolicyDecision(PolicyAction.WRITE_REJECTED, exc.code, memory_type, creator, space, detail=detail)
