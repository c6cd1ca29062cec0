"""The bureau: the only coordinator of commands. Every command either completes or leaves nothing behind."""

from __future__ import annotations

import logging
import secrets
from collections import Counter
from dataclasses import asdict
from typing import Any

from bureau.answering.base import Responder
from bureau.config import Settings
from bureau.game.compensation import discard_card
from bureau.game.errors import CaseNotFoundError, ScenarioNotFoundError, UnsafeInputError, VersionConflictError
from bureau.game.inputs import checked_text
from bureau.game.interrogation import QUESTION_MAX_CHARS, Interrogation
from bureau.game.publication import Publisher
from bureau.game.retention import RetentionSweeper
from bureau.game.scenario_schema import MAX_CARD_CHARS, Scenario, load_builtin_scenarios
from bureau.game.views import CaseState, card_event_view, card_view, operator_snapshot
from bureau.ledger.policy_audit import WRITE_ACCEPTED, WRITE_REJECTED, PolicyDecision
from bureau.ledger.record import RecordEntry
from bureau.ledger.repository import (
    ACTIVE,
    LOADING,
    CaseMissingError,
    CaseRecord,
    Ledger,
    LedgerError,
    PendingEvent,
    VersionMismatchError,
)
from bureau.memory.gateway import MemoryGateway
from bureau.memory.types import CardDraft, MemoryUnavailableError, StoredCard
from bureau.scope.content_policy import INJECTION
from bureau.scope.keys import BOARD, SPACES, MemoryScope, Role, role_scope
from bureau.scope.memory_policy import MemoryPolicyError, WritePath, check_type
from bureau.scope.vocabulary import CreatedBy, EventType, MemoryType

log = logging.getLogger("bureau.game")
Written = list[tuple[MemoryScope, StoredCard]]
# What a whispered card is, in the game's terms, by the memory type the operator chose.
_WHISPER_KIND = {
    MemoryType.LONG_TERM_KNOWLEDGE: "secret",
    MemoryType.OPERATIONAL_MEMORY: "note",
    MemoryType.USER_PREFERENCE: "preference",
}


def _case_scopes(case_id: str) -> list[MemoryScope]:
    return [MemoryScope(case_id, space) for space in SPACES]


def new_case_id() -> str:
    # 96 random bits, unguessable; hex so an id never starts with "-" (a CLI would read it as an option).
    return secrets.token_hex(12)


class Bureau:
    def __init__(self, settings: Settings, gateway: MemoryGateway, ledger: Ledger, responder: Responder) -> None:
        self.gateway = gateway
        self.ledger = ledger
        self.scenarios = load_builtin_scenarios()
        self.interrogation = Interrogation(settings, gateway, responder, self._commit_or_undo, audit=self.audit)
        self.publisher = Publisher(gateway, ledger, settings.publication_lease_s)
        self.sweeper = RetentionSweeper(gateway, ledger)

    # ----- queries -------------------------------------------------------------------------------------

    def scenario_list(self) -> list[dict[str, str]]:
        return [
            {"id": s.id, "title": s.title, "language": s.language, "description": s.description}
            for _, s in sorted(self.scenarios.items())
        ]

    def scenario(self, scenario_id: str, language: str) -> Scenario:
        found = self.scenarios.get((scenario_id, language))
        if found is None:
            raise ScenarioNotFoundError(scenario_id)
        return found

    async def require_case(self, case_id: str) -> CaseRecord:
        case = await self.ledger.get_case(case_id)
        if case is None or case.status != ACTIVE:
            raise CaseNotFoundError(case_id)
        return case

    async def state(self, case_id: str) -> CaseState:
        case = await self.require_case(case_id)
        spaces = {scope.space: await self.gateway.list(scope) for scope in _case_scopes(case_id)}
        last = await self.ledger.last_interrogation(case_id)
        return CaseState(case, self.scenario(case.scenario_id, case.language), spaces, last)

    async def snapshot(self, case_id: str) -> dict[str, Any]:
        return operator_snapshot(await self.state(case_id))

    async def record(self, case_id: str) -> tuple[CaseRecord, list[RecordEntry]]:
        """The case and every entry of its record, oldest first (no limit: a record is never cut short)."""
        case = await self.require_case(case_id)
        return case, await self.ledger.case_record(case_id)

    # ----- commands ------------------------------------------------------------------------------------

    async def create_case(self, scenario_id: str, language: str) -> dict[str, Any]:
        scenario = self.scenario(scenario_id, language)
        case_id = new_case_id()
        await self.ledger.create_case(case_id, scenario.id, scenario.language)
        try:
            written = await self._load_cards(case_id, scenario)
            event = PendingEvent(EventType.CASE_CREATED, {"scenario_id": scenario.id, "language": scenario.language})
            await self._commit(case_id, [event], status=ACTIVE)
        except BaseException:
            await self._purge_quietly(case_id)
            raise
        await self.audit(case_id, loaded_decisions(written))
        return await self.snapshot(case_id)

    async def reset(self, case_id: str, expected_version: int | None = None) -> dict[str, Any]:
        """Back to the scenario start: write the new cards, commit, then remove the old ones. A failure before
        the commit undoes the new cards (nothing changed); a failed delete after it becomes a cleanup task."""
        case = await self._check_version(case_id, expected_version)
        old = [(scope, card) for scope in _case_scopes(case_id) for card in await self.gateway.list(scope)]
        written = await self._load_cards(case_id, self.scenario(case.scenario_id, case.language))
        # Always the version we read: of two resets at once, one commits and the other undoes its cards.
        await self._commit_or_undo(
            case_id, written, [PendingEvent(EventType.CASE_RESET, {})], expected_version=case.version, forget_state=True
        )
        for scope, card in old:
            await discard_card(self.gateway, self.ledger, scope, card.id, "reset")
        await self.audit(case_id, loaded_decisions(written))
        return await self.snapshot(case_id)

    async def erase(self, case_id: str) -> None:
        case = await self.ledger.get_case(case_id)
        if case is None or case.status == LOADING:
            raise CaseNotFoundError(case_id)
        await self.purge(case_id)  # an earlier erase that failed half-way (status erasing) is finished here

    async def purge(self, case_id: str, *, announce: bool = True) -> None:
        """Every trace of a case. The ledger marks it erasing first, so a command in flight cannot commit
        (it undoes its own write); then every card goes (role spaces and board copies); then every ledger
        row. `announce` leaves the content-free tombstone event that live streams of the case end on."""
        await self.ledger.begin_erase(case_id)
        await self.gateway.erase_case(case_id)
        await self.ledger.delete_case(case_id, tombstone=announce)

    async def whisper(
        self,
        case_id: str,
        role: Role,
        text: str,
        expected_version: int | None = None,
        memory_type: MemoryType = MemoryType.LONG_TERM_KNOWLEDGE,
        key: str | None = None,
    ) -> dict[str, Any]:
        creator = CreatedBy.OPERATOR
        try:
            # The type rule first: a forbidden type is refused whatever the text says (and without reading it).
            check_type(memory_type, creator, WritePath.ORDINARY, key)
            content = checked_text(text, MAX_CARD_CHARS, screening=self.gateway.screening)
            await self._check_version(case_id, expected_version)
            scope = role_scope(case_id, role)
            draft = CardDraft(
                content=content,
                topic=key or "whisper",
                kind=_WHISPER_KIND[memory_type],
                memory_type=memory_type,
                created_by=creator,
                key=key,
            )
            card = await self.gateway.write(scope, draft)  # checks the whole rule again, value schema included
        except (MemoryPolicyError, UnsafeInputError) as exc:
            await self.audit(case_id, [_rejected(exc, memory_type, creator, role)])
            raise
        event = PendingEvent(EventType.MEMORY_WRITTEN, {"card": card_event_view(card)})
        await self._commit_or_undo(case_id, [(scope, card)], [event], expected_version=expected_version)
        await self.audit(case_id, [PolicyDecision(WRITE_ACCEPTED, "ok", memory_type, creator, role)])
        return {"card": card_view(card)}

    async def interrogate(
        self, case_id: str, role: Role, question: str, expected_version: int | None = None
    ) -> dict[str, Any]:
        # A question may try to talk its way out of the scope (harmless, and shown live), but personal data
        # is refused: the question is kept as session memory.
        text = checked_text(
            question, QUESTION_MAX_CHARS, screening=self.gateway.screening, allowed=frozenset({INJECTION})
        )
        case = await self._check_version(case_id, expected_version)
        return await self.interrogation.run(case_id, role, text, case.language, expected_version)

    async def publish(
        self, case_id: str, role: Role, card_id: str, expected_version: int | None = None
    ) -> tuple[dict[str, Any], bool]:
        await self._check_version(case_id, expected_version)
        return await self.publisher.publish(case_id, role, card_id)

    async def run_cleanups(self) -> int:
        """Retry deletes that failed earlier. Returns how many tasks finished."""
        finished = 0
        for task in await self.ledger.due_cleanups():
            if task.space == BOARD and await self.ledger.is_published_copy(task.case_id, task.card_id):
                # A retry adopted this copy (found by source id) after its compensation failed: it is live now.
                await self.ledger.finish_cleanup(task.id)
                continue
            try:
                await self.gateway.delete(MemoryScope(task.case_id, task.space), task.card_id)
            except MemoryUnavailableError:
                await self.ledger.retry_cleanup_later(task.id, task.attempts + 1)
                continue
            await self.ledger.finish_cleanup(task.id)
            finished += 1
        return finished

    async def audit(self, case_id: str, decisions: list[PolicyDecision]) -> None:
        """Append to the policy audit trail. Best effort: a ledger fault here is logged, never turns a
        committed command into an error (and a rejected write stays rejected)."""
        try:
            await self.ledger.record_policy(case_id, decisions)
        except LedgerError as exc:
            log.warning("policy audit not recorded: %s", type(exc).__name__)

    async def policy_decisions(self, case_id: str, after_id: int, limit: int) -> list[dict[str, Any]]:
        await self.require_case(case_id)
        return [
            {"id": r.id, "created_at": r.created_at.isoformat(), **asdict(r.decision)}
            for r in await self.ledger.policy_decisions(case_id, after_id, limit)
        ]

    # ----- helpers -------------------------------------------------------------------------------------

    async def _check_version(self, case_id: str, expected_version: int | None) -> CaseRecord:
        case = await self.require_case(case_id)
        if expected_version is not None and case.version != expected_version:
            raise VersionConflictError(await self.snapshot(case_id))
        return case

    async def _commit(self, case_id: str, events: list[PendingEvent], **kwargs: Any) -> CaseRecord:
        try:
            return await self.ledger.change_case(case_id, events, **kwargs)
        except CaseMissingError as exc:
            raise CaseNotFoundError(case_id) from exc
        except VersionMismatchError as exc:
            raise VersionConflictError(await self.snapshot(case_id)) from exc

    async def _commit_or_undo(
        self, case_id: str, written: Written, events: list[PendingEvent], **kwargs: Any
    ) -> CaseRecord:
        try:
            return await self._commit(case_id, events, **kwargs)
        except BaseException:
            await self._undo(written)
            raise

    async def _load_cards(self, case_id: str, scenario: Scenario) -> Written:
        """All or nothing: a failed write removes the cards written before it."""
        written: Written = []
        try:
            for role, cards in scenario.cards.by_role().items():
                scope = role_scope(case_id, role)
                for card in cards:
                    draft = CardDraft(
                        content=card.content,
                        topic=card.topic,
                        kind=card.kind,
                        memory_type=card.memory_type,
                        trust=card.trust,
                        created_by=CreatedBy.SCENARIO,
                        key=card.key,
                    )
                    written.append((scope, await self.gateway.write(scope, draft)))
        except BaseException:
            await self._undo(written)
            raise
        return written

    async def _undo(self, written: Written) -> None:
        for scope, card in written:
            await discard_card(self.gateway, self.ledger, scope, card.id, "undo_failed_command")

    async def _purge_quietly(self, case_id: str) -> None:
        """A case whose creation failed: nobody ever saw it, so there is nothing to announce."""
        try:
            await self.purge(case_id, announce=False)
        except MemoryUnavailableError:
            log.error("could not remove the cards of a failed case %s", case_id)
            await self.ledger.delete_case(case_id, tombstone=False)


def _rejected(
    exc: MemoryPolicyError | UnsafeInputError, memory_type: MemoryType, creator: CreatedBy, space: str
) -> PolicyDecision:
    """The audit row of a refused write: the rule's code and the screening's reason codes, never the text."""
    detail = ",".join(exc.reasons) if isinstance(exc, UnsafeInputError) else exc.detail
    return PolicyDecision(WRITE_REJECTED, exc.code, memory_type, creator, space, detail=detail)


def loaded_decisions(written: Written) -> list[PolicyDecision]:
    """Scenario cards written: one accepted row per (space, type), with its count."""
    counts = Counter((scope.space, card.memory_type) for scope, card in written)
    return [
        PolicyDecision(WRITE_ACCEPTED, "ok", memory_type, CreatedBy.SCENARIO, space, count)
        for (space, memory_type), count in sorted(counts.items())
    ]
