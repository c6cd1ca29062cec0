"""Cases: create, the views every screen starts from, reset (coalesced), erase, and a card's erasure with the
cleanups it leaves. Every command either completes or leaves nothing behind."""

from __future__ import annotations

import logging
import secrets
from collections import Counter
from collections.abc import Sequence

from bureau.game.case_access import CaseAccess
from bureau.game.catalogue import Catalogue
from bureau.game.commits import Commits
from bureau.game.compensation import discard_superseded, run_cleanup
from bureau.game.contract import OperatorSnapshot, ScenarioSummary
from bureau.game.errors import CardNotFoundError, CaseNotFoundError, VersionConflictError
from bureau.game.findings import Findings
from bureau.game.keys import Keys
from bureau.game.publication import FaultHook
from bureau.game.scenario_schema import Scenario
from bureau.game.views import StageState
from bureau.ledger.policy_audit import PolicyDecision
from bureau.ledger.repository import (
    ACTIVE,
    LOADING,
    CaseMissingError,
    CaseRecord,
    CaseRepository,
    CleanupRepository,
    CleanupTask,
    FindingRecord,
    GenerationMovedError,
    LedgerError,
    PendingEvent,
    PublicationRepository,
    VersionMismatchError,
)
from bureau.memory.gateway import MemoryGateway
from bureau.memory.types import CardDraft, MemoryUnavailableError, StoredCard
from bureau.scope.keys import ROLES
from bureau.scope.vocabulary import CreatedBy, EventType, PolicyAction, PolicyCode
from bureau.vault import Grant, VaultUnavailableError

log = logging.getLogger("bureau.game")
# Test seam (like the publish Saga's): a card's erasure committed, with its cleanup tasks, none carried out yet.
ERASURE_STEPS = ("after_card_erasure_commit",)


def new_case_id() -> str:
    # 96 random bits, unguessable; hex so an id never starts with "-" (a CLI would read it as an option).
    return secrets.token_hex(12)


class CaseService:
    def __init__(
        self,
        gateway: MemoryGateway,
        keys: Keys,
        catalogue: Catalogue,
        access: CaseAccess,
        commits: Commits,
        findings: Findings,
        *,
        cases: CaseRepository,
        cleanups: CleanupRepository,
        publications: PublicationRepository,
    ) -> None:
        """`cases`: create, reset, erase; `cleanups`: what an erase leaves to do; `publications`: whether a
        board card to clean up was adopted meanwhile."""
        self.gateway, self.keys, self.catalogue = gateway, keys, catalogue
        self.cases, self.cleanups, self.publications = cases, cleanups, publications
        self.access, self.commits, self.findings = access, commits, findings
        self.fault: FaultHook = lambda step: None

    # ----- views -----------------------------------------------------------------------------------------

    def scenario_list(self) -> list[ScenarioSummary]:
        return self.catalogue.summaries()

    async def snapshot(self, case_id: str) -> OperatorSnapshot:
        return await self.access.snapshot(case_id)

    async def stage_state(self, case_id: str) -> StageState:
        return await self.access.stage_state(case_id)

    async def latest_case_id(self) -> str:
        """The newest active case, for a stage that follows the operator from case to case."""
        case = await self.cases.latest_active_case()
        if case is None:
            raise CaseNotFoundError("latest")
        return case.id

    # ----- commands --------------------------------------------------------------------------------------

    async def create_case(self, scenario_id: str, language: str) -> OperatorSnapshot:
        scenario = self.catalogue.scenario(scenario_id, language)
        case_id = new_case_id()
        case = await self.cases.create_case(case_id, scenario.id, scenario.language)
        try:
            await self.keys.vault.create_case(case_id, case.generation)
            async with self.keys.case_setup(case_id, case.generation) as grant:
                written = await self._load_cards(grant, scenario)
                event = PendingEvent(
                    EventType.CASE_CREATED, {"scenario_id": scenario.id, "language": scenario.language}
                )
                await self.commits.commit(case_id, [event], status=ACTIVE, decisions=loaded_decisions(written))
        except BaseException:
            await self._purge_quietly(case_id)
            raise
        return await self.access.snapshot(case_id)

    async def reset(self, case_id: str, expected_version: int | None = None) -> OperatorSnapshot:
        """Back to the scenario start, at any size, as one atomic step: the opening cards are written into a
        new generation (its record with a key of its own), and one commit makes it the case's (docs/faults.md,
        "Concurrent commands"). From that commit on, every read sees only the new generation and every command
        that began in the old one finds the reset in its own commit (it undoes what it wrote, and runs again in
        the new generation); then the old generation's cards go, their keys first, and its record key with
        every text it sealed. A reset that meets another reset's commit first undoes its own cards: the case
        is at its start already."""
        case = await self.commits.check_version(case_id, expected_version)
        generation = secrets.token_hex(8)
        await self.keys.vault.open_generation(case_id, generation)
        async with self.keys.case_setup(case_id, generation) as grant:
            written = await self._load_cards(grant, self.catalogue.scenario(case.scenario_id, case.language))
            try:
                await self.cases.reset_case(
                    case_id,
                    [PendingEvent(EventType.CASE_RESET, {})],
                    reset_to=generation,
                    expected_version=expected_version,
                    decisions=loaded_decisions(written),
                    generation=case.generation,
                )
            except GenerationMovedError:
                await self.commits.undo(grant, written)  # another reset came first: the case is at its start
                await self.keys.vault.retire_generation(case_id, generation)  # never committed: its key goes
                return await self.access.snapshot(case_id)
            except BaseException as exc:
                await self.commits.undo(grant, written)
                if isinstance(exc, VersionMismatchError):
                    raise VersionConflictError(await self.access.snapshot(case_id)) from exc
                if isinstance(exc, CaseMissingError):
                    raise CaseNotFoundError(case_id) from exc
                raise
        await discard_superseded(self.gateway, self.cleanups, self.keys, case_id, generation, replaced=case.generation)
        return await self.access.snapshot(case_id)

    async def erase(self, case_id: str) -> None:
        case = await self.cases.get_case(case_id)
        if case is None or case.status == LOADING:
            raise CaseNotFoundError(case_id)
        await self.purge(case_id)  # an earlier erase that failed half-way (status erasing) is finished here

    async def purge(self, case_id: str, *, announce: bool = True) -> None:
        """Every trace of a case. The ledger marks it erasing first, so a command in flight cannot commit
        (it undoes its own write); then the vault destroys every key of the case (whatever it sealed, in any
        copy, stops opening at once); then every card goes (role spaces and board copies); then every ledger
        row. `announce` leaves the content-free tombstone event that live streams of the case end on."""
        await self.cases.begin_erase(case_id)
        await self.keys.vault.destroy_case(case_id)
        await self.gateway.erase_case(case_id)
        await self.cases.delete_case(case_id, tombstone=announce)

    async def delete_card(self, case_id: str, card_id: str, expected_version: int | None = None) -> None:
        """Erase one private card: its board copies go with it, and every record entry derived from either
        is marked and loses its text. The ledger commits first, with the tasks of what must follow in the same
        transaction: the card's and its copies' keys destroyed (every copy of their text, backups included,
        stops opening) and their rows deleted, the dropped texts' keys destroyed. They run at once; what fails,
        or a crash, leaves them to the background loop."""
        case = await self.commits.check_version(case_id, expected_version)
        async with self.keys.lifecycle(case_id) as grant:
            card = await self.commits.unless_erased(case_id, self._private_card(case, card_id))
            listed = [row.id for row in await self.gateway.find_by_source(grant, card.id)]
            withdrawn: list[FindingRecord] = []
            try:
                # Also leaves the tombstone a racing publish collides with, and adds the copy its row names; and
                # re-runs leave-one-out for every finding the card supported (docs/findings.md).
                tasks = await self.cases.erase_card(
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
                raise VersionConflictError(await self.access.snapshot(case_id)) from exc
        self.fault("after_card_erasure_commit")
        await self._carry_out(tasks)
        await self.findings.remove_withdrawn(case_id, withdrawn)

    async def run_cleanups(self) -> int:
        """Retry deletes and key destructions that failed earlier (or whose command died before them). Returns
        how many tasks finished."""
        finished = 0
        for task in await self.cleanups.due_cleanups():
            if not await run_cleanup(self.gateway, self.publications, self.keys, task):
                await self.cleanups.retry_cleanup_later(task.id, task.attempts + 1)
                continue
            await self.cleanups.finish_cleanup(task.id)
            finished += 1
        return finished

    # ----- helpers ---------------------------------------------------------------------------------------

    async def _carry_out(self, tasks: Sequence[CleanupTask]) -> None:
        """A command's own cleanup tasks, now; those that fail are handed to the background loop."""
        done: list[int] = []
        failed: list[int] = []
        for task in tasks:
            (done if await run_cleanup(self.gateway, self.publications, self.keys, task) else failed).append(task.id)
        try:
            await self.cleanups.finish_cleanups(done)
            await self.cleanups.hand_over_cleanups(failed)
        except LedgerError as exc:
            log.warning("cleanup tasks not marked (%s): they run after their grace", type(exc).__name__)

    async def _private_card(self, case: CaseRecord, card_id: str) -> StoredCard:
        """A private card of this case, in its current generation, in whichever role's space it is."""
        async with self.keys.operator(case) as grant:
            card = await self.gateway.get(grant.narrowed(reads=ROLES, writes=(), record=False), card_id)
        if card is None:
            raise CardNotFoundError(card_id)  # a board copy, another case's card and no card at all look alike
        return card

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
            await self.commits.undo(grant, written)
            raise
        return written

    async def _purge_quietly(self, case_id: str) -> None:
        """A case whose creation failed: nobody ever saw it, so there is nothing to announce."""
        try:
            await self.purge(case_id, announce=False)
        except (MemoryUnavailableError, VaultUnavailableError):
            log.error("could not remove the cards of a failed case %s", case_id)
            await self.cases.delete_case(case_id, tombstone=False)


def loaded_decisions(written: Sequence[StoredCard]) -> list[PolicyDecision]:
    """Scenario cards written: one accepted row per (space, type), with its count."""
    counts = Counter((card.space, card.memory_type) for card in written)
    return [
        PolicyDecision(PolicyAction.WRITE_ACCEPTED, PolicyCode.OK, memory_type, CreatedBy.SCENARIO, space, count)
        for (space, memory_type), count in sorted(counts.items())
    ]
