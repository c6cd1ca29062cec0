"""The bureau: the only coordinator of commands. Every command either completes or leaves nothing behind."""

from __future__ import annotations

import logging
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bureau.answering.base import Responder
from bureau.config import Settings
from bureau.game.errors import (
    CaseNotFoundError,
    ScenarioNotFoundError,
    UnsafeInputError,
    VersionConflictError,
)
from bureau.game.interrogation import Interrogation
from bureau.game.publication import Publisher
from bureau.game.scenario_schema import Scenario, load_scenarios
from bureau.game.views import card_event_view, card_view
from bureau.ledger.repository import (
    CaseMissingError,
    CaseRecord,
    Ledger,
    PendingEvent,
    TraceRecord,
    VersionMismatchError,
)
from bureau.memory.gateway import MemoryGateway
from bureau.memory.types import CardDraft, MemoryUnavailableError, StoredCard
from bureau.scope.content_policy import normalise_whisper, screen_text
from bureau.scope.keys import BOARD, SPACES, MemoryScope, Role, role_scope

log = logging.getLogger("bureau.game")
SCENARIO_DIR = Path(__file__).parent / "scenarios"
WHISPER_MAX_CHARS = 280


@dataclass(frozen=True, slots=True)
class CaseState:
    """Everything a snapshot is made of, before any audience projection."""

    case: CaseRecord
    scenario: Scenario
    spaces: dict[str, list[StoredCard]]
    last_trace: TraceRecord | None


def _case_scopes(case_id: str) -> list[MemoryScope]:
    return [MemoryScope(case_id, space) for space in SPACES]


def new_case_id() -> str:
    # 96 random bits, unguessable; hex so an id never starts with "-" (a CLI would read it as an option).
    return secrets.token_hex(12)


class Bureau:
    def __init__(self, settings: Settings, gateway: MemoryGateway, ledger: Ledger, responder: Responder) -> None:
        self.settings = settings
        self.gateway = gateway
        self.ledger = ledger
        self.responder = responder
        self.scenarios = load_scenarios(SCENARIO_DIR)
        self.interrogation = Interrogation(settings, gateway, ledger, responder, self._commit_or_undo)
        self.publisher = Publisher(gateway, ledger, settings.publication_lease_s)

    # ----- queries -------------------------------------------------------------------------------------

    def scenario_list(self) -> list[dict[str, str]]:
        return [
            {"id": s.id, "title": s.title, "language": s.language, "description": s.description}
            for (_, _), s in sorted(self.scenarios.items())
        ]

    def scenario(self, scenario_id: str, language: str) -> Scenario:
        found = self.scenarios.get((scenario_id, language))
        if found is None:
            raise ScenarioNotFoundError(scenario_id)
        return found

    async def require_case(self, case_id: str) -> CaseRecord:
        case = await self.ledger.get_case(case_id)
        if case is None or case.status == "loading":
            raise CaseNotFoundError(case_id)
        return case

    async def state(self, case_id: str) -> CaseState:
        case = await self.require_case(case_id)
        spaces = {scope.space: await self.gateway.list(scope) for scope in _case_scopes(case_id)}
        trace = await self.ledger.get_trace(case_id)
        return CaseState(case, self.scenario(case.scenario_id, case.language), spaces, trace)

    async def snapshot(self, case_id: str) -> dict[str, Any]:
        return operator_snapshot(await self.state(case_id))

    async def _check_version(self, case_id: str, expected_version: int | None) -> CaseRecord:
        case = await self.require_case(case_id)
        if expected_version is not None and case.version != expected_version:
            raise VersionConflictError(await self.snapshot(case_id))
        return case

    async def _commit(self, case_id: str, events: PendingEvent | list[PendingEvent], **kwargs: Any) -> CaseRecord:
        try:
            case, _ = await self.ledger.change_case(case_id, events, **kwargs)
        except CaseMissingError as exc:
            raise CaseNotFoundError(case_id) from exc
        except VersionMismatchError as exc:
            raise VersionConflictError(await self.snapshot(case_id)) from exc
        return case

    # ----- loading scenario cards (all or nothing) ---------------------------------------------------

    async def _load_cards(self, case_id: str, scenario: Scenario) -> list[tuple[MemoryScope, StoredCard]]:
        written: list[tuple[MemoryScope, StoredCard]] = []
        try:
            for role, cards in scenario.cards.by_role().items():
                scope = role_scope(case_id, role)  # type: ignore[arg-type]
                for card in cards:
                    draft = CardDraft(
                        content=card.content,
                        topic=card.topic,
                        kind=card.kind,
                        memory_type=card.memory_type,
                        trust=card.trust,
                        created_by="scenario",
                    )
                    written.append((scope, await self.gateway.write(scope, draft)))
        except BaseException:
            await self._undo_writes(written)
            raise
        return written

    async def _undo_writes(self, written: list[tuple[MemoryScope, StoredCard]]) -> None:
        """Compensate: remove what a failed command wrote. A failed delete becomes a cleanup task."""
        for scope, card in written:
            try:
                await self.gateway.delete(scope, card.id)
            except MemoryUnavailableError:
                await self._schedule_cleanup(scope, card.id, "undo_failed_command")

    async def _schedule_cleanup(self, scope: MemoryScope, card_id: str, reason: str) -> None:
        try:
            await self.ledger.add_cleanup(scope.case_id, scope.space, card_id, reason)
        except Exception:
            log.error("could not record a cleanup task for card %s in %s", card_id, scope.key)

    # ----- commands ------------------------------------------------------------------------------------

    async def create_case(self, scenario_id: str, language: str) -> dict[str, Any]:
        scenario = self.scenario(scenario_id, language)
        case_id = new_case_id()
        await self.ledger.create_case(case_id, scenario.id, scenario.language)
        try:
            await self._load_cards(case_id, scenario)
            event = PendingEvent("case.created", {"scenario_id": scenario.id, "language": scenario.language})
            await self._commit(case_id, event, status="active")
        except BaseException:
            await self._discard_case(case_id)
            raise
        return await self.snapshot(case_id)

    async def _discard_case(self, case_id: str) -> None:
        try:
            await self.gateway.erase_case(case_id)
        except MemoryUnavailableError:
            log.error("could not erase the cards of a failed case %s", case_id)
        await self.ledger.delete_case(case_id, tombstone=False)  # nobody ever saw it: nothing to announce

    async def reset(self, case_id: str, expected_version: int | None = None) -> dict[str, Any]:
        """Back to the scenario start: write the new cards, commit, then remove the old ones. A failure before
        the commit undoes the new cards (nothing changed); a failed delete after it becomes a cleanup task."""
        case = await self._check_version(case_id, expected_version)
        old = [(scope, card) for scope in _case_scopes(case_id) for card in await self.gateway.list(scope)]
        written = await self._load_cards(case_id, self.scenario(case.scenario_id, case.language))
        await self._commit_or_undo(
            case_id,
            written,
            PendingEvent("case.reset", {}),
            expected_version=expected_version,
            extra=lambda session: Ledger.forget_case_state(session, case_id),
        )
        for scope, card in old:
            try:
                await self.gateway.delete(scope, card.id)
            except MemoryUnavailableError:
                await self._schedule_cleanup(scope, card.id, "reset")
        return await self.snapshot(case_id)

    async def erase(self, case_id: str) -> None:
        """Remove every trace of a case: cards in every space, board copies, ledger rows, events, traces."""
        await self.require_case(case_id)
        await self.gateway.erase_case(case_id)
        await self.ledger.delete_case(case_id)

    async def whisper(self, case_id: str, role: Role, text: str, expected_version: int | None = None) -> dict[str, Any]:
        content = normalise_whisper(text)
        reasons = ["length"] if not 1 <= len(content) <= WHISPER_MAX_CHARS else screen_text(content)
        if reasons:
            raise UnsafeInputError(reasons)
        await self._check_version(case_id, expected_version)
        scope = role_scope(case_id, role)
        draft = CardDraft(content=content, topic="whisper", kind="secret", memory_type="fact", created_by="operator")
        card = await self.gateway.write(scope, draft)
        await self._commit_or_undo(
            case_id,
            [(scope, card)],
            PendingEvent("memory.written", {"card": card_event_view(card)}),
            expected_version=expected_version,
        )
        return {"card": card_view(card)}

    async def interrogate(
        self, case_id: str, role: Role, question: str, expected_version: int | None = None
    ) -> dict[str, Any]:
        text = Interrogation.check_question(question)
        case = await self._check_version(case_id, expected_version)
        return await self.interrogation.run(case_id, role, text, case.language, expected_version)

    async def publish(
        self, case_id: str, role: Role, card_id: str, expected_version: int | None = None
    ) -> tuple[dict[str, Any], bool]:
        await self._check_version(case_id, expected_version)
        return await self.publisher.publish(case_id, role, card_id)

    async def _commit_or_undo(
        self,
        case_id: str,
        written: list[tuple[MemoryScope, StoredCard]],
        events: PendingEvent | list[PendingEvent],
        **kwargs: Any,
    ) -> CaseRecord:
        try:
            return await self._commit(case_id, events, **kwargs)
        except BaseException:
            await self._undo_writes(written)
            raise

    async def run_cleanups(self) -> int:
        """Retry deletes that failed earlier. Returns how many tasks finished."""
        finished = 0
        for task in await self.ledger.due_cleanups():
            if task.space == BOARD and await self.ledger.is_published_copy(task.case_id, task.card_id):
                # A retry adopted this copy (found by source id) after its compensation failed: it is live now.
                await self.ledger.finish_cleanup(task.id)
                continue
            try:
                await self.gateway.delete(MemoryScope(task.case_id, task.space), task.card_id)  # type: ignore[arg-type]
            except MemoryUnavailableError:
                await self.ledger.retry_cleanup_later(task.id, task.attempts + 1)
                continue
            await self.ledger.finish_cleanup(task.id)
            finished += 1
        return finished


def operator_snapshot(state: CaseState) -> dict[str, Any]:
    scenario = state.scenario
    return {
        "case": {
            "id": state.case.id,
            "scenario_id": state.case.scenario_id,
            "language": state.case.language,
            "version": state.case.version,
            "status": state.case.status,
            "created_at": state.case.created_at.isoformat(),
        },
        "scenario": {
            "id": scenario.id,
            "title": scenario.title,
            "description": scenario.description,
            "preset_questions": list(scenario.preset_questions),
            "key_facts": [fact.model_dump() for fact in scenario.key_facts],
        },
        "spaces": {space: [card_view(c) for c in state.spaces[space]] for space in SPACES},
        "last_trace": state.last_trace.trace if state.last_trace else None,
    }
