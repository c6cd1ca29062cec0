"""MemoryGateway: the one boundary in front of PowerMem, and the one scoped API of the memory.

Every call takes a `MemoryScope` built by the server. The gateway holds the read and write policy, the sealing
under the case key, the relevance signals and the calls into the store; every card read back is re-checked
against the scope that was asked for (memory/card_rows.py), so a store filter bug drops a card instead of
leaking it. The store client's own life (open, close, reopen, the worker, the deadline and the stall, the
supervisor's ping, the embedded server) is `StoreLife`'s (memory/store_life.py); the gateway delegates to it.
"""

from __future__ import annotations

import builtins
import logging
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from langchain_core.embeddings import Embeddings

from bureau.config import Settings
from bureau.memory.case_ciphers import CaseCiphers, CaseKeySource
from bureau.memory.known_cards import KnownCards
from bureau.memory.relevance import RelevanceScorer, policy_for
from bureau.memory.scoped_store import CASE_USER_PREFIX, ScopedStore
from bureau.memory.screening_memo import RememberedScreening
from bureau.memory.store_life import PING_TIMEOUT_S, StoreLife
from bureau.memory.types import (
    Candidate,
    CardDraft,
    CaseErasedError,
    Retrieval,
    StoredCard,
    WorkerIdLostError,
)
from bureau.scope.content_policy import ContentPolicy
from bureau.scope.keys import MemoryScope, board_scope
from bureau.scope.memory_policy import check_write
from bureau.scope.vocabulary import StoreFault

log = logging.getLogger("bureau.memory")
T = TypeVar("T")


class MemoryGateway:
    """The memory's one door: every call with a scope, the write policy checked here, the case key loaded,
    then the call handed to the memory worker (ScopedStore's body, through StoreLife.run)."""

    def __init__(
        self,
        settings: Settings,
        embedder: Embeddings,
        worker_slot: int = 0,
        *,
        keys: CaseKeySource,
        prepare: bool = False,
    ) -> None:
        self._settings = settings
        self._ciphers = CaseCiphers(keys)  # per-case sealing: card text and vectors (docs/erasure.md)
        self._embedder = embedder
        self._life = StoreLife(settings, embedder, worker_slot, prepare=prepare)
        # Relevance signals per candidate; per-card features live in this process only (memory/relevance/).
        self._relevance = RelevanceScorer(embedder, words=self.embedder_name != "openai")
        self._known = KnownCards()  # the session-record retention's ids (memory/known_cards.py)
        self.relevance_policy = policy_for(settings, self.embedder_name)
        self.fenced = False  # set when the worker id lease is lost: no more writes from this process
        self._screening = RememberedScreening(settings.content_policy)  # see the `screening` property
        self.retention = settings.retention
        self._scoped = ScopedStore(
            self._life,
            self._ciphers,
            self._relevance,
            self._known,
            lambda: self._screening,
            self.retention,
            settings.memory_backend,
        )

    # ----- the store's life (memory/store_life.py) -------------------------------------------------------

    @property
    def backend_name(self) -> str:
        return self._life.backend_name

    @property
    def fault(self) -> StoreFault | None:
        """What is wrong with the store as far as this process knows; None when nothing is known to be."""
        return self._life.fault

    @property
    def stalled(self) -> bool:
        return self._life.stalled

    @property
    def store_lost(self) -> bool:
        return self._life.store_lost

    @property
    def store_missing(self) -> bool:
        return self._life.store_missing

    @property
    def dims(self) -> int:
        return self._life.dims

    @property
    def foreign_hits_dropped(self) -> int:
        return self._scoped.foreign_hits_dropped

    @property
    def screening(self) -> ContentPolicy:
        """The read and write screening in force. Replaced only at start-up (settings) or by a test that adds
        a pattern; each text is screened once per policy (memory/screening_memo.py)."""
        return self._screening.policy

    @screening.setter
    def screening(self, policy: ContentPolicy) -> None:
        self._screening = RememberedScreening(policy)

    @property
    def embedder_name(self) -> str:
        return getattr(self._embedder, "name", type(self._embedder).__name__)

    async def start(self) -> None:
        """Create the one PowerMem client of this process. Costs seconds: never per request."""
        await self._life.start()

    async def close(self) -> None:
        await self._life.close()

    async def ping(self, timeout_s: float = PING_TIMEOUT_S) -> bool:
        """Readiness: a real round trip to the store, now (StoreLife.ping)."""
        return await self._life.ping(timeout_s)

    async def probe(self, timeout_s: float = PING_TIMEOUT_S) -> bool:
        """The supervisor's round trip, made even while stalled: an answer ends the stall (StoreLife.probe)."""
        return await self._life.probe(timeout_s)

    async def trouble(self, timeout_s: float) -> None:
        """Return when a store call has failed with an error since the last time, or after `timeout_s`."""
        await self._life.trouble(timeout_s)

    async def reopen(self) -> None:
        """Replace the store client after the store went away; the retention's ids are read again from the
        reopened store (StoreLife.reopen)."""
        await self._life.reopen(self._known.clear)

    async def compact_if_due(self) -> bool:
        """Maintenance: ask seekdb for a major compaction once this process has deleted enough rows
        (memory/compaction.py). True when one was started."""
        compaction = self._life.compaction
        if self._life.nearest is None or not compaction.due:  # the sqlite store has no compaction to ask for
            return False
        return await self._run(self._compact_blocking)

    async def _run(self, fn: Callable[..., T], *args: Any, undo: Callable[[T], object] | None = None) -> T:
        """Every store call: on the memory worker, within its deadline (StoreLife.run)."""
        return await self._life.run(fn, *args, undo=undo)

    # ----- the calls on the memory worker (memory/scoped_store.py) ---------------------------------------

    def _compact_blocking(self) -> bool:
        return self._life.compaction.request(self._life.statements())

    def _write_many_blocking(self, scope: MemoryScope, drafts: tuple[CardDraft, ...]) -> builtins.list[StoredCard]:
        return self._scoped.write_many(scope, drafts)

    def _delete_blocking(self, scope: MemoryScope, card_id: str) -> bool:
        return self._scoped.delete(scope, card_id)

    def _delete_many_blocking(self, scope: MemoryScope, card_ids: Sequence[str]) -> None:
        self._scoped.delete_many(scope, card_ids)

    @property
    def expired_purged(self) -> int:
        return self._scoped.expired_purged

    def relevance_feature_ids(self) -> set[str]:
        """Card ids whose derived relevance features this process holds (in memory only): for erasure checks."""
        return self._relevance.cached_card_ids()

    def relevance_vector_cases(self) -> set[str]:
        """Cases whose embedded texts this process holds (in memory only): for erasure checks."""
        return self._relevance.cached_vector_cases()

    def retention_cases(self) -> set[str]:
        """Cases whose session-record ids the retention holds (in memory only): for erasure checks."""
        return {user_id.removeprefix(CASE_USER_PREFIX) for user_id in self._known.user_ids()}

    # ----- operations ----------------------------------------------------------------------------------

    def fence(self) -> None:
        """Refuse every later write: another process may now generate the same card ids."""
        self.fenced = True

    async def write(self, scope: MemoryScope, draft: CardDraft) -> StoredCard:
        [card] = await self.write_many(scope, [draft])
        return card

    async def write_many(self, scope: MemoryScope, drafts: Sequence[CardDraft]) -> list[StoredCard]:
        """All or nothing: one batch embedding, then the rows; a failure removes the rows written before it.
        Every draft passes the policy table first (type × creator × path, preference key and value,
        screening), here at the boundary, whoever calls: MemoryPolicyError before anything is stored."""
        if scope.generation is None:
            raise ValueError("a card is written into one generation of its case")
        for draft in drafts:
            check_write(draft.memory_type, draft.created_by, draft.path, draft.key, draft.content, self._screening)
        if self.fenced:
            raise WorkerIdLostError("worker id lease lost")
        if await self._ciphers.load(scope.case_id, create=True) is None:
            raise CaseErasedError(scope.case_id)  # erased, or its erase has begun: nothing is written
        return await self._run(self._write_many_blocking, scope, tuple(drafts), undo=self._undo_write(scope))

    def _undo_write(self, scope: MemoryScope) -> Callable[[builtins.list[StoredCard]], None]:
        """For a write that landed after its caller got a 503: the cards and their relevance features go."""

        def undo(cards: builtins.list[StoredCard]) -> None:
            try:
                self._delete_many_blocking(scope, [card.id for card in cards])
            except Exception as exc:
                log.error(
                    "a late write's undo failed (%s): %d card(s) left in %s", type(exc).__name__, len(cards), scope.key
                )

        return undo

    async def search(self, scopes: Sequence[MemoryScope], query: str, limit: int) -> list[Candidate]:
        """Candidates that pass the read policy, nothing else (see `retrieve` for what was excluded)."""
        return (await self.retrieve(scopes, query, limit)).candidates

    async def retrieve(
        self, scopes: Sequence[MemoryScope], query: str, limit: int, *, claim: bool = False
    ) -> Retrieval:
        """The nearest cards of each scope, for one query embedding (on seekdb all scopes in one statement,
        each with its own top `limit`); scores are cosine similarities. The read policy runs on every hit: a
        foreign or expired record, one whose type is never evidence, or one that fails the screening *now*
        is excluded, with its reason (a foreign record without its id)."""
        for case_id in {scope.case_id for scope in scopes}:
            await self._ciphers.load(case_id)
        return await self._run(self._scoped.search, tuple(scopes), query, limit, claim)

    async def get(self, scope: MemoryScope, card_id: str) -> StoredCard | None:
        await self._ciphers.load(scope.case_id)
        return await self._run(self._scoped.get, scope, card_id)

    async def list(self, scope: MemoryScope) -> builtins.list[StoredCard]:
        """Every card of the space, however many: paged through the store, never cut at a page size."""
        return (await self.list_spaces([scope]))[scope.space]

    async def list_spaces(self, scopes: Sequence[MemoryScope]) -> dict[str, builtins.list[StoredCard]]:
        """Every card of some spaces of one case, by space, in one store call (a snapshot's four spaces)."""
        for case_id in {scope.case_id for scope in scopes}:
            await self._ciphers.load(case_id)
        return await self._run(self._scoped.list_spaces, tuple(scopes))

    async def purge_expired(self, scope: MemoryScope) -> builtins.list[StoredCard]:
        """Remove every expired record of a scope, paging through all of them (no limit). Returns what was
        removed (the caller audits types and counts, never content)."""
        await self._ciphers.load(scope.case_id)
        return await self._run(self._scoped.purge_expired, scope)

    async def trim(self, scope: MemoryScope, memory_type: str, keep: int) -> int:
        """Delete all but the newest `keep` cards of one memory type in a space. Deletes by the ids this
        process knows (written, or returned by a search here: memory/known_cards.py); the first trim and
        every 20th read that type's rows (a filter in the store) first, to count every process's."""
        await self._ciphers.load(scope.case_id)
        return await self._run(self._scoped.trim, scope, memory_type, keep)

    async def sentence_similarities(self, case_id: str, text: str, others: Sequence[str]) -> builtins.list[float]:
        """The cosine between one text's sentence vector and each other text's, with the store's own encoder
        (on the memory worker): whether a question the bureau asked was about a claim (game/findings.py)."""
        if not others:
            return []
        return await self._run(self._scoped.similarities, case_id, text, tuple(others))

    async def find_finding(self, scope: MemoryScope, finding_id: str) -> builtins.list[StoredCard]:
        """A finding's board card(s), by the finding id in their metadata: how a crashed promotion finds its
        card again."""
        return [c for c in await self.list(scope) if c.finding is not None and c.finding.finding_id == finding_id]

    async def find_by_source(self, scope: MemoryScope, source_card_id: str) -> builtins.list[StoredCard]:
        """Board copies of one source card: how a crashed publication finds its copy again."""
        cards = await self.list(scope)
        return [c for c in cards if c.source_card_id == source_card_id]

    async def delete(self, scope: MemoryScope, card_id: str) -> bool:
        await self._ciphers.load(scope.case_id)
        return await self._run(self._delete_blocking, scope, card_id)

    async def delete_many(self, scope: MemoryScope, card_ids: Sequence[str]) -> None:
        """Delete many cards of one space in batches (a reset removes a whole space this way)."""
        await self._run(self._delete_many_blocking, scope, list(card_ids))

    async def erase_case(self, case_id: str) -> None:
        """Remove every card of a case, in every space (role spaces and board copies alike), at any size,
        and every relevance feature derived from them."""
        self._relevance.forget_case(case_id)  # from now on nothing of the case is cached, even by a running search
        await self._run(self._scoped.erase, board_scope(case_id).user_id)
        self._ciphers.forget(case_id)

    async def list_case_ids(self) -> builtins.list[str]:
        """Every case that has cards in the store, including ones the ledger no longer knows."""
        return await self._run(self._scoped.list_case_ids)
