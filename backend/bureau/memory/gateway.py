"""MemoryGateway: the one boundary in front of PowerMem. The only module that imports powermem.

Every call takes a `MemoryScope` built by the server. Every card read back is re-checked against the
scope that was asked for, so a store filter bug drops a card instead of leaking it. Embedded seekdb
is not thread-safe, so every store call (and every embedding) runs on one dedicated worker thread; a
remote server gets a pool of `BUREAU_MEMORY_POOL_SIZE` threads instead.
"""

from __future__ import annotations

import asyncio
import builtins
import contextlib
import hashlib
import importlib.util
import logging
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from langchain_core.embeddings import Embeddings
from threadpoolctl import threadpool_limits

from bureau.config import Settings
from bureau.memory import remote_store
from bureau.memory.case_ciphers import CaseCiphers, CaseKeySource
from bureau.memory.embedded_seekdb import share_one_connection
from bureau.memory.embedders import cosine, self_check
from bureau.memory.known_cards import KnownCards
from bureau.memory.relevance import RelevanceScorer, policy_for
from bureau.memory.screening_memo import RememberedScreening
from bureau.memory.seekdb_search import Hit, NearestCards, SpaceQuery
from bureau.memory.types import (
    Candidate,
    CardDraft,
    CaseErasedError,
    Excluded,
    FindingMark,
    MemoryUnavailableError,
    Retrieval,
    StoredCard,
    StoreDiskTooSmallError,
    WorkerIdLostError,
)
from bureau.scope.audience import visibility_of_space
from bureau.scope.content_policy import ContentPolicy
from bureau.scope.keys import BOARD, TENANT, MemoryScope, board_scope
from bureau.scope.memory_policy import (
    EXPIRED,
    OWNER_MISMATCH,
    Retention,
    check_write,
    may_be_evidence,
    read_exclusion,
)
from bureau.scope.vocabulary import CreatedBy, StoreFault
from bureau.sealing import CaseCipher, SealError, is_sealed

log = logging.getLogger("bureau.memory")
security_log = logging.getLogger("bureau.security")
T = TypeVar("T")

CASE_USER_PREFIX = f"{TENANT}:"
_PING_SCOPE = MemoryScope("__ping__", BOARD)
_PAGE_SIZE = 500  # rows per store round trip; every listing, count, reset and erase pages through all of them
_DELETE_BATCH = 500
UNREADABLE = "unreadable"  # sealed under a destroyed key: the case was erased; skipped, not a policy reason
_PING_TIMEOUT_S = 3.0
# pylibseekdb starts embedded seekdb with log_disk_size=2G: a new store fails to bootstrap on a smaller filesystem
# (measured: 2000 MiB fails, 2048 MiB starts), and PowerMem then opens it a second time, which never returns.
_NEW_STORE_MIN_FS_BYTES = 2 << 30
_REOPEN_TIMEOUT_S = 120.0  # a new PowerMem client starts seekdb (2 s) and reflects its schema (3 s); far less than this


def embedded_seekdb_available() -> bool:
    """The embedded server ships in the pylibseekdb wheel, which exists only for some platforms."""
    return importlib.util.find_spec("pylibseekdb") is not None


@contextlib.contextmanager
def _isolated_from_working_directory() -> Iterator[None]:
    """Import PowerMem from an empty directory: it auto-loads the first `.env` found from the cwd upwards,
    which would be the project's own `.env`, and it would write `./audit.log` and `./logs/` there."""
    previous = Path.cwd()
    with tempfile.TemporaryDirectory(prefix="bureau-powermem-") as empty:
        os.chdir(empty)
        try:
            yield
        finally:
            os.chdir(previous)


# Their errors carry SQL parameters and store messages, i.e. card text and questions. Our own log lines
# name the failed operation and the exception class instead.
_STORE_LOGGERS = ("powermem", "pyobvector", "pyseekdb", "sqlglot", "sqlalchemy.engine", "sqlalchemy.pool")


def _silence_store_loggers() -> None:
    for name in _STORE_LOGGERS:
        logger = logging.getLogger(name)
        logger.handlers = [logging.NullHandler()]  # no handler at all would fall back to stderr
        logger.propagate = False
        logger.setLevel(logging.CRITICAL + 1)


def _configure_powermem_environment(worker_slot: int) -> None:
    # PowerMem logs at DEBUG into ./logs by default, including memory text: keep it quiet and out of cwd.
    os.environ["LOGGING_FILE"] = ""
    os.environ["LOGGING_CONSOLE_ENABLED"] = "false"
    os.environ["LOGGING_LEVEL"] = "WARNING"
    # Snowflake ids: a distinct (datacenter, worker) pair per process, or two writers overwrite each other.
    os.environ["SNOWFLAKE_DATACENTER_ID"] = str(worker_slot // 32)
    os.environ["SNOWFLAKE_WORKER_ID"] = str(worker_slot % 32)
    os.environ.setdefault("TELEMETRY_ENABLED", "false")


def _vector_store_config(settings: Settings, dims: int) -> dict[str, Any]:
    data_dir = settings.data_dir  # absolute: resolved when the settings were loaded
    if settings.memory_backend == "sqlite":
        return {
            "provider": "sqlite",
            "config": {
                "database_path": str(data_dir / "memory.sqlite"),
                "collection_name": settings.memory_collection,
                "embedding_model_dims": dims,
                "enable_wal": True,
            },
        }
    return {
        "provider": "oceanbase",
        "config": {
            "host": settings.seekdb_host,  # empty: embedded seekdb at ob_path
            "ob_path": str(data_dir / "seekdb"),
            "port": str(settings.seekdb_port),
            "user": settings.seekdb_user,
            "password": settings.seekdb_password.get_secret_value(),
            "db_name": settings.seekdb_database,
            "collection_name": settings.memory_collection,
            "embedding_model_dims": dims,
            "hybrid_search": False,  # vector-only: scores stay similarities, usable with a threshold
            "vidx_metric_type": "cosine",
        },
    }


def _parse_time(value: Any) -> datetime | None:
    if value in (None, ""):
        return None
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    parsed = datetime.fromisoformat(str(value))
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def _card_metadata(
    scope: MemoryScope, draft: CardDraft, retention: Retention, cipher: CaseCipher | None = None
) -> dict[str, Any]:
    now = datetime.now(UTC)
    expires_at = draft.expires_at or retention.expiry(draft.memory_type, now)
    metadata: dict[str, Any] = {
        "scope_key": scope.key,
        "case_id": scope.case_id,
        "space": scope.space,
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


class MemoryGateway:
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
        self._worker_slot = worker_slot
        self._prepare = prepare  # `bureau setup`: may create the remote database and collection
        self._backend = settings.memory_backend
        self._memory: Any = None
        self._nearest: NearestCards | None = None  # seekdb's search as one statement (memory/seekdb_search.py)
        # Embedded seekdb is not thread-safe: one worker. A remote server takes a pool of connections.
        workers = settings.memory_pool_size if settings.remote_store else 1
        self._executor = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="bureau-memory")
        self._ping_in_flight: asyncio.Future[bool] | None = None
        self._call_timeout_s = settings.memory_call_timeout_s
        self._store_dir = settings.data_dir / "seekdb"  # embedded seekdb's directory
        # The local store's files (embedded seekdb's directory, the sqlite file) as first opened: (device, inode).
        self._store_identity: tuple[int, int] | None = None
        self.store_missing = False  # they were removed under the running server: never recreated (docs/faults.md)
        self._server_pid: int | None = None  # the embedded seekdb server this process's client talks to
        # A call ran past its deadline (the store hangs, or one call is far too slow): later calls fail at once
        # instead of queueing behind it, until the supervisor's next ping gets an answer (docs/faults.md).
        self.stalled = False
        # Set by a store call that failed with an error (not a slow one): wakes the supervisor at once.
        self._trouble = asyncio.Event()
        self.store_lost = False  # the last ping failed with an error: the client must be reopened
        self._reopening = False
        # Relevance signals per candidate; per-card features live in this process only (memory/relevance.py).
        self._relevance = RelevanceScorer(embedder, words=self.embedder_name != "openai")
        self._known = KnownCards()  # the session-record retention's ids (memory/known_cards.py)
        self.relevance_policy = policy_for(settings, self.embedder_name)
        self.fenced = False  # set when the worker id lease is lost: no more writes from this process
        self._screening = RememberedScreening(settings.content_policy)  # see the `screening` property
        self.retention = settings.retention
        self.foreign_hits_dropped = 0
        self.expired_purged = 0
        self.dims = 0

    # ----- lifecycle -------------------------------------------------------------------------------------

    @property
    def backend_name(self) -> str:
        if self._backend == "sqlite":
            return "sqlite"
        return "seekdb-remote" if self._settings.seekdb_host else "seekdb-embedded"

    @property
    def _store_path(self) -> Path | None:
        """Where a local store keeps its cards; None for a remote server."""
        if self._backend == "sqlite":
            return self._settings.data_dir / "memory.sqlite"
        return None if self._settings.remote_store else self._store_dir

    def _identity_now(self) -> tuple[int, int] | None:
        path = self._store_path
        try:
            found = path.stat() if path is not None else None
        except OSError:
            return None
        return None if found is None else (found.st_dev, found.st_ino)

    def _store_went_missing(self) -> bool:
        """The store this process opened is no longer at its path (removed, or replaced by another directory): the
        server would go on writing to deleted files, and a reopen would create a new, empty store."""
        if self._store_identity is None or self._store_identity == self._identity_now():
            return False
        if not self.store_missing:
            log.error(
                "memory store files at %s are gone (removed while the server ran): refusing every call, and not "
                "creating a new, empty store in their place. Restore them and restart, or restart with an empty "
                "data directory to begin anew.",
                self._store_path,
            )
        self.store_missing = True
        return True

    @property
    def fault(self) -> StoreFault | None:
        """What is wrong with the store as far as this process knows; None when nothing is known to be."""
        if self.store_missing:
            return StoreFault.STORE_MISSING
        if self.stalled:
            return StoreFault.STORE_STALLED
        if self.store_lost or self._reopening:
            return StoreFault.STORE_UNREACHABLE
        return None

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
        """Create the one PowerMem client of this process. Costs seconds: never per request.
        Errors propagate as they are, so a failed start says what failed."""
        await asyncio.get_running_loop().run_in_executor(self._executor, self._start_blocking)

    def _start_blocking(self) -> None:
        # Every vector operation of this process (embedding, rotation, signals) runs on the memory worker, one
        # at a time: BLAS threads of their own would only wait for a core and spin (docs/performance.md).
        threadpool_limits(limits=1, user_api="blas")
        self.dims = self_check(self._embedder)  # PowerMem swallows embedding errors: fail loudly here
        self._settings.data_dir.mkdir(parents=True, exist_ok=True)
        logs = self._settings.data_dir / "logs"
        logs.mkdir(exist_ok=True)
        _configure_powermem_environment(self._worker_slot)
        _silence_store_loggers()
        if self.backend_name == "seekdb-embedded":
            _check_room_for_a_new_store(self._store_dir)
        if self._settings.remote_store:
            # Created once by `bureau setup`: instances creating one collection at once can crash the server.
            (remote_store.create_database if self._prepare else remote_store.require_prepared)(self._settings)
        with _isolated_from_working_directory():
            from powermem import Memory

            config = {
                "vector_store": _vector_store_config(self._settings, self.dims),
                "llm": {"provider": "noop", "config": {}},
                "embedder": {
                    "provider": "langchain",
                    "config": {"model": self._embedder, "embedding_dims": self.dims},
                },
                "audit": {"enabled": False, "log_file": str(logs / "powermem-audit.log")},
                "intelligent_memory": {"enabled": False},
                "telemetry": {"enabled": False},
            }
            memory = Memory(config=config)
        try:
            share_one_connection(memory)
            nearest = None if self._backend == "sqlite" else NearestCards.of(memory)
            if nearest is not None:
                self._check_owner_index(nearest)
        except BaseException:
            with contextlib.suppress(Exception):
                _close_quietly(memory)
            raise
        self._memory, self._nearest = memory, nearest  # together: a half-started client is never used
        self._store_identity = self._identity_now()
        self._server_pid = _embedded_server_pid(self._store_dir) if self.backend_name == "seekdb-embedded" else None
        _silence_store_loggers()  # again: PowerMem may have configured its loggers while starting

    def _check_owner_index(self, nearest: NearestCards) -> None:
        """The owner index only makes searches fast: a start never fails over it, except `bureau setup`,
        whose job the schema is. A server's schema is setup's alone (remote_store.py)."""
        try:
            if self._prepare or not self._settings.remote_store:
                nearest.ensure_owner_index()
            elif not nearest.has_owner_index():
                log.warning("the store has no owner index: every search reads the whole table; run `bureau setup`")
        except Exception as exc:
            if self._prepare:
                raise
            log.warning(
                "the store's owner index could not be made sure of (%s): searches may be slow", type(exc).__name__
            )

    async def close(self) -> None:
        memory, self._memory, self._nearest = self._memory, None, None
        if memory is not None:
            with contextlib.suppress(Exception):
                await asyncio.get_running_loop().run_in_executor(self._executor, _close_quietly, memory)
        self._executor.shutdown(wait=True, cancel_futures=True)

    async def _run(self, fn: Callable[..., T], *args: Any, undo: Callable[[T], object] | None = None) -> T:
        """Run on the memory worker, within BUREAU_MEMORY_CALL_TIMEOUT_S. While the store is stalled a call
        fails at once: it would only queue behind the stuck one. A call that times out still runs to its end
        on the worker; with `undo`, its result is undone there afterwards (FIFO), so "failed, nothing
        changed" stays true even when the write lands after the 503."""
        if self.stalled or self.store_missing:
            raise MemoryUnavailableError("stalled" if self.stalled else "store missing")
        job = self._executor.submit(fn, *args)
        try:
            return await asyncio.wait_for(asyncio.wrap_future(job), self._call_timeout_s)
        except TimeoutError:
            if undo is not None:
                job.add_done_callback(lambda done: self._undo_late_result(done, undo))
            if not self.stalled:
                log.error("memory store call %s timed out: refusing calls until it answers", _name(fn))
            self.stalled = True
            self._trouble.set()
            raise MemoryUnavailableError("timeout") from None
        except (MemoryUnavailableError, CaseErasedError):
            raise
        except Exception as exc:
            # Never carry store messages upward: they can contain card text or query text.
            log.error("memory store call %s failed: %s", _name(fn), type(exc).__name__)
            self._trouble.set()
            raise MemoryUnavailableError(type(exc).__name__) from exc

    def _undo_late_result(self, done: Future[T], undo: Callable[[T], object]) -> None:
        if done.cancelled() or done.exception() is not None:
            return
        with contextlib.suppress(RuntimeError):  # the executor is shutting down: nothing more can run
            self._executor.submit(undo, done.result())

    def _store(self) -> Any:
        if self._memory is None:
            raise MemoryUnavailableError("memory gateway not started")
        return self._memory

    # ----- scope re-check ------------------------------------------------------------------------------

    def _examine(self, scope: MemoryScope, item: dict[str, Any], now: datetime) -> tuple[StoredCard | None, str]:
        """Defence in depth: a card is returned only if every scope marker matches the scope asked for and
        it has not expired. Otherwise (None, reason): `owner_mismatch` (counted, logged without content) or
        `expired` (the caller purges it)."""
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
            security_log.warning(
                "security: dropped a card outside the requested scope (asked %s, card id %s)",
                scope.key,
                item.get("id"),
            )
            return None, OWNER_MISMATCH
        content = self._opened(scope.case_id, item.get("memory") or item.get("content") or "")
        if content is None:
            return None, UNREADABLE  # sealed under a key that no longer exists: the case was erased
        told = metadata.get("told_by")
        card = self._to_card(item, metadata, content, self._opened(scope.case_id, told) if told else None)
        if card.expires_at is not None and card.expires_at <= now:
            return card, EXPIRED
        return card, ""

    def _admit(self, scope: MemoryScope, item: dict[str, Any]) -> StoredCard | None:
        card, reason = self._examine(scope, item, datetime.now(UTC))
        if reason == EXPIRED and card is not None:
            self._purge_blocking(scope, [card])
        return card if not reason else None

    def _purge_blocking(self, scope: MemoryScope, cards: Sequence[StoredCard]) -> None:
        """Expired records are invisible and purged on the read that finds them (on the memory worker)."""
        if cards:
            self._relevance.forget(scope.case_id, [card.id for card in cards])
        for card in cards:
            if self._store().delete(int(card.id), user_id=scope.user_id, agent_id=scope.agent_id):
                self.expired_purged += 1
        self._known.deleted(scope.user_id, scope.agent_id, [card.id for card in cards])

    def _opened(self, case_id: str, stored: str) -> str | None:
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

    def _cipher(self, case_id: str) -> CaseCipher:
        cipher = self._ciphers.get(case_id)
        if cipher is None:  # the erase forgot the key after the write loaded it: the case is gone
            raise CaseErasedError(case_id)
        return cipher

    @staticmethod
    def _to_card(
        item: dict[str, Any], metadata: dict[str, Any], content: str, told_by: str | None = None
    ) -> StoredCard:
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
            told_by=told_by,
            finding=FindingMark.from_metadata(metadata.get("finding")),
        )

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

    def _write_many_blocking(self, scope: MemoryScope, drafts: tuple[CardDraft, ...]) -> list[StoredCard]:
        # PowerMem's add() would embed and store the text it is handed, so the gateway embeds the plaintext
        # itself, rotates the vector and seals the text under the case key, and writes through the storage
        # layer: nothing the store (or its redo log) receives is readable once the key is destroyed.
        storage = self._store().storage
        cipher = self._cipher(scope.case_id)
        # Each distinct text once, in one encoder batch with the pieces its relevance features need. Only a
        # card that may be evidence is ever judged, so only its features are measured.
        featured = [d.content for d in drafts if may_be_evidence(d.memory_type)]
        others = [d.indexed_by for d in drafts if not may_be_evidence(d.memory_type)]
        vectors = self._relevance.card_vectors(scope.case_id, featured, others)
        written: list[StoredCard] = []
        try:
            for draft in drafts:
                written.append(self._add_blocking(storage, cipher, scope, draft, vectors[draft.indexed_by]))
        except BaseException:
            with contextlib.suppress(Exception):
                self._delete_ids_blocking(scope.user_id, scope.agent_id, [c.id for c in written])
            raise
        self._relevance.remember_many([c for c in written if c.may_be_evidence])  # once, at write time
        self._known.noted(scope.user_id, scope.agent_id, [(c.memory_type, c.created_at, c.id) for c in written])
        return written

    def _add_blocking(
        self, storage: Any, cipher: CaseCipher, scope: MemoryScope, draft: CardDraft, vector: list[float]
    ) -> StoredCard:
        sealed = cipher.seal(draft.content)
        metadata = _card_metadata(scope, draft, self.retention, cipher)
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
        item = {"id": memory_id, "memory": sealed, "user_id": scope.user_id, "agent_id": scope.agent_id}
        card, _ = self._examine(scope, {**item, "metadata": metadata}, now)  # already expired: still as written
        if card is None:
            raise MemoryUnavailableError("store returned a card outside the scope")
        return card

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
        return await self._run(self._search_blocking, tuple(scopes), query, limit, claim)

    def _search_blocking(
        self, scopes: tuple[MemoryScope, ...], query: str, limit: int, claim: bool = False
    ) -> Retrieval:
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
        if self._backend != "sqlite":
            if self._nearest is None:  # set with the client: None until it is started
                raise MemoryUnavailableError("memory gateway not started")
            spaces = [SpaceQuery(scope.user_id, scope.agent_id, vector) for scope, vector in queries]
            return self._nearest.search(spaces, limit)
        storage = self._store().storage
        return [
            [
                Hit(row, float(row.get("score", 0.0)))  # the sqlite store reports cosine similarity itself
                for row in storage.search_memories(
                    query_embedding=vector,
                    user_id=scope.user_id,
                    agent_id=scope.agent_id,
                    filters=None,
                    limit=limit,
                    query=None,  # no query text: the sqlite store would otherwise switch to hybrid RRF scores
                )
                or []
            ]
            for scope, vector in queries
        ]

    def _judge(
        self, scope: MemoryScope, hits: Sequence[Hit]
    ) -> tuple[builtins.list[Candidate], builtins.list[Excluded]]:
        """The read policy on one space's hits: what may be evidence, and what is excluded, with why."""
        now = datetime.now(UTC)
        candidates: builtins.list[Candidate] = []
        excluded: builtins.list[Excluded] = []
        expired: builtins.list[StoredCard] = []
        for hit in hits:
            card, reason = self._examine(scope, hit.item, now)
            if card is None:
                if reason == OWNER_MISMATCH:
                    excluded.append(Excluded(None, scope.space, hit.cosine, OWNER_MISMATCH))
                continue
            if reason == EXPIRED:
                expired.append(card)
            exclusion = EXPIRED if reason == EXPIRED else read_exclusion(card.facts, now, self._screening)
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
        self._purge_blocking(scope, expired)
        return candidates, excluded

    async def get(self, scope: MemoryScope, card_id: str) -> StoredCard | None:
        await self._ciphers.load(scope.case_id)
        return await self._run(self._get_blocking, scope, card_id)

    def _get_blocking(self, scope: MemoryScope, card_id: str) -> StoredCard | None:
        # Only the canonical spelling: "0"+id or full-width digits would name the same row under another key.
        if not (card_id.isascii() and card_id.isdigit()) or len(card_id) > 20 or card_id != str(int(card_id)):
            return None
        item = self._store().get(int(card_id), user_id=scope.user_id, agent_id=scope.agent_id)
        if not item:
            return None
        return self._admit(scope, item)

    async def list(self, scope: MemoryScope) -> builtins.list[StoredCard]:
        """Every card of the space, however many: paged through the store, never cut at a page size."""
        await self._ciphers.load(scope.case_id)
        return await self._run(self._list_blocking, scope)

    def _list_blocking(self, scope: MemoryScope) -> builtins.list[StoredCard]:
        now, cards, expired = datetime.now(UTC), [], []
        for item in self._rows(scope.user_id, scope.agent_id):
            card, reason = self._examine(scope, item, now)
            if card is not None and reason == EXPIRED:
                expired.append(card)
            elif card is not None and not reason:
                cards.append(card)
        self._purge_blocking(scope, expired)  # after the scan: deleting while paging would shift the pages
        return sorted(cards, key=lambda c: (c.created_at, c.id))

    async def purge_expired(self, scope: MemoryScope) -> builtins.list[StoredCard]:
        """Remove every expired record of a scope, paging through all of them (no limit). Returns what was
        removed (the caller audits types and counts, never content)."""
        await self._ciphers.load(scope.case_id)
        return await self._run(self._purge_expired_blocking, scope)

    def _purge_expired_blocking(self, scope: MemoryScope) -> builtins.list[StoredCard]:
        now = datetime.now(UTC)
        examined = [self._examine(scope, item, now) for item in self._rows(scope.user_id, scope.agent_id)]
        expired = [card for card, reason in examined if card is not None and reason == EXPIRED]
        self._purge_blocking(scope, expired)  # after the scan: deleting while paging would shift the pages
        return expired

    def _rows(self, user_id: str | None, agent_id: str | None = None, **filters: str) -> Iterator[dict[str, Any]]:
        """All rows matching, page by page in id order (a stable order, so no row is skipped or repeated)."""
        store, offset = self._store(), 0
        while True:
            page = (
                store.get_all(
                    user_id=user_id,
                    agent_id=agent_id,
                    filters=filters or None,
                    limit=_PAGE_SIZE,
                    offset=offset,
                    sort_by="id",
                    order="asc",
                ).get("results")
                or []
            )
            yield from page
            if len(page) < _PAGE_SIZE:
                return
            offset += len(page)

    async def trim(self, scope: MemoryScope, memory_type: str, keep: int) -> int:
        """Delete all but the newest `keep` cards of one memory type in a space. Deletes by the ids this
        process knows (written, or returned by a search here: memory/known_cards.py); the first trim and
        every 20th read that type's rows (a filter in the store) first, to count every process's."""
        await self._ciphers.load(scope.case_id)
        return await self._run(self._trim_blocking, scope, memory_type, keep)

    def _trim_blocking(self, scope: MemoryScope, memory_type: str, keep: int) -> int:
        key = (scope.user_id, scope.agent_id, str(memory_type))
        if self._known.needs_full_read(key):
            rows = self._rows(scope.user_id, scope.agent_id, card_memory_type=str(memory_type))
            admitted = (self._admit(scope, row) for row in rows)
            cards = [c for c in admitted if c is not None and c.memory_type == memory_type]
            self._known.read(key, [(c.created_at, c.id) for c in cards])
        stale = self._known.beyond_newest(key, keep)
        self._delete_ids_blocking(scope.user_id, scope.agent_id, stale)
        return len(stale)

    async def sentence_similarities(self, case_id: str, text: str, others: Sequence[str]) -> builtins.list[float]:
        """The cosine between one text's sentence vector and each other text's, with the store's own encoder
        (on the memory worker): whether a question the bureau asked was about a claim (game/findings.py)."""
        if not others:
            return []
        return await self._run(self._similarities_blocking, case_id, text, tuple(others))

    def _similarities_blocking(self, case_id: str, text: str, others: tuple[str, ...]) -> builtins.list[float]:
        found = self._relevance.vectors(case_id, [text, *others])
        return [cosine(found[text], found[other]) for other in others]

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

    def _delete_blocking(self, scope: MemoryScope, card_id: str) -> bool:
        if self._get_blocking(scope, card_id) is None:
            return False
        deleted = bool(self._store().delete(int(card_id), user_id=scope.user_id, agent_id=scope.agent_id))
        self._known.deleted(scope.user_id, scope.agent_id, [card_id])
        # After the delete, on the worker: a search queued before it has run and cached what it read.
        self._relevance.forget(scope.case_id, [card_id])
        return deleted

    async def delete_many(self, scope: MemoryScope, card_ids: Sequence[str]) -> None:
        """Delete many cards of one space in batches (a reset removes a whole space this way)."""
        await self._run(self._delete_many_blocking, scope, list(card_ids))

    def _delete_many_blocking(self, scope: MemoryScope, card_ids: Sequence[str]) -> None:
        self._delete_ids_blocking(scope.user_id, scope.agent_id, card_ids)
        self._relevance.forget(scope.case_id, card_ids)  # after the deletes, as in `_delete_blocking`

    def _delete_ids_blocking(self, user_id: str, agent_id: str | None, card_ids: Sequence[str]) -> None:
        """Batched deletes by id, restricted to the case (and the space, when given) in the store itself."""
        ids = [int(i) for i in card_ids if i.isascii() and i.isdigit() and len(i) <= 20]
        store = self._store()
        vector_store = store.storage.vector_store
        client = getattr(vector_store, "obvector", None)
        owner = {"user_id": user_id, **({"agent_id": agent_id} if agent_id else {})}
        for start in range(0, len(ids), _DELETE_BATCH):
            batch = ids[start : start + _DELETE_BATCH]
            if client is not None:  # seekdb: one statement per batch
                name = vector_store.collection_name
                if name not in client.metadata_obj.tables:
                    client.delete(table_name=name, ids=[])  # deletes nothing; loads the table object it uses
                # The filter must name that same table object, or the DELETE becomes a cartesian product.
                where = vector_store._generate_where_clause(owner, table=client.metadata_obj.tables[name])
                client.delete(table_name=name, ids=batch, where_clause=where)
            else:  # the sqlite store deletes row by row; its delete_memory checks the owner first
                for card_id in batch:
                    store.storage.delete_memory(card_id, user_id, agent_id)
            self._known.deleted(user_id, agent_id, map(str, batch))

    async def erase_case(self, case_id: str) -> None:
        """Remove every card of a case, in every space (role spaces and board copies alike), at any size,
        and every relevance feature derived from them."""
        self._relevance.forget_case(case_id)  # from now on nothing of the case is cached, even by a running search
        await self._run(self._erase_blocking, board_scope(case_id).user_id)
        self._ciphers.forget(case_id)

    def _erase_blocking(self, user_id: str) -> None:
        previous_first: str | None = None
        while True:
            # Always the first page: what was deleted is gone, so an offset would skip rows.
            page = self._store().get_all(user_id=user_id, limit=_PAGE_SIZE, sort_by="id", order="asc")
            ids = [str(row["id"]) for row in page.get("results") or [] if row.get("user_id") == user_id]
            if not ids:
                self._known.forget(user_id)
                return
            if ids[0] == previous_first:
                raise MemoryUnavailableError("cards survived an erase")
            previous_first = ids[0]
            self._delete_ids_blocking(user_id, None, ids)

    async def list_case_ids(self) -> builtins.list[str]:
        """Every case that has cards in the store, including ones the ledger no longer knows."""
        return await self._run(self._list_case_ids_blocking)

    def _list_case_ids_blocking(self) -> builtins.list[str]:
        # Paged scan instead of PowerMem's get_users(), which returns nothing on seekdb (it reads user_id
        # from the metadata JSON, where seekdb rows do not keep it).
        users = {str(item.get("user_id") or "") for item in self._rows(None)}
        prefix = CASE_USER_PREFIX
        return sorted(u[len(prefix) :] for u in users if u.startswith(prefix) and u != _PING_SCOPE.user_id)

    async def ping(self, timeout_s: float = _PING_TIMEOUT_S) -> bool:
        """Readiness: a real round trip to the store, now; not a cached flag, except while the store is known
        to be in trouble (reopening after it went away, or stalled): then False at once, without queueing."""
        if self._reopening or self.stalled:
            return False
        return await self.probe(timeout_s)

    async def probe(self, timeout_s: float = _PING_TIMEOUT_S) -> bool:
        """The supervisor's round trip, made even while stalled: an answer ends the stall. Callers arriving
        while one is in flight share it, so a flood of public /api/ready calls cannot queue up on the worker."""
        if self._ping_in_flight is None or self._ping_in_flight.done():
            self._ping_in_flight = asyncio.ensure_future(self._ping_once(min(timeout_s, self._call_timeout_s)))
        return await asyncio.shield(self._ping_in_flight)

    async def _ping_once(self, timeout_s: float) -> bool:
        if self.store_missing or self._store_went_missing():
            self.store_lost = False  # nothing to reopen: a reopen would create a new, empty store
            return False  # answering from deleted files is no answer
        job = self._executor.submit(self._ping_blocking)  # not `_run`: it must pass a stall, and not cause one
        try:
            await asyncio.wait_for(asyncio.wrap_future(job), timeout_s)
        except TimeoutError:
            return False  # slow or stuck, not gone: reopening a hung store would not make it answer
        except Exception:
            # Gone, or wedged? The embedded server this client opened still running means wedged (a full
            # disk does that): restarting it is the operator's call, as for a hung store (docs/faults.md).
            self.store_lost = self._server_pid is None or _embedded_server_pid(self._store_dir) != self._server_pid
            return False
        self.store_lost = False
        if self.stalled:
            log.warning("memory store answers again: calls accepted")
        self.stalled = False
        return True

    # ----- supervision ---------------------------------------------------------------------------------

    async def trouble(self, timeout_s: float) -> None:
        """Return when a store call has failed with an error since the last time, or after `timeout_s`."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._trouble.wait(), timeout_s)
        self._trouble.clear()

    async def reopen(self) -> None:
        """Replace the store client after the store went away (the embedded seekdb child died, a remote
        server restarted): close the old client, let go of the dead embedded server, start anew. It runs on
        the memory worker, so calls queued behind it meet the new client. Acknowledged writes are on disk."""
        self._reopening = True
        try:  # not `_run`: starting a store is no call, and it must pass a stall
            job = self._executor.submit(self._reopen_blocking)
            await asyncio.wait_for(asyncio.wrap_future(job), _REOPEN_TIMEOUT_S)
        finally:
            self._reopening = False
        self.store_lost = False

    def _reopen_blocking(self) -> None:
        if self._store_went_missing():
            raise MemoryUnavailableError("store missing")
        self._known.clear()  # read again from the reopened store
        memory, self._memory, self._nearest = self._memory, None, None
        if memory is not None:
            with contextlib.suppress(Exception):
                _close_quietly(memory)
        if self.backend_name == "seekdb-embedded":
            _release_embedded_server()
        self._start_blocking()

    def _ping_blocking(self) -> None:
        self._store().get_all(user_id=_PING_SCOPE.user_id, agent_id=_PING_SCOPE.agent_id, limit=1)


def _embedded_server_pid(store_dir: Path) -> int | None:
    """The running embedded seekdb server of a store directory (its pid file, checked in /proc), or None."""
    try:
        pid = int((store_dir / "run" / "seekdb.pid").read_text().strip())
        raw = Path(f"/proc/{pid}/stat").read_text()
    except (OSError, ValueError):
        return None
    alive = raw[raw.index("(") + 1 : raw.rindex(")")] == "seekdb" and raw[raw.rindex(")") + 2] != "Z"
    return pid if alive else None


def _check_room_for_a_new_store(store_dir: Path) -> None:
    """Refuse, saying why, to create an embedded store where seekdb cannot bootstrap (see
    _NEW_STORE_MIN_FS_BYTES); an existing store keeps the log size it was created with and starts anywhere."""
    if store_dir.is_dir() and any(store_dir.iterdir()):
        return
    existing = next(path for path in (store_dir, *store_dir.parents) if path.exists())
    total = shutil.disk_usage(existing).total
    if total < _NEW_STORE_MIN_FS_BYTES:
        raise StoreDiskTooSmallError(
            f"{store_dir} is on a filesystem of {total >> 20} MiB; a new embedded seekdb store needs one of at "
            f"least {_NEW_STORE_MIN_FS_BYTES >> 20} MiB (seekdb reserves 2 GiB for its redo log). Put "
            "BUREAU_DATA_DIR on a larger filesystem, or use a seekdb server (BUREAU_SEEKDB_HOST)."
        )


def _name(fn: Callable[..., Any]) -> str:
    return getattr(fn, "__name__", "call")


def _release_embedded_server() -> None:
    """Forget this process's embedded seekdb server, so the next client starts a new one, and reap the dead
    one: pylibseekdb keeps it open (pointing at a dead socket) and never waits for its child."""
    import pylibseekdb

    with contextlib.suppress(Exception):
        pylibseekdb.close()
    for pid in _dead_children("seekdb"):
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)


def _dead_children(comm: str) -> builtins.list[int]:
    """Zombie children of this process with that command name (from /proc; empty where there is none)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, ValueError, IndexError):
            raw = stat.read_text()
            name = raw[raw.index("(") + 1 : raw.rindex(")")]
            state, ppid = raw[raw.rindex(")") + 2 :].split()[:2]
            if name == comm and state == "Z" and int(ppid) == os.getpid():
                found.append(int(stat.parent.name))
    return found


def _close_quietly(memory: Any) -> None:
    """Close the client, and its embedded connection (the store may be gone: closing then fails quietly)."""
    close = getattr(memory, "close", None)
    if callable(close):
        close()
    engine = getattr(getattr(memory.storage.vector_store, "obvector", None), "engine", None)
    if engine is not None:
        engine.dispose()
