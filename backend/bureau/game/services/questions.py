"""Questions: one role interrogated (the load_context → respond → persist graph), or several cross-examined at
once; the service holds each command's grant, commits what the steps return, then trims session memory."""

from __future__ import annotations

import time

from bureau.game.catalogue import Catalogue
from bureau.game.commits import Commits
from bureau.game.contract import CrossExaminationResult
from bureau.game.contract import Interrogation as InterrogationResult
from bureau.game.cross_examination import CrossExamination
from bureau.game.inputs import checked_text
from bureau.game.interrogation import Interrogation, keep_recent_session_records
from bureau.game.keys import Keys
from bureau.ledger.repository import CaseRecord
from bureau.memory.gateway import MemoryGateway
from bureau.scope.content_policy import INJECTION
from bureau.scope.keys import Role
from bureau.scope.limits import QUESTION_MAX_CHARS


class QuestionService:
    def __init__(
        self,
        gateway: MemoryGateway,
        keys: Keys,
        catalogue: Catalogue,
        commits: Commits,
        interrogation: Interrogation,
        cross_examination: CrossExamination,
    ) -> None:
        self.gateway, self.keys, self.catalogue, self.commits = gateway, keys, catalogue, commits
        self.interrogation, self.cross_examination = interrogation, cross_examination

    def _question(self, question: str) -> str:
        # A question may try to talk its way out of the scope (harmless, and shown live), but personal data
        # is refused: the question is kept as session memory.
        return checked_text(
            question, QUESTION_MAX_CHARS, screening=self.gateway.screening, allowed=frozenset({INJECTION})
        )

    async def interrogate(
        self, case_id: str, role: Role, question: str, expected_version: int | None = None, *, unfiltered: bool = False
    ) -> InterrogationResult:
        """`unfiltered`: the presenter act (docs/presenter-guide.md): the same question, run without the space
        filter and the scope re-check, so only the compartment keys stand between the role and the others."""
        text = self._question(question)

        async def ask(case: CaseRecord) -> InterrogationResult:
            started = time.perf_counter()  # the trace's latency is measured from here
            async with self.keys.interrogation(case, role) as grant:
                asked = await self.interrogation.run(
                    case, role, text, expected_version, grant, unfiltered=unfiltered, started=started
                )
                steps = self.catalogue.knowledge_steps(case)
                await self.commits.commit_change(case.id, grant, asked.change, steps=steps)
                await keep_recent_session_records(self.gateway, grant)
            return asked.result

        return await self.commits.in_current_generation(case_id, expected_version, ask)

    async def cross_examine(
        self, case_id: str, roles: list[Role], question: str, expected_version: int | None = None
    ) -> CrossExaminationResult:
        """One question to several roles, each searched in its own scopes; a joint conclusion whose audience
        is the narrowest of its ingredients (sealed when it mixes two roles' private cards)."""
        text = self._question(question)

        async def examine(case: CaseRecord) -> CrossExaminationResult:
            async with self.keys.cross_examination(case, roles) as grant:
                examined = await self.cross_examination.run(case, grant, roles, text, expected_version)
                await self.commits.commit_change(case.id, grant, examined.change)
            return examined.result

        return await self.commits.in_current_generation(case_id, expected_version, examine)
