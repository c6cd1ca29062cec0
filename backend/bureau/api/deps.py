"""Request dependencies: services from app state (the one place that reads it), and access resolved once
per request."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Annotated

from fastapi import Depends, Request

from bureau.api.security import AccessControl, Principal
from bureau.api.state import Services, services_of
from bureau.game.services.cases import CaseService
from bureau.game.services.findings import FindingService
from bureau.game.services.publications import PublicationService
from bureau.game.services.questions import QuestionService
from bureau.game.services.records import RecordService
from bureau.game.services.whispers import WhisperService
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
# resolves `services` once per request): the game's service of its command family, which a route names in its
# signature (`Annotated[QuestionService, Depends(question_service)]`, the service's type in plain sight), or
# access control. Where the parts are built and kept is decided above, in one place.


async def case_service(svc: ServicesDep) -> CaseService:
    return svc.bureau.case_service


async def whisper_service(svc: ServicesDep) -> WhisperService:
    return svc.bureau.whisper_service


async def question_service(svc: ServicesDep) -> QuestionService:
    return svc.bureau.question_service


async def publication_service(svc: ServicesDep) -> PublicationService:
    return svc.bureau.publication_service


async def finding_service(svc: ServicesDep) -> FindingService:
    return svc.bureau.finding_service


async def record_service(svc: ServicesDep) -> RecordService:
    return svc.bureau.record_service


async def _access_control(svc: ServicesDep) -> AccessControl:
    return svc.access


AccessDep = Annotated[AccessControl, Depends(_access_control)]
