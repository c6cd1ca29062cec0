"""Liveness and readiness. Public: they reveal no case data and no secrets."""

from __future__ import annotations

from fastapi import APIRouter

from bureau import __version__
from bureau.answering.selection import effective_mode, llm_status
from bureau.api.deps import ServicesDep
from bureau.api.errors import ApiError, declare_errors
from bureau.api.openapi import ContractRoute
from bureau.api.responses import Health, LlmHealth, MemoryHealth, Ready
from bureau.scope.vocabulary import StoreFault

router = APIRouter(prefix="/api", tags=["health"], route_class=ContractRoute)


@router.get("/health", response_model=Health, responses=declare_errors())
async def health(svc: ServicesDep) -> Health:
    memory_ok = svc.last_ping_ok
    return Health(
        status="ok" if memory_ok else "degraded",
        version=__version__,
        memory=MemoryHealth(
            status="up" if memory_ok else "down",
            reason=None if memory_ok else (svc.gateway.fault or StoreFault.STORE_UNREACHABLE),
            backend=svc.gateway.backend_name,
            embedder=svc.gateway.embedder_name,
            threshold=svc.settings.effective_threshold,
        ),
        llm=LlmHealth(**llm_status(svc.settings, svc.responder)),
        mode=effective_mode(svc.settings, svc.responder),
        access="passcodes" if svc.settings.passcodes_enabled else "open",
        presenter_acts=svc.settings.presenter_acts,
    )


@router.get("/ready", response_model=Ready, responses=declare_errors("MEMORY_UNAVAILABLE", "WORKER_ID_LOST"))
async def ready(svc: ServicesDep) -> Ready:
    """A real round trip to the memory store now, not a cached flag; never ready once the worker id is lost."""
    if svc.gateway.fenced:
        raise ApiError("WORKER_ID_LOST", "This instance lost its worker id lease and refuses writes.")
    svc.last_ping_ok = await svc.gateway.ping()
    if not svc.last_ping_ok:
        raise ApiError("MEMORY_UNAVAILABLE", "The memory store did not answer.")
    return Ready(status="ready")
