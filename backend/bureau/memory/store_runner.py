"""StoreRunner: runs the store's calls, and keeps the one store client of a process alive to run them.

It opens the one PowerMem client (and with it embedded seekdb's server), closes it, and reopens it after the
store went away; it runs every store call on the memory worker within its deadline; it notices a stall (a
call past its deadline), a store that went away (the supervisor's ping fails with an error) and a store whose
files were removed under the running server (never recreated: docs/faults.md). Embedded seekdb is not
thread-safe, so every store call (and every embedding) runs on one dedicated worker thread; a remote server
gets a pool of `BUREAU_MEMORY_POOL_SIZE` threads instead.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path
from typing import Any, TypeVar

from langchain_core.embeddings import Embeddings
from threadpoolctl import threadpool_limits

from bureau.config import Settings
from bureau.memory import remote_schema
from bureau.memory.client_opener import (
    close_quietly,
    configure_powermem_environment,
    open_client,
    silence_store_loggers,
)
from bureau.memory.compaction import Compaction
from bureau.memory.embedded_seekdb import (
    complete_vector_index,
    retrying_ddl_lock_timeouts,
    share_one_connection,
    wait_for_start_up_ddl,
)
from bureau.memory.embedded_server import check_room_for_a_new_store, embedded_server_pid, release_embedded_server
from bureau.memory.embedders import self_check
from bureau.memory.seekdb_search import NearestCards
from bureau.memory.types import CaseErasedError, MemoryUnavailableError
from bureau.memory.worker_lanes import Lane, LaneWorkers
from bureau.scope.keys import BOARD, MemoryScope
from bureau.scope.vocabulary import StoreFault
from bureau.vault.errors import CaseKeysGoneError, GrantError, VaultUnavailableError

log = logging.getLogger("bureau.memory")
T = TypeVar("T")

PING_TIMEOUT_S = 3.0
_REOPEN_TIMEOUT_S = 120.0  # a new PowerMem client starts seekdb (2 s) and reflects its schema (3 s); far less than this
# The supervisor's round trip reads one row of a space no card is ever written to.
PING_SCOPE = MemoryScope("__ping__", BOARD)


class StoreRunner:
    """One process's store client, the worker its calls run on, and what is known to be wrong with the store."""

    def __init__(self, settings: Settings, embedder: Embeddings, worker_slot: int = 0, *, prepare: bool) -> None:
        self._settings = settings
        self._embedder = embedder
        self._worker_slot = worker_slot
        self._prepare = prepare  # `bureau setup`: may create the remote database and collection
        self._backend = settings.memory_backend
        self.memory: Any = None
        self.nearest: NearestCards | None = None  # seekdb's search as one statement (memory/seekdb_search.py)
        # Embedded seekdb is not thread-safe: one worker. A remote server takes a pool of connections.
        workers = settings.memory_pool_size if settings.remote_store else 1
        self.executor = LaneWorkers(workers, thread_name_prefix="bureau-memory")
        self._ping_in_flight: asyncio.Future[bool] | None = None
        self.call_timeout_s = settings.memory_call_timeout_s
        self._store_dir = settings.data_dir / "seekdb"  # embedded seekdb's directory
        self._new_store = False  # whether this start created the store (its start-up DDL may still be running)
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
        self.reopening = False
        self.dims = 0
        self.compaction = Compaction(settings.store_compact_after_deletes)  # counts deletes, asks for compaction

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
        if self.store_lost or self.reopening:
            return StoreFault.STORE_UNREACHABLE
        return None

    # ----- open and close --------------------------------------------------------------------------------

    async def start(self) -> None:
        """Create the one PowerMem client of this process. Costs seconds: never per request.
        Errors propagate as they are, so a failed start says what failed."""
        await asyncio.get_running_loop().run_in_executor(self.executor, self._start_blocking)

    def _start_blocking(self) -> None:
        # Every vector operation of this process (embedding, rotation, signals) runs on the memory worker, one
        # at a time: BLAS threads of their own would only wait for a core and spin (docs/performance.md).
        threadpool_limits(limits=1, user_api="blas")
        self.dims = self_check(self._embedder)  # PowerMem swallows embedding errors: fail loudly here
        self._settings.data_dir.mkdir(parents=True, exist_ok=True)
        logs = self._settings.data_dir / "logs"
        logs.mkdir(exist_ok=True)
        configure_powermem_environment(self._worker_slot)
        silence_store_loggers()
        if self.backend_name == "seekdb-embedded":
            self._new_store = not (self._store_dir.is_dir() and any(self._store_dir.iterdir()))
            check_room_for_a_new_store(self._store_dir)
        if self._settings.remote_store:
            # Created once by `bureau setup`: instances creating one collection at once can crash the server.
            (remote_schema.create_database if self._prepare else remote_schema.require_prepared)(self._settings)
        memory = retrying_ddl_lock_timeouts(
            "creating the PowerMem client (and a new store's schema)",
            lambda: open_client(self._settings, self._embedder, self.dims, logs),
            self._settle,
        )
        try:
            share_one_connection(memory)
            if self.backend_name == "seekdb-embedded" or (self._prepare and self._settings.remote_store):
                complete_vector_index(memory, self._settle)  # a table left without it by an interrupted start
            nearest = None if self._backend == "sqlite" else NearestCards.of(memory)
            if nearest is not None:
                self._check_owner_index(nearest)
        except BaseException:
            with contextlib.suppress(Exception):
                close_quietly(memory)
            raise
        self.memory, self.nearest = memory, nearest  # together: a half-started client is never used
        self._store_identity = self._identity_now()
        self._server_pid = embedded_server_pid(self._store_dir) if self.backend_name == "seekdb-embedded" else None
        silence_store_loggers()  # again: PowerMem may have configured its loggers while starting

    def _settle(self) -> None:
        """Before a schema step is retried: embedded seekdb's own start-up DDL done (a server's is long done)."""
        if self.backend_name == "seekdb-embedded":
            wait_for_start_up_ddl(self._store_dir, new_store=self._new_store)

    def _check_owner_index(self, nearest: NearestCards) -> None:
        """The owner index only makes searches fast: a start never fails over it, except `bureau setup`,
        whose job the schema is. A server's schema is setup's alone (remote_schema.py)."""
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
        memory, self.memory, self.nearest = self.memory, None, None
        if memory is not None:
            with contextlib.suppress(Exception):
                await asyncio.get_running_loop().run_in_executor(self.executor, close_quietly, memory)
        self.executor.shutdown(wait=True, cancel_futures=True)

    def statements(self) -> NearestCards:
        """seekdb's own statements (memory/seekdb_search.py), reached like the client: a store that is not
        started, or was taken away, fails here the same way."""
        self.client()
        if self.nearest is None:
            raise MemoryUnavailableError("memory gateway not started")
        return self.nearest

    def client(self) -> Any:
        if self.memory is None:
            raise MemoryUnavailableError("memory gateway not started")
        return self.memory

    # ----- calls -----------------------------------------------------------------------------------------

    async def run(
        self, fn: Callable[..., T], *args: Any, undo: Callable[[T], object] | None = None, lane: Lane = Lane.COMMAND
    ) -> T:
        """Run on the memory worker, within BUREAU_MEMORY_CALL_TIMEOUT_S. While the store is stalled a call
        fails at once: it would only queue behind the stuck one. A call that times out still runs to its end
        on the worker; with `undo`, its result is undone there afterwards (a command, queued once the call
        has ended), so "failed, nothing changed" stays true even when the write lands after the 503. `lane`:
        a screen's read yields to commands (memory/worker_lanes.py); one that spent its whole deadline in the
        queue says the worker is busy with commands, not that the store hangs, and does not stall the store."""
        if self.stalled or self.store_missing:
            raise MemoryUnavailableError("stalled" if self.stalled else "store missing")
        job = self.executor.submit_in(lane, fn, *args)
        try:
            return await asyncio.wait_for(asyncio.wrap_future(job), self.call_timeout_s)
        except TimeoutError:
            if lane is Lane.REFRESH and job.cancelled():  # never started: wait_for cancelled it in the queue
                log.warning("memory store call %s waited past its deadline behind commands", _name(fn))
                raise MemoryUnavailableError("queued") from None
            if undo is not None:
                job.add_done_callback(lambda done: self._undo_late_result(done, undo))
            if not self.stalled:
                log.error("memory store call %s timed out: refusing calls until it answers", _name(fn))
            self.stalled = True
            self._trouble.set()
            raise MemoryUnavailableError("timeout") from None
        except (MemoryUnavailableError, CaseErasedError, VaultUnavailableError, GrantError):
            raise  # the vault's own faults, and a grant asked beyond its cover, are not the store's
        except CaseKeysGoneError as exc:
            raise CaseErasedError("erased") from exc  # the case is gone, not the store
        except Exception as exc:
            # Never carry store messages upward: they can contain card text or query text.
            log.error("memory store call %s failed: %s", _name(fn), type(exc).__name__)
            self._trouble.set()
            raise MemoryUnavailableError(type(exc).__name__) from exc

    def _undo_late_result(self, done: Future[T], undo: Callable[[T], object]) -> None:
        if done.cancelled() or done.exception() is not None:
            return
        with contextlib.suppress(RuntimeError):  # the executor is shutting down: nothing more can run
            self.executor.submit(undo, done.result())

    # ----- supervision -----------------------------------------------------------------------------------

    async def ping(self, timeout_s: float = PING_TIMEOUT_S) -> bool:
        """Readiness: a real round trip to the store, now; not a cached flag, except while the store is known
        to be in trouble (reopening after it went away, or stalled): then False at once, without queueing."""
        if self.reopening or self.stalled:
            return False
        return await self.probe(timeout_s)

    async def probe(self, timeout_s: float = PING_TIMEOUT_S) -> bool:
        """The supervisor's round trip, made even while stalled: an answer ends the stall. Callers arriving
        while one is in flight share it, so a flood of public /api/ready calls cannot queue up on the worker."""
        if self._ping_in_flight is None or self._ping_in_flight.done():
            self._ping_in_flight = asyncio.ensure_future(self._ping_once(min(timeout_s, self.call_timeout_s)))
        return await asyncio.shield(self._ping_in_flight)

    async def _ping_once(self, timeout_s: float) -> bool:
        if self.store_missing or self._store_went_missing():
            self.store_lost = False  # nothing to reopen: a reopen would create a new, empty store
            return False  # answering from deleted files is no answer
        job = self.executor.submit(self._ping_blocking)  # not `run`: it must pass a stall, and not cause one
        try:
            await asyncio.wait_for(asyncio.wrap_future(job), timeout_s)
        except TimeoutError:
            return False  # slow or stuck, not gone: reopening a hung store would not make it answer
        except Exception:
            # Gone, or wedged? The embedded server this client opened still running means wedged (a full
            # disk does that): restarting it is the operator's call, as for a hung store (docs/faults.md).
            self.store_lost = self._server_pid is None or embedded_server_pid(self._store_dir) != self._server_pid
            return False
        self.store_lost = False
        if self.stalled:
            log.warning("memory store answers again: calls accepted")
        self.stalled = False
        return True

    def _ping_blocking(self) -> None:
        self.client().get_all(user_id=PING_SCOPE.user_id, agent_id=PING_SCOPE.agent_id, limit=1)

    async def trouble(self, timeout_s: float) -> None:
        """Return when a store call has failed with an error since the last time, or after `timeout_s`."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._trouble.wait(), timeout_s)
        self._trouble.clear()

    async def reopen(self, forget: Callable[[], None]) -> None:
        """Replace the store client after the store went away (the embedded seekdb child died, a remote
        server restarted): close the old client, let go of the dead embedded server, start anew. It runs on
        the memory worker, so calls queued behind it meet the new client. Acknowledged writes are on disk.
        `forget` drops what the caller remembers of the old store (on the worker, before the new client)."""
        self.reopening = True
        try:  # not `run`: starting a store is no call, and it must pass a stall
            job = self.executor.submit(self._reopen_blocking, forget)
            await asyncio.wait_for(asyncio.wrap_future(job), _REOPEN_TIMEOUT_S)
        finally:
            self.reopening = False
        self.store_lost = False

    def _reopen_blocking(self, forget: Callable[[], None]) -> None:
        if self._store_went_missing():
            raise MemoryUnavailableError("store missing")
        forget()
        memory, self.memory, self.nearest = self.memory, None, None
        if memory is not None:
            with contextlib.suppress(Exception):
                close_quietly(memory)
        if self.backend_name == "seekdb-embedded":
            release_embedded_server()
        self._start_blocking()


def _name(fn: Callable[..., Any]) -> str:
    return getattr(fn, "__name__", "call")
