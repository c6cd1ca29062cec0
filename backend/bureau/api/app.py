"""The FastAPI application: wiring, lifespan (the services built by the composition root), the built web app."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.responses import FileResponse
from fastapi.staticfiles import StaticFiles
from starlette.routing import Match

from bureau import __version__
from bureau.api.errors import ApiError, install_error_handlers
from bureau.api.events import EventHub
from bureau.api.hosts import LoopbackHostsOnly
from bureau.api.openapi import install_openapi
from bureau.api.routes import cases, health, policy, session, stage
from bureau.api.routes.streaming import STREAM_SLOT_LEASE_S
from bureau.api.security import AccessControl
from bureau.api.sign_in_gate import SignedInFirst
from bureau.api.starting import StartingGate
from bureau.api.state import Services, publish_services, publish_startup, services_of
from bureau.api.transport import TransportGuard, is_api_path
from bureau.bootstrap.phases import Phase, Startup
from bureau.bootstrap.runtime import Runtime, close_runtime, open_runtime, start_background
from bureau.config import Settings, UnsafeSettingsError, get_settings

log = logging.getLogger("bureau")
REPO_WEB_DIST = Path(__file__).resolve().parents[3] / "web" / "dist"


def api_services(runtime: Runtime) -> Services:
    """The runtime plus the API's own parts: the event hub (woken by every commit) and access control."""
    access = AccessControl(runtime.settings, runtime.ledger.sessions, runtime.ledger.limits)
    svc = Services(**runtime.parts(), hub=EventHub(runtime.ledger.events), access=access)
    runtime.ledger.runner.on_commit = svc.hub.notify
    return svc


def _background(svc: Services) -> list[asyncio.Task[None]]:
    jobs = [
        ("stream slots", lambda: svc.ledger.limits.renew_stream_slots(svc.instance_id, STREAM_SLOT_LEASE_S)),
        ("throttle", lambda: svc.ledger.limits.purge_old_failures(svc.access.throttle.window_s)),
    ]
    watcher = asyncio.create_task(svc.hub.watch_other_processes(), name="event-watcher")
    return [watcher, *start_background(svc, jobs)]


async def _serve_services(app: FastAPI, settings: Settings, startup: Startup, tasks: list[asyncio.Task[None]]) -> None:
    try:
        runtime = await open_runtime(settings, startup)
    except BaseException as exc:
        if not isinstance(exc, asyncio.CancelledError | UnsafeSettingsError):  # a refusal says why itself
            log.error("start-up failed in phase %s", startup.phase, exc_info=exc)
        startup.fail(exc)
        raise
    svc = api_services(runtime)
    tasks.extend(_background(svc))
    publish_services(app, svc)


def create_app(settings: Settings | None = None, startup: Startup | None = None) -> FastAPI:
    """Without `startup` the lifespan returns once the services are ready (tests, benchmarks). With it
    (`bureau serve`), the lifespan returns at once, the port opens, and the services are built in the
    background once `startup` reports `listening`; until then every API request is 503 STARTING."""
    settings = settings or get_settings()
    background = startup is not None
    startup = startup or Startup()
    startup.enter(Phase.WEB)

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        publish_startup(app, startup)
        tasks: list[asyncio.Task[None]] = []

        async def start() -> None:
            if background:
                await startup.listening()
            await _serve_services(app, settings, startup, tasks)

        starting = asyncio.create_task(start(), name="start-up")
        if not background:
            await starting
        try:
            yield
        finally:
            starting.cancel()
            await asyncio.gather(starting, return_exceptions=True)
            svc = services_of(app)
            publish_services(app, None)
            if svc is not None:
                svc.hub.close()
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            if svc is not None:
                await close_runtime(svc)

    app = FastAPI(
        title="AI Intelligence Bureau",
        version=__version__,
        description="Who knows what: scoped memory for three agent roles and a shared bulletin board.",
        lifespan=lifespan,
    )
    app.add_middleware(SignedInFirst)
    app.add_middleware(StartingGate)  # before sessions are looked up: there is no ledger yet
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
