"""Request bodies. Unknown fields are rejected; every string has a limit; `role` can never be the board."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator

from bureau.game.scenario_schema import Language
from bureau.scope.keys import Role
from bureau.scope.vocabulary import MemoryType


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class CreateCase(_Body):
    scenario_id: str = Field(min_length=1, max_length=64, pattern=r"^[a-z0-9-]+$")
    language: Language = "en"


class Versioned(_Body):
    expected_version: int | None = Field(default=None, ge=0)


class WhisperBody(Versioned):
    role: Role
    # The game's own rule is 1..280 characters after trimming (400 UNSAFE_INPUT); this is a transport cap.
    text: str = Field(max_length=2000)
    # Any type may be named; the memory policy decides (403 MEMORY_TYPE_FORBIDDEN, 400 PREFERENCE_KEY_UNKNOWN).
    memory_type: MemoryType = MemoryType.LONG_TERM_KNOWLEDGE
    key: str | None = Field(default=None, min_length=1, max_length=64)


class InterrogationBody(Versioned):
    role: Role
    question: str = Field(max_length=2000)


class CrossExaminationBody(Versioned):
    roles: list[Role] = Field(min_length=2, max_length=3, json_schema_extra={"uniqueItems": True})
    question: str = Field(max_length=2000)

    @field_validator("roles")
    @classmethod
    def _distinct(cls, roles: list[Role]) -> list[Role]:
        if len(set(roles)) != len(roles):
            raise ValueError("each role at most once")
        return roles


class PublicationBody(Versioned):
    role: Role
    card_id: str = Field(min_length=1, max_length=64)


class ResetBody(Versioned):
    pass


class PolicyDecisionView(BaseModel):
    """One row of the policy audit trail: reason codes and counts, never memory content."""

    id: int
    created_at: str
    action: str
    code: str
    detail: str
    memory_type: str
    creator: str
    space: str
    count: int


class PolicyDecisionPage(BaseModel):
    decisions: list[PolicyDecisionView]
    next_after: int | None  # pass as `after` for the next page; null when this page is the last


class MemoryPolicyView(BaseModel):
    """What the operator may write (the console's whisper box offers exactly this)."""

    writable_types: list[MemoryType]
    default_type: MemoryType
    preference_keys: list[str]
