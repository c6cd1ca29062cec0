"""Sign in with a passcode, see who you are, sign out."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request, Response

from bureau.api.deps import PrincipalDep, ServicesDep

router = APIRouter(prefix="/api/session", tags=["session"])


@router.get("")
async def who_am_i(request: Request, svc: ServicesDep, principal: PrincipalDep) -> dict[str, Any]:
    return {
        "audience": principal.audience.value if principal.audience else None,
        "csrf_token": svc.access.csrf_for_page(request, principal),
        "passcodes_enabled": not svc.access.open_mode,
    }


@router.post("", status_code=204)
async def sign_in(request: Request, svc: ServicesDep) -> Response:
    response = Response(status_code=204)
    await svc.access.sign_in(request, response)
    return response


@router.delete("", status_code=204)
async def sign_out(request: Request, svc: ServicesDep, principal: PrincipalDep) -> Response:
    if principal.session_hash:
        svc.access.check_csrf(request, principal)
    response = Response(status_code=204)
    await svc.access.sign_out(principal, response)
    return response
