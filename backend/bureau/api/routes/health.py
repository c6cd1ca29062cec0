"""Liveness and readiness. Public: they reveal no case data and no secrets."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from fastapi.responses import JSONResponse

from bureau import __version__
from bureau.answering.selection import effective_mode, llm_status
from bureau.api.deps import ServicesDep
from bureau.api.errors import error_body

router = APIRouter(prefix="/api", tags=["health"])


@router.get("/health")
async def health(svc: ServicesDep) -> dict[str, Any]:
    memory_ok = svc.last_ping_ok
    return {
        "status": "ok" if memory_ok else "degraded",
        "version": __version__,
        "memory": {
            "status": "up" if memory_ok else "down",
            "backend": svc.gateway.backend_name,
            "embedder": svc.gateway.embedder_name,
            "threshold": svc.settings.effective_threshold,
        },
        "llm": llm_status(svc.settings, svc.responder),
        "mode": effective_mode(svc.settings, svc.responder),
        "access": "passcodes" if svc.settings.passcodes_enabled else "open",
    }


@router.get("/ready")
async def ready(svc: ServicesDep) -> JSONResponse:
    """A real round trip to the memory store now, not a cached flag; never ready once the worker id is lost."""
    if svc.gateway.fenced:
        body = error_body("WORKER_ID_LOST", "This instance lost its worker id lease and refuses writes.")
        return JSONResponse(body, status_code=503)
    svc.last_ping_ok = await svc.gateway.ping()
    if svc.last_ping_ok:
        return JSONResponse({"status": "ready"})
    return JSONResponse(error_body("MEMORY_UNAVAILABLE", "The memory store did not answer."), status_code=503)
