"""Transport rules in front of every route: cross-site writes, JSON bodies, a body cap, HEAD, security headers.

One pure ASGI middleware, so each rule holds before any route (or body parser) runs.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from urllib.parse import urlsplit

from starlette.datastructures import Headers, MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from bureau.api.errors import ERRORS, error_body

MAX_BODY_BYTES = 64 * 1024
WRITE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
# Browsers send Sec-Fetch-Site on every request; "none" is a typed URL or a bookmark, never another site.
SAME_SITE_FETCH = frozenset({"same-origin", "none"})
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
    "font-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; "
    "frame-ancestors 'none'; form-action 'self'"
)
_SECURITY_HEADERS = {
    "content-security-policy": CONTENT_SECURITY_POLICY,
    "x-frame-options": "DENY",
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
}


def is_api_path(path: str) -> bool:
    return path == "/api" or path.startswith("/api/")


def cross_site(headers: Headers, host: str | None) -> bool:
    """A write sent by a page of another origin (a form, or `fetch(..., {mode: "no-cors"})`)."""
    fetch_site = headers.get("sec-fetch-site")
    if fetch_site is not None:
        return fetch_site not in SAME_SITE_FETCH
    origin = headers.get("origin")
    if origin is None:
        return False  # not a browser (curl, scripts, tests): CSRF needs a victim's browser
    return origin == "null" or urlsplit(origin).netloc.lower() != (host or "").lower()


def json_body_required(headers: Headers) -> bool:
    """True when the request carries a body (or declares a type) that is not JSON."""
    content_type = headers.get("content-type")
    if content_type is None:
        length = headers.get("content-length")
        return headers.get("transfer-encoding") is not None or (length is not None and length.strip() != "0")
    return content_type.split(";", 1)[0].strip().lower() != "application/json"


def _error(code: str, message: str | None = None) -> tuple[int, bytes]:
    return ERRORS[code].status, json.dumps(error_body(code, message)).encode()


async def _respond(send: Send, status: int, body: bytes) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())],
        }
    )
    await send({"type": "http.response.body", "body": body})


class TransportGuard:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        api = is_api_path(scope["path"])
        send = _with_security_headers(send, private=api)
        headers = Headers(scope=scope)
        if api and scope["method"] in WRITE_METHODS:
            refusal = None
            if cross_site(headers, headers.get("host")):
                refusal = _error("CSRF_REQUIRED", "Writes from another site are refused.")
            elif json_body_required(headers):
                refusal = _error("UNSUPPORTED_MEDIA_TYPE")
            if refusal is not None:
                await _respond(send, *refusal)
                return
        if scope["method"] in WRITE_METHODS:
            body = await _read_capped(headers, receive)
            if body is None:
                await _respond(send, *_error("PAYLOAD_TOO_LARGE"))
                return
            receive = _replay(body, receive)
        if scope["method"] == "HEAD":
            scope, receive, send = _head_as_get(scope, receive, send)
        await self.app(scope, receive, send)


async def _read_capped(headers: Headers, receive: Receive) -> bytes | None:
    """The whole body, or None once it passes MAX_BODY_BYTES (declared or counted as it arrives)."""
    declared = headers.get("content-length", "0").strip()
    if not declared.isdigit() or len(declared) > 12 or int(declared) > MAX_BODY_BYTES:
        return None
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return b"".join(chunks)  # the client left; the route sees an empty body and the disconnect
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > MAX_BODY_BYTES:
            return None
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


def _replay(body: bytes, receive: Receive) -> Receive:
    sent = False

    async def receiving() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return receiving


def _with_security_headers(send: Send, *, private: bool) -> Send:
    async def sending(message: Message) -> None:
        if message["type"] == "http.response.start":
            headers = MutableHeaders(scope=message)
            for name, value in _SECURITY_HEADERS.items():
                headers.setdefault(name, value)
            if private:  # API answers are per session and per case: never stored by a browser or a proxy
                headers["cache-control"] = "no-store"
        await send(message)

    return sending


def _head_as_get(scope: Scope, receive: Receive, send: Send) -> tuple[Scope, Receive, Callable[..., Awaitable[None]]]:
    """HEAD is GET without the body: the route runs as GET, its headers go out, its body does not. A stream
    is told the client left as soon as the headers are sent, so it ends instead of running on."""
    done = False

    async def receiving() -> Message:
        if done:
            return {"type": "http.disconnect"}
        return await receive()

    async def sending(message: Message) -> None:
        nonlocal done
        if done:
            return
        if message["type"] == "http.response.body":
            done = True
            await send({"type": "http.response.body", "body": b"", "more_body": False})
            return
        await send(message)

    return {**scope, "method": "GET"}, receiving, sending
