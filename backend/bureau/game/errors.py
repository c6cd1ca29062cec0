"""Domain errors. The API maps each to one HTTP status and code; none of them carries user input."""

from __future__ import annotations

from bureau.game.contract import OperatorSnapshot
from bureau.scope.vocabulary import PolicyCode


class GameError(Exception):
    code = "GAME_ERROR"


class CaseNotFoundError(GameError):
    code = "CASE_NOT_FOUND"


class CardNotFoundError(GameError):
    code = "CARD_NOT_FOUND"


class ScenarioNotFoundError(GameError):
    code = "SCENARIO_NOT_FOUND"


class UnsafeInputError(GameError):
    code: PolicyCode = PolicyCode.UNSAFE_INPUT

    def __init__(self, reasons: list[str]) -> None:
        super().__init__("unsafe input")
        self.reasons = reasons  # reason codes only, never the text


class VersionConflictError(GameError):
    code = "VERSION_CONFLICT"

    def __init__(self, snapshot: OperatorSnapshot) -> None:
        super().__init__("version conflict")
        self.snapshot = snapshot


class PublicationPendingError(GameError):
    code = "PUBLICATION_PENDING"

    def __init__(self, retry_after_s: int) -> None:
        super().__init__("publication pending")
        self.retry_after_s = retry_after_s


class FindingNotQualifiedError(GameError):
    """The claim lacks independent support that survives leave-one-out (now, or by the time it was marked)."""

    code = "FINDING_NOT_QUALIFIED"


class FindingPendingError(GameError):
    code = "FINDING_PENDING"

    def __init__(self, retry_after_s: int) -> None:
        super().__init__("finding pending")
        self.retry_after_s = retry_after_s
