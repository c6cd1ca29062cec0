"""A store row and the card it holds: the metadata a card is written with, its text sealed and its vector
rotated through the request's grant, and the card read back only under the scope that was asked for, opened
only through that grant.

Three walls stand between a request and another compartment's card, each enough alone: the store
statement's filter, the scope re-check here (counted, and logged without any id), and the grant, which opens a
row only of a compartment it reads, with that row's own key (vault/grants.py). A row whose text does not open
is `locked`: another compartment's, a destroyed key's, or an unsealed row of an earlier version.
"""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import numpy as np

from bureau.memory.types import CardDraft, FindingMark, RowFacts, StoredCard
from bureau.scope.audience import visibility_of_space
from bureau.scope.keys import MemoryScope
from bureau.scope.memory_policy import EXPIRED, OWNER_MISMATCH, Retention
from bureau.scope.vocabulary import CreatedBy
from bureau.vault.grants import Grant
from bureau.vault.items import new_item_id, source_item

security_log = logging.getLogger("bureau.security")
LOCKED = "locked"  # no key in this request opens it; skipped, never a policy reason the X-ray names
SUPERSEDED = "superseded"  # of a generation a reset has replaced: gone for every reader; skipped


def _parse_time(value: Any) -> datetime | None:
    if value in (None, ""):
        return None
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    parsed = datetime.fromisoformat(str(value))
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def card_metadata(
    scope: MemoryScope, draft: CardDraft, retention: Retention, item: str, told_by: str | None
) -> dict[str, Any]:
    """What the store keeps beside the sealed text: scope markers, the item id (whose key opens the text), the
    generation, and what the read policy needs. `told_by` is already sealed."""
    if scope.generation is None:
        raise ValueError("a card is written into one generation of its case")
    now = datetime.now(UTC)
    expires_at = draft.expires_at or retention.expiry(draft.memory_type, now)
    metadata: dict[str, Any] = {
        "scope_key": scope.key,
        "case_id": scope.case_id,
        "space": scope.space,
        "item": item,
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
    if told_by is not None:
        metadata["told_by"] = told_by  # a name someone typed: sealed like the text, under its own key
    if draft.finding is not None:
        metadata["finding"] = draft.finding.as_metadata()
    return metadata


def row_facts(row: dict[str, Any]) -> RowFacts:
    """What a row says without opening it: ids and metadata, for work that never reads text (a delete, the
    retention, a reset's old generation, finding a board copy by its source)."""
    metadata = row.get("metadata") or {}
    finding = FindingMark.from_metadata(metadata.get("finding"))
    return RowFacts(
        id=str(row["id"]),
        space=str(row.get("agent_id") or metadata.get("space", "")),
        item=str(metadata.get("item", "")),
        generation=str(metadata.get("generation", "")),
        memory_type=str(metadata.get("card_memory_type", "")),
        created_by=str(metadata.get("created_by", CreatedBy.UNTRUSTED)),
        created_at=_parse_time(metadata.get("created_at")) or datetime.now(UTC),
        expires_at=_parse_time(metadata.get("expires_at")),
        source_card_id=metadata.get("source_card_id"),
        finding_id=finding.finding_id if finding else None,
    )


def _to_card(row_id: Any, metadata: dict[str, Any], content: str, told_by: str | None = None) -> StoredCard:
    return StoredCard(
        id=str(row_id),
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
        item=str(metadata.get("item", "")),
        told_by=told_by,
        finding=FindingMark.from_metadata(metadata.get("finding")),
    )


@dataclass(frozen=True, slots=True)
class PreparedRow:
    """A card sealed and rotated, ready for the store (its keys stored in the vault first)."""

    record: dict[str, Any]
    metadata: dict[str, Any]
    content: str
    told_by: str | None
    item: str


class CardRows:
    """Cards into rows and rows back into cards, under one scope, through one grant."""

    def __init__(self) -> None:
        self.foreign_hits_dropped = 0

    def matches(self, scope: MemoryScope, row: dict[str, Any]) -> bool:
        """The scope re-check: every marker of the row names the scope asked for."""
        metadata = row.get("metadata") or {}
        return (
            row.get("user_id") == scope.user_id
            and row.get("agent_id") == scope.agent_id
            and metadata.get("scope_key") == scope.key
            and metadata.get("case_id") == scope.case_id
            and metadata.get("space") == scope.space
        )

    def examine(
        self, grant: Grant, scope: MemoryScope, row: dict[str, Any], now: datetime, *, recheck: bool = True
    ) -> tuple[StoredCard | None, str]:
        """A card is returned only if every scope marker matches the scope asked for (unless `recheck` is off:
        the presenter act), it is of the generation asked for, its text opens through `grant` under the
        scope's compartment, and it has not expired. Otherwise (None or the card, reason): `owner_mismatch`
        (counted, logged without ids), `superseded`, `locked`, or `expired` (the caller purges it)."""
        if recheck and not self.matches(scope, row):
            self.foreign_hits_dropped += 1
            security_log.warning("security: dropped a card outside the requested scope (asked %s)", scope.key)
            return None, OWNER_MISMATCH
        metadata = row.get("metadata") or {}
        if scope.generation is not None and str(metadata.get("generation", "")) != scope.generation:
            return None, SUPERSEDED
        content = grant.open(scope.space, str(row.get("memory") or row.get("content") or ""))
        if content is None or "case_id" not in metadata or "space" not in metadata:
            return None, LOCKED
        told = metadata.get("told_by")
        card = _to_card(row["id"], metadata, content, grant.open(scope.space, str(told)) if told else None)
        if card.expires_at is not None and card.expires_at <= now:
            return card, EXPIRED
        return card, ""

    def prepare(
        self, grant: Grant, scope: MemoryScope, draft: CardDraft, vector: list[float], retention: Retention
    ) -> PreparedRow:
        """The card's text (and named source) sealed under keys of their own, its vector in the space's basis.
        The keys wait in the grant until `store_new_keys`, which runs before the row is stored."""
        item = new_item_id()
        sealed = grant.seal(scope.space, item, draft.content)
        told = grant.seal(scope.space, source_item(item), draft.told_by) if draft.told_by is not None else None
        metadata = card_metadata(scope, draft, retention, item, told)
        now = datetime.now(UTC)
        record = {
            "content": sealed,
            "embedding": grant.rotate(scope.space, np.asarray(vector)).tolist(),
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
        return PreparedRow(record, metadata, draft.content, draft.told_by, item)

    @staticmethod
    def stored(prepared: PreparedRow, memory_id: Any) -> StoredCard:
        """The card as written, from the plaintext in hand: never opened again here, so an erase that destroys
        the case's keys while this write runs cannot turn a written card into a store fault."""
        return _to_card(memory_id, prepared.metadata, prepared.content, prepared.told_by)
