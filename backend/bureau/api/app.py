"""The FastAPI application: wiring, lifespan (one memory client per process), the built web app."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import time
from collections.abc import AsyncIterator, Awaitable
from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.responses import FileResponse
from fastapi.staticfiles import StaticFiles
from starlette.routing import Match

from bureau import __version__
from bureau.answering.selection import build_responder
from bureau.api.deps import Services
from bureau.api.errors import ApiError, install_error_handlers
from bureau.api.events import EventHub
from bureau.api.hosts import LoopbackHostsOnly
from bureau.api.openapi import install_openapi
from bureau.api.routes import cases, health, policy, session, stage
from bureau.api.routes.streaming import STREAM_SLOT_LEASE_S
from bureau.api.security import AccessControl, SignedInFirst
from bureau.api.transport import TransportGuard, is_api_path
from bureau.config import Settings, UnsafeSettingsError, get_settings
from bureau.game.service import Bureau
from bureau.ledger.database import create_ledger_engine, migrate
from bureau.ledger.repository import Ledger, LedgerConflictError
from bureau.memory.embedders import build_embedder
from bureau.memory.gateway import MemoryGateway

log = logging.getLogger("bureau")
REPO_WEB_DIST = Path(__file__).resolve().parents[3] / "web" / "dist"
MAINTENANCE_INTERVAL_S = 5.0
SLOT_STALE_S = 120.0  # a worker id lease not renewed for this long may be taken by another process


async def start_services(settings: Settings, *, prepare: bool = False) -> tuple[Services, int, str]:
    """Open the ledger (migrating it), lease a Snowflake slot, start the one memory client. `prepare`
    (`bureau setup`) may create the remote store's database and collection; instances never do."""
    started = time.perf_counter()
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    log.info("opening the ledger and applying migrations")
    engine = create_ledger_engine(settings.effective_database_url)
    lock = settings.data_dir / ".ledger.lock" if settings.effective_database_url.startswith("sqlite") else None
    await asyncio.to_thread(migrate, engine, lock)
    ledger = Ledger(engine)
    owner = secrets.token_hex(8)
    slot = await _claim_worker_id(ledger, owner, settings.worker_id)
    gateway = MemoryGateway(settings, build_embedder(settings), worker_slot=slot, keys=ledger, prepare=prepare)
    log.info(
        "starting the memory store (%s, embedder %s); this takes a few seconds", gateway.backend_name, settings.embedder
    )
    try:
        await gateway.start()
    except BaseException:
        # A failed start must not keep the worker id leased: the corrected restart would be refused it.
        with contextlib.suppress(Exception):
            await ledger.release_slot(slot, owner)
        engine.dispose()
        raise
    responder = build_responder(settings, shared_budget=ledger)
    await asyncio.to_thread(responder.warm_up)  # the first question should not pay for building the agents
    hub = EventHub(ledger)
    ledger.on_commit = hub.notify
    svc = Services(
        settings=settings,
        ledger=ledger,
        gateway=gateway,
        responder=responder,
        bureau=Bureau(settings, gateway, ledger, responder),
        hub=hub,
        access=AccessControl(settings, ledger),
        instance_id=owner,
    )
    log.info("ready in %.1f s", time.perf_counter() - started)
    return svc, slot, owner


async def _claim_worker_id(ledger: Ledger, owner: str, wanted: int | None) -> int:
    """Lease a Snowflake slot from the ledger; a configured id is leased too, so two instances given the
    same BUREAU_WORKER_ID over one shared ledger cannot both start."""
    try:
        return await ledger.claim_slot(owner, stale_after_s=SLOT_STALE_S, wanted=wanted)
    except LedgerConflictError:
        raise UnsafeSettingsError(
            f"Refusing to start: BUREAU_WORKER_ID={wanted} is held by another live instance of this ledger. "
            "Give each instance its own id, or leave it unset to lease a free one."
        ) from None


async def stop_services(svc: Services, slot: int, owner: str) -> None:
    await svc.gateway.close()
    with contextlib.suppress(Exception):
        await svc.ledger.release_slot(slot, owner)
    svc.ledger.engine.dispose()


async def _guarded(job: Awaitable[object], name: str) -> None:
    try:
        await job
    except Exception as exc:
        log.warning("maintenance job %s failed: %s", name, type(exc).__name__)


async def _maintenance(svc: Services) -> None:
    """Independent jobs, so one failing job cannot starve another: ping, cleanups, expired sessions."""
    while True:
        await asyncio.sleep(MAINTENANCE_INTERVAL_S)
        svc.last_ping_ok = await svc.gateway.ping()  # what /api/health reports between /api/ready calls
        await _guarded(svc.bureau.run_cleanups(), "cleanups")
        await _guarded(svc.ledger.purge_expired_sessions(), "sessions")
        await _guarded(svc.ledger.renew_stream_slots(svc.instance_id, STREAM_SLOT_LEASE_S), "stream slots")
        await _guarded(svc.ledger.purge_old_failures(svc.access.throttle.window_s), "throttle")


async def _sweep_retention(svc: Services) -> None:
    """Expired records out of the store and the ledger: once at start-up, then every
    BUREAU_RETENTION_SWEEP_S. Processes sharing the ledger take turns (a lease), never sweep at once."""
    while True:
        await _guarded(svc.bureau.sweeper.sweep(), "retention")
        await asyncio.sleep(svc.settings.retention_sweep_s)


async def _keep_slot(svc: Services, slot: int, owner: str) -> None:
    """Renew this process's Snowflake slot lease on its own timer, well inside the stale limit. When the
    lease is lost (taken over, or not renewed for so long that another process may take it), fence the
    gateway: no more store writes, /api/ready answers 503, an orchestrator restarts the instance."""
    interval = svc.settings.worker_heartbeat_s
    renewed = time.monotonic()
    while not svc.gateway.fenced:
        await asyncio.sleep(interval)
        try:
            if await svc.ledger.heartbeat_slot(slot, owner):
                renewed = time.monotonic()
                continue
            log.error("lost worker id %s to another process: writes refused; restart this instance", slot)
        except Exception as exc:
            log.warning("worker id heartbeat failed: %s", type(exc).__name__)
            if time.monotonic() - renewed < SLOT_STALE_S - 2 * interval:
                continue
            log.error("worker id %s not renewed for too long: writes refused; restart this instance", slot)
        svc.gateway.fence()


def create_app(settings: Settings | None = None) -> FastAPI:
    settings = settings or get_settings()

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        svc, slot, owner = await start_services(settings)
        app.state.services = svc
        tasks = [
            asyncio.create_task(svc.hub.watch_other_processes(), name="event-watcher"),
            asyncio.create_task(_maintenance(svc), name="maintenance"),
            asyncio.create_task(_sweep_retention(svc), name="retention-sweeper"),
        ]
        tasks.append(asyncio.create_task(_keep_slot(svc, slot, owner), name="slot-heartbeat"))
        try:
            yield
        finally:
            svc.hub.close()
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            await stop_services(svc, slot, owner)

    app = FastAPI(
        title="AI Intelligence Bureau",
        version=__version__,
        description="Who knows what: scoped memory for three agent roles and a shared bulletin board.",
        lifespan=lifespan,
    )
    app.add_middleware(SignedInFirst)
    app.add_middleware(TransportGuard)  # added last: runs first, so its refusals need no session lookup
    if settings.loopback_only and not settings.passcodes_enabled:
        # Open play trusts whoever reaches the port, so only this machine's own names may: a web page whose
        # domain is re-pointed at 127.0.0.1 (DNS rebinding) must not be able to drive the API.
        app.add_middleware(LoopbackHostsOnly)
    install_error_handlers(app)
    install_openapi(app)
    for module in (health, session, cases, stage, policy):
        app.include_router(module.router)
    app.include_router(stage.follow_router)
    _mount_web(app, settings.web_dist or REPO_WEB_DIST)
    return app


def _no_such_api_route(app: FastAPI, request: Request) -> ApiError:
    """The catch-all serves the web app only: an API path that exists for other methods is a 405."""
    allowed = [
        method
        for method in ("POST", "PUT", "PATCH", "DELETE")
        if any(route.matches({**request.scope, "method": method})[0] is Match.FULL for route in app.router.routes)
    ]
    if allowed:
        allow = {"Allow": ", ".join(allowed)}
        return ApiError("METHOD_NOT_ALLOWED", "This route does not accept that method.", allow)
    return ApiError("NOT_FOUND", "No such API route.")


def _mount_web(app: FastAPI, dist: Path) -> None:
    """Serve the built console and stage on the API's port, with SPA fallback for client routes."""
    index = dist / "index.html"
    if not index.is_file():
        return
    if (dist / "assets").is_dir():
        app.mount("/assets", StaticFiles(directory=dist / "assets"), name="assets")

    @app.get("/{path:path}", include_in_schema=False)
    async def spa(request: Request, path: str) -> FileResponse:
        if is_api_path("/" + path.lower()):
            raise _no_such_api_route(app, request)
        candidate = (dist / path).resolve()
        if path and candidate.is_file() and dist.resolve() in candidate.parents:
            return FileResponse(candidate)
        return FileResponse(index)
