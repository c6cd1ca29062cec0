"""Access: who is asking (operator, stage, or nobody), CSRF on writes, and passcode throttling.

With no passcodes configured the server runs open for local play (and `bureau serve` binds loopback only).
With passcodes, sessions are server-side and revocable; only SHA-256 hashes of tokens are stored.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time
from collections import defaultdict, deque
from dataclasses import dataclass

from fastapi import Request, Response

from bureau.api.errors import ApiError
from bureau.config import Settings
from bureau.ledger.repository import Ledger, utcnow
from bureau.scope.audience import Audience

SESSION_COOKIE = "bureau_session"
CSRF_COOKIE = "bureau_csrf"
CSRF_HEADER = "X-CSRF-Token"
PASSCODE_HEADER = "X-Bureau-Passcode"
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class Principal:
    audience: Audience | None  # None: anonymous
    session_hash: str | None  # None in open mode
    csrf_hash: str | None

    @property
    def stream_key(self) -> str:
        return self.session_hash or "open"


class PasscodeThrottle:
    """At most `limit` failed attempts per client in `window_s`; then 429 with Retry-After."""

    def __init__(self, limit: int = 5, window_s: float = 300.0) -> None:
        self.limit, self.window_s = limit, window_s
        self._failures: dict[str, deque[float]] = defaultdict(deque)

    def retry_after(self, client: str) -> int:
        now = time.monotonic()
        failures = self._failures[client]
        while failures and failures[0] <= now - self.window_s:
            failures.popleft()
        if len(failures) < self.limit:
            return 0
        return max(1, int(failures[0] + self.window_s - now) + 1)

    def fail(self, client: str) -> None:
        self._failures[client].append(time.monotonic())

    def succeed(self, client: str) -> None:
        self._failures.pop(client, None)


class AccessControl:
    def __init__(self, settings: Settings, ledger: Ledger) -> None:
        self.settings = settings
        self.ledger = ledger
        self.throttle = PasscodeThrottle()

    @property
    def open_mode(self) -> bool:
        return not self.settings.passcodes_enabled

    async def principal(self, request: Request) -> Principal:
        if self.open_mode:
            return Principal(Audience.OPERATOR, None, None)
        token = request.cookies.get(SESSION_COOKIE)
        if not token or len(token) > 128:
            return Principal(None, None, None)
        record = await self.ledger.get_session(token_hash(token))
        if record is None or record.revoked or record.expires_at <= utcnow():
            return Principal(None, None, None)
        return Principal(Audience(record.audience), record.token_hash, record.csrf_hash)

    async def still_signed_in(self, principal: Principal) -> bool:
        """For long-lived streams: a revoked or expired session's streams end at their next heartbeat."""
        if self.open_mode or principal.session_hash is None:
            return True
        record = await self.ledger.get_session(principal.session_hash)
        return record is not None and not record.revoked and record.expires_at > utcnow()

    @staticmethod
    def require(principal: Principal, needed: Audience) -> None:
        if principal.audience is None:
            raise ApiError(401, "ACCESS_REQUIRED", "Sign in with a passcode first.")
        if not principal.audience.covers(needed):
            raise ApiError(403, "ROLE_FORBIDDEN", "This session may not use this route.")

    def check_csrf(self, request: Request, principal: Principal) -> None:
        if self.open_mode or request.method in SAFE_METHODS:
            return
        sent = request.headers.get(CSRF_HEADER, "")
        if not (principal.csrf_hash and sent and hmac.compare_digest(token_hash(sent), principal.csrf_hash)):
            raise ApiError(403, "CSRF_REQUIRED", "A valid CSRF token is required for this request.")

    def _match_passcode(self, offered: str) -> Audience | None:
        offered_bytes = offered.encode()
        matches = {
            Audience.OPERATOR: self.settings.operator_passcode.get_secret_value(),
            Audience.STAGE: self.settings.stage_passcode.get_secret_value(),
        }
        found = None
        for audience, expected in matches.items():
            # Compare against both, always, in constant time per comparison.
            if expected and hmac.compare_digest(offered_bytes, expected.encode()):
                found = found or audience
        return found

    async def sign_in(self, request: Request, response: Response) -> str | None:
        """Returns the CSRF token of the new session (None in open mode)."""
        if self.open_mode:
            return None
        client = request.client.host if request.client else "unknown"
        wait = self.throttle.retry_after(client)
        if wait:
            raise ApiError(429, "RATE_LIMITED", "Too many failed attempts.", {"Retry-After": str(wait)})
        audience = self._match_passcode(request.headers.get(PASSCODE_HEADER, "")[:256])
        if audience is None:
            self.throttle.fail(client)
            raise ApiError(401, "ACCESS_REQUIRED", "Wrong passcode.")
        self.throttle.succeed(client)
        session_token, csrf_token = secrets.token_urlsafe(32), secrets.token_urlsafe(32)
        ttl = self.settings.session_ttl_s
        await self.ledger.create_session(token_hash(session_token), token_hash(csrf_token), audience.value, ttl)
        secure = self.settings.is_production
        response.set_cookie(
            SESSION_COOKIE,
            session_token,
            max_age=ttl,
            httponly=True,
            samesite="strict",
            secure=secure,
            path="/",
        )
        # Double-submit: readable by the page's script, useless to another site (SameSite=Strict).
        response.set_cookie(
            CSRF_COOKIE, csrf_token, max_age=ttl, httponly=False, samesite="strict", secure=secure, path="/"
        )
        response.headers[CSRF_HEADER] = csrf_token
        return csrf_token

    async def sign_out(self, principal: Principal, response: Response) -> None:
        if principal.session_hash:
            await self.ledger.revoke_session(principal.session_hash)
        response.delete_cookie(SESSION_COOKIE, path="/")
        response.delete_cookie(CSRF_COOKIE, path="/")

    def csrf_for_page(self, request: Request, principal: Principal) -> str | None:
        """The CSRF token back to a reloaded page, only if it belongs to this session."""
        sent = request.cookies.get(CSRF_COOKIE, "")
        if principal.csrf_hash and sent and hmac.compare_digest(token_hash(sent), principal.csrf_hash):
            return sent
        return None
