"""MemoryGateway: the one boundary in front of PowerMem, and the one scoped API of the memory.

Every call takes the grant of its request (vault/grants.py), minted by the game from a scope the server
resolved: it names the spaces the call covers, and it is the only thing that opens or seals a row. The gateway
holds the read and write policy, the relevance signals and the calls into the store; every card read back is
re-checked against the scope asked for and opened only through the grant (memory/card_rows.py), so a store
filter bug returns rows nobody in the request can open. The store client's own life (open, close, reopen, the
worker, the deadline and the stall, the supervisor's ping, the embedded server) is `StoreRunner`'s
(memory/store_runner.py); the gateway delegates to it.
"""

from __future__ import annotations

import builtins
import logging
from collections.abc import Callable, Sequence
from typing import Any, TypeVar, cast

from langchain_core.embeddings import Embeddings

from bureau.config import Settings
from bureau.memory.known_cards import KnownCards
from bureau.memory.relevance import RelevanceScorer, policy_for
from bureau.memory.scoped_calls import CASE_USER_PREFIX, ScopedCalls
from bureau.memory.screening_memo import RememberedScreening
from bureau.memory.store_runner import PING_TIMEOUT_S, StoreRunner
from bureau.memory.types import Candidate, CardDraft, Retrieval, RowFacts, StoredCard, WorkerIdLostError
from bureau.memory.worker_lanes import Lane, lane_for
from bureau.scope.content_policy import ContentPolicy
from bureau.scope.keys import BOARD
from bureau.scope.memory_policy import check_write
from bureau.scope.vocabulary import StoreFault
from bureau.vault.grants import Grant, ResealGrant

log = logging.getLogger("bureau.memory")
RESEAL_PAGE = 200  # rows per store call of a re-seal (about 6 ms each on a quiet machine: ~1 s a call)
T = TypeVar("T")


class MemoryGateway:
    """The memory's one door: every call with its request's grant, the write policy checked here, then the
    call handed to the memory worker (its body in ScopedCalls, through StoreRunner.run)."""

    def __init__(
        self, settings: Settings, embedder: Embeddings, worker_slot: int = 0, *, prepare: bool = False
    ) -> None:
        self._settings = settings
        self._embedder = embedder
        self._runner = StoreRunner(settings, embedder, worker_slot, prepare=prepare)
        # Relevance signals per candidate; per-card features live in this process only (memory/relevance/).
        self._relevance = RelevanceScorer(embedder, words=self.embedder_name != "openai")
        self._known = KnownCards()  # the session-record retention's ids (memory/known_cards.py)
        self.relevance_policy = policy_for(settings, self.embedder_name)
        self.fenced = False  # set when the worker id lease is lost: no more writes from this process
        self._screening = RememberedScreening(settings.content_policy)  # see the `screening` property
        self.retention = settings.retention
        self._calls = ScopedCalls(
            self._runner,
            self._relevance,
            self._known,
            lambda: self._screening,
            self.retention,
            settings.memory_backend,
        )

    # ----- the store's life and its worker (memory/store_runner.py) ----------------------------------------

    @property
    def runner(self) -> StoreRunner:
        """What runs the store's calls: tests and benches reach the store's own client and worker through it."""
        return self._runner

    @property
    def calls(self) -> ScopedCalls:
        """The call bodies as they run on the worker. A test seam: tests stall one (a store that hangs) or run
        one straight on the worker from a synchronous fault hook, where no await is possible."""
        return self._calls

    @property
    def known_cards(self) -> KnownCards:
        """The session records this process has seen per space (memory/known_cards.py). A test seam: a test
        makes it forget a record to stand for one another process wrote."""
        return self._known

    @property
    def backend_name(self) -> str:
        return self._runner.backend_name

    @property
    def fault(self) -> StoreFault | None:
        """What is wrong with the store as far as this process knows; None when nothing is known to be."""
        return self._runner.fault

    @property
    def stalled(self) -> bool:
        return self._runner.stalled

    @property
    def store_lost(self) -> bool:
        return self._runner.store_lost

    @property
    def store_missing(self) -> bool:
        return self._runner.store_missing

    @property
    def dims(self) -> int:
        return self._runner.dims

    @property
    def foreign_hits_dropped(self) -> int:
        return self._calls.foreign_hits_dropped

    @property
    def locked_rows_seen(self) -> int:
        """Rows a store statement handed back that no key of their request opened (this process, so far)."""
        return self._calls.locked_rows_seen

    @property
    def screening(self) -> ContentPolicy:
        """The read and write screening in force. Replaced only at start-up (settings) or by a test that adds
        a pattern; each text is screened once per policy (memory/screening_memo.py)."""
        return self._screening.policy

    @screening.setter
    def screening(self, policy: ContentPolicy) -> None:
        self._screening = RememberedScreening(policy)

    @property
    def embedder(self) -> Embeddings:
        """The embedder the store's vectors come from. A test and bench seam: they embed a text as the store
        did, to compare with what it holds, or count the embeddings a call makes."""
        return self._embedder

    @property
    def embedder_name(self) -> str:
        return getattr(self._embedder, "name", type(self._embedder).__name__)

    async def start(self) -> None:
        """Create the one PowerMem client of this process. Costs seconds: never per request."""
        await self._runner.start()

    async def close(self) -> None:
        await self._runner.close()

    async def ping(self, timeout_s: float = PING_TIMEOUT_S) -> bool:
        """Readiness: a real round trip to the store, now (StoreRunner.ping)."""
        return await self._runner.ping(timeout_s)

    async def probe(self, timeout_s: float = PING_TIMEOUT_S) -> bool:
        """The supervisor's round trip, made even while stalled: an answer ends the stall (StoreRunner.probe)."""
        return await self._runner.probe(timeout_s)

    async def trouble(self, timeout_s: float) -> None:
        """Return when a store call has failed with an error since the last time, or after `timeout_s`."""
        await self._runner.trouble(timeout_s)

    async def reopen(self) -> None:
        """Replace the store client after the store went away; the retention's ids are read again from the
        reopened store (StoreRunner.reopen)."""
        await self._runner.reopen(self._known.clear)

    async def compact_if_due(self) -> bool:
        """Maintenance: ask seekdb for a major compaction once this process has deleted enough rows
        (memory/compaction.py). True when one was started."""
        compaction = self._runner.compaction
        if self._runner.nearest is None or not compaction.due:  # the sqlite store has no compaction to ask for
            return False
        return await self._run(self._compact_blocking)

    async def _run(
        self, fn: Callable[..., T], *args: Any, undo: Callable[[T], object] | None = None, lane: Lane = Lane.COMMAND
    ) -> T:
        """Every store call: on the memory worker, within its deadline (StoreRunner.run)."""
        return await self._runner.run(fn, *args, undo=undo, lane=lane)

    def _compact_blocking(self) -> bool:
        return self._runner.compaction.request(self._runner.statements())

    @property
    def expired_purged(self) -> int:
        return self._calls.expired_purged

    def relevance_feature_ids(self) -> set[str]:
        """Card ids whose derived relevance features this process holds (in memory only): for erasure checks."""
        return self._relevance.cached_card_ids()

    @property
    def texts_embedded(self) -> int:
        """Texts this process has handed the encoder for the relevance signals (cards, questions, their words)."""
        return self._relevance.texts_embedded

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

    async def write(self, grant: Grant, draft: CardDraft) -> StoredCard:
        [card] = await self.write_many(grant, [draft])
        return card

    async def write_many(self, grant: Grant, drafts: Sequence[CardDraft]) -> list[StoredCard]:
        """Into the one space the grant writes, all or nothing: one batch embedding, the keys into the vault,
        then the rows; a failure removes the rows written before it and destroys their keys. Every draft passes
        the policy table first (type x creator x path, preference key and value, screening), here at the
        boundary, whoever calls: MemoryPolicyError before anything is stored."""
        scope = grant.write_scope()
        if scope.generation is None:
            raise ValueError("a card is written into one generation of its case")
        for draft in drafts:
            check_write(draft.memory_type, draft.created_by, draft.path, draft.key, draft.content, self._screening)
        if self.fenced:
            raise WorkerIdLostError("worker id lease lost")
        return await self._run(self._calls.write_many, grant, tuple(drafts), undo=self._undo_write(grant))

    def _undo_write(self, grant: Grant) -> Callable[[builtins.list[StoredCard]], None]:
        """For a write that landed after its caller got a 503: the cards, their keys and their features go."""

        def undo(cards: builtins.list[StoredCard]) -> None:
            try:
                self._calls.delete_many(grant, grant.write_scope().space, cards)
            except Exception as exc:
                log.error("a late write's undo failed (%s): %d card(s) left", type(exc).__name__, len(cards))

        return undo

    async def search(self, grant: Grant, query: str, limit: int) -> list[Candidate]:
        """Candidates that pass the read policy, nothing else (see `retrieve` for what was excluded)."""
        return (await self.retrieve(grant, query, limit)).candidates

    async def retrieve(
        self, grant: Grant, query: str, limit: int, *, claim: bool = False, unfiltered: bool = False
    ) -> Retrieval:
        """The nearest cards of each space the grant reads, for one query embedding rotated into each space's
        basis (on seekdb all spaces in one statement, each with its own top `limit`); scores are cosine
        similarities. The read policy runs on every hit: a foreign or expired record, one whose type is never
        evidence, or one that fails the screening *now* is excluded, with its reason (a foreign record without
        its id). `unfiltered`: the presenter act (docs/presenter-guide.md), each part without its space filter
        and without the re-check; what other compartments' rows it met comes back as `locked`."""
        return await self._run(self._calls.search, grant, query, limit, claim, unfiltered)

    async def get(self, grant: Grant, card_id: str) -> StoredCard | None:
        """The card in a space the grant reads, or None (never saying whether the id exists elsewhere)."""
        return await self._run(self._calls.get, grant, card_id, lane=lane_for(grant.purpose))

    async def list(self, grant: Grant) -> builtins.list[StoredCard]:
        """Every card of the one space the grant reads, however many."""
        [cards] = (await self.list_spaces(grant)).values()
        return cards

    async def list_spaces(self, grant: Grant) -> dict[str, builtins.list[StoredCard]]:
        """Every card of the spaces the grant reads, by space, in one store call (a snapshot's four spaces)."""
        return await self._run(self._calls.list_spaces, grant, lane=lane_for(grant.purpose))

    async def listing(
        self, grant: Grant
    ) -> tuple[dict[str, builtins.list[RowFacts]], dict[str, builtins.list[StoredCard]]]:
        """`rows` and `list_spaces` in one store call and one statement: the ids and metadata of every space the
        grant lists, and the cards of the spaces it reads (the stage's view: each role's count, the board)."""
        return await self._run(self._calls.listing, grant, lane=lane_for(grant.purpose))

    async def rows(self, grant: Grant) -> dict[str, builtins.list[RowFacts]]:
        """Every row of the spaces the grant lists, as ids and metadata: no text is opened."""
        return await self._run(self._calls.rows, grant, lane=lane_for(grant.purpose))

    async def purge_expired(self, grant: Grant) -> builtins.list[RowFacts]:
        """Remove every expired record of the spaces the grant writes, paging through all of them (no limit):
        keys, then rows. Returns what was removed (the caller audits types and counts, never content)."""
        return await self._run(self._calls.purge_expired, grant)

    async def trim(self, grant: Grant, memory_type: str, keep: int) -> int:
        """Delete all but the newest `keep` cards of one memory type in the space the grant writes. Deletes by
        the ids this process knows (written, or returned by a search here: memory/known_cards.py); the first
        trim and every 20th read that type's rows (a filter in the store) first, to count every process's."""
        return await self._run(self._calls.trim, grant, memory_type, keep)

    async def sentence_similarities(self, case_id: str, text: str, others: Sequence[str]) -> builtins.list[float]:
        """The cosine between one text's sentence vector and each other text's, with the store's own encoder
        (on the memory worker): whether a question the bureau asked was about a claim (game/findings.py)."""
        if not others:
            return []
        return await self._run(self._calls.similarities, case_id, text, tuple(others))

    async def find_finding(self, grant: Grant, finding_id: str) -> builtins.list[RowFacts]:
        """A finding's board card(s), by the finding id in their metadata: how a crashed promotion finds its
        card again. The grant writes the board; no text is opened."""
        board = (await self.rows(grant.narrowed(reads=(), writes=[BOARD])))[BOARD]
        return [row for row in board if row.finding_id == finding_id]

    async def find_by_source(self, grant: Grant, source_card_id: str) -> builtins.list[RowFacts]:
        """Board copies of one source card: how a crashed publication finds its copy again. The grant writes
        the board; no text is opened."""
        board = (await self.rows(grant.narrowed(reads=(), writes=[BOARD])))[BOARD]
        return [row for row in board if row.source_card_id == source_card_id]

    async def delete(self, grant: Grant, card_id: str) -> bool:
        """A card of a space the grant writes: its keys destroyed, then its row."""
        return await self._run(self._calls.delete, grant, card_id)

    async def delete_many(self, grant: Grant, space: str, cards: Sequence[RowFacts | StoredCard]) -> None:
        """Many cards of one space the grant writes, in batches (a reset removes a generation this way)."""
        await self._run(self._calls.delete_many, grant, space, list(cards))

    async def reseal(self, grant: ResealGrant) -> int:
        """Re-seal the case's rows an earlier version wrote into their compartments (game/reseal.py), a page of
        RESEAL_PAGE rows per store call: a large case never runs one call past the store's deadline."""
        resealed, after = 0, cast(int | None, 0)
        while after is not None:
            done, after = await self._run(self._calls.reseal, grant, after, RESEAL_PAGE)
            resealed += done
        return resealed

    async def erase_case(self, case_id: str) -> None:
        """Remove every row of a case, in every space (role spaces and board copies alike), at any size, and
        every relevance feature derived from them. Its keys are gone already (the vault destroyed them)."""
        self._relevance.forget_case(case_id)  # from now on nothing of the case is cached, even by a running search
        await self._run(self._calls.erase, f"{CASE_USER_PREFIX}{case_id}")

    async def list_case_ids(self) -> builtins.list[str]:
        """Every case that has cards in the store, including ones the ledger no longer knows."""
        return await self._run(self._calls.list_case_ids)
