"""Publications: a role's card copied to the board, through the publish Saga (game/publication.py)."""

from __future__ import annotations

from bureau.game.case_access import CaseAccess
from bureau.game.commits import Commits
from bureau.game.contract import PublicationResult
from bureau.game.publication import Publisher
from bureau.scope.keys import Role


class PublicationService:
    def __init__(self, access: CaseAccess, commits: Commits, publisher: Publisher) -> None:
        self.access, self.commits, self.publisher = access, commits, publisher

    async def publish(
        self, case_id: str, role: Role, card_id: str, expected_version: int | None = None
    ) -> PublicationResult:
        """`idempotent`: the card was published before (the same board copy)."""
        if expected_version is not None:  # a conditional publish checks its own version
            await self.commits.check_version(case_id, expected_version)
        # Otherwise the case is checked once per run of the Saga, which concurrent publishes of the card share.
        public_card, idempotent = await self.commits.unless_erased(
            case_id, self.publisher.publish(case_id, role, card_id, check_case=self.access.require_case)
        )
        return PublicationResult(public_card=public_card, idempotent=idempotent)
