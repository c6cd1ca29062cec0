"""Request bodies. Unknown fields are rejected; every string has a limit; `role` can never be the board.
Response bodies are in `api/responses.py`."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator

from bureau.api.responses import Language, Role
from bureau.game.findings import CLAIM_MAX_CHARS
from bureau.game.interrogation import QUESTION_MAX_CHARS
from bureau.game.scenario_schema import MAX_CARD_CHARS
from bureau.game.service import SOURCE_MAX_CHARS
from bureau.scope.vocabulary import MemoryType

# The game's own length rule for a text field, in characters after normalising (longer: 400 UNSAFE_INPUT);
# `max_length` is only the transport cap. The web reads the rule from the OpenAPI document (`make client`).
GAME_MAX_CHARS = "x-bureau-max-chars"
# A whisper's text and a question hold at least one character that is not whitespace: an empty or blank one
# is malformed (422), said in the schema. What the game's normalising and screening refuse stays 400.
NOT_BLANK = r"\S"


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
    text: str = Field(
        min_length=1, max_length=2000, pattern=NOT_BLANK, json_schema_extra={GAME_MAX_CHARS: MAX_CARD_CHARS}
    )
    # Any type may be named; the memory policy decides (403 MEMORY_TYPE_FORBIDDEN, 400 PREFERENCE_KEY_UNKNOWN).
    memory_type: MemoryType = MemoryType.LONG_TERM_KNOWLEDGE
    key: str | None = Field(default=None, min_length=1, max_length=64)
    # Who told the role (e.g. "the night porter"): whispers that share a source count once towards a finding.
    source: str | None = Field(
        default=None, min_length=1, max_length=200, json_schema_extra={GAME_MAX_CHARS: SOURCE_MAX_CHARS}
    )


class FindingClaimBody(_Body):
    """A one-sentence claim in the operator's own words (screened like a whisper)."""

    claim: str = Field(min_length=1, max_length=2000, json_schema_extra={GAME_MAX_CHARS: CLAIM_MAX_CHARS})


class FindingEvaluationBody(_Body):
    """No claim: the server proposes claims from cards of different roles that match each other."""

    claim: str | None = Field(default=None, min_length=1, max_length=2000)


class InterrogationBody(Versioned):
    role: Role
    question: str = Field(
        min_length=1, max_length=2000, pattern=NOT_BLANK, json_schema_extra={GAME_MAX_CHARS: QUESTION_MAX_CHARS}
    )


class UnfilteredActBody(InterrogationBody):
    """The presenter act: an interrogation's question, run without the space filter and the re-check."""


class CrossExaminationBody(Versioned):
    roles: list[Role] = Field(min_length=2, max_length=3, json_schema_extra={"uniqueItems": True})
    question: str = Field(
        min_length=1, max_length=2000, pattern=NOT_BLANK, json_schema_extra={GAME_MAX_CHARS: QUESTION_MAX_CHARS}
    )

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
