"""Operator text that the game stores: normalised, length-checked and screened, or rejected without echo.

Every text the game takes in passes here with the screening in force (`MemoryGateway.screening`, which is
`scope.content_policy.screen` under the configured patterns): whispers, questions, cross-examination
questions, promoted findings. There is no default screening, so no entry point can fall back to the
built-in patterns while the others use the configured ones."""

from __future__ import annotations

import unicodedata

from bureau.game.errors import UnsafeInputError
from bureau.scope.content_policy import Screening, normalise_whisper


def checked_text(text: str, max_chars: int, *, screening: Screening, allowed: frozenset[str] = frozenset()) -> str:
    """The normalised text, or UnsafeInputError with reason codes only (never the text). `allowed`: reason
    codes this entry point lets through (a question may quote an instruction; it is shown, never obeyed)."""
    content = normalise_whisper(text)
    if not 1 <= len(content) <= max_chars or not any(map(_visible, content)):
        raise UnsafeInputError(["length"])
    if reasons := [reason for reason in screening.screen(content) if reason not in allowed]:
        raise UnsafeInputError(reasons)
    return content


# Letters by category that draw nothing: Braille blank, Hangul fillers, Mongolian vowel separator.
_BLANK_LETTERS = frozenset("\u2800\u115f\u1160\u3164\uffa0\u180e\u17b4\u17b5")


def _visible(char: str) -> bool:
    """Draws something: not a space, separator, control, format or unassigned code point, nor a blank letter."""
    return unicodedata.category(char)[0] not in "ZC" and char not in _BLANK_LETTERS
