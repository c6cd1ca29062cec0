"""Request dependencies: services from app state, and access resolved once per request."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, Request

from bureau.answering.base import Responder
from bureau.api.events import EventHub
from bureau.api.security import AccessControl, Principal
from bureau.config import Settings
from bureau.game.service import Bureau
from bureau.ledger.repository import Ledger
from bureau.memory.gateway import MemoryGateway
from bureau.scope.audience import Audience


@dataclass
class Services:
    settings: Settings
    ledger: Ledger
    gateway: MemoryGateway
    responder: Responder
    bureau: Bureau
    hub: EventHub
    access: AccessControl
    instance_id: str = ""  # this process's lease owner id in the ledger (worker id, stream slots)
    last_ping_ok: bool = True


def services(request: Request) -> Services:
    return request.app.state.services


ServicesDep = Annotated[Services, Depends(services)]


async def _principal(request: Request, svc: ServicesDep) -> Principal:
    return await svc.access.principal(request)


def _access(needed: Audience) -> Callable[[Request, Services], Awaitable[Principal]]:
    """Resolve who is asking once per request; refuse the wrong audience; require CSRF on writes."""

    async def check(request: Request, svc: ServicesDep) -> Principal:
        principal = await _principal(request, svc)
        svc.access.require(principal, needed)
        svc.access.check_csrf(request, principal)
        return principal

    return check


PrincipalDep = Annotated[Principal, Depends(_principal)]
OperatorDep = Annotated[Principal, Depends(_access(Audience.OPERATOR))]
StageDep = Annotated[Principal, Depends(_access(Audience.STAGE))]


# One typed dependency per part of the process, so each route declares exactly what it uses (FastAPI
# resolves `services` once per request). Where the parts are built and kept is decided above, in one place.


def _bureau(svc: ServicesDep) -> Bureau:
    return svc.bureau


def _access_control(svc: ServicesDep) -> AccessControl:
    return svc.access


BureauDep = Annotated[Bureau, Depends(_bureau)]
AccessDep = Annotated[AccessControl, Depends(_access_control)]
