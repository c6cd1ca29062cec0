"""One error shape for every failure: {"detail": {"code", "message"}}. Never echoes rejected input.

`ERRORS` is the one table of codes and statuses: the handlers, `ApiError`, the transport guard and the
OpenAPI declarations of every route (`declare_errors`) read it, so a status is written down once.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Match

from bureau.api.responses import ConflictBody, ErrorBody, ValidationErrorBody
from bureau.game import errors as game
from bureau.ledger.repository import LedgerError
from bureau.ledger.transactions import LedgerFault
from bureau.memory.types import CaseErasedError, MemoryUnavailableError, WorkerIdLostError
from bureau.scope import memory_policy as policy
from bureau.vault import VaultUnavailableError

log = logging.getLogger("bureau.api")


@dataclass(frozen=True, slots=True)
class ErrorSpec:
    status: int
    message: str  # the default message; never echoes input


ERRORS: dict[str, ErrorSpec] = {
    "UNSAFE_INPUT": ErrorSpec(400, "The text was rejected by the input policy (length, personal data or injection)."),
    policy.PREFERENCE_KEY_UNKNOWN: ErrorSpec(
        400, "Preferences need a key from the allow-list (and only preferences take one)."
    ),
    policy.PREFERENCE_VALUE_INVALID: ErrorSpec(400, "The value does not fit the schema of this preference key."),
    "HOST_NOT_ALLOWED": ErrorSpec(400, "Open play answers only to this machine's own host names."),
    "ACCESS_REQUIRED": ErrorSpec(401, "Sign in with a passcode first."),
    "ROLE_FORBIDDEN": ErrorSpec(403, "This session may not use this route."),
    "CSRF_REQUIRED": ErrorSpec(403, "A valid CSRF token is required for this request."),
    "PRESENTER_ACTS_OFF": ErrorSpec(
        403, "Presenter acts are off on this server (BUREAU_PRESENTER_ACTS=1 turns them on; never in production)."
    ),
    policy.MEMORY_TYPE_FORBIDDEN: ErrorSpec(403, "This memory type may not be written by this creator on this path."),
    "NOT_FOUND": ErrorSpec(404, "No such API route."),
    "CASE_NOT_FOUND": ErrorSpec(404, "No such case."),
    "CARD_NOT_FOUND": ErrorSpec(404, "No such card in this role's private memory."),
    "SCENARIO_NOT_FOUND": ErrorSpec(404, "No such scenario in that language."),
    "METHOD_NOT_ALLOWED": ErrorSpec(405, "This route does not accept that method."),
    "VERSION_CONFLICT": ErrorSpec(409, "The case changed since you last saw it."),
    "PUBLICATION_PENDING": ErrorSpec(409, "Another publication of this card is in progress; retry shortly."),
    "FINDING_NOT_QUALIFIED": ErrorSpec(
        409, "The claim lacks independent support that survives leave-one-out; evaluate it to see why."
    ),
    "FINDING_PENDING": ErrorSpec(409, "Another promotion of this claim is in progress; retry shortly."),
    "PAYLOAD_TOO_LARGE": ErrorSpec(413, "The request body is too large."),
    "UNSUPPORTED_MEDIA_TYPE": ErrorSpec(415, "Request bodies must be application/json."),
    "VALIDATION_ERROR": ErrorSpec(422, "The request is malformed or has invalid fields."),
    "RATE_LIMITED": ErrorSpec(429, "Too many requests; retry later."),
    "INTERNAL_ERROR": ErrorSpec(500, "Unexpected server error."),
    "MEMORY_UNAVAILABLE": ErrorSpec(503, "The memory store is unavailable; nothing was changed. Retry shortly."),
    "WORKER_ID_LOST": ErrorSpec(503, "This instance can no longer write safely; nothing was changed. Retry."),
    "STARTING": ErrorSpec(503, "The service is starting; retry shortly."),
    "LEDGER_BUSY": ErrorSpec(503, "The ledger is locked by another writer; nothing was changed. Retry shortly."),
    "LEDGER_READ_ONLY": ErrorSpec(
        503, "The ledger refuses writes (a read-only file or filesystem, or a failing disk); nothing was changed."
    ),
    "STORAGE_FULL": ErrorSpec(503, "The ledger's disk is full; nothing was changed."),
    "VAULT_UNAVAILABLE": ErrorSpec(503, "The vault of keys did not answer; nothing was changed. Retry shortly."),
}
# What a ledger fault is called on the wire; any other storage fault is MEMORY_UNAVAILABLE.
_LEDGER_FAULT_CODES = {
    LedgerFault.BUSY: "LEDGER_BUSY",
    LedgerFault.READ_ONLY: "LEDGER_READ_ONLY",
    LedgerFault.FULL: "STORAGE_FULL",
}
MAX_ERROR_FIELDS = 20
RETRY_STORAGE = {"Retry-After": "2"}
_METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE")
_HTTP_CODES = {404: "NOT_FOUND", 405: "METHOD_NOT_ALLOWED"}


class ApiError(Exception):
    """An HTTP error raised by the API layer itself (access, CSRF, rate limits); its status is the table's."""

    def __init__(self, code: str, message: str | None = None, headers: dict[str, str] | None = None) -> None:
        super().__init__(code)
        self.status = ERRORS[code].status
        self.code, self.message, self.headers = code, message or ERRORS[code].message, headers or {}


def error_body(code: str, message: str | None = None, **extra: Any) -> dict[str, Any]:
    return {"detail": {"code": code, "message": message or ERRORS[code].message, **extra}}


def error_response(
    code: str, message: str | None = None, headers: dict[str, str] | None = None, **extra: Any
) -> JSONResponse:
    return JSONResponse(error_body(code, message, **extra), status_code=ERRORS[code].status, headers=headers)


def _game_error(_: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, game.GameError)
    extra: dict[str, Any] = {}
    headers: dict[str, str] = {}
    if isinstance(exc, game.VersionConflictError):
        extra["snapshot"] = exc.snapshot.model_dump(mode="json", exclude_unset=True)
    if isinstance(exc, game.PublicationPendingError | game.FindingPendingError):
        headers["Retry-After"] = str(exc.retry_after_s)
    return error_response(exc.code, headers=headers, **extra)


def _policy_error(_: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, policy.MemoryPolicyError)
    return error_response(exc.code)


def _api_error(_: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, ApiError)
    return error_response(exc.code, exc.message, exc.headers)


def _storage_error(request: Request, exc: Exception) -> JSONResponse:
    code = "MEMORY_UNAVAILABLE"
    if isinstance(exc, LedgerError):
        code = _LEDGER_FAULT_CODES.get(exc.fault, code)
    if isinstance(exc, VaultUnavailableError):
        code = "VAULT_UNAVAILABLE"
    log.error("storage fault on %s %s: %s (%s)", request.method, request.url.path, type(exc).__name__, code)
    return error_response(code, headers=RETRY_STORAGE)


def _case_erased(_: Request, exc: Exception) -> JSONResponse:
    """A command that raced the erase of its case: the store is fine, the case is gone (nothing was written)."""
    assert isinstance(exc, CaseErasedError)
    return error_response("CASE_NOT_FOUND")


def _worker_id_lost(request: Request, exc: Exception) -> JSONResponse:
    log.error("refused %s %s: this instance lost its worker id lease", request.method, request.url.path)
    return error_response("WORKER_ID_LOST", headers=RETRY_STORAGE)


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
    return error_response("VALIDATION_ERROR", **extra)


_UNION_TAG_ERRORS = ("union_tag_not_found", "union_tag_invalid")


def _location(error: dict[str, Any]) -> list[str]:
    """Where the error is. An unknown field's own name is input too, so it is not echoed. A body whose
    variant is chosen by a field (a preference whisper's `key`) names that field when it is missing or
    not one of the variants' values."""
    loc = [str(part) for part in error.get("loc", ())]
    if error.get("type") == "extra_forbidden" and loc:
        loc[-1] = "<unknown field>"
    discriminator = str((error.get("ctx") or {}).get("discriminator", ""))
    if error.get("type") in _UNION_TAG_ERRORS and discriminator.startswith("'") and discriminator.endswith("'"):
        loc.append(discriminator.strip("'"))  # the field's name, from the schema (never the input)
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
    code = _HTTP_CODES.get(exc.status_code)
    if code is None:
        return JSONResponse(error_body("HTTP_ERROR", "Request failed."), status_code=exc.status_code)
    headers = dict(exc.headers or {})
    if exc.status_code == 405:
        headers["Allow"] = ", ".join(allowed_methods(request))
    return error_response(code, "No such route." if code == "NOT_FOUND" else None, headers)


def _unexpected(request: Request, exc: Exception) -> JSONResponse:
    log.exception("unexpected error on %s %s", request.method, request.url.path, exc_info=exc)
    return error_response("INTERNAL_ERROR")


def install_error_handlers(app: FastAPI) -> None:
    app.add_exception_handler(game.GameError, _game_error)
    app.add_exception_handler(policy.MemoryPolicyError, _policy_error)
    app.add_exception_handler(ApiError, _api_error)
    for storage_error in (MemoryUnavailableError, LedgerError, VaultUnavailableError):
        app.add_exception_handler(storage_error, _storage_error)
    app.add_exception_handler(WorkerIdLostError, _worker_id_lost)
    app.add_exception_handler(CaseErasedError, _case_erased)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(StarletteHTTPException, _http_error)
    app.add_exception_handler(Exception, _unexpected)


# ----- declared errors ---------------------------------------------------------------------------------
# Any request can meet ALWAYS (a foreign Host in open play, a crash, a server still starting); every write the
# transport guard's refusals; every signed-in route its access checks (the session is looked up in the ledger,
# which can fail).

ALWAYS = ("HOST_NOT_ALLOWED", "INTERNAL_ERROR", "STARTING")
WRITES = ("CSRF_REQUIRED", "PAYLOAD_TOO_LARGE", "UNSUPPORTED_MEDIA_TYPE")
STORAGE_FAULTS = ("MEMORY_UNAVAILABLE", "VAULT_UNAVAILABLE", *_LEDGER_FAULT_CODES.values())  # a store failed
STAGE_ACCESS = ("ACCESS_REQUIRED", *STORAGE_FAULTS)
OPERATOR_ACCESS = (*STAGE_ACCESS, "ROLE_FORBIDDEN")
_BODY_BY_STATUS: dict[int, type[BaseModel]] = {409: ConflictBody, 422: ValidationErrorBody}


def declare_errors(*codes: str) -> dict[int | str, dict[str, Any]]:
    """OpenAPI `responses` for a route: each status it can return, with the real body schema and its codes
    (`ALWAYS` is added to every route)."""
    by_status: dict[int, list[str]] = {}
    for code in dict.fromkeys((*codes, *ALWAYS)):
        by_status.setdefault(ERRORS[code].status, []).append(code)
    return {
        status: {"model": _BODY_BY_STATUS.get(status, ErrorBody), "description": ", ".join(found)}
        for status, found in sorted(by_status.items())
    }
