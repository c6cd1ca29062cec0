"""One error shape for every failure: {"detail": {"code", "message"}}. Never echoes rejected input."""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Match

from bureau.game import errors as game
from bureau.ledger.repository import LedgerError
from bureau.memory.types import MemoryUnavailableError, WorkerIdLostError
from bureau.scope import memory_policy as policy

log = logging.getLogger("bureau.api")

_GAME_STATUS: dict[type[game.GameError], tuple[int, str]] = {
    game.CaseNotFoundError: (404, "No such case."),
    game.CardNotFoundError: (404, "No such card in this role's private memory."),
    game.ScenarioNotFoundError: (404, "No such scenario in that language."),
    game.UnsafeInputError: (
        400,
        "The text was rejected by the input policy (length, personal data or injection).",
    ),
    game.VersionConflictError: (409, "The case changed since you last saw it."),
    game.PublicationPendingError: (409, "Another publication of this card is in progress; retry shortly."),
}


MAX_ERROR_FIELDS = 20
_METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE")
_HTTP_CODES = {
    404: ("NOT_FOUND", "No such route."),
    405: ("METHOD_NOT_ALLOWED", "This route does not accept that method."),
}

# Memory-policy rejections (scope/memory_policy.py): the code names the rule, the message never the text.
_POLICY_STATUS: dict[str, tuple[int, str]] = {
    policy.MEMORY_TYPE_FORBIDDEN: (403, "This memory type may not be written by this creator on this path."),
    policy.PREFERENCE_KEY_UNKNOWN: (400, "Preferences need a key from the allow-list (and only preferences take one)."),
    policy.PREFERENCE_VALUE_INVALID: (400, "The value does not fit the schema of this preference key."),
    policy.UNSAFE_INPUT: _GAME_STATUS[game.UnsafeInputError],
}


class ApiError(Exception):
    """An HTTP error raised by the API layer itself (access, CSRF, rate limits)."""

    def __init__(self, status: int, code: str, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(code)
        self.status, self.code, self.message, self.headers = status, code, message, headers or {}


def error_body(code: str, message: str, **extra: Any) -> dict[str, Any]:
    return {"detail": {"code": code, "message": message, **extra}}


def _game_error(_: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, game.GameError)
    status, message = _GAME_STATUS.get(type(exc), (400, "Request rejected."))
    extra: dict[str, Any] = {}
    headers: dict[str, str] = {}
    if isinstance(exc, game.VersionConflictError):
        extra["snapshot"] = exc.snapshot
    if isinstance(exc, game.PublicationPendingError):
        headers["Retry-After"] = str(exc.retry_after_s)
    return JSONResponse(error_body(exc.code, message, **extra), status_code=status, headers=headers)


def _policy_error(_: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, policy.MemoryPolicyError)
    status, message = _POLICY_STATUS.get(exc.code, (400, "Request rejected."))
    return JSONResponse(error_body(exc.code, message), status_code=status)


def _api_error(_: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, ApiError)
    return JSONResponse(error_body(exc.code, exc.message), status_code=exc.status, headers=exc.headers)


def _storage_error(request: Request, exc: Exception) -> JSONResponse:
    log.error("storage fault on %s %s: %s", request.method, request.url.path, type(exc).__name__)
    return JSONResponse(
        error_body("MEMORY_UNAVAILABLE", "The memory store is unavailable; nothing was changed. Retry shortly."),
        status_code=503,
        headers={"Retry-After": "2"},
    )


def _worker_id_lost(request: Request, exc: Exception) -> JSONResponse:
    log.error("refused %s %s: this instance lost its worker id lease", request.method, request.url.path)
    return JSONResponse(
        error_body("WORKER_ID_LOST", "This instance can no longer write safely; nothing was changed. Retry."),
        status_code=503,
        headers={"Retry-After": "2"},
    )


def _validation_error(_: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    # Locations and error types only: pydantic's default body would echo the rejected input back. At most
    # MAX_ERROR_FIELDS of them, so a body with 100 000 bad keys cannot make a megabyte-sized answer.
    errors = exc.errors()
    fields = [{"loc": _location(e), "type": e.get("type")} for e in errors[:MAX_ERROR_FIELDS]]
    return _malformed(fields, truncated=len(errors) > MAX_ERROR_FIELDS)


def _malformed(fields: list[dict[str, Any]], *, truncated: bool = False) -> JSONResponse:
    extra: dict[str, Any] = {"fields": fields}
    if truncated:
        extra["truncated"] = True
    return JSONResponse(
        error_body("VALIDATION_ERROR", "The request is malformed or has invalid fields.", **extra), status_code=422
    )


def _location(error: dict[str, Any]) -> list[str]:
    """Where the error is. An unknown field's own name is input too, so it is not echoed."""
    loc = [str(part) for part in error.get("loc", ())]
    if error.get("type") == "extra_forbidden" and loc:
        loc[-1] = "<unknown field>"
    return loc


def allowed_methods(request: Request) -> list[str]:
    """Every method an API route accepts at this path. Each FastAPI endpoint is its own route, and
    Starlette's own 405 names only the methods of the first one that matched. The web app's catch-all
    (outside the schema) is no API route."""
    routes = [route for route in request.app.router.routes if getattr(route, "include_in_schema", True)]
    return [
        method
        for method in _METHODS
        if any(route.matches({**request.scope, "method": method})[0] is Match.FULL for route in routes)
    ]


def _http_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StarletteHTTPException)
    if exc.status_code == 400:  # the body could not be parsed at all (deep nesting, bad UTF-8, huge numbers)
        return _malformed([{"loc": ["body"], "type": "json_invalid"}])
    code, message = _HTTP_CODES.get(exc.status_code, ("HTTP_ERROR", "Request failed."))
    headers = dict(exc.headers or {})
    if exc.status_code == 405:
        headers["Allow"] = ", ".join(allowed_methods(request))
    return JSONResponse(error_body(code, message), status_code=exc.status_code, headers=headers)


def _unexpected(request: Request, exc: Exception) -> JSONResponse:
    log.exception("unexpected error on %s %s", request.method, request.url.path, exc_info=exc)
    return JSONResponse(error_body("INTERNAL_ERROR", "Unexpected server error."), status_code=500)


def install_error_handlers(app: FastAPI) -> None:
    app.add_exception_handler(game.GameError, _game_error)
    app.add_exception_handler(policy.MemoryPolicyError, _policy_error)
    app.add_exception_handler(ApiError, _api_error)
    for storage_error in (MemoryUnavailableError, LedgerError):
        app.add_exception_handler(storage_error, _storage_error)
    app.add_exception_handler(WorkerIdLostError, _worker_id_lost)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(StarletteHTTPException, _http_error)
    app.add_exception_handler(Exception, _unexpected)
