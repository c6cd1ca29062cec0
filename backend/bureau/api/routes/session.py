"""Sign in with a passcode, see who you are, sign out."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Header, Request, Response

from bureau.api.deps import AccessDep, PrincipalDep
from bureau.api.errors import STORAGE_FAULTS, WRITES, declare_errors
from bureau.api.openapi import ContractRoute
from bureau.api.responses import SessionInfo
from bureau.api.security import PASSCODE_HEADER, PASSCODE_MAX_CHARS

router = APIRouter(prefix="/api/session", tags=["session"], route_class=ContractRoute)
# Declared for the contract (and the web's passcode field); the route reads the header itself, so a longer one
# is cut, not refused.
Passcode = Annotated[
    str | None,
    Header(
        alias=PASSCODE_HEADER,
        description=f"only the first {PASSCODE_MAX_CHARS} characters are compared",
        json_schema_extra={"x-bureau-max-chars": PASSCODE_MAX_CHARS},
    ),
]


@router.get("", response_model=SessionInfo, responses=declare_errors(*STORAGE_FAULTS))
async def who_am_i(request: Request, access: AccessDep, principal: PrincipalDep) -> SessionInfo:
    return SessionInfo(
        audience=principal.audience,
        csrf_token=access.csrf_for_page(request, principal),
        passcodes_enabled=not access.open_mode,
    )


@router.post(
    "",
    status_code=204,
    responses=declare_errors("ACCESS_REQUIRED", "RATE_LIMITED", "VALIDATION_ERROR", *STORAGE_FAULTS, *WRITES),
)
async def sign_in(request: Request, access: AccessDep, _passcode: Passcode = None) -> Response:
    response = Response(status_code=204)
    await access.sign_in(request, response)
    return response


@router.delete("", status_code=204, responses=declare_errors(*STORAGE_FAULTS, *WRITES))
async def sign_out(request: Request, access: AccessDep, principal: PrincipalDep) -> Response:
    if principal.session_hash:
        access.check_csrf(request, principal)
    response = Response(status_code=204)
    await access.sign_out(principal, response)
    return response
