"""The game's composition: its shared parts built once, and one service per command family over them. Nothing
here runs a command; routes and jobs call the services."""

from __future__ import annotations

from bureau.answering.base import Responder
from bureau.config import Settings
from bureau.game.case_access import CaseAccess
from bureau.game.catalogue import Catalogue
from bureau.game.commits import Commits
from bureau.game.cross_examination import CrossExamination
from bureau.game.findings import Findings
from bureau.game.interrogation import Interrogation
from bureau.game.keys import Keys
from bureau.game.publication import Publisher
from bureau.game.reseal import Resealer
from bureau.game.retention import RetentionSweeper
from bureau.game.services.cases import CaseService
from bureau.game.services.findings import FindingService
from bureau.game.services.publications import PublicationService
from bureau.game.services.questions import QuestionService
from bureau.game.services.records import RecordService
from bureau.game.services.whispers import WhisperService
from bureau.ledger.repository import Ledger
from bureau.memory.gateway import MemoryGateway
from bureau.vault import Vault


class Bureau:
    """One per process (bootstrap builds it): the parts the services share (which grant each command holds,
    the scenarios, the case as commands meet it, the Sagas, the background sweeps), and the six services, each
    part handed the ledger repositories it uses."""

    def __init__(
        self, settings: Settings, gateway: MemoryGateway, ledger: Ledger, responder: Responder, vault: Vault
    ) -> None:
        self.catalogue = Catalogue()
        self.resealer = Resealer(gateway, ledger.cases, ledger.resealing, vault)
        self.keys = Keys(vault, self.resealer)
        self.case_access = CaseAccess(settings, responder, gateway, ledger.cases, self.keys, self.catalogue)
        self.commits = Commits(gateway, ledger.cases, ledger.cleanups, self.case_access)
        self.interrogation = Interrogation(settings, gateway, responder)
        self.cross_examination = CrossExamination(settings, gateway, responder)
        self.publisher = Publisher(
            gateway, ledger.publications, ledger.cleanups, self.keys, settings.publication_lease_s
        )
        self.findings = Findings(
            settings,
            gateway,
            self.keys,
            cases=ledger.cases,
            record=ledger.record,
            findings=ledger.findings,
            cleanups=ledger.cleanups,
        )
        self.sweeper = RetentionSweeper(
            gateway,
            self.keys,
            cases=ledger.cases,
            record=ledger.record,
            publications=ledger.publications,
            cleanups=ledger.cleanups,
            policy_audit=ledger.policy_audit,
        )

        self.case_service = CaseService(
            gateway,
            self.keys,
            self.catalogue,
            self.case_access,
            self.commits,
            self.findings,
            cases=ledger.cases,
            cleanups=ledger.cleanups,
            publications=ledger.publications,
        )
        self.whisper_service = WhisperService(gateway, ledger.policy_audit, self.keys, self.commits)
        self.question_service = QuestionService(
            gateway, self.keys, self.catalogue, self.commits, self.interrogation, self.cross_examination
        )
        self.publication_service = PublicationService(self.case_access, self.commits, self.publisher)
        self.finding_service = FindingService(self.case_access, self.commits, self.findings)
        self.record_service = RecordService(
            self.keys, self.case_access, cases=ledger.cases, record=ledger.record, policy_audit=ledger.policy_audit
        )
