"""The bureau: the only coordinator of commands. Every command either completes or leaves nothing behind."""

from __future__ import annotations

import logging
import secrets
import time
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from bureau.answering.base import Responder
from bureau.answering.selection import case_mode
from bureau.config import Settings
from bureau.game.changes import CaseChange
from bureau.game.compensation import discard_many, discard_superseded, run_cleanup
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
    FindingNotQualifiedError,
    FindingPendingError,
    PublicationPendingError,
    ScenarioNotFoundError,
    UnsafeInputError,
    VersionConflictError,
)
from bureau.game.findings import Findings
from bureau.game.inputs import checked_text
from bureau.game.interrogation import Interrogation, keep_recent_session_records
from bureau.game.keys import Keys
from bureau.game.knowledge import step_of
from bureau.game.publication import FaultHook, Publisher
from bureau.game.reseal import Resealer
from bureau.game.retention import RetentionSweeper
from bureau.game.scenario_schema import Scenario, load_builtin_scenarios
from bureau.game.subject_access import subject_access_json
from bureau.game.views import (
    CaseState,
    StageState,
    card_event_view,
    card_view,
    operator_snapshot,
    policy_decision_view,
)
from bureau.ledger.policy_audit import PolicyDecision
from bureau.ledger.record import RecordEntry
from bureau.ledger.repository import (
    ACTIVE,
    LOADING,
    CaseMissingError,
    CaseRecord,
    CaseView,
    CleanupTask,
    FindingRecord,
    GenerationMovedError,
    Ledger,
    LedgerError,
    PendingEvent,
    StepOf,
    VersionMismatchError,
)
from bureau.memory.gateway import MemoryGateway
from bureau.memory.types import CardDraft, MemoryUnavailableError, StoredCard
from bureau.scope.content_policy import INJECTION
from bureau.scope.keys import BOARD, ROLES, Role
from bureau.scope.limits import QUESTION_MAX_CHARS, SOURCE_MAX_CHARS
from bureau.scope.memory_policy import MemoryPolicyError, WritePath, check_type, may_be_evidence, text_limit
from bureau.scope.vocabulary import CreatedBy, EventType, Kind, MemoryType, PolicyAction, PolicyCode
from bureau.vault import Grant, Vault, VaultUnavailableError

log = logging.getLogger("bureau.game")
T = TypeVar("T")
# A command that met a reset in its commit runs again in the new generation, at most this many times (a reset
# is rare; a case reset over and over this fast answers 409 VERSION_CONFLICT instead of looping).
GENERATION_ATTEMPTS = 5
# What a whispered card is, in the game's terms, by the memory type the operator chose.
_WHISPER_KIND = {
    MemoryType.LONG_TERM_KNOWLEDGE: Kind.SECRET,
    MemoryType.OPERATIONAL_MEMORY: Kind.NOTE,
    MemoryType.USER_PREFERENCE: Kind.PREFERENCE,
}


EXPORT_PAGE = 200  # entries an export reads from the ledger at a time
RECORD_PAGE_MAX, RECORD_PAGE_DEFAULT = 200, 50  # a page of `/record` (the timeline asks for the default)
# Test seam (like the publish Saga's): a card's erasure committed, with its cleanup tasks, none carried out yet.
ERASURE_STEPS = ("after_card_erasure_commit",)


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


def new_case_id() -> str:
    # 96 random bits, unguessable; hex so an id never starts with "-" (a CLI would read it as an option).
    return secrets.token_hex(12)


class Bureau:
    def __init__(
        self, settings: Settings, gateway: MemoryGateway, ledger: Ledger, responder: Responder, vault: Vault
    ) -> None:
        self.gateway = gateway
        self.ledger = ledger
        self.settings, self.responder = settings, responder
        self.scenarios = load_builtin_scenarios()
        self.resealer = Resealer(gateway, ledger, vault)
        self.keys = Keys(vault, self.resealer)
        self.fault: FaultHook = lambda step: None
        self.interrogation = Interrogation(settings, gateway, responder)
        self.cross_examination = CrossExamination(settings, gateway, responder)
        self.publisher = Publisher(gateway, ledger, self.keys, settings.publication_lease_s)
        self.findings = Findings(settings, gateway, ledger, self.keys)
        self.sweeper = RetentionSweeper(gateway, ledger, self.keys)

    def knowledge_steps(self, case: CaseRecord) -> StepOf:
        """The steps of the case's scenario, handed to each ledger call that keeps the snapshot's matrix and
        latest answers (an interrogation's commit, a read that may fold the case again)."""
        return step_of(self.scenario(case.scenario_id, case.language).key_facts)

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
        """The case, in play, with its keys in the vault: a case whose keys are gone was erased (here, or after
        the copy of the data this server runs on was taken) and answers 404 on every route, content-free ones
        included; nothing makes keys for it again (a reset would)."""
        case = _in_play(case_id, await self.ledger.get_case(case_id))
        if not await self.keys.vault.has_keys(case_id):
            raise CaseNotFoundError(case_id)
        return case

    async def stage_state(self, case_id: str) -> StageState:
        """What the stage may see: each role's card count (listed, never opened), the board's cards and the
        content-free traces of the last interrogation and cross-examination."""
        view = await self.ledger.case_view(case_id)
        case = _in_play(case_id, view.case)
        async with self.keys.stage(case) as grant:
            counted, cards = await self.gateway.listing(grant)  # one statement: the counts and the board
        board = cards[BOARD]
        counts: dict[str, int] = {
            role: sum(1 for row in counted[role] if may_be_evidence(row.memory_type)) for role in ROLES
        }
        return StageState(case, counts, board, view.last_interrogation, view.last_cross_examination)

    async def _state(self, case_id: str, view: CaseView, grant: Grant) -> CaseState:
        """The case's state: one ledger read (`view`) and one store call, under the operator's grant."""
        case = _in_play(case_id, view.case)
        spaces: dict[str, list[StoredCard]] = await self.gateway.list_spaces(grant)
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
        case = await self.require_case(case_id)
        async with self.keys.operator(case) as grant:
            # The maintained state in the same read.
            view = await self.ledger.case_view(case_id, grant=grant, steps=self.knowledge_steps(case))
            state, known = await self._state(case_id, view, grant), view.knowledge
        if known is None:  # only when there is no case, which `_state` has said already
            raise CaseNotFoundError(case_id)
        # Per case: a case in a language the model does not speak stays in evidence mode.
        mode, reason = case_mode(self.settings, self.responder, state.case.language)
        translations = self.translations(state.case.scenario_id)
        return operator_snapshot(state, CaseMode(mode=mode, reason=reason), known, translations)

    async def record_page(
        self, case_id: str, after: int | None, limit: int, *, texts: bool = True
    ) -> tuple[CaseRecord, RecordPage]:
        """One page of the record, newest first (as the timeline shows it): the `limit` entries older than the
        cursor `after` (none: the newest), and the cursor of the next page (None on the last one). `texts`:
        the operator's page, bodies opened; without, content-free (the stage's projection)."""
        # One more: is there a next page? The case comes with the page, in one read.
        case = await self.require_case(case_id)
        if texts:
            async with self.keys.operator(case) as grant:
                found_case, found, total = await self.ledger.record_page(case_id, after, limit + 1, grant)
        else:
            found_case, found, total = await self.ledger.record_page(case_id, after, limit + 1, None)
        case = _in_play(case_id, found_case)
        entries = found[:limit]
        return case, RecordPage(entries, entries[-1].id if len(found) > limit else None, total)

    async def record_export(self, case_id: str) -> RecordExport:
        """What an export streams: the case, how many entries it has now, and every one of them up to the newest
        (an entry appended meanwhile is left to the next export), oldest first, a page at a time: no limit, and
        never the whole record in memory. Each page is read under a grant of its own."""
        case = await self.require_case(case_id)
        count, newest = await self.ledger.record_bounds(case_id)

        async def pages() -> AsyncIterator[list[RecordEntry]]:
            cursor = 0
            while cursor < newest:
                async with self.keys.operator(case) as grant:
                    page = await self.ledger.record_since(case_id, cursor, EXPORT_PAGE, newest, grant=grant)
                if not page:
                    return
                yield page
                cursor = page[-1].id

        return RecordExport(case, count, pages())

    async def subject_access(self, case_id: str) -> AsyncIterator[str]:
        """Which spaces hold which cards, every board copy with its source, every derived artifact with its
        ingredients and audience: the `SubjectAccess` JSON, streamed (the record's artifacts a page at a time).
        The case is checked before the first byte."""
        case = await self.require_case(case_id)
        async with self.keys.operator(case) as grant:
            view = await self.ledger.case_view(case_id, grant=grant, steps=self.knowledge_steps(case))
            state = await self._state(case_id, view, grant)
        export = await self.record_export(case_id)
        return subject_access_json(state, export.pages)

    # ----- commands ------------------------------------------------------------------------------------

    async def create_case(self, scenario_id: str, language: str) -> OperatorSnapshot:
        scenario = self.scenario(scenario_id, language)
        case_id = new_case_id()
        case = await self.ledger.create_case(case_id, scenario.id, scenario.language)
        try:
            await self.keys.vault.create_case(case_id, case.generation)
            async with self.keys.case_setup(case_id, case.generation) as grant:
                written = await self._load_cards(grant, scenario)
                event = PendingEvent(
                    EventType.CASE_CREATED, {"scenario_id": scenario.id, "language": scenario.language}
                )
                await self._commit(case_id, [event], status=ACTIVE, decisions=loaded_decisions(written))
        except BaseException:
            await self._purge_quietly(case_id)
            raise
        return await self.snapshot(case_id)

    async def reset(self, case_id: str, expected_version: int | None = None) -> OperatorSnapshot:
        """Back to the scenario start, at any size, as one atomic step: the opening cards are written into a
        new generation (its record with a key of its own), and one commit makes it the case's (docs/faults.md,
        "Concurrent commands"). From that commit on, every read sees only the new generation and every command
        that began in the old one finds the reset in its own commit (it undoes what it wrote, and runs again in
        the new generation); then the old generation's cards go, their keys first, and its record key with
        every text it sealed. A reset that meets another reset's commit first undoes its own cards: the case
        is at its start already."""
        case = await self._check_version(case_id, expected_version)
        generation = secrets.token_hex(8)
        await self.keys.vault.open_generation(case_id, generation)
        async with self.keys.case_setup(case_id, generation) as grant:
            written = await self._load_cards(grant, self.scenario(case.scenario_id, case.language))
            try:
                await self.ledger.change_case(
                    case_id,
                    [PendingEvent(EventType.CASE_RESET, {})],
                    expected_version=expected_version,
                    decisions=loaded_decisions(written),
                    generation=case.generation,
                    reset_to=generation,
                )
            except GenerationMovedError:
                await self._undo(grant, written)  # another reset came first: the case is at its start already
                await self.keys.vault.retire_generation(case_id, generation)  # never committed: its key goes
                return await self.snapshot(case_id)
            except BaseException as exc:
                await self._undo(grant, written)
                if isinstance(exc, VersionMismatchError):
                    raise VersionConflictError(await self.snapshot(case_id)) from exc
                if isinstance(exc, CaseMissingError):
                    raise CaseNotFoundError(case_id) from exc
                raise
        await discard_superseded(self.gateway, self.ledger, self.keys, case_id, generation, replaced=case.generation)
        return await self.snapshot(case_id)

    async def erase(self, case_id: str) -> None:
        case = await self.ledger.get_case(case_id)
        if case is None or case.status == LOADING:
            raise CaseNotFoundError(case_id)
        await self.purge(case_id)  # an earlier erase that failed half-way (status erasing) is finished here

    async def purge(self, case_id: str, *, announce: bool = True) -> None:
        """Every trace of a case. The ledger marks it erasing first, so a command in flight cannot commit
        (it undoes its own write); then the vault destroys every key of the case (whatever it sealed, in any
        copy, stops opening at once); then every card goes (role spaces and board copies); then every ledger
        row. `announce` leaves the content-free tombstone event that live streams of the case end on."""
        await self.ledger.begin_erase(case_id)
        await self.keys.vault.destroy_case(case_id)
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
                await self._commit_or_undo(
                    case_id,
                    grant,
                    [card],
                    [event],
                    expected_version=expected_version,
                    decisions=[accepted],
                    generation=case.generation,
                )
            return WhisperResult(card=card_view(card))

        return await self._in_current_generation(case_id, expected_version, write)

    async def interrogate(
        self, case_id: str, role: Role, question: str, expected_version: int | None = None, *, unfiltered: bool = False
    ) -> InterrogationResult:
        """`unfiltered`: the presenter act (docs/presenter-guide.md): the same question, run without the space
        filter and the scope re-check, so only the compartment keys stand between the role and the others."""
        # A question may try to talk its way out of the scope (harmless, and shown live), but personal data
        # is refused: the question is kept as session memory.
        text = checked_text(
            question, QUESTION_MAX_CHARS, screening=self.gateway.screening, allowed=frozenset({INJECTION})
        )

        async def ask(case: CaseRecord) -> InterrogationResult:
            started = time.perf_counter()  # the trace's latency is measured from here
            async with self.keys.interrogation(case, role) as grant:
                asked = await self.interrogation.run(
                    case, role, text, expected_version, grant, unfiltered=unfiltered, started=started
                )
                await self.commit_change(case_id, grant, asked.change, steps=self.knowledge_steps(case))
                await keep_recent_session_records(self.gateway, grant)
            return asked.result

        return await self._in_current_generation(case_id, expected_version, ask)

    async def cross_examine(
        self, case_id: str, roles: list[Role], question: str, expected_version: int | None = None
    ) -> CrossExaminationResult:
        """One question to several roles, each searched in its own scopes; a joint conclusion whose audience
        is the narrowest of its ingredients (sealed when it mixes two roles' private cards)."""
        text = checked_text(
            question, QUESTION_MAX_CHARS, screening=self.gateway.screening, allowed=frozenset({INJECTION})
        )

        async def examine(case: CaseRecord) -> CrossExaminationResult:
            async with self.keys.cross_examination(case, roles) as grant:
                examined = await self.cross_examination.run(case, grant, roles, text, expected_version)
                await self.commit_change(case_id, grant, examined.change)
            return examined.result

        return await self._in_current_generation(case_id, expected_version, examine)

    async def delete_card(self, case_id: str, card_id: str, expected_version: int | None = None) -> None:
        """Erase one private card: its board copies go with it, and every record entry derived from either
        is marked and loses its text. The ledger commits first, with the tasks of what must follow in the same
        transaction: the card's and its copies' keys destroyed (every copy of their text, backups included,
        stops opening) and their rows deleted, the dropped texts' keys destroyed. They run at once; what fails,
        or a crash, leaves them to the background loop."""
        case = await self._check_version(case_id, expected_version)
        async with self.keys.lifecycle(case_id) as grant:
            card = await self._unless_erased(case_id, self._private_card(case, card_id))
            listed = [row.id for row in await self.gateway.find_by_source(grant, card.id)]
            withdrawn: list[FindingRecord] = []
            try:
                # Also leaves the tombstone a racing publish collides with, and adds the copy its row names; and
                # re-runs leave-one-out for every finding the card supported (docs/findings.md).
                tasks = await self.ledger.erase_card(
                    case_id,
                    card.id,
                    card.space,
                    listed,
                    expected_version,
                    withdrawn=withdrawn,
                    generation=case.generation,
                    grant=grant,
                )
            except CaseMissingError as exc:
                raise CaseNotFoundError(case_id) from exc
            except GenerationMovedError as exc:
                raise CardNotFoundError(card_id) from exc  # a reset took the card away first
            except VersionMismatchError as exc:
                raise VersionConflictError(await self.snapshot(case_id)) from exc
        self.fault("after_card_erasure_commit")
        await self._carry_out(tasks)
        await self.findings.remove_withdrawn(case_id, withdrawn)

    async def _carry_out(self, tasks: Sequence[CleanupTask]) -> None:
        """A command's own cleanup tasks, now; those that fail are handed to the background loop."""
        done: list[int] = []
        failed: list[int] = []
        for task in tasks:
            (done if await run_cleanup(self.gateway, self.ledger, self.keys, task) else failed).append(task.id)
        try:
            await self.ledger.finish_cleanups(done)
            await self.ledger.hand_over_cleanups(failed)
        except LedgerError as exc:
            log.warning("cleanup tasks not marked (%s): they run after their grace", type(exc).__name__)

    async def _private_card(self, case: CaseRecord, card_id: str) -> StoredCard:
        """A private card of this case, in its current generation, in whichever role's space it is."""
        async with self.keys.operator(case) as grant:
            card = await self.gateway.get(grant.narrowed(reads=ROLES, writes=(), record=False), card_id)
        if card is None:
            raise CardNotFoundError(card_id)  # a board copy, another case's card and no card at all look alike
        return card

    async def publish(
        self, case_id: str, role: Role, card_id: str, expected_version: int | None = None
    ) -> PublicationResult:
        """`idempotent`: the card was published before (the same board copy)."""
        if expected_version is not None:  # a conditional publish checks its own version
            await self._check_version(case_id, expected_version)
        # Otherwise the case is checked once per run of the Saga, which concurrent publishes of the card share.
        public_card, idempotent = await self._unless_erased(
            case_id, self.publisher.publish(case_id, role, card_id, check_case=self.require_case)
        )
        return PublicationResult(public_card=public_card, idempotent=idempotent)

    async def evaluate_findings(self, case_id: str, claim: str | None) -> FindingEvaluation:
        return await self.findings.evaluate(await self.require_case(case_id), claim)

    async def promote_finding(self, case_id: str, claim: str) -> FindingPromotion:
        """`idempotent`: the claim was promoted before (the same finding card)."""
        return await self._unless_erased(
            case_id, self._in_current_generation(case_id, None, lambda case: self.findings.promote(case, claim))
        )

    async def list_findings(self, case_id: str) -> FindingList:
        return await self.findings.list(await self.require_case(case_id))

    async def run_cleanups(self) -> int:
        """Retry deletes and key destructions that failed earlier (or whose command died before them). Returns
        how many tasks finished."""
        finished = 0
        for task in await self.ledger.due_cleanups():
            if not await run_cleanup(self.gateway, self.ledger, self.keys, task):
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

    async def _unless_erased(self, case_id: str, command: Awaitable[T]) -> T:
        """A command that raced the erase of its case may meet the erase as a missing card, an unqualified
        claim or a pending lease: what is gone is the case (404 CASE_NOT_FOUND, docs/api.md), so say that."""
        try:
            return await command
        except (CardNotFoundError, FindingNotQualifiedError, FindingPendingError, PublicationPendingError):
            await self.require_case(case_id)
            raise

    async def _in_current_generation(
        self, case_id: str, expected_version: int | None, command: Callable[[CaseRecord], Awaitable[T]]
    ) -> T:
        """Run a command in the case's current generation. When a reset commits while it runs, its own commit
        refuses it (and undoes what it wrote): it runs again in the new generation, so a write acknowledged
        after a reset is a write of the reset case. A conditional command meets the reset as a version
        conflict instead (a reset bumps the version)."""
        for _ in range(GENERATION_ATTEMPTS):
            case = await self._check_version(case_id, expected_version)
            try:
                return await command(case)
            except GenerationMovedError:
                continue
        raise VersionConflictError(await self.snapshot(case_id))

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
        self, case_id: str, grant: Grant, written: Sequence[StoredCard], events: list[PendingEvent], **kwargs: Any
    ) -> CaseRecord:
        """Commit, with the record body sealed through `grant`; a failed commit undoes the cards written."""
        try:
            return await self._commit(case_id, events, grant=grant, **kwargs)
        except BaseException:
            await self._undo(grant, written)
            raise

    async def commit_change(
        self, case_id: str, grant: Grant, change: CaseChange, *, steps: StepOf | None = None
    ) -> CaseRecord:
        """Commit what a step returned (the record body sealed through `grant`); a failed commit undoes its cards."""
        return await self._commit_or_undo(
            case_id,
            grant,
            change.written,
            change.events,
            expected_version=change.expected_version,
            generation=change.generation,
            record=change.record,
            decisions=change.decisions,
            steps=steps,
        )

    async def _load_cards(self, grant: Grant, scenario: Scenario) -> list[StoredCard]:
        """All or nothing: a failed write removes the cards written before it."""
        written: list[StoredCard] = []
        try:
            for role, cards in scenario.cards.by_role().items():
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
                written += await self.gateway.write_many(grant.narrowed(reads=(), writes=[role]), drafts)
        except BaseException:
            await self._undo(grant, written)
            raise
        return written

    async def _undo(self, grant: Grant, written: Sequence[StoredCard]) -> None:
        by_space: dict[str, list[StoredCard]] = {}
        for card in written:
            by_space.setdefault(card.space, []).append(card)
        for space, cards in by_space.items():
            await discard_many(self.gateway, self.ledger, grant, space, cards, "undo_failed_command")

    async def _purge_quietly(self, case_id: str) -> None:
        """A case whose creation failed: nobody ever saw it, so there is nothing to announce."""
        try:
            await self.purge(case_id, announce=False)
        except (MemoryUnavailableError, VaultUnavailableError):
            log.error("could not remove the cards of a failed case %s", case_id)
            await self.ledger.delete_case(case_id, tombstone=False)


def _rejected(
    exc: MemoryPolicyError | UnsafeInputError, memory_type: MemoryType, creator: CreatedBy, space: str
) -> PolicyDecision:
    """The audit row of a refused write: the rule's code and the screening's reason codes, never the text."""
    detail = ",".join(exc.reasons) if isinstance(exc, UnsafeInputError) else exc.detail
    return PolicyDecision(PolicyAction.WRITE_REJECTED, exc.code, memory_type, creator, space, detail=detail)


def loaded_decisions(written: Sequence[StoredCard]) -> list[PolicyDecision]:
    """Scenario cards written: one accepted row per (space, type), with its count."""
    counts = Counter((card.space, card.memory_type) for card in written)
    return [
        PolicyDecision(PolicyAction.WRITE_ACCEPTED, PolicyCode.OK, memory_type, CreatedBy.SCENARIO, space, count)
        for (space, memory_type), count in sorted(counts.items())
    ]
