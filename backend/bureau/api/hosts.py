"""Open play answers only to this machine's own host names (DNS rebinding), refusing others with the API's
one error shape instead of Starlette's plain-text body."""

from __future__ import annotations

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Receive, Scope, Send

from bureau.api.errors import error_response

LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1", "[::1]"})


def host_name(host_header: str) -> str:
    """`localhost:8000` → `localhost`; `[::1]:8000` → `[::1]`."""
    if host_header.startswith("["):
        return host_header[: host_header.find("]") + 1]
    return host_header.split(":", 1)[0]


class LoopbackHostsOnly:
    def __init__(self, app: ASGIApp, allowed: frozenset[str] = LOOPBACK_HOSTS) -> None:
        self.app, self.allowed = app, allowed

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket") and not self.allows(scope):
            await error_response("HOST_NOT_ALLOWED")(scope, receive, send)
            return
        await self.app(scope, receive, send)

    def allows(self, scope: Scope) -> bool:
        return host_name(Headers(scope=scope).get("host", "")) in self.allowed
