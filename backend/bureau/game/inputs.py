"""Operator text that the game stores: length-checked, normalised and screened, or rejected without echo.

Every text the game takes in passes here with the screening in force (`MemoryGateway.screening`, which is
`scope.content_policy.screen` under the configured patterns): whispers, questions, cross-examination
questions, promoted findings. There is no default screening, so no entry point can fall back to the
built-in patterns while the others use the configured ones.

The length and character rules are `scope/limits.py`'s, the ones the request schema states: over HTTP a text
that breaks them never gets here (422); this check is for every other way in."""

from __future__ import annotations

from bureau.game.errors import UnsafeInputError
from bureau.scope.content_policy import Screening, normalise_whisper
from bureau.scope.limits import draws_something


def checked_text(text: str, max_chars: int, *, screening: Screening, allowed: frozenset[str] = frozenset()) -> str:
    """The normalised text, or UnsafeInputError with reason codes only (never the text). `max_chars` counts
    the code points of the text as given (`scope/limits.py`). `allowed`: reason codes this entry point lets
    through (a question may quote an instruction; it is shown, never obeyed)."""
    content = normalise_whisper(text)
    if len(text) > max_chars or not draws_something(content):
        raise UnsafeInputError(["length"])
    if reasons := [reason for reason in screening.screen(content) if reason not in allowed]:
        raise UnsafeInputError(reasons)
    return content
