"""While the service is starting, every API request gets 503 `STARTING` with the phase start-up is in
(`/api/ready` and `/api/health` too), before any body is read or any session looked up."""

from __future__ import annotations

from starlette.types import ASGIApp, Receive, Scope, Send

from bureau.api.errors import error_response
from bureau.api.state import services_of, startup_of
from bureau.api.transport import is_api_path
from bureau.bootstrap.phases import PHASE_LABELS, Phase

RETRY_AFTER = {"Retry-After": "1"}


class StartingGate:
    """Pure ASGI middleware; lets requests through once the services exist."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and is_api_path(scope["path"]) and services_of(scope["app"]) is None:
            startup = startup_of(scope["app"])
            phase = startup.phase if startup is not None else Phase.SETTINGS
            message = f"The service is starting: {PHASE_LABELS[phase]}. Retry shortly."
            await error_response("STARTING", message, RETRY_AFTER, phase=str(phase))(scope, receive, send)
            return
        await self.app(scope, receive, send)
