"""ScopedStore: the gateway's calls as they run on the memory worker, one scope at a time.

MemoryGateway (memory/gateway.py) is the door: it checks the write policy, loads the case key and hands each
call to the worker through `StoreLife.run`; the bodies here run there. Every row read back passes
`CardRows.examine` (the scope re-check) and the read policy; every write is sealed under the case key.
"""

from __future__ import annotations

import builtins
import contextlib
import dataclasses
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime
from typing import Any

from bureau.memory import store_rows
from bureau.memory.card_rows import CardRows
from bureau.memory.case_ciphers import CaseCiphers
from bureau.memory.embedders import cosine
from bureau.memory.known_cards import KnownCards
from bureau.memory.relevance import RelevanceScorer
from bureau.memory.screening_memo import RememberedScreening
from bureau.memory.seekdb_search import Hit
from bureau.memory.store_life import PING_SCOPE, StoreLife
from bureau.memory.types import Candidate, CardDraft, Excluded, Retrieval, StoredCard
from bureau.scope.keys import TENANT, MemoryScope
from bureau.scope.memory_policy import EXPIRED, OWNER_MISMATCH, Retention, may_be_evidence, read_exclusion

CASE_USER_PREFIX = f"{TENANT}:"


class ScopedStore:
    """The bodies of the gateway's calls, run on the memory worker: one scope (or one case) at a time."""

    def __init__(
        self,
        life: StoreLife,
        ciphers: CaseCiphers,
        relevance: RelevanceScorer,
        known: KnownCards,
        screening: Callable[[], RememberedScreening],
        retention: Retention,
        backend: str,
    ) -> None:
        self._life = life
        self._ciphers = ciphers
        self._cards = CardRows(ciphers)  # cards into rows and back, re-checked against the scope
        self._relevance = relevance
        self._known = known
        self._screening = screening  # the gateway's screening in force (a test may replace it)
        self.retention = retention
        self._backend = backend
        self.expired_purged = 0

    @property
    def foreign_hits_dropped(self) -> int:
        return self._cards.foreign_hits_dropped

    def _admit(self, scope: MemoryScope, item: dict[str, Any]) -> StoredCard | None:
        card, reason = self._cards.examine(scope, item, datetime.now(UTC))
        if reason == EXPIRED and card is not None:
            self._purge(scope, [card])
        return card if not reason else None

    def _purge(self, scope: MemoryScope, cards: Sequence[StoredCard]) -> None:
        """Expired records are invisible and purged on the read that finds them (on the memory worker)."""
        if cards:
            self._relevance.forget(scope.case_id, [card.id for card in cards])
        for card in cards:
            if self._life.client().delete(int(card.id), user_id=scope.user_id, agent_id=scope.agent_id):
                self.expired_purged += 1
                self._life.compaction.deleted(1)
        self._known.deleted(scope.user_id, scope.agent_id, [card.id for card in cards])

    def write_many(self, scope: MemoryScope, drafts: tuple[CardDraft, ...]) -> list[StoredCard]:
        # PowerMem's add() would embed and store the text it is handed, so the gateway embeds the plaintext
        # itself, rotates the vector and seals the text under the case key, and writes through the storage
        # layer: nothing the store (or its redo log) receives is readable once the key is destroyed.
        storage = self._life.client().storage
        cipher = self._cards.cipher(scope.case_id)
        # Each distinct text once, in one encoder batch with the pieces its relevance features need. Only a
        # card that may be evidence is ever judged, so only its features are measured.
        featured = [d.content for d in drafts if may_be_evidence(d.memory_type)]
        others = [d.indexed_by for d in drafts if not may_be_evidence(d.memory_type)]
        vectors = self._relevance.card_vectors(scope.case_id, featured, others)
        written: list[StoredCard] = []
        try:
            for draft in drafts:
                written.append(
                    self._cards.add(storage, cipher, scope, draft, vectors[draft.indexed_by], self.retention)
                )
        except BaseException:
            with contextlib.suppress(Exception):
                self.delete_ids(scope.user_id, scope.agent_id, [c.id for c in written])
            raise
        self._relevance.remember_many([c for c in written if c.may_be_evidence])  # once, at write time
        self._known.noted(scope.user_id, scope.agent_id, [(c.memory_type, c.created_at, c.id) for c in written])
        return written

    def search(self, scopes: tuple[MemoryScope, ...], query: str, limit: int, claim: bool = False) -> Retrieval:
        # Sentence and word vectors in one batch (what this case embedded before comes from the cache).
        question = self._relevance.question(query, scopes[0].case_id if scopes else "", claim=claim)
        # A case without its key has nothing that can be read: its spaces are not searched.
        readable = [(scope, cipher) for scope in scopes if (cipher := self._ciphers.get(scope.case_id))]
        rotated = {scope.case_id: cipher.rotate(question.vector) for scope, cipher in readable}  # per case basis
        hits = self._nearest_hits([(scope, rotated[scope.case_id]) for scope, _ in readable], limit)
        result = Retrieval()
        for (scope, _), space_hits in zip(readable, hits, strict=True):
            candidates, excluded = self._judge(scope, space_hits)
            result.candidates += candidates
            result.excluded += excluded
        # Signals for what may be evidence; what the read policy excluded is never judged.
        result.candidates = self._relevance.score(question, result.candidates)
        return result

    def _nearest_hits(self, queries: Sequence[tuple[MemoryScope, list[float]]], limit: int) -> list[list[Hit]]:
        """The nearest rows of each space; seekdb answers for all of them in one statement."""
        spaces = [(scope.user_id, scope.agent_id, vector) for scope, vector in queries]
        if self._backend == "sqlite":
            return store_rows.nearest_hits(self._life.client(), None, spaces, limit)
        return store_rows.nearest_hits(None, self._life.statements(), spaces, limit)

    def _judge(
        self, scope: MemoryScope, hits: Sequence[Hit]
    ) -> tuple[builtins.list[Candidate], builtins.list[Excluded]]:
        """The read policy on one space's hits: what may be evidence, and what is excluded, with why."""
        now = datetime.now(UTC)
        candidates: builtins.list[Candidate] = []
        excluded: builtins.list[Excluded] = []
        expired: builtins.list[StoredCard] = []
        for hit in hits:
            card, reason = self._cards.examine(scope, hit.item, now)
            if card is None:
                if reason == OWNER_MISMATCH:
                    excluded.append(Excluded(None, scope.space, hit.cosine, OWNER_MISMATCH))
                continue
            if reason == EXPIRED:
                expired.append(card)
            exclusion = EXPIRED if reason == EXPIRED else read_exclusion(card.facts, now, self._screening())
            if exclusion is not None:
                excluded.append(Excluded(card, card.space, hit.cosine, exclusion))
            else:
                candidates.append(Candidate(card, hit.cosine))
        # Session records another process wrote take search slots too: the retention learns of them here.
        self._known.noted(
            scope.user_id,
            scope.agent_id,
            [(e.card.memory_type, e.card.created_at, e.card.id) for e in excluded if e.card],
        )
        self._purge(scope, expired)
        return candidates, excluded

    def get(self, scope: MemoryScope, card_id: str) -> StoredCard | None:
        # Only the canonical spelling: "0"+id or full-width digits would name the same row under another key.
        if not (card_id.isascii() and card_id.isdigit()) or len(card_id) > 20 or card_id != str(int(card_id)):
            return None
        item = self._life.client().get(int(card_id), user_id=scope.user_id, agent_id=scope.agent_id)
        if not item:
            return None
        return self._admit(scope, item)

    def list_spaces(self, scopes: Sequence[MemoryScope]) -> dict[str, builtins.list[StoredCard]]:
        """Every card of some spaces of one case, by space. A row of a space not asked for is examined under
        the first scope asked, so it is dropped and counted like any row outside the scope."""
        if not scopes:
            return {}
        asked = {scope.agent_id: scope for scope in scopes}
        cards: dict[str, builtins.list[StoredCard]] = {scope.space: [] for scope in scopes}
        expired: dict[str, builtins.list[StoredCard]] = {scope.space: [] for scope in scopes}
        now = datetime.now(UTC)
        for item in self._space_rows(scopes):
            scope = asked.get(str(item.get("agent_id")), scopes[0])
            card, reason = self._cards.examine(scope, item, now)
            if card is not None and reason == EXPIRED:
                expired[scope.space].append(card)
            elif card is not None and not reason:
                cards[scope.space].append(card)
        for scope in scopes:
            self._purge(scope, expired[scope.space])  # after the scan: deleting while paging would shift pages
        return {space: sorted(found, key=lambda c: (c.created_at, c.id)) for space, found in cards.items()}

    def _space_rows(self, scopes: Sequence[MemoryScope]) -> Iterator[dict[str, Any]]:
        """The rows of the spaces of one case: on seekdb one statement for all of them, without vectors."""
        if {scope.case_id for scope in scopes} != {scopes[0].case_id}:
            raise ValueError("the spaces listed together are of one case")
        if self._backend == "sqlite":
            for scope in scopes:
                yield from self._rows(scope.user_id, scope.agent_id)
            return
        yield from store_rows.space_rows(self._life.statements(), scopes[0].user_id, [s.agent_id for s in scopes])

    def purge_expired(self, scope: MemoryScope) -> builtins.list[StoredCard]:
        now = datetime.now(UTC)
        examined = [self._cards.examine(scope, item, now) for item in self._rows(scope.user_id, scope.agent_id)]
        expired = [card for card, reason in examined if card is not None and reason == EXPIRED]
        self._purge(scope, expired)  # after the scan: deleting while paging would shift the pages
        return expired

    def _rows(self, user_id: str | None, agent_id: str | None = None, **filters: str) -> Iterator[dict[str, Any]]:
        """All rows matching, page by page in id order (memory/store_rows.py)."""
        return store_rows.rows(self._life.client(), user_id, agent_id, **filters)

    def trim(self, scope: MemoryScope, memory_type: str, keep: int) -> int:
        key = (scope.user_id, scope.agent_id, str(memory_type))
        if self._known.needs_full_read(key):
            rows = self._rows(scope.user_id, scope.agent_id, card_memory_type=str(memory_type))
            admitted = (self._admit(scope, row) for row in rows)
            cards = [c for c in admitted if c is not None and c.memory_type == memory_type]
            self._known.read(key, [(c.created_at, c.id) for c in cards])
        stale = self._known.beyond_newest(key, keep)
        self.delete_ids(scope.user_id, scope.agent_id, stale)
        return len(stale)

    def similarities(self, case_id: str, text: str, others: tuple[str, ...]) -> builtins.list[float]:
        found = self._relevance.vectors(case_id, [text, *others])
        return [cosine(found[text], found[other]) for other in others]

    def delete(self, scope: MemoryScope, card_id: str) -> bool:
        # By id, in whatever generation: a delete is the card's end, not a read of the case as it stands.
        if self.get(dataclasses.replace(scope, generation=None), card_id) is None:
            return False
        deleted = bool(self._life.client().delete(int(card_id), user_id=scope.user_id, agent_id=scope.agent_id))
        self._life.compaction.deleted(int(deleted))
        self._known.deleted(scope.user_id, scope.agent_id, [card_id])
        # After the delete, on the worker: a search queued before it has run and cached what it read.
        self._relevance.forget(scope.case_id, [card_id])
        return deleted

    def delete_many(self, scope: MemoryScope, card_ids: Sequence[str]) -> None:
        self.delete_ids(scope.user_id, scope.agent_id, card_ids)
        self._relevance.forget(scope.case_id, card_ids)  # after the deletes, as in `_delete_blocking`

    def delete_ids(self, user_id: str, agent_id: str | None, card_ids: Sequence[str]) -> None:
        """Batched deletes by id, restricted to the case (and the space, when given) in the store itself."""

        def deleted(batch: builtins.list[str]) -> None:
            self._known.deleted(user_id, agent_id, batch)
            self._life.compaction.deleted(len(batch))

        store_rows.delete_ids(self._life.client(), user_id, agent_id, card_ids, deleted)

    def erase(self, user_id: str) -> None:
        store_rows.erase_owner(self._life.client(), user_id, lambda ids: self.delete_ids(user_id, None, ids))
        self._known.forget(user_id)

    def list_case_ids(self) -> builtins.list[str]:
        users, prefix = store_rows.owners(self._life.client()), CASE_USER_PREFIX
        return sorted(u[len(prefix) :] for u in users if u.startswith(prefix) and u != PING_SCOPE.user_id)
