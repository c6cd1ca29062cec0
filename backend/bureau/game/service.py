"""The bureau: the only coordinator of commands. Every command either completes or leaves nothing behind."""

from __future__ import annotations

import logging
import secrets
import time
from collections import Counter
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from bureau.answering.base import Responder
from bureau.answering.selection import case_mode
from bureau.config import Settings
from bureau.game.compensation import discard_card
from bureau.game.contract import (
    CaseMode,
    CrossExaminationResult,
    FindingEvaluation,
    FindingList,
    FindingPromotion,
    OperatorSnapshot,
    PolicyDecisionView,
    PublicationResult,
    ScenarioSummary,
    WhisperResult,
)
from bureau.game.contract import Interrogation as InterrogationResult
from bureau.game.cross_examination import CrossExamination
from bureau.game.errors import (
    CardNotFoundError,
    CaseNotFoundError,
    ScenarioNotFoundError,
    UnsafeInputError,
    VersionConflictError,
)
from bureau.game.findings import Findings
from bureau.game.inputs import checked_text
from bureau.game.interrogation import Interrogation
from bureau.game.knowledge import step_of
from bureau.game.publication import Publisher
from bureau.game.retention import RetentionSweeper
from bureau.game.scenario_schema import Scenario, load_builtin_scenarios
from bureau.game.subject_access import subject_access_json
from bureau.game.views import CaseState, card_event_view, card_view, operator_snapshot, policy_decision_view
from bureau.ledger.policy_audit import PolicyDecision
from bureau.ledger.record import RecordEntry
from bureau.ledger.repository import (
    ACTIVE,
    LOADING,
    CaseMissingError,
    CaseRecord,
    CaseView,
    FindingRecord,
    Ledger,
    LedgerError,
    PendingEvent,
    StepOf,
    VersionMismatchError,
)
from bureau.memory.gateway import MemoryGateway
from bureau.memory.types import CardDraft, MemoryUnavailableError, StoredCard
from bureau.scope.content_policy import INJECTION
from bureau.scope.keys import BOARD, ROLES, SPACES, MemoryScope, Role, board_scope, role_scope, space_scope
from bureau.scope.limits import QUESTION_MAX_CHARS, SOURCE_MAX_CHARS
from bureau.scope.memory_policy import MemoryPolicyError, WritePath, check_type, text_limit
from bureau.scope.vocabulary import CreatedBy, EventType, Kind, MemoryType, PolicyAction, PolicyCode

log = logging.getLogger("bureau.game")
Written = list[tuple[MemoryScope, StoredCard]]
RESET_RETRY_S = 20.0  # how long a reset without expected_version keeps retrying behind other commits
# What a whispered card is, in the game's terms, by the memory type the operator chose.
_WHISPER_KIND = {
    MemoryType.LONG_TERM_KNOWLEDGE: Kind.SECRET,
    MemoryType.OPERATIONAL_MEMORY: Kind.NOTE,
    MemoryType.USER_PREFERENCE: Kind.PREFERENCE,
}


EXPORT_PAGE = 200  # entries an export reads from the ledger at a time
RECORD_PAGE_MAX, RECORD_PAGE_DEFAULT = 200, 50  # a page of `/record` (the timeline asks for the default)


@dataclass(frozen=True, slots=True)
class RecordExport:
    case: CaseRecord
    count: int
    pages: AsyncIterator[list[RecordEntry]]  # oldest first


@dataclass(frozen=True, slots=True)
class RecordPage:
    entries: list[RecordEntry]  # newest first
    next: int | None  # the cursor of the next (older) page; None on the last
    total: int  # entries in the whole record


def _in_play(case_id: str, case: CaseRecord | None) -> CaseRecord:
    """The case, if it exists and is in play (not loading, not being erased); otherwise it is not found."""
    if case is None or case.status != ACTIVE:
        raise CaseNotFoundError(case_id)
    return case


def _case_scopes(case_id: str) -> list[MemoryScope]:
    return [MemoryScope(case_id, space) for space in SPACES]


def new_case_id() -> str:
    # 96 random bits, unguessable; hex so an id never starts with "-" (a CLI would read it as an option).
    return secrets.token_hex(12)


class Bureau:
    def __init__(self, settings: Settings, gateway: MemoryGateway, ledger: Ledger, responder: Responder) -> None:
        self.gateway = gateway
        self.ledger = ledger
        self.settings, self.responder = settings, responder
        self.scenarios = load_builtin_scenarios()
        self.interrogation = Interrogation(settings, gateway, responder, self._commit_or_undo)
        self.cross_examination = CrossExamination(settings, gateway, responder, self._commit_or_undo)
        self.publisher = Publisher(gateway, ledger, settings.publication_lease_s)
        self.findings = Findings(settings, gateway, ledger)
        self.sweeper = RetentionSweeper(gateway, ledger)
        # The ledger keeps the snapshot's matrix and latest answers, step by step, in each command's commit.
        ledger.knowledge_steps = self._knowledge_steps

    def _knowledge_steps(self, scenario_id: str, language: str) -> StepOf:
        return step_of(self.scenario(scenario_id, language).key_facts)

    # ----- queries -------------------------------------------------------------------------------------

    def scenario_list(self) -> list[ScenarioSummary]:
        return [
            ScenarioSummary(id=s.id, title=s.title, language=s.language, description=s.description)
            for _, s in sorted(self.scenarios.items())
        ]

    def scenario(self, scenario_id: str, language: str) -> Scenario:
        found = self.scenarios.get((scenario_id, language))
        if found is None:
            raise ScenarioNotFoundError(scenario_id)
        return found

    async def require_case(self, case_id: str) -> CaseRecord:
        return _in_play(case_id, await self.ledger.get_case(case_id))

    async def state(self, case_id: str) -> CaseState:
        return await self._state(case_id, await self.ledger.case_view(case_id))

    async def _state(self, case_id: str, view: CaseView) -> CaseState:
        """The case's state: one ledger read (`view`) and one store call."""
        case = _in_play(case_id, view.case)
        spaces: dict[str, list[StoredCard]] = await self.gateway.list_spaces(_case_scopes(case_id))
        scenario = self.scenario(case.scenario_id, case.language)
        return CaseState(case, scenario, spaces, view.last_interrogation, view.last_cross_examination)

    def translations(self, scenario_id: str) -> tuple[Scenario, ...]:
        """The scenario in every language it ships in (labels in the interface language, not only the case's)."""
        return tuple(s for (sid, _), s in sorted(self.scenarios.items()) if sid == scenario_id)

    async def latest_case_id(self) -> str:
        """The newest active case, for a stage that follows the operator from case to case."""
        case = await self.ledger.latest_active_case()
        if case is None:
            raise CaseNotFoundError("latest")
        return case.id

    async def snapshot(self, case_id: str) -> OperatorSnapshot:
        """The operator's view, with each role's latest answer and the who-knows-what matrix as the ledger
        maintains them (the same cost at any record length), so a reload or a second console sees what this
        one saw."""
        view = await self.ledger.case_view(case_id, knowledge=True)  # the maintained state in the same read
        state, known = await self._state(case_id, view), view.knowledge
        if known is None:  # only when there is no case, which `_state` has said already
            raise CaseNotFoundError(case_id)
        # Per case: a case in a language the model does not speak stays in evidence mode.
        mode, reason = case_mode(self.settings, self.responder, state.case.language)
        translations = self.translations(state.case.scenario_id)
        return operator_snapshot(state, CaseMode(mode=mode, reason=reason), known, translations)

    async def record_page(self, case_id: str, after: int | None, limit: int) -> tuple[CaseRecord, RecordPage]:
        """One page of the record, newest first (as the timeline shows it): the `limit` entries older than the
        cursor `after` (none: the newest), and the cursor of the next page (None on the last one)."""
        # One more: is there a next page? The case comes with the page, in one read.
        case, found, total = await self.ledger.record_page(case_id, after, limit + 1)
        case = _in_play(case_id, case)
        entries = found[:limit]
        return case, RecordPage(entries, entries[-1].id if len(found) > limit else None, total)

    async def record_export(self, case_id: str) -> RecordExport:
        """What an export streams: the case, how many entries it has now, and every one of them up to the newest
        (an entry appended meanwhile is left to the next export), oldest first, a page at a time: no limit, and
        never the whole record in memory."""
        case = await self.require_case(case_id)
        count, newest = await self.ledger.record_bounds(case_id)

        async def pages() -> AsyncIterator[list[RecordEntry]]:
            cursor = 0
            while cursor < newest and (page := await self.ledger.record_since(case_id, cursor, EXPORT_PAGE, newest)):
                yield page
                cursor = page[-1].id

        return RecordExport(case, count, pages())

    async def subject_access(self, case_id: str) -> AsyncIterator[str]:
        """Which spaces hold which cards, every board copy with its source, every derived artifact with its
        ingredients and audience: the `SubjectAccess` JSON, streamed (the record's artifacts a page at a time).
        The case is checked before the first byte."""
        state = await self.state(case_id)
        export = await self.record_export(case_id)
        return subject_access_json(state, export.pages)

    # ----- commands ------------------------------------------------------------------------------------

    async def create_case(self, scenario_id: str, language: str) -> OperatorSnapshot:
        scenario = self.scenario(scenario_id, language)
        case_id = new_case_id()
        await self.ledger.create_case(case_id, scenario.id, scenario.language)
        try:
            written = await self._load_cards(case_id, scenario)
            event = PendingEvent(EventType.CASE_CREATED, {"scenario_id": scenario.id, "language": scenario.language})
            await self._commit(case_id, [event], status=ACTIVE, decisions=loaded_decisions(written))
        except BaseException:
            await self._purge_quietly(case_id)
            raise
        return await self.snapshot(case_id)

    async def reset(self, case_id: str, expected_version: int | None = None) -> OperatorSnapshot:
        """Back to the scenario start, at any size: write the new cards, commit, then remove the old ones.
        A failure before the commit undoes the new cards (nothing changed); a failed delete after it becomes
        a cleanup task. Without `expected_version` a reset waits its turn: commands that commit meanwhile
        make it list the old cards again and retry, instead of failing."""
        started_after = await self.ledger.latest_event_id()
        case = await self._check_version(case_id, expected_version)
        written = await self._load_cards(case_id, self.scenario(case.scenario_id, case.language))
        new_ids = {card.id for _, card in written}
        version, deadline = case.version, time.monotonic() + RESET_RETRY_S
        try:
            while True:
                scopes = _case_scopes(case_id)
                listed = await self.gateway.list_spaces(scopes)
                old = {scope: [c.id for c in listed[scope.space] if c.id not in new_ids] for scope in scopes}
                try:
                    # The version read before listing: a command that commits in between makes this one retry.
                    event = PendingEvent(EventType.CASE_RESET, {})
                    await self.ledger.change_case(
                        case_id,
                        [event],
                        expected_version=version,
                        decisions=loaded_decisions(written),
                        forget_state=True,
                    )
                    break
                except VersionMismatchError:
                    if expected_version is not None or time.monotonic() > deadline:
                        raise
                    if await self._was_reset_since(case_id, started_after):
                        # Another reset won: the case is at its start already (and may have removed our cards).
                        await self._undo(written)
                        return await self.snapshot(case_id)
                version = (await self.require_case(case_id)).version
        except BaseException as exc:
            await self._undo(written)
            if isinstance(exc, VersionMismatchError):
                raise VersionConflictError(await self.snapshot(case_id)) from exc
            if isinstance(exc, CaseMissingError):
                raise CaseNotFoundError(case_id) from exc
            raise
        for scope, card_ids in old.items():
            await self._discard_many(scope, card_ids, "reset")
        return await self.snapshot(case_id)

    async def _was_reset_since(self, case_id: str, cursor: int) -> bool:
        while batch := await self.ledger.events_after(case_id, cursor):
            if any(event.type == EventType.CASE_RESET for event in batch):
                return True
            cursor = batch[-1].id
        return False

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
        source: str | None = None,
    ) -> WhisperResult:
        creator = CreatedBy.OPERATOR
        try:
            # The type rule first: a forbidden type is refused whatever the text says (and without reading it).
            check_type(memory_type, creator, WritePath.ORDINARY, key)
            content = checked_text(text, text_limit(memory_type, key), screening=self.gateway.screening)
            told_by = checked_text(source, SOURCE_MAX_CHARS, screening=self.gateway.screening) if source else None
            await self._check_version(case_id, expected_version)
            scope = role_scope(case_id, role)
            draft = CardDraft(
                content=content,
                topic=key or "whisper",
                kind=_WHISPER_KIND[memory_type],
                memory_type=memory_type,
                created_by=creator,
                key=key,
                told_by=told_by,
            )
            card = await self.gateway.write(scope, draft)  # checks the whole rule again, value schema included
        except (MemoryPolicyError, UnsafeInputError) as exc:
            await self.audit(case_id, [_rejected(exc, memory_type, creator, role)])
            raise
        event = PendingEvent(EventType.MEMORY_WRITTEN, {"card": card_event_view(card)})
        accepted = PolicyDecision(PolicyAction.WRITE_ACCEPTED, PolicyCode.OK, memory_type, creator, role)
        await self._commit_or_undo(
            case_id, [(scope, card)], [event], expected_version=expected_version, decisions=[accepted]
        )
        return WhisperResult(card=card_view(card))

    async def interrogate(
        self, case_id: str, role: Role, question: str, expected_version: int | None = None
    ) -> InterrogationResult:
        # A question may try to talk its way out of the scope (harmless, and shown live), but personal data
        # is refused: the question is kept as session memory.
        text = checked_text(
            question, QUESTION_MAX_CHARS, screening=self.gateway.screening, allowed=frozenset({INJECTION})
        )
        case = await self._check_version(case_id, expected_version)
        return await self.interrogation.run(case_id, role, text, case.language, expected_version)

    async def cross_examine(
        self, case_id: str, roles: list[Role], question: str, expected_version: int | None = None
    ) -> CrossExaminationResult:
        """One question to several roles, each searched in its own scopes; a joint conclusion whose audience
        is the narrowest of its ingredients (sealed when it mixes two roles' private cards)."""
        text = checked_text(
            question, QUESTION_MAX_CHARS, screening=self.gateway.screening, allowed=frozenset({INJECTION})
        )
        case = await self._check_version(case_id, expected_version)
        return await self.cross_examination.run(case_id, roles, text, case.language, expected_version)

    async def delete_card(self, case_id: str, card_id: str, expected_version: int | None = None) -> None:
        """Erase one private card: its board copies go with it, and every record entry derived from either
        is marked and loses its text. The ledger commits first; a store delete that fails afterwards
        becomes a cleanup task, so the card is gone from the game at once and from the store soon after."""
        await self._check_version(case_id, expected_version)
        card = await self._private_card(case_id, card_id)
        board = board_scope(case_id)
        listed = [c.id for c in await self.gateway.find_by_source(board, card.id)]
        withdrawn: list[FindingRecord] = []
        try:
            # Also leaves the tombstone a racing publish collides with, and adds the copy its row names; and
            # re-runs leave-one-out for every finding the card supported (docs/findings.md).
            copy_ids = await self.ledger.erase_card(
                case_id, card.id, card.space, listed, expected_version, withdrawn=withdrawn
            )
        except CaseMissingError as exc:
            raise CaseNotFoundError(case_id) from exc
        except VersionMismatchError as exc:
            raise VersionConflictError(await self.snapshot(case_id)) from exc
        for copy_id in copy_ids:
            await discard_card(self.gateway, self.ledger, board, copy_id, "card_erased")
        await self.findings.remove_withdrawn(case_id, withdrawn)
        await discard_card(self.gateway, self.ledger, space_scope(case_id, card.space), card.id, "card_erased")

    async def _private_card(self, case_id: str, card_id: str) -> StoredCard:
        for role in ROLES:
            card = await self.gateway.get(role_scope(case_id, role), card_id)
            if card is not None:
                return card
        raise CardNotFoundError(card_id)  # a board copy, another case's card and no card at all look alike

    async def publish(
        self, case_id: str, role: Role, card_id: str, expected_version: int | None = None
    ) -> PublicationResult:
        """`idempotent`: the card was published before (the same board copy)."""
        if expected_version is not None:  # a conditional publish checks its own version
            await self._check_version(case_id, expected_version)
        # Otherwise the case is checked once per run of the Saga, which concurrent publishes of the card share.
        public_card, idempotent = await self.publisher.publish(case_id, role, card_id, check_case=self.require_case)
        return PublicationResult(public_card=public_card, idempotent=idempotent)

    async def evaluate_findings(self, case_id: str, claim: str | None) -> FindingEvaluation:
        await self.require_case(case_id)
        return await self.findings.evaluate(case_id, claim)

    async def promote_finding(self, case_id: str, claim: str) -> FindingPromotion:
        """`idempotent`: the claim was promoted before (the same finding card)."""
        await self.require_case(case_id)
        return await self.findings.promote(case_id, claim)

    async def list_findings(self, case_id: str) -> FindingList:
        await self.require_case(case_id)
        return await self.findings.list(case_id)

    async def run_cleanups(self) -> int:
        """Retry deletes that failed earlier. Returns how many tasks finished."""
        finished = 0
        for task in await self.ledger.due_cleanups():
            if task.space == BOARD and await self.ledger.is_published_copy(task.case_id, task.card_id):
                # A retry adopted this copy (found by source id) after its compensation failed: it is live now.
                await self.ledger.finish_cleanup(task.id)
                continue
            try:
                await self.gateway.delete(space_scope(task.case_id, task.space), task.card_id)
            except MemoryUnavailableError:
                await self.ledger.retry_cleanup_later(task.id, task.attempts + 1)
                continue
            await self.ledger.finish_cleanup(task.id)
            finished += 1
        return finished

    async def audit(self, case_id: str, decisions: list[PolicyDecision]) -> None:
        """Append a rejected write to the policy audit trail (an accepted one is audited in its command's
        commit). Best effort: a ledger fault here is logged, and the write stays rejected."""
        try:
            await self.ledger.record_policy(case_id, decisions)
        except LedgerError as exc:
            log.warning("policy audit not recorded: %s", type(exc).__name__)

    async def policy_decisions(self, case_id: str, after_id: int, limit: int) -> list[PolicyDecisionView]:
        await self.require_case(case_id)
        return [policy_decision_view(r) for r in await self.ledger.policy_decisions(case_id, after_id, limit)]

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
                drafts = [
                    CardDraft(
                        content=card.content,
                        topic=card.topic,
                        kind=card.kind,
                        memory_type=card.memory_type,
                        trust=card.trust,
                        created_by=CreatedBy.SCENARIO,
                        key=card.key,
                        told_by=card.source,
                    )
                    for card in cards
                ]
                written += [(scope, card) for card in await self.gateway.write_many(scope, drafts)]
        except BaseException:
            await self._undo(written)
            raise
        return written

    async def _undo(self, written: Written) -> None:
        by_scope: dict[MemoryScope, list[str]] = {}
        for scope, card in written:
            by_scope.setdefault(scope, []).append(card.id)
        for scope, card_ids in by_scope.items():
            await self._discard_many(scope, card_ids, "undo_failed_command")

    async def _discard_many(self, scope: MemoryScope, card_ids: list[str], reason: str) -> None:
        """One batched delete; if the store fails, card by card, each failure left as a cleanup task."""
        if not card_ids:
            return
        try:
            await self.gateway.delete_many(scope, card_ids)
        except MemoryUnavailableError:
            for card_id in card_ids:
                await discard_card(self.gateway, self.ledger, scope, card_id, reason)

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
    return PolicyDecision(PolicyAction.WRITE_REJECTED, exc.code, memory_type, creator, space, detail=detail)


def loaded_decisions(written: Written) -> list[PolicyDecision]:
    """Scenario cards written: one accepted row per (space, type), with its count."""
    counts = Counter((scope.space, card.memory_type) for scope, card in written)
    return [
        PolicyDecision(PolicyAction.WRITE_ACCEPTED, PolicyCode.OK, memory_type, CreatedBy.SCENARIO, space, count)
        for (space, memory_type), count in sorted(counts.items())
    ]
