"""A store row and the card it holds: the metadata a card is written with, and the card read back only under
the scope that was asked for, its sealed text opened with the case key.

Every card read back is re-checked against the scope asked for, so a store filter bug drops a card instead of
leaking it (counted, and logged without content).
"""

from __future__ import annotations

import hashlib
import logging
from datetime import UTC, datetime
from typing import Any

from bureau.memory.case_ciphers import CaseCiphers
from bureau.memory.types import CardDraft, CaseErasedError, FindingMark, MemoryUnavailableError, StoredCard
from bureau.scope.audience import visibility_of_space
from bureau.scope.keys import MemoryScope
from bureau.scope.memory_policy import EXPIRED, OWNER_MISMATCH, Retention
from bureau.scope.vocabulary import CreatedBy
from bureau.sealing import CaseCipher, SealError, is_sealed

security_log = logging.getLogger("bureau.security")
UNREADABLE = "unreadable"  # sealed under a destroyed key: the case was erased; skipped, not a policy reason
SUPERSEDED = "superseded"  # of a generation a reset has replaced: gone for every reader; skipped, not a policy reason


def _parse_time(value: Any) -> datetime | None:
    if value in (None, ""):
        return None
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    parsed = datetime.fromisoformat(str(value))
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def card_metadata(
    scope: MemoryScope, draft: CardDraft, retention: Retention, cipher: CaseCipher | None = None
) -> dict[str, Any]:
    if scope.generation is None:
        raise ValueError("a card is written into one generation of its case")
    now = datetime.now(UTC)
    expires_at = draft.expires_at or retention.expiry(draft.memory_type, now)
    metadata: dict[str, Any] = {
        "scope_key": scope.key,
        "case_id": scope.case_id,
        "space": scope.space,
        "generation": scope.generation,
        "visibility": visibility_of_space(scope.space).value,
        "topic": draft.topic,
        "kind": draft.kind,
        "card_memory_type": str(draft.memory_type),
        "trust": draft.trust,
        "created_by": str(draft.created_by),
        "created_at": now.isoformat(),
    }
    if draft.key is not None:
        metadata["preference_key"] = draft.key
    if expires_at is not None:
        metadata["expires_at"] = expires_at.isoformat()
    if draft.source_card_id is not None:
        metadata["source_role"] = draft.source_role
        metadata["source_card_id"] = draft.source_card_id
    if draft.told_by is not None and cipher is not None:
        metadata["told_by"] = cipher.seal(draft.told_by)  # a name someone typed: sealed like the text
    if draft.finding is not None:
        metadata["finding"] = draft.finding.as_metadata()
    return metadata


def _to_card(item: dict[str, Any], metadata: dict[str, Any], content: str, told_by: str | None = None) -> StoredCard:
    return StoredCard(
        id=str(item["id"]),
        case_id=metadata["case_id"],
        space=metadata["space"],
        content=content,
        topic=metadata.get("topic", ""),
        kind=metadata.get("kind", ""),
        visibility=metadata.get("visibility", visibility_of_space(metadata["space"]).value),
        memory_type=metadata.get("card_memory_type", ""),  # no type: never evidence (read policy)
        trust=metadata.get("trust", ""),
        created_by=metadata.get("created_by", CreatedBy.UNTRUSTED),  # a creator we cannot name: least trust
        created_at=_parse_time(metadata.get("created_at")) or datetime.now(UTC),
        expires_at=_parse_time(metadata.get("expires_at")),
        source_role=metadata.get("source_role"),
        source_card_id=metadata.get("source_card_id"),
        key=metadata.get("preference_key"),
        owner=metadata.get("scope_key", ""),
        generation=str(metadata.get("generation", "")),  # a card from before generations: the case's first
        told_by=told_by,
        finding=FindingMark.from_metadata(metadata.get("finding")),
    )


class CardRows:
    """Cards into rows and rows back into cards, under one scope, with the case keys of `ciphers`."""

    def __init__(self, ciphers: CaseCiphers) -> None:
        self._ciphers = ciphers
        self.foreign_hits_dropped = 0

    def examine(self, scope: MemoryScope, item: dict[str, Any], now: datetime) -> tuple[StoredCard | None, str]:
        """Defence in depth: a card is returned only if every scope marker matches the scope asked for and
        it has not expired. Otherwise (None, reason): `owner_mismatch` (counted, logged without content),
        `superseded` (a reset replaced its generation) or `expired` (the caller purges it)."""
        metadata = item.get("metadata") or {}
        matches = (
            item.get("user_id") == scope.user_id
            and item.get("agent_id") == scope.agent_id
            and metadata.get("scope_key") == scope.key
            and metadata.get("case_id") == scope.case_id
            and metadata.get("space") == scope.space
        )
        if not matches:
            self.foreign_hits_dropped += 1
            security_log.warning("security: dropped a card outside the requested scope (asked %s)", scope.key)
            return None, OWNER_MISMATCH
        if scope.generation is not None and str(metadata.get("generation", "")) != scope.generation:
            return None, SUPERSEDED
        content = self.opened(scope.case_id, item.get("memory") or item.get("content") or "")
        if content is None:
            return None, UNREADABLE  # sealed under a key that no longer exists: the case was erased
        told = metadata.get("told_by")
        card = _to_card(item, metadata, content, self.opened(scope.case_id, told) if told else None)
        if card.expires_at is not None and card.expires_at <= now:
            return card, EXPIRED
        return card, ""

    def add(
        self,
        storage: Any,
        cipher: CaseCipher,
        scope: MemoryScope,
        draft: CardDraft,
        vector: list[float],
        retention: Retention,
    ) -> StoredCard:
        """Write one card through the storage layer, its text sealed and its vector rotated under the case key,
        and return it as read back under its scope."""
        sealed = cipher.seal(draft.content)
        metadata = card_metadata(scope, draft, retention, cipher)
        now = datetime.now(UTC)
        memory_id = storage.add_memory(
            {
                "content": sealed,
                "embedding": cipher.rotate(vector),
                "user_id": scope.user_id,
                "agent_id": scope.agent_id,
                "run_id": None,
                "hash": hashlib.md5(sealed.encode(), usedforsecurity=False).hexdigest(),
                "category": "",
                "metadata": metadata,
                "filters": {},
                "created_at": now,
                "updated_at": now,
            }
        )
        if memory_id is None:
            raise MemoryUnavailableError("store did not acknowledge the write")
        # The card as written, from the plaintext in hand: never opened again here, so an erase that forgets the
        # case's key while this write runs cannot turn a written card into a store fault.
        return _to_card({"id": memory_id}, metadata, draft.content, draft.told_by)

    def opened(self, case_id: str, stored: str) -> str | None:
        """Card text as written: sealed text opened with the case key; text from before sealing as it is."""
        if not is_sealed(stored):
            return stored
        cipher = self._ciphers.get(case_id)
        if cipher is None:
            return None
        try:
            return cipher.open(stored)
        except SealError:
            return None

    def cipher(self, case_id: str) -> CaseCipher:
        cipher = self._ciphers.get(case_id)
        if cipher is None:  # the erase forgot the key after the write loaded it: the case is gone
            raise CaseErasedError(case_id)
        return cipher
