"""ScopedCalls: the gateway's calls as they run on the memory worker, each under the grant of its request.

MemoryGateway (memory/gateway.py) is the door: it checks the write policy and hands each call to the worker
through `StoreRunner.run`; the bodies here run there. A call covers exactly the spaces its grant names: a search
its reads, a write its one written space, a delete or a retention purge the spaces it writes (ids and metadata
only). Every row read back passes `CardRows.examine` (the scope re-check, then the grant) and the read policy.
"""

from __future__ import annotations

import builtins
import contextlib
import logging
from collections.abc import Callable, Iterable, Iterator, Sequence
from datetime import UTC, datetime
from typing import Any

import numpy as np

from bureau.memory import owner_rows
from bureau.memory.card_rows import LOCKED, CardRows, row_facts
from bureau.memory.embedders import cosine
from bureau.memory.known_cards import KnownCards
from bureau.memory.relevance import RelevanceScorer
from bureau.memory.screening_memo import RememberedScreening
from bureau.memory.seekdb_search import Hit
from bureau.memory.store_runner import PING_SCOPE, StoreRunner
from bureau.memory.types import Candidate, CardDraft, Excluded, Locked, Retrieval, RowFacts, StoredCard
from bureau.scope.keys import SPACES, TENANT, MemoryScope
from bureau.scope.memory_policy import EXPIRED, OWNER_MISMATCH, Retention, may_be_evidence, read_exclusion
from bureau.vault.grants import Grant, ResealGrant
from bureau.vault.items import item_of, new_item_id, source_item

CASE_USER_PREFIX = f"{TENANT}:"
TOP_UP_ROUNDS = 6  # a part whose rows did not count (another compartment's) is asked again, its limit doubled
security_log = logging.getLogger("bureau.security")


def _items(rows: Sequence[dict[str, Any]]) -> list[str]:
    """The items a batch of rows names: their texts' and their named sources'."""
    found = []
    for row in rows:
        if item := item_of(str(row.get("memory") or "")):
            found.append(item)
        told = (row.get("metadata") or {}).get("told_by")
        if told and (item := item_of(str(told))):
            found.append(item)
    return found


def _keys_of(cards: Sequence[RowFacts | StoredCard]) -> list[str]:
    """The items whose keys go with some cards: each one's text and its named source."""
    return [key for card in cards if card.item for key in (card.item, source_item(card.item))]


class ScopedCalls:
    """The bodies of the gateway's calls, run on the memory worker: one grant's spaces at a time."""

    def __init__(
        self,
        runner: StoreRunner,
        relevance: RelevanceScorer,
        known: KnownCards,
        screening: Callable[[], RememberedScreening],
        retention: Retention,
        backend: str,
    ) -> None:
        self._runner = runner
        self._cards = CardRows()  # cards into rows and back, re-checked against the scope
        self._relevance = relevance
        self._known = known
        self._screening = screening  # the gateway's screening in force (a test may replace it)
        self.retention = retention
        self._backend = backend
        self.expired_purged = 0
        self.locked_rows_seen = 0  # rows a statement handed back that no key of the request opened

    @property
    def foreign_hits_dropped(self) -> int:
        return self._cards.foreign_hits_dropped

    # ----- writing -----------------------------------------------------------------------------------

    def write_many(self, grant: Grant, drafts: tuple[CardDraft, ...]) -> list[StoredCard]:
        # PowerMem's add() would embed and store the text it is handed, so the gateway embeds the plaintext
        # itself, rotates the vector into the space's basis and seals the text under a key of its own, and
        # writes through the storage layer: nothing the store (or its redo log) receives opens without the
        # vault. The keys reach the vault before any row reaches the store.
        scope = grant.write_scope()
        storage = self._runner.client().storage
        # Each distinct text once, in one encoder batch with the pieces its relevance features need. Only a
        # card that may be evidence is ever judged, so only its features are measured.
        featured = [d.content for d in drafts if may_be_evidence(d.memory_type)]
        others = [d.indexed_by for d in drafts if not may_be_evidence(d.memory_type)]
        vectors = self._relevance.card_vectors(scope.case_id, featured, others)
        prepared = [
            self._cards.prepare(grant, scope, draft, vectors[draft.indexed_by], self.retention) for draft in drafts
        ]
        grant.store_new_keys()
        written: list[StoredCard] = []
        try:
            for row in prepared:
                memory_id = storage.add_memory(row.record)
                if memory_id is None:
                    raise RuntimeError("the store did not acknowledge the write")
                written.append(self._cards.stored(row, memory_id))
        except BaseException:
            with contextlib.suppress(Exception):
                self.delete_ids(scope.user_id, scope.agent_id, [c.id for c in written])
            with contextlib.suppress(Exception):
                grant.destroy(scope.space, [key for row in prepared for key in (row.item, source_item(row.item))])
            raise
        self._relevance.remember_many([c for c in written if c.may_be_evidence])  # once, at write time
        self._known.noted(scope.user_id, scope.agent_id, [(c.memory_type, c.created_at, c.id, c.item) for c in written])
        return written

    # ----- searching ---------------------------------------------------------------------------------

    def search(self, grant: Grant, query: str, limit: int, claim: bool = False, unfiltered: bool = False) -> Retrieval:
        """The nearest rows of each space the grant reads, the query rotated into each space's basis. A part
        whose rows did not all count (another compartment's: a filter that failed) is asked again with a larger
        limit, so the rows that do count are the same ones. `unfiltered` (the presenter act): each part without
        its space filter and without the re-check, k x spaces rows, each kept only if it opens in that part."""
        scopes = grant.read_scopes
        # Sentence and word vectors in one batch (what this case embedded before comes from the cache).
        question = self._relevance.question(query, scopes[0].case_id if scopes else "", claim=claim)
        vectors = {scope.space: grant.rotate(scope.space, np.asarray(question.vector)).tolist() for scope in scopes}
        fetch = limit * len(SPACES) if unfiltered else limit
        hits = self._nearest_hits([(scope, vectors[scope.space]) for scope in scopes], fetch, unfiltered)
        grant.load({scope.space: _items([h.item for h in part]) for scope, part in zip(scopes, hits, strict=True)})
        result = Retrieval()
        readable = {scope.agent_id for scope in scopes}
        for n, (scope, part) in enumerate(zip(scopes, hits, strict=True)):
            judged = self._judge(grant, scope, part, recheck=not unfiltered, keep=limit)
            rounds, asked = 0, fetch
            while not unfiltered and judged.opened < limit and len(part) >= asked and rounds < TOP_UP_ROUNDS:
                asked, rounds = asked * 2, rounds + 1  # rows that did not count took slots: ask for more
                [part] = self._nearest_hits([(scope, vectors[scope.space])], asked, False)
                grant.load({scope.space: _items([h.item for h in part])})
                judged = self._judge(grant, scope, part, recheck=True, keep=limit)
            foreign = [h for h in judged.locked_hits if str(h.item.get("agent_id")) not in readable]
            if foreign and not unfiltered:
                security_log.warning(
                    "security: a search of %s got %d row(s) of other compartments; none opened",
                    scope.space,
                    len(foreign),
                )
            result.candidates += judged.candidates
            result.excluded += judged.excluded
            if n == 0:  # the asked space's own basis: what other compartments' rows score there
                result.locked = [Locked(str(h.item.get("agent_id")), h.cosine) for h in foreign]
        # Signals for what may be evidence; what the read policy excluded is never judged.
        result.candidates = self._relevance.score(question, result.candidates)
        return result

    def _nearest_hits(
        self, queries: Sequence[tuple[MemoryScope, list[float]]], limit: int, unfiltered: bool
    ) -> list[list[Hit]]:
        """The nearest rows of each space; seekdb answers for all of them in one statement."""
        spaces = [(scope.user_id, None if unfiltered else scope.agent_id, vector) for scope, vector in queries]
        if self._backend == "sqlite":
            return owner_rows.nearest_hits(self._runner.client(), None, spaces, limit)
        return owner_rows.nearest_hits(None, self._runner.statements(), spaces, limit)

    def _judge(self, grant: Grant, scope: MemoryScope, hits: Sequence[Hit], *, recheck: bool, keep: int) -> _Judged:
        """The read policy on one space's hits, nearest first: the first `keep` rows that open (what a working
        filter would have returned) are judged, what may be evidence and what is excluded (with why); rows that
        do not count (another compartment's, another generation's, a locked row) are set aside."""
        now = datetime.now(UTC)
        judged = _Judged()
        expired: builtins.list[StoredCard] = []
        for hit in hits:
            card, reason = self._cards.examine(grant, scope, hit.item, now, recheck=recheck)
            if card is None:
                if reason == OWNER_MISMATCH:
                    judged.excluded.append(Excluded(None, scope.space, hit.cosine, OWNER_MISMATCH))
                    judged.locked_hits.append(hit)
                elif reason == LOCKED:
                    judged.locked_hits.append(hit)
                continue
            if judged.opened >= keep:
                continue
            judged.opened += 1
            if reason == EXPIRED:
                expired.append(card)
            exclusion = EXPIRED if reason == EXPIRED else read_exclusion(card.facts, now, self._screening())
            if exclusion is not None:
                judged.excluded.append(Excluded(card, card.space, hit.cosine, exclusion))
            else:
                judged.candidates.append(Candidate(card, hit.cosine))
        self.locked_rows_seen += len(judged.locked_hits)
        # Session records another process wrote take search slots too: the retention learns of them here.
        self._known.noted(
            scope.user_id,
            scope.agent_id,
            [(e.card.memory_type, e.card.created_at, e.card.id, e.card.item) for e in judged.excluded if e.card],
        )
        self._purge(grant, scope, expired)
        return judged

    # ----- reading -----------------------------------------------------------------------------------

    def get(self, grant: Grant, card_id: str) -> StoredCard | None:
        """The card with this id in a space the grant reads, or None (whichever space holds it elsewhere)."""
        # Only the canonical spelling: "0"+id or full-width digits would name the same row under another key.
        if not (card_id.isascii() and card_id.isdigit()) or len(card_id) > 20 or card_id != str(int(card_id)):
            return None
        for scope in grant.read_scopes:
            row = self._runner.client().get(int(card_id), user_id=scope.user_id, agent_id=scope.agent_id)
            if row:
                card, reason = self._cards.examine(grant, scope, row, datetime.now(UTC))
                if reason == EXPIRED and card is not None:
                    self._purge(grant, scope, [card])
                if card is not None and not reason:
                    return card
        return None

    def list_spaces(self, grant: Grant) -> dict[str, builtins.list[StoredCard]]:
        """Every card of the spaces the grant reads, by space, their keys fetched in one vault statement."""
        scopes = grant.read_scopes
        return self._cards_of(grant, scopes, list(self._space_rows(scopes))) if scopes else {}

    def listing(self, grant: Grant) -> tuple[dict[str, builtins.list[RowFacts]], dict[str, builtins.list[StoredCard]]]:
        """`rows` and `list_spaces` from one statement: every row of the spaces the grant lists, as ids and
        metadata, and the cards of the spaces it reads (a space it reads is one it lists), opened."""
        listed, read = grant.listed_scopes, grant.read_scopes
        if not listed:
            return {}, {}
        rows = list(self._space_rows(listed))
        readable = {scope.agent_id for scope in read}
        cards = self._cards_of(grant, read, [row for row in rows if str(row.get("agent_id")) in readable])
        return self._facts_of(listed, rows), cards

    def _cards_of(
        self, grant: Grant, scopes: Sequence[MemoryScope], rows: builtins.list[dict[str, Any]]
    ) -> dict[str, builtins.list[StoredCard]]:
        """The cards of `rows` under the scopes asked, by space, their keys fetched in one vault statement. A row
        of a space not asked for is examined under the first scope asked, so it is dropped and counted like any
        row outside the scope."""
        if not scopes:
            return {}
        asked = {scope.agent_id: scope for scope in scopes}
        by_space: dict[str, builtins.list[dict[str, Any]]] = {}
        for row in rows:
            by_space.setdefault(asked.get(str(row.get("agent_id")), scopes[0]).space, []).append(row)
        grant.load({space: _items(found) for space, found in by_space.items()})
        cards: dict[str, builtins.list[StoredCard]] = {scope.space: [] for scope in scopes}
        expired: dict[str, builtins.list[StoredCard]] = {scope.space: [] for scope in scopes}
        now = datetime.now(UTC)
        for row in rows:
            scope = asked.get(str(row.get("agent_id")), scopes[0])
            card, reason = self._cards.examine(grant, scope, row, now)
            if card is not None and reason == EXPIRED:
                expired[scope.space].append(card)
            elif card is not None and not reason:
                cards[scope.space].append(card)
        for scope in scopes:
            self._purge(grant, scope, expired[scope.space])  # after the scan: deleting while paging shifts pages
        return {space: sorted(found, key=lambda c: (c.created_at, c.id)) for space, found in cards.items()}

    def _space_rows(self, scopes: Sequence[MemoryScope]) -> Iterator[dict[str, Any]]:
        """The rows of the spaces of one case: on seekdb one statement for all of them, without vectors."""
        if {scope.case_id for scope in scopes} != {scopes[0].case_id}:
            raise ValueError("the spaces listed together are of one case")
        if self._backend == "sqlite":
            for scope in scopes:
                yield from self._rows(scope.user_id, scope.agent_id)
            return
        yield from owner_rows.space_rows(self._runner.statements(), scopes[0].user_id, [s.agent_id for s in scopes])

    def rows(self, grant: Grant) -> dict[str, builtins.list[RowFacts]]:
        """Every row of the spaces the grant lists, by space, as ids and metadata (no text opened): a count, a
        delete's lookup, a lifecycle grant's view (across generations when it names none)."""
        scopes = grant.listed_scopes
        return self._facts_of(scopes, self._space_rows(scopes)) if scopes else {}

    def _facts_of(
        self, scopes: Sequence[MemoryScope], rows: Iterable[dict[str, Any]]
    ) -> dict[str, builtins.list[RowFacts]]:
        found: dict[str, builtins.list[RowFacts]] = {scope.space: [] for scope in scopes}
        asked = {scope.agent_id: scope for scope in scopes}
        for row in rows:
            scope = asked.get(str(row.get("agent_id")))
            if scope is None or not self._cards.matches(scope, row):
                continue
            facts = row_facts(row)
            if scope.generation is None or facts.generation == scope.generation:
                found[scope.space].append(facts)
        return found

    def _rows(self, user_id: str | None, agent_id: str | None = None, **filters: str) -> Iterator[dict[str, Any]]:
        """All rows matching, page by page in id order (memory/owner_rows.py)."""
        return owner_rows.rows(self._runner.client(), user_id, agent_id, **filters)

    # ----- the retention -----------------------------------------------------------------------------

    def purge_expired(self, grant: Grant) -> builtins.list[RowFacts]:
        """Every expired record of the spaces the grant writes, its key destroyed and its row deleted, read as
        metadata only (the retention reads no text). Returns what was removed."""
        now = datetime.now(UTC)
        removed: builtins.list[RowFacts] = []
        for space, facts in self.rows(grant.narrowed(reads=())).items():
            expired = [f for f in facts if f.expired(now)]
            scope = grant.write_scope(space)
            self._remove(grant, scope, expired)
            removed += expired
        return removed

    def _purge(self, grant: Grant, scope: MemoryScope, cards: Sequence[StoredCard]) -> None:
        """Expired records are invisible and purged on the read that finds them (on the memory worker). Their
        keys go when the grant writes the space; otherwise the retention sweep destroys them with the rows'
        orphaned keys."""
        if not cards:
            return
        self._relevance.forget(scope.case_id, [card.id for card in cards])
        if any(s.space == scope.space for s in grant.write_scopes):
            grant.destroy(scope.space, _keys_of(cards))
        for card in cards:
            if self._runner.client().delete(int(card.id), user_id=scope.user_id, agent_id=scope.agent_id):
                self.expired_purged += 1
                self._runner.compaction.deleted(1)
        self._known.deleted(scope.user_id, scope.agent_id, [card.id for card in cards])

    def trim(self, grant: Grant, memory_type: str, keep: int) -> int:
        """All but the newest `keep` cards of one type in the space the grant writes: keys, then rows."""
        scope = grant.write_scope()
        key = (scope.user_id, scope.agent_id, str(memory_type))
        if self._known.needs_full_read(key):
            rows = self._rows(scope.user_id, scope.agent_id, card_memory_type=str(memory_type))
            facts = [row_facts(row) for row in rows if self._cards.matches(scope, row)]
            self._known.read(key, [(f.created_at, f.id, f.item) for f in facts if f.memory_type == memory_type])
        stale = self._known.beyond_newest(key, keep)
        if stale:
            grant.destroy(scope.space, [k for _, item in stale if item for k in (item, source_item(item))])
        self.delete_ids(scope.user_id, scope.agent_id, [card_id for card_id, _ in stale])
        return len(stale)

    def similarities(self, case_id: str, text: str, others: tuple[str, ...]) -> builtins.list[float]:
        found = self._relevance.vectors(case_id, [text, *others])
        return [cosine(found[text], found[other]) for other in others]

    # ----- deleting ----------------------------------------------------------------------------------

    def delete(self, grant: Grant, card_id: str) -> bool:
        """A card of a space the grant writes, in whatever generation: its keys destroyed, then its row. Reads
        no text: a delete is the card's end, not a read of the case."""
        if not (card_id.isascii() and card_id.isdigit()) or len(card_id) > 20 or card_id != str(int(card_id)):
            return False
        for scope in grant.write_scopes:
            row = self._runner.client().get(int(card_id), user_id=scope.user_id, agent_id=scope.agent_id)
            if row and self._cards.matches(scope, row):
                facts = row_facts(row)
                self._remove(grant, scope, [facts])
                return True
        return False

    def delete_many(self, grant: Grant, space: str, cards: Sequence[RowFacts | StoredCard]) -> None:
        """Cards of one space the grant writes, in batches: their keys first, then their rows."""
        self._remove(grant, grant.write_scope(space), cards)

    def _remove(self, grant: Grant, scope: MemoryScope, cards: Sequence[RowFacts | StoredCard]) -> None:
        if not cards:
            return
        grant.destroy(scope.space, _keys_of(cards))  # every copy of their text stops opening, now
        self.delete_ids(scope.user_id, scope.agent_id, [card.id for card in cards])
        # After the deletes, on the worker: a search queued before them has run and cached what it read.
        self._relevance.forget(scope.case_id, [card.id for card in cards])

    def delete_ids(self, user_id: str, agent_id: str | None, card_ids: Sequence[str]) -> None:
        """Batched deletes by id, restricted to the case (and the space, when given) in the store itself."""

        def deleted(batch: builtins.list[str]) -> None:
            self._known.deleted(user_id, agent_id, batch)
            self._runner.compaction.deleted(len(batch))

        owner_rows.delete_ids(self._runner.client(), user_id, agent_id, card_ids, deleted)

    def reseal(self, grant: ResealGrant, after: int, limit: int) -> tuple[int, int | None]:
        """The case's rows with ids above `after`, up to `limit` of them, that an earlier version wrote
        (`sealed:v1:` under the case key, or plaintext from before sealing), re-sealed into their space's
        compartment: text and named source under keys of their own, vector (the old rotation undone) in the
        space's basis, id kept. Rows sealed already are left as they are, so a re-seal that crashed is simply
        run again. One store call per page (each within the store's deadline, however large the case).
        Returns (how many were re-sealed, the id to go on after, or None at the end)."""
        by_agent = {scope.agent_id: scope for scope in grant.write_scopes}
        case_user = grant.write_scopes[0].user_id
        pending: list[tuple[str, str, dict[str, Any], list[float]]] = []
        done = 0

        def flush() -> None:
            nonlocal done
            grant.store_new_keys()  # the keys first, then the rows that need them
            for row_id, sealed, metadata, vector in pending:
                owner_rows.rewrite_row(self._runner.client(), row_id, sealed, metadata, vector)
            done += len(pending)
            pending.clear()

        nearest = None if self._backend == "sqlite" else self._runner.statements()
        scanned, last = 0, after
        for row in owner_rows.raw_rows(self._runner.client(), nearest, case_user, after):
            if scanned == limit:
                break
            scanned, last = scanned + 1, int(row["id"])
            scope = by_agent.get(str(row.get("agent_id")))
            text, vector = str(row.get("memory") or ""), row.get("vector")
            plain = grant.open_legacy(text)
            if scope is None or plain is None or vector is None or not self._cards.matches(scope, row):
                continue  # re-sealed already, another owner's, or nothing to re-seal it from
            metadata = dict(row.get("metadata") or {})
            item = new_item_id()
            metadata["item"] = item
            metadata.setdefault("generation", scope.generation or "")
            told = metadata.get("told_by")
            if told:
                told_plain = grant.open_legacy(str(told))
                if told_plain is None:
                    metadata.pop("told_by")
                else:
                    metadata["told_by"] = grant.seal(scope.space, source_item(item), told_plain)
            sealed = grant.seal(scope.space, item, plain)
            rotated = grant.rotate(scope.space, grant.plain_vector(text, vector)).tolist()
            pending.append((str(row["id"]), sealed, metadata, rotated))
        flush()
        return done, (last if scanned == limit else None)

    def erase(self, user_id: str) -> None:
        """Every row of a case (its keys are gone already: the vault destroyed them first)."""
        owner_rows.erase_owner(self._runner.client(), user_id, lambda ids: self.delete_ids(user_id, None, ids))
        self._known.forget(user_id)

    def list_case_ids(self) -> builtins.list[str]:
        scan = self._backend == "sqlite"  # seekdb names its owners in one statement
        users = owner_rows.owners(self._runner.client()) if scan else self._runner.statements().owners()
        prefix = CASE_USER_PREFIX
        return sorted(u[len(prefix) :] for u in users if u.startswith(prefix) and u != PING_SCOPE.user_id)


class _Judged:
    """One space's hits after the read policy."""

    __slots__ = ("candidates", "excluded", "locked_hits", "opened")

    def __init__(self) -> None:
        self.candidates: list[Candidate] = []
        self.excluded: list[Excluded] = []
        self.locked_hits: list[Hit] = []  # rows no key in the request opens (another compartment's, or keyless)
        self.opened = 0  # rows that counted (opened, of the scope and generation asked)
