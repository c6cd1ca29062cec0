"""Operator text that the game stores: normalised, length-checked and screened, or rejected without echo."""

from __future__ import annotations

from bureau.game.errors import UnsafeInputError
from bureau.scope.content_policy import BUILT_IN, ContentPolicy, normalise_whisper


def checked_text(
    text: str, max_chars: int, *, screening: ContentPolicy = BUILT_IN, allowed: frozenset[str] = frozenset()
) -> str:
    """The normalised text, or UnsafeInputError with reason codes only (never the text)."""
    content = normalise_whisper(text)
    if not 1 <= len(content) <= max_chars:
        raise UnsafeInputError(["length"])
    if reasons := [reason for reason in screening.screen(content) if reason not in allowed]:
        raise UnsafeInputError(reasons)
    return content
