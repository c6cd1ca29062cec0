"""Request bodies: what the server accepts, said in the OpenAPI document. Unknown fields are rejected and
`role` can never be the board. Every text states its limit and its characters (`scope/limits.py`: at most so
many code points, no control character, at least one that draws something), and a preference whisper the
key it needs and the value that key takes, so a request that breaks one of these rules is a 422 with the
field's path; only what no schema can say (personal data, injection) is the game's to refuse (400
UNSAFE_INPUT). The game checks the same rules again for every text that does not come through HTTP.
Response bodies are in `api/responses.py`."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag, field_validator

from bureau.api.responses import Language, Role
from bureau.scope.limits import (
    CARD_ID_MAX_CHARS,
    CLAIM_MAX_CHARS,
    MAX_CARD_CHARS,
    ONE_LINE_PATTERN,
    QUESTION_MAX_CHARS,
    SCENARIO_ID_MAX_CHARS,
    SOURCE_MAX_CHARS,
    TEXT_PATTERN,
    words_pattern,
)
from bureau.scope.memory_policy import PREFERENCE_KEYS
from bureau.scope.vocabulary import MemoryType, PreferenceKey

_TEXT_RULE = "no control character, at least one character that draws something"


def text_field(max_chars: int, *, one_line: bool = False, description: str = "", **kwargs: Any) -> Any:
    """A text the operator writes: 1..`max_chars` code points as sent, with `scope/limits.py`'s characters."""
    rule = f"at most {max_chars} characters, {_TEXT_RULE}" + (", one line" if one_line else "")
    return Field(
        min_length=1,
        max_length=max_chars,
        pattern=ONE_LINE_PATTERN if one_line else TEXT_PATTERN,
        description=f"{description} ({rule})" if description else rule,
        **kwargs,
    )


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class CreateCase(_Body):
    scenario_id: str = Field(min_length=1, max_length=SCENARIO_ID_MAX_CHARS, pattern=r"^[a-z0-9-]+$")
    language: Language = "en"


class Versioned(_Body):
    expected_version: int | None = Field(default=None, ge=0)


# ----- whispers: one body per kind, so the schema says which key each type takes -------------------------
class _Whisper(Versioned):
    role: Role
    # Who told the role (e.g. "the night porter"): whispers that share a source count once towards a finding.
    source: str | None = text_field(SOURCE_MAX_CHARS, default=None, description="who told the role")


# Every memory type but a preference. The operator may write some of them; the memory policy refuses the
# others (403 MEMORY_TYPE_FORBIDDEN), which the schema leaves to it: that is who writes, not what is written.
CardType = Literal[
    MemoryType.LONG_TERM_KNOWLEDGE,
    MemoryType.OPERATIONAL_MEMORY,
    MemoryType.SESSION,
    MemoryType.TASK_STATE,
    MemoryType.AUDIT_RECORD,
]


class CardWhisper(_Whisper):
    """A whisper of any memory type but `user_preference` (the default: `long_term_knowledge`); no key."""

    text: str = text_field(MAX_CARD_CHARS)
    memory_type: CardType = MemoryType.LONG_TERM_KNOWLEDGE
    key: None = Field(default=None, description="only a `user_preference` takes a key")


class _PreferenceWhisper(_Whisper):
    memory_type: Literal[MemoryType.USER_PREFERENCE]


def preference_value(key: PreferenceKey) -> Any:
    """The text a preference key takes (`PREFERENCE_KEYS`): one of its words in any letter case, or any text
    within its limit."""
    rule = PREFERENCE_KEYS[key]
    if not rule.words:
        return text_field(rule.max_chars)
    return Field(
        min_length=1,
        max_length=rule.max_chars,
        pattern=words_pattern(rule.words),
        description=f"one of {', '.join(rule.words)} (any letter case)",
    )


class PreferredLanguageWhisper(_PreferenceWhisper):
    key: Literal[PreferenceKey.PREFERRED_LANGUAGE]
    text: str = preference_value(PreferenceKey.PREFERRED_LANGUAGE)


class AnswerStyleWhisper(_PreferenceWhisper):
    key: Literal[PreferenceKey.ANSWER_STYLE]
    text: str = preference_value(PreferenceKey.ANSWER_STYLE)


class DietaryPreferenceWhisper(_PreferenceWhisper):
    key: Literal[PreferenceKey.DIETARY_PREFERENCE]
    text: str = preference_value(PreferenceKey.DIETARY_PREFERENCE)


class MeetingTimeWhisper(_PreferenceWhisper):
    key: Literal[PreferenceKey.MEETING_TIME]
    text: str = preference_value(PreferenceKey.MEETING_TIME)


PreferenceWhisper = Annotated[
    PreferredLanguageWhisper | AnswerStyleWhisper | DietaryPreferenceWhisper | MeetingTimeWhisper,
    Field(discriminator="key"),
]
PREFERENCE_TAG, CARD_TAG = "user_preference", "other_types"


def _whisper_kind(body: Any) -> str:
    """Which body a whisper is, by its memory type (absent: the default, a card)."""
    memory_type = body.get("memory_type") if isinstance(body, dict) else getattr(body, "memory_type", None)
    return PREFERENCE_TAG if memory_type == MemoryType.USER_PREFERENCE else CARD_TAG


WhisperBody = Annotated[
    Annotated[PreferenceWhisper, Tag(PREFERENCE_TAG)] | Annotated[CardWhisper, Tag(CARD_TAG)],
    Discriminator(_whisper_kind),
]


# ----- findings, questions, publications -------------------------------------------------------------
class FindingClaimBody(_Body):
    """A one-sentence claim in the operator's own words (screened like a whisper)."""

    claim: str = text_field(CLAIM_MAX_CHARS, one_line=True)


class FindingEvaluationBody(_Body):
    """No claim: the server proposes claims from cards of different roles that match each other."""

    claim: str | None = text_field(CLAIM_MAX_CHARS, one_line=True, default=None)


class InterrogationBody(Versioned):
    role: Role
    question: str = text_field(QUESTION_MAX_CHARS)


class UnfilteredActBody(InterrogationBody):
    """The presenter act: an interrogation's question, run without the space filter and the re-check."""


class CrossExaminationBody(Versioned):
    roles: list[Role] = Field(min_length=2, max_length=3, json_schema_extra={"uniqueItems": True})
    question: str = text_field(QUESTION_MAX_CHARS)

    @field_validator("roles")
    @classmethod
    def _distinct(cls, roles: list[Role]) -> list[Role]:
        if len(set(roles)) != len(roles):
            raise ValueError("each role at most once")
        return roles


class PublicationBody(Versioned):
    role: Role
    card_id: str = Field(min_length=1, max_length=CARD_ID_MAX_CHARS)


class ResetBody(Versioned):
    pass
