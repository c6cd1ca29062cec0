"""Request dependencies: services from app state, and access resolved once per request."""

from __future__ import annotations

from dataclasses import dataclass, field
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
    last_ping_ok: bool = True
    background: list = field(default_factory=list)


def services(request: Request) -> Services:
    return request.app.state.services


ServicesDep = Annotated[Services, Depends(services)]


async def _principal(request: Request, svc: ServicesDep) -> Principal:
    return await svc.access.principal(request)


async def operator_access(request: Request, svc: ServicesDep) -> Principal:
    principal = await _principal(request, svc)
    svc.access.require(principal, Audience.OPERATOR)
    svc.access.check_csrf(request, principal)
    return principal


async def stage_access(request: Request, svc: ServicesDep) -> Principal:
    principal = await _principal(request, svc)
    svc.access.require(principal, Audience.STAGE)
    svc.access.check_csrf(request, principal)
    return principal


PrincipalDep = Annotated[Principal, Depends(_principal)]
OperatorDep = Annotated[Principal, Depends(operator_access)]
StageDep = Annotated[Principal, Depends(stage_access)]
