"""The sign-in gate (passcode mode): an anonymous request to a protected API route is refused before its body
is read. Middleware, so it reads the services through `api/state.py`; `api/security.py` stays below the state."""

from __future__ import annotations

from fastapi import Request
from starlette.types import ASGIApp, Receive, Scope, Send

from bureau.api.errors import error_response
from bureau.api.security import PRINCIPAL_STATE
from bureau.api.state import services_of
from bureau.api.transport import is_api_path
from bureau.ledger.repository import LedgerError

PUBLIC_API_PATHS = frozenset({"/api/health", "/api/ready", "/api/session"})


class SignedInFirst:
    """Passcode mode: an anonymous request to a protected API route gets 401 before its body is read, so
    nobody learns anything from how a body is parsed. The resolved principal is kept for the route."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and is_api_path(scope["path"]) and scope["path"] not in PUBLIC_API_PATHS:
            services = services_of(scope["app"])
            assert services is not None, "behind the start-up gate"
            access = services.access
            if not access.open_mode:
                try:
                    principal = await access.principal(Request(scope))
                except LedgerError:
                    principal = None  # the route's own check meets the same fault and answers 503
                if principal is not None and principal.audience is None:
                    await error_response("ACCESS_REQUIRED")(scope, receive, send)
                    return
                if principal is not None:
                    scope.setdefault("state", {})[PRINCIPAL_STATE] = principal
        await self.app(scope, receive, send)
