"""The scenarios a case can be played in, loaded once: the list, one scenario, its translations, and the
knowledge steps of a case's scenario (what the ledger is handed to keep the snapshot's matrix)."""

from __future__ import annotations

from bureau.game.contract import ScenarioSummary
from bureau.game.errors import ScenarioNotFoundError
from bureau.game.knowledge import step_of
from bureau.game.scenario_schema import Scenario, load_builtin_scenarios
from bureau.ledger.repository import CaseRecord, StepOf


class Catalogue:
    def __init__(self) -> None:
        self.scenarios = load_builtin_scenarios()

    def summaries(self) -> list[ScenarioSummary]:
        return [
            ScenarioSummary(id=s.id, title=s.title, language=s.language, description=s.description)
            for _, s in sorted(self.scenarios.items())
        ]

    def scenario(self, scenario_id: str, language: str) -> Scenario:
        found = self.scenarios.get((scenario_id, language))
        if found is None:
            raise ScenarioNotFoundError(scenario_id)
        return found

    def translations(self, scenario_id: str) -> tuple[Scenario, ...]:
        """The scenario in every language it ships in (labels in the interface language, not only the case's)."""
        return tuple(s for (sid, _), s in sorted(self.scenarios.items()) if sid == scenario_id)

    def knowledge_steps(self, case: CaseRecord) -> StepOf:
        """The steps of the case's scenario, handed to each ledger call that keeps the snapshot's matrix and
        latest answers (an interrogation's commit, a read that may fold the case again)."""
        return step_of(self.scenario(case.scenario_id, case.language).key_facts)
