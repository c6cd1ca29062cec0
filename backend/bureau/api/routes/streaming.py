"""SSE responses for both audiences: resume cursor, per-session connection cap, the delivery gate."""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import AsyncIterator
from typing import Any

from fastapi import Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import StreamingResponse
from starlette.background import BackgroundTask

from bureau.api.deps import Services
from bureau.api.errors import OPERATOR_ACCESS, STAGE_ACCESS, ApiError, declare_errors
from bureau.api.events import event_stream
from bureau.api.security import Principal
from bureau.ledger.repository import LedgerError
from bureau.scope.audience import Audience
from bureau.scope.limits import MAX_EVENT_ID
from bureau.scope.vocabulary import EventType

OPEN_MODE_STREAM_FACTOR = 4
STREAM_SLOT_LEASE_S = 30.0  # renewed by the maintenance loop while the stream lives
_releases: set[asyncio.Future[None]] = set()
MAX_EVENT_ID_DIGITS = len(str(MAX_EVENT_ID))


def sse_responses(audience: Audience) -> dict[int | str, dict[str, Any]]:
    """OpenAPI for a live stream: `text/event-stream` whose frames are the audience's frame schema
    (`api/frames.py`), plus every error the stream can refuse with before it starts."""
    frame = "OperatorFrame" if audience is Audience.OPERATOR else "StageFrame"
    access = OPERATOR_ACCESS if audience is Audience.OPERATOR else STAGE_ACCESS
    return {
        200: {
            "description": (
                "Server-sent events: `id` (the resume cursor; send it back as `Last-Event-ID` or `?after=`), "
                f"`event` (the type), `data` (one line of JSON), each frame after parsing a `{frame}`. "
                f"Types: {', '.join(EventType)}. A `: ping` comment every heartbeat; the stream ends after "
                "`case.erased`."
            ),
            "content": {
                "text/event-stream": {
                    "schema": {"type": "string"},
                    "itemSchema": {"$ref": f"#/components/schemas/{frame}"},
                }
            },
        },
        **declare_errors("CASE_NOT_FOUND", "VALIDATION_ERROR", "RATE_LIMITED", *access),
    }


def token_digest(stream_key: str) -> str:
    """Stream keys are session hashes already, or "open"; hashed again to a fixed width."""
    return hashlib.sha256(stream_key.encode()).hexdigest()


def resume_cursor(request: Request, after: int | None) -> int:
    """`Last-Event-ID` (sent by a reconnecting EventSource) wins over `?after=`."""
    header = request.headers.get("last-event-id", "").strip()
    if header:
        # Length first: int() of a 5 000-digit string raises (Python's digit limit) instead of answering.
        if (
            len(header) > MAX_EVENT_ID_DIGITS
            or not (header.isascii() and header.isdigit())
            or int(header) > MAX_EVENT_ID
        ):
            # The one 422 path (api/errors.py), so the body lists where the problem is, like any other 422.
            error = {"loc": ("header", "last-event-id"), "type": "value_error", "msg": "not an event id"}
            raise RequestValidationError([error])
        return int(header)
    return after or 0


async def sse_response(
    svc: Services, request: Request, principal: Principal, case_id: str, audience: Audience, after: int | None
) -> StreamingResponse:
    cursor = resume_cursor(request, after)
    await svc.bureau.case_access.require_case(case_id)
    key = principal.stream_key
    # Open local play has no sessions: every screen shares one budget, so it is larger.
    cap = svc.settings.max_sse_per_session * (1 if principal.session_hash else OPEN_MODE_STREAM_FACTOR)
    # Leased in the ledger, so the cap holds across every instance of the deployment.
    slot = await svc.ledger.limits.claim_stream_slot(token_digest(key), cap, svc.instance_id, STREAM_SLOT_LEASE_S)
    if slot is None:
        raise ApiError("RATE_LIMITED", "Too many live connections for this session.", {"Retry-After": "5"})
    released = False

    def release() -> None:
        # Runs from the stream's `finally` and again as the response's background task: a client that
        # disconnects before the first chunk never starts the generator, so `finally` alone could leak.
        # A release that fails leaves the lease to expire.
        nonlocal released
        if not released:
            released = True
            task = asyncio.ensure_future(
                svc.ledger.limits.release_stream_slot(token_digest(key), slot, svc.instance_id)
            )
            _releases.add(task)  # the loop keeps only weak references to tasks
            task.add_done_callback(_releases.discard)

    async def gone() -> bool:
        """Checked at each heartbeat: the client left, or its session was revoked (sign-out) or expired."""
        if await request.is_disconnected():
            return True
        try:
            return not await svc.access.still_signed_in(principal)
        except LedgerError:
            return False  # a transient ledger fault: keep the stream, check again at the next heartbeat

    async def frames() -> AsyncIterator[str]:
        try:
            async for frame in event_stream(
                svc.hub,
                case_id,
                audience,
                cursor,
                svc.settings.heartbeat_s,
                gone,
            ):
                yield frame
        finally:
            release()

    headers = {"Cache-Control": "no-store", "X-Accel-Buffering": "no"}
    return StreamingResponse(
        frames(), media_type="text/event-stream", headers=headers, background=BackgroundTask(release)
    )
