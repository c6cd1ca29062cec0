"""Request dependencies: services from app state (the one place that reads it), and access resolved once
per request."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Annotated

from fastapi import Depends, Request

from bureau.api.security import AccessControl, Principal
from bureau.api.state import Services, services_of
from bureau.game.service import Bureau
from bureau.scope.audience import Audience

# Every dependency is `async def`, even where nothing is awaited: FastAPI runs a plain `def` dependency in its
# thread pool, a thread hop per dependency per request (a third of the event loop's busy time under 100
# concurrent publishes, profiled with py-spy).


async def services(request: Request) -> Services:
    svc = services_of(request.app)
    assert svc is not None, "the start-up gate lets no API request through before the services exist"
    return svc


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


async def _bureau(svc: ServicesDep) -> Bureau:
    return svc.bureau


async def _access_control(svc: ServicesDep) -> AccessControl:
    return svc.access


BureauDep = Annotated[Bureau, Depends(_bureau)]
AccessDep = Annotated[AccessControl, Depends(_access_control)]
