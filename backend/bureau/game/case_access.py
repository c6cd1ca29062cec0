"""A case as every command and view starts from it: in play, with its keys in the vault, and what the operator
and the stage may see of it (the operator's snapshot is also what a version conflict answers with)."""

from __future__ import annotations

from bureau.answering.base import Responder
from bureau.answering.selection import case_mode
from bureau.config import Settings
from bureau.game.catalogue import Catalogue
from bureau.game.contract import CaseMode, OperatorSnapshot
from bureau.game.errors import CaseNotFoundError
from bureau.game.keys import Keys
from bureau.game.views import CaseState, StageState, operator_snapshot
from bureau.ledger.cases import CaseRepository
from bureau.ledger.repository import ACTIVE, CaseRecord, CaseView
from bureau.memory.gateway import MemoryGateway
from bureau.memory.types import StoredCard
from bureau.scope.keys import BOARD, ROLES
from bureau.scope.memory_policy import may_be_evidence
from bureau.vault import Grant


def in_play(case_id: str, case: CaseRecord | None) -> CaseRecord:
    """The case, if it exists and is in play (not loading, not being erased); otherwise it is not found."""
    if case is None or case.status != ACTIVE:
        raise CaseNotFoundError(case_id)
    return case


class CaseAccess:
    """Reads cases only (`cases`: the ledger's cases repository), and the store under the operator's or the
    stage's grant."""

    def __init__(
        self,
        settings: Settings,
        responder: Responder,
        gateway: MemoryGateway,
        cases: CaseRepository,
        keys: Keys,
        catalogue: Catalogue,
    ) -> None:
        self.settings, self.responder = settings, responder
        self.gateway, self.keys, self.catalogue = gateway, keys, catalogue
        self.cases: CaseRepository = cases

    async def require_case(self, case_id: str) -> CaseRecord:
        """The case, in play, with its keys in the vault: a case whose keys are gone was erased (here, or after
        the copy of the data this server runs on was taken) and answers 404 on every route, content-free ones
        included; nothing makes keys for it again (a reset would)."""
        case = in_play(case_id, await self.cases.get_case(case_id))
        if not await self.keys.vault.has_keys(case_id):
            raise CaseNotFoundError(case_id)
        return case

    async def state(self, case_id: str, view: CaseView, grant: Grant) -> CaseState:
        """The case's state: one ledger read (`view`) and one store call, under the operator's grant."""
        case = in_play(case_id, view.case)
        spaces: dict[str, list[StoredCard]] = await self.gateway.list_spaces(grant)
        scenario = self.catalogue.scenario(case.scenario_id, case.language)
        return CaseState(case, scenario, spaces, view.last_interrogation, view.last_cross_examination)

    async def operator_state(self, case: CaseRecord, grant: Grant) -> tuple[CaseState, CaseView]:
        """The operator's state of the case, with the maintained matrix and latest answers read alongside."""
        view = await self.cases.case_view(case.id, grant=grant, steps=self.catalogue.knowledge_steps(case))
        return await self.state(case.id, view, grant), view

    async def snapshot(self, case_id: str) -> OperatorSnapshot:
        """The operator's view, with each role's latest answer and the who-knows-what matrix as the ledger
        maintains them (the same cost at any record length), so a reload or a second console sees what this
        one saw."""
        case = await self.require_case(case_id)
        async with self.keys.operator(case) as grant:
            state, view = await self.operator_state(case, grant)
        known = view.knowledge
        if known is None:  # only when there is no case, which `state` has said already
            raise CaseNotFoundError(case_id)
        # Per case: a case in a language the model does not speak stays in evidence mode.
        mode, reason = case_mode(self.settings, self.responder, state.case.language)
        translations = self.catalogue.translations(state.case.scenario_id)
        return operator_snapshot(state, CaseMode(mode=mode, reason=reason), known, translations)

    async def stage_state(self, case_id: str) -> StageState:
        """What the stage may see: each role's card count (listed, never opened), the board's cards and the
        content-free traces of the last interrogation and cross-examination."""
        view = await self.cases.case_view(case_id)
        case = in_play(case_id, view.case)
        async with self.keys.stage(case) as grant:
            counted, cards = await self.gateway.listing(grant)  # one statement: the counts and the board
        board = cards[BOARD]
        counts: dict[str, int] = {
            role: sum(1 for row in counted[role] if may_be_evidence(row.memory_type)) for role in ROLES
        }
        return StageState(case, counts, board, view.last_interrogation, view.last_cross_examination)
