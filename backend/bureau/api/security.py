"""Access: who is asking (operator, stage, or nobody), CSRF on writes, and passcode throttling.

With no passcodes configured the server runs open for local play (and `bureau serve` binds loopback only).
With passcodes, sessions are server-side and revocable; only SHA-256 hashes of tokens are stored.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass

from fastapi import Request, Response

from bureau.api.errors import ApiError
from bureau.api.session_checks import SessionChecks
from bureau.config import Settings
from bureau.ledger.repository import LimitRepository, SessionRepository, utcnow
from bureau.scope.audience import Audience

SESSION_COOKIE = "bureau_session"
CSRF_COOKIE = "bureau_csrf"
CSRF_HEADER = "X-CSRF-Token"
PASSCODE_HEADER = "X-Bureau-Passcode"
PASSCODE_MAX_CHARS = 256  # only this much of the header is compared
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
PRINCIPAL_STATE = "principal"  # request.state key: resolved once, by the sign-in gate or the dependency


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
    """Failed sign-ins per client and per screen (audience): at most `limit` in `window_s`, then 429.

    A wrong passcode could have been aimed at either screen, so it counts against both. A success opens
    one screen and clears only that screen's count: holding the stage passcode gives no fresh guesses at
    the operator passcode. Counted in the ledger, so every instance of a deployment shares them (N replicas
    do not allow N times the guesses).
    """

    def __init__(self, limits: LimitRepository, limit: int = 5, window_s: float = 300.0) -> None:
        self.limits = limits
        self.limit, self.window_s = limit, window_s

    @staticmethod
    def _key(client: str, audience: Audience) -> str:
        return f"{client}\n{audience.value}"

    async def retry_after(self, client: str, audience: Audience) -> int:
        count, oldest = await self.limits.recent_failures(self._key(client, audience), self.window_s)
        if count < self.limit or oldest is None:
            return 0
        remaining = (oldest - utcnow()).total_seconds() + self.window_s
        return max(1, int(remaining) + 1)

    async def retry_after_any(self, client: str) -> int:
        return max([await self.retry_after(client, audience) for audience in Audience])

    async def fail(self, client: str) -> None:
        for audience in Audience:
            await self.limits.record_failure(self._key(client, audience))

    async def succeed(self, client: str, audience: Audience) -> None:
        await self.limits.clear_failures(self._key(client, audience))


class AccessControl:
    def __init__(self, settings: Settings, sessions: SessionRepository, limits: LimitRepository) -> None:
        self.settings = settings
        self.sessions = sessions
        self.throttle = PasscodeThrottle(limits)
        self._session_checks = SessionChecks(sessions)  # streams' heartbeat checks, many per ledger read

    @property
    def open_mode(self) -> bool:
        return not self.settings.passcodes_enabled

    async def principal(self, request: Request) -> Principal:
        cached = getattr(request.state, PRINCIPAL_STATE, None)
        if isinstance(cached, Principal):
            return cached
        if self.open_mode:
            return Principal(Audience.OPERATOR, None, None)
        token = request.cookies.get(SESSION_COOKIE)
        if not token or len(token) > 128:
            return Principal(None, None, None)
        record = await self.sessions.get_session(token_hash(token))
        if record is None or not record.active:
            return Principal(None, None, None)
        audience = Audience(record.audience)
        if not hmac.compare_digest(record.credential_tag or "", self._credential_tag(token, audience)):
            return Principal(None, None, None)  # opened with a passcode that has changed since
        return Principal(audience, record.token_hash, record.csrf_hash)

    def _passcode(self, audience: Audience) -> str:
        secret = self.settings.operator_passcode if audience is Audience.OPERATOR else self.settings.stage_passcode
        return secret.get_secret_value()

    def _credential_tag(self, session_token: str, audience: Audience) -> str:
        """Ties a session to the passcode that opened it. Keyed by the session token (only its hash is
        stored), so a leaked ledger gives nothing to brute-force the passcode with."""
        return hashlib.sha256(f"{session_token}\n{self._passcode(audience)}".encode()).hexdigest()

    async def still_signed_in(self, principal: Principal) -> bool:
        """For long-lived streams: a revoked or expired session's streams end at their next heartbeat."""
        if self.open_mode or principal.session_hash is None:
            return True
        return await self._session_checks.signed_in(principal.session_hash)

    @staticmethod
    def require(principal: Principal, needed: Audience) -> None:
        if principal.audience is None:
            raise ApiError("ACCESS_REQUIRED", "Sign in with a passcode first.")
        if not principal.audience.covers(needed):
            raise ApiError("ROLE_FORBIDDEN", "This session may not use this route.")

    def check_csrf(self, request: Request, principal: Principal) -> None:
        if self.open_mode or request.method in SAFE_METHODS:
            return
        if not _csrf_matches(principal, request.headers.get(CSRF_HEADER, "")):
            raise ApiError("CSRF_REQUIRED", "A valid CSRF token is required for this request.")

    def _match_passcode(self, offered: str) -> Audience | None:
        offered_bytes = offered.encode()
        found = None
        for audience in (Audience.OPERATOR, Audience.STAGE):
            expected = self._passcode(audience)
            # Compare against both, always, in constant time per comparison.
            if expected and hmac.compare_digest(offered_bytes, expected.encode()):
                found = found or audience
        return found

    async def sign_in(self, request: Request, response: Response) -> None:
        """A new session: an HttpOnly cookie, and a CSRF token (cookie + response header)."""
        if self.open_mode:
            return
        client = request.client.host if request.client else "unknown"
        audience = self._match_passcode(request.headers.get(PASSCODE_HEADER, "")[:PASSCODE_MAX_CHARS])
        # A wrong passcode is refused while any screen is throttled, the right one while its own screen is:
        # while the operator screen is throttled, a wrong guess and the operator passcode look alike (429).
        if audience is None:
            wait = await self.throttle.retry_after_any(client)
        else:
            wait = await self.throttle.retry_after(client, audience)
        if wait:
            raise ApiError("RATE_LIMITED", "Too many failed attempts.", {"Retry-After": str(wait)})
        if audience is None:
            await self.throttle.fail(client)
            raise ApiError("ACCESS_REQUIRED", "Wrong passcode.")
        await self.throttle.succeed(client, audience)
        session_token, csrf_token = secrets.token_urlsafe(32), secrets.token_urlsafe(32)
        ttl = self.settings.session_ttl_s
        await self.sessions.create_session(
            token_hash(session_token),
            token_hash(csrf_token),
            audience.value,
            self._credential_tag(session_token, audience),
            ttl,
        )
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

    async def sign_out(self, principal: Principal, response: Response) -> None:
        if principal.session_hash:
            await self.sessions.revoke_session(principal.session_hash)
        response.delete_cookie(SESSION_COOKIE, path="/")
        response.delete_cookie(CSRF_COOKIE, path="/")

    def csrf_for_page(self, request: Request, principal: Principal) -> str | None:
        """The CSRF token back to a reloaded page, only if it belongs to this session."""
        sent = request.cookies.get(CSRF_COOKIE, "")
        return sent if _csrf_matches(principal, sent) else None


def _csrf_matches(principal: Principal, sent: str) -> bool:
    return bool(principal.csrf_hash and sent and hmac.compare_digest(token_hash(sent), principal.csrf_hash))
