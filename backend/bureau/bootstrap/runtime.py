"""Builds the one ledger, memory gateway, responder and bureau of a process, in named phases, and runs the
process-wide background jobs."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import secrets
import signal
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, fields
from typing import Any

from bureau.answering.base import Responder
from bureau.answering.selection import build_responder
from bureau.bootstrap.collector import settle_after_reopen
from bureau.bootstrap.phases import Phase, Startup
from bureau.bootstrap.vault_binding import bind_vault
from bureau.config import Settings, UnsafeSettingsError
from bureau.game.bureau import Bureau
from bureau.game.publication import SAGA_STEPS
from bureau.game.reseal import RESEAL_STEPS
from bureau.game.services.cases import ERASURE_STEPS
from bureau.ledger.database import create_ledger_engine, migrate
from bureau.ledger.repository import Ledger, LedgerConflictError, SlotRepository
from bureau.memory.embedders import build_embedder
from bureau.memory.gateway import MemoryGateway
from bureau.vault import Vault

log = logging.getLogger("bureau")
MAINTENANCE_INTERVAL_S = 5.0
REOPEN_CONFIRM_S = 1.0  # a store that failed a ping is pinged again this much later before it is reopened
STALLED_PING_S = 1.0  # while a store call is stuck past its deadline, the store is pinged this often
REOPEN_BACKOFF_S = (1.0, 30.0)  # first and longest wait between attempts to reopen a store that is gone
SLOT_STALE_S = 120.0  # a worker id lease not renewed for this long may be taken by another process


@dataclass(kw_only=True)
class Runtime:
    """One of each per process. The API extends it with its own parts (event hub, access control)."""

    settings: Settings
    ledger: Ledger
    vault: Vault
    gateway: MemoryGateway
    responder: Responder
    bureau: Bureau
    instance_id: str  # this process's lease owner id in the ledger (worker id, stream slots)
    slot: int  # this process's Snowflake worker slot
    last_ping_ok: bool = True  # what /api/health reports between /api/ready calls

    def parts(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(Runtime)}


async def open_runtime(settings: Settings, startup: Startup | None = None, *, prepare: bool = False) -> Runtime:
    """Open the ledger (migrating it), lease a Snowflake slot, start the one memory client, the responder
    and the bureau. `prepare` (`bureau setup`) may create the remote store's database and collection;
    instances never do."""
    startup = startup or Startup()
    async with contextlib.AsyncExitStack() as undo:  # a failed start leaves nothing open or leased
        startup.enter(Phase.LEDGER)
        settings.data_dir.mkdir(parents=True, exist_ok=True)
        engine = create_ledger_engine(settings.effective_database_url, settings.ledger_busy_timeout_s)
        undo.callback(engine.dispose)
        lock = settings.data_dir / ".ledger.lock" if settings.effective_database_url.startswith("sqlite") else None
        await asyncio.to_thread(migrate, engine, lock)
        ledger = Ledger(engine)
        startup.enter(Phase.VAULT)
        vault = await bind_vault(settings, ledger.vault_binding)
        undo.callback(vault.close)
        owner = secrets.token_hex(8)
        startup.enter(Phase.WORKER_ID)
        slot = await _claim_worker_id(ledger.slots, owner, settings.worker_id)
        # A failed start must not keep the worker id leased: the corrected restart would be refused it.
        undo.push_async_callback(_release_slot, ledger.slots, slot, owner)
        startup.enter(Phase.MEMORY)
        gateway = MemoryGateway(settings, build_embedder(settings), worker_slot=slot, prepare=prepare)
        undo.push_async_callback(gateway.close)
        log.info("memory store %s, embedder %s", gateway.backend_name, settings.embedder)
        await gateway.start()
        startup.enter(Phase.RESPONDER)
        responder = build_responder(settings, shared_budget=ledger.limits)
        await asyncio.to_thread(responder.warm_up)  # the first question should not pay for building agents
        startup.enter(Phase.SCENARIOS)
        bureau = Bureau(settings, gateway, ledger, responder, vault)
        _inject_faults(bureau, settings)
        runtime = Runtime(
            settings=settings,
            ledger=ledger,
            vault=vault,
            gateway=gateway,
            responder=responder,
            bureau=bureau,
            instance_id=owner,
            slot=slot,
        )
        undo.pop_all()
    startup.enter(Phase.READY)
    log.info("ready in %.1f s", startup.elapsed_s)
    return runtime


def _inject_faults(bureau: Bureau, settings: Settings) -> None:
    """Test settings only (the settings refuse it elsewhere): die by SIGKILL at one step of the publish Saga, of
    a card's erasure or of a re-seal, as a crash would, with no clean-up of any kind."""
    step = settings.test_kill_at
    if not step:
        return
    kinds = {
        **dict.fromkeys(SAGA_STEPS, "publish"),
        **dict.fromkeys(ERASURE_STEPS, "card erasure"),
        **dict.fromkeys(RESEAL_STEPS, "re-seal"),
    }
    if step not in kinds:
        raise UnsafeSettingsError(f"BUREAU_TEST_KILL_AT must be one of {', '.join(kinds)}")

    def kill_at(reached: str) -> None:
        if reached == step:
            log.warning("test fault: killing this process at %s step %s", kinds[step], step)
            os.kill(os.getpid(), signal.SIGKILL)

    bureau.publisher.fault = kill_at
    bureau.case_service.fault = kill_at
    bureau.resealer.fault = kill_at


async def close_runtime(runtime: Runtime) -> None:
    await runtime.gateway.close()
    await _release_slot(runtime.ledger.slots, runtime.slot, runtime.instance_id)
    runtime.ledger.engine.dispose()
    runtime.vault.close()


async def _release_slot(slots: SlotRepository, slot: int, owner: str) -> None:
    with contextlib.suppress(Exception):
        await slots.release_slot(slot, owner)


@contextlib.asynccontextmanager
async def running(settings: Settings, *, prepare: bool = False) -> AsyncIterator[Runtime]:
    """For one-shot commands: the service, opened and closed around the command."""
    runtime = await open_runtime(settings, prepare=prepare)
    try:
        yield runtime
    finally:
        await close_runtime(runtime)


async def _claim_worker_id(slots: SlotRepository, owner: str, wanted: int | None) -> int:
    """Lease a Snowflake slot from the ledger; a configured id is leased too, so two instances given the
    same BUREAU_WORKER_ID over one shared ledger cannot both start."""
    try:
        return await slots.claim_slot(owner, stale_after_s=SLOT_STALE_S, wanted=wanted)
    except LedgerConflictError:
        raise UnsafeSettingsError(
            f"Refusing to start: BUREAU_WORKER_ID={wanted} is held by another live instance of this ledger. "
            "Give each instance its own id, or leave it unset to lease a free one."
        ) from None


# ----- background jobs -----------------------------------------------------------------------------------

Job = tuple[str, Callable[[], Awaitable[object]]]


async def run_guarded(job: Awaitable[object], name: str) -> None:
    """One background job, its failure logged and swallowed so the jobs after it still run. Public as the
    seam bench/stall_probe times each job at."""
    try:
        await job
    except Exception as exc:
        log.warning("maintenance job %s failed: %s", name, type(exc).__name__)


async def _maintenance(runtime: Runtime, jobs: Sequence[Job]) -> None:
    """Independent jobs, so one failing job cannot starve another: cleanups, expired sessions, abandoned
    publications and findings, and the jobs the caller adds."""
    every = [
        ("cleanups", runtime.bureau.case_service.run_cleanups),
        ("sessions", runtime.ledger.sessions.purge_expired_sessions),
        ("abandoned publications", runtime.bureau.publisher.roll_back_abandoned),
        ("abandoned findings", runtime.bureau.findings.roll_back_abandoned),
        ("store compaction", runtime.gateway.compact_if_due),
        *jobs,
    ]
    while True:
        await asyncio.sleep(MAINTENANCE_INTERVAL_S)
        for name, job in every:
            await run_guarded(job(), name)


async def _supervise_store(runtime: Runtime) -> None:
    """Ping the store every few seconds (what /api/health reports), at once after a failed call, every
    second while a call is stuck (the first answer ends the stall). When the store has gone away (an error,
    not mere slowness: the embedded seekdb child died, a remote server restarted), reopen the client. A
    store that hangs is never restarted (docs/faults.md)."""
    gateway = runtime.gateway
    while True:
        await gateway.trouble(STALLED_PING_S if gateway.stalled else MAINTENANCE_INTERVAL_S)
        runtime.last_ping_ok = await gateway.probe()
        if not runtime.last_ping_ok and gateway.store_lost:
            # Look once more before reopening: one failed call can be a passing error, and reopening holds
            # the whole process (pylibseekdb keeps the interpreter lock while it starts the server).
            await asyncio.sleep(REOPEN_CONFIRM_S)
            runtime.last_ping_ok = await gateway.probe()
        if not runtime.last_ping_ok and gateway.store_lost:
            await _reopen_store(runtime)


async def _reopen_store(runtime: Runtime) -> None:
    """Reopen the client until it starts, backing off while the store cannot be reached (a remote server
    still down): 1 s doubling to 30 s, so a store that comes back is in use again at most 30 s later."""
    backoff = REOPEN_BACKOFF_S[0]
    log.error("memory store unreachable; reopening it")
    while True:
        try:
            await runtime.gateway.reopen()
        except Exception as exc:
            if runtime.gateway.store_missing:
                return  # said once, with the path, by the gateway; a new store would hide every lost card
            log.error("memory store did not reopen (%s); next attempt in %.0f s", type(exc).__name__, backoff)
            await asyncio.sleep(backoff)
            backoff = min(backoff * 2, REOPEN_BACKOFF_S[1])
            continue
        settle_after_reopen()
        runtime.last_ping_ok = await runtime.gateway.probe()
        log.warning("memory store reopened (answering: %s)", runtime.last_ping_ok)
        return


async def _sweep_retention(runtime: Runtime) -> None:
    """Expired records out of the store and the ledger: once at start-up, then every
    BUREAU_RETENTION_SWEEP_S. Processes sharing the ledger take turns (a lease), never sweep at once."""
    while True:
        await run_guarded(runtime.bureau.sweeper.sweep(), "retention")
        await asyncio.sleep(runtime.settings.retention_sweep_s)


async def _keep_slot(runtime: Runtime) -> None:
    """Renew this process's Snowflake slot lease on its own timer, well inside the stale limit. When the
    lease is lost (taken over, or not renewed for so long that another process may take it), fence the
    gateway: no more store writes, /api/ready answers 503, an orchestrator restarts the instance."""
    interval = runtime.settings.worker_heartbeat_s
    slot, owner = runtime.slot, runtime.instance_id
    renewed = time.monotonic()
    while not runtime.gateway.fenced:
        await asyncio.sleep(interval)
        try:
            if await runtime.ledger.slots.heartbeat_slot(slot, owner):
                renewed = time.monotonic()
                continue
            log.error("lost worker id %s to another process: writes refused; restart this instance", slot)
        except Exception as exc:
            log.warning("worker id heartbeat failed: %s", type(exc).__name__)
            if time.monotonic() - renewed < SLOT_STALE_S - 2 * interval:
                continue
            log.error("worker id %s not renewed for too long: writes refused; restart this instance", slot)
        runtime.gateway.fence()


def start_background(runtime: Runtime, jobs: Sequence[Job] = ()) -> list[asyncio.Task[None]]:
    """The process-wide loops of a serving process, each on its own timer: the store supervisor, maintenance
    (with the caller's `jobs`), the retention sweeper and the worker id heartbeat."""
    return [
        asyncio.create_task(_supervise_store(runtime), name="store-supervisor"),
        asyncio.create_task(_maintenance(runtime, jobs), name="maintenance"),
        asyncio.create_task(_sweep_retention(runtime), name="retention-sweeper"),
        asyncio.create_task(_keep_slot(runtime), name="slot-heartbeat"),
    ]
