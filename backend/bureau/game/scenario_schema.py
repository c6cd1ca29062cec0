"""Scenario data files: the schema, and a loader whose errors name the file and the failing field.

A scenario ships as one YAML file per language (`<id>.<language>.yaml`) in `bureau/game/scenarios/`.
Every scenario exists in English and Chinese with the same ids, topics and key facts.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from bureau.scope.content_policy import BUILT_IN
from bureau.scope.keys import ROLES, Role
from bureau.scope.limits import CLAIM_MAX_CHARS, MAX_CARD_CHARS, ONE_LINE_PATTERN, SCENARIO_ID_MAX_CHARS, TEXT_PATTERN
from bureau.scope.memory_policy import (
    MEMORY_TYPE_FORBIDDEN,
    UNSAFE_INPUT,
    MemoryPolicyError,
    WritePath,
    check_write,
    text_limit,
)
from bureau.scope.phrases import LANGUAGES as LANGUAGES  # the languages the server speaks, re-exported
from bureau.scope.phrases import Language as Language
from bureau.scope.vocabulary import CreatedBy, Kind, MemoryType, Trust

_SLUG = r"^[a-z][a-z0-9]*(?:-[a-z0-9]+)*$"
_TOPIC = r"^[a-z][a-z0-9_]*$"
_FILENAME = re.compile(r"^(?P<id>[a-z][a-z0-9-]*)\.(?P<language>[a-z]{2})\.yaml$")

# Scenario cards are trusted content, but they pass the same memory policy as a whisper (type, preference
# key and value, content screening), so a scenario file can never seed what the policy would refuse.


class ScenarioError(ValueError):
    """A scenario file is missing, malformed or inconsistent. The message names the file and the field."""

    def __init__(self, file: str, field: str, message: str) -> None:
        self.file = file
        self.field = field
        super().__init__(f"{file}: {field}: {message}" if field else f"{file}: {message}")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, str_strip_whitespace=True)


class ScenarioCard(_Strict):
    content: str = Field(min_length=1, max_length=MAX_CARD_CHARS)
    topic: str = Field(pattern=_TOPIC, max_length=64)
    kind: Kind
    memory_type: MemoryType  # every card declares it; the memory policy decides what a scenario may load
    key: str | None = Field(default=None, max_length=64)
    trust: Trust = Trust.MEDIUM
    # Who the role learned it from: contributions sharing a source count once towards a finding.
    source: str | None = Field(default=None, min_length=1, max_length=80)

    @model_validator(mode="after")
    def _allowed_by_the_memory_policy(self) -> ScenarioCard:
        if len(self.content) > (limit := text_limit(self.memory_type, self.key)):
            raise ValueError(f"content: longer than the {limit} characters this memory type and key take")
        try:
            check_write(self.memory_type, CreatedBy.SCENARIO, WritePath.ORDINARY, self.key, self.content, BUILT_IN)
        except MemoryPolicyError as exc:
            if exc.code == UNSAFE_INPUT:
                raise ValueError(f"content: content fails the content policy ({exc.detail})") from None
            field = "memory_type" if exc.code == MEMORY_TYPE_FORBIDDEN else "key"
            raise ValueError(f"{field}: the memory policy refuses it ({exc.code})") from None
        return self


class KeyFact(_Strict):
    id: str = Field(pattern=_TOPIC, max_length=64)
    label: str = Field(min_length=1, max_length=80)
    topic: str = Field(pattern=_TOPIC, max_length=64)
    # The preset question that tests this fact: only an answer to it can show a role does NOT know it.
    question: str | None = Field(default=None, max_length=200)


class ScenarioCards(_Strict):
    """Opening memories per role. The bulletin board is never seeded: sharing is always explicit."""

    detective: list[ScenarioCard] = Field(min_length=1)
    informant: list[ScenarioCard] = Field(min_length=1)
    suspect: list[ScenarioCard] = Field(min_length=1)

    @model_validator(mode="before")
    @classmethod
    def _no_board(cls, data: object) -> object:
        if isinstance(data, dict) and "bulletin_board" in data:
            raise ValueError("bulletin_board: is not a role; scenarios never seed the board")
        return data

    def by_role(self) -> dict[Role, list[ScenarioCard]]:
        return {role: list(getattr(self, role)) for role in ROLES}


class Scenario(_Strict):
    id: str = Field(pattern=_SLUG, max_length=SCENARIO_ID_MAX_CHARS)
    language: Language
    title: str = Field(min_length=1, max_length=80)
    description: str = Field(min_length=1, max_length=200)
    preset_questions: list[str] = Field(min_length=3, max_length=5)
    key_facts: list[KeyFact] = Field(min_length=1)
    # Topic -> its label in this file's language, for every topic a card or key fact uses.
    topics: dict[str, str] = Field(min_length=1)
    # Topics on which two cards deliberately disagree (the mole's two tips): the only ones that may repeat.
    conflicts: list[str] = Field(default_factory=list)
    # One-sentence claims a presenter may evaluate as findings (docs/findings.md); the console offers them.
    claims: list[str] = Field(default_factory=list, max_length=6)
    cards: ScenarioCards

    @field_validator("topics")
    @classmethod
    def _topic_labels(cls, value: dict[str, str]) -> dict[str, str]:
        for topic, label in value.items():
            if not re.match(_TOPIC, topic) or len(topic) > 64:
                raise ValueError(f"{topic!r} is not a topic name")
            if not 1 <= len(label.strip()) <= 80:
                raise ValueError(f"{topic}: label must be 1-80 characters")
        return value

    @field_validator("preset_questions")
    @classmethod
    def _questions(cls, value: list[str]) -> list[str]:
        for question in value:
            if not question or len(question) > 200 or not re.fullmatch(TEXT_PATTERN, question):
                raise ValueError("each preset question must be a text of 1-200 characters (scope/limits.py)")
        if len(set(value)) != len(value):
            raise ValueError("preset questions must be unique")
        return value

    @field_validator("claims")
    @classmethod
    def _claims(cls, value: list[str]) -> list[str]:
        """The console offers them to evaluate and promote: each must be a claim the API takes."""
        for claim in value:
            if len(claim) > CLAIM_MAX_CHARS or not re.fullmatch(ONE_LINE_PATTERN, claim):
                raise ValueError(f"each claim must be one line of 1-{CLAIM_MAX_CHARS} characters")
        return value

    @model_validator(mode="after")
    def _key_facts_link_to_cards(self) -> Scenario:
        ids = [fact.id for fact in self.key_facts]
        if len(set(ids)) != len(ids):
            raise ValueError("key_facts: ids must be unique")
        topics = {card.topic for cards in self.cards.by_role().values() for card in cards}
        for index, fact in enumerate(self.key_facts):
            if fact.topic not in topics:
                raise ValueError(f"key_facts.{index}.topic: no card has topic {fact.topic!r}")
            if fact.question is not None and fact.question not in self.preset_questions:
                raise ValueError(f"key_facts.{index}.question: not one of the preset questions")
        unlabelled = sorted((topics | {fact.topic for fact in self.key_facts}) - set(self.topics))
        if unlabelled:
            raise ValueError(f"topics: no label for {', '.join(unlabelled)}")
        counts = Counter(card.topic for cards in self.cards.by_role().values() for card in cards)
        repeated = {topic for topic, n in counts.items() if n > 1}
        if repeated != set(self.conflicts):
            raise ValueError(
                "conflicts: must list exactly the topics that more than one card holds "
                f"(held by several: {sorted(repeated)}, listed: {sorted(self.conflicts)})"
            )
        return self

    def topics_by_role(self) -> dict[str, set[str]]:
        return {role: {card.topic for card in cards} for role, cards in self.cards.by_role().items()}


def _field(loc: tuple[int | str, ...]) -> str:
    return ".".join(str(part) for part in loc)


def load_scenario_file(path: Path) -> Scenario:
    """Parse and validate one file; `id` and `language` must match the file name."""
    name = path.name
    match = _FILENAME.match(name)
    if match is None:
        raise ScenarioError(name, "", "file name must be <id>.<language>.yaml")
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise ScenarioError(name, "", f"cannot read file ({type(exc).__name__})") from exc
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        raise ScenarioError(name, "", f"invalid YAML{where}") from exc
    if not isinstance(raw, dict):
        raise ScenarioError(name, "", "top level must be a mapping")
    try:
        scenario = Scenario.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        field, message = _field(first["loc"]), first["msg"]
        if message.startswith("Value error, "):
            # Our own validators may name a nested field: "key_facts.0.topic: no card has ...".
            message = message.removeprefix("Value error, ")
            nested = re.match(r"^([a-z_]+(?:\.\w+)*): (.*)$", message)
            if nested:
                field = ".".join(part for part in (field, nested.group(1)) if part)
                message = nested.group(2)
        raise ScenarioError(name, field or "scenario", message) from None
    for field in ("id", "language"):
        if getattr(scenario, field) != match.group(field):
            raise ScenarioError(
                name,
                field,
                f"{getattr(scenario, field)!r} does not match the file name ({match.group(field)!r})",
            )
    return scenario


def load_scenarios(directory: Path) -> dict[tuple[str, str], Scenario]:
    """Load every `*.yaml` in `directory`, keyed by (id, language), and check the languages agree."""
    scenarios: dict[tuple[str, str], Scenario] = {}
    files: dict[tuple[str, str], str] = {}
    for path in sorted(Path(directory).glob("*.yaml")):
        scenario = load_scenario_file(path)
        scenarios[(scenario.id, scenario.language)] = scenario
        files[(scenario.id, scenario.language)] = path.name
    if not scenarios:
        raise ScenarioError(str(directory), "", "no scenario files found")

    for scenario_id in sorted({key[0] for key in scenarios}):
        missing = [lang for lang in LANGUAGES if (scenario_id, lang) not in scenarios]
        if missing:
            present = next(files[(scenario_id, lang)] for lang in LANGUAGES if lang not in missing)
            raise ScenarioError(present, "language", f"no {', '.join(missing)} version of {scenario_id!r}")
        base = scenarios[(scenario_id, LANGUAGES[0])]
        for lang in LANGUAGES[1:]:
            other = scenarios[(scenario_id, lang)]
            name = files[(scenario_id, lang)]
            base_facts = {(fact.id, fact.topic) for fact in base.key_facts}
            other_facts = {(fact.id, fact.topic) for fact in other.key_facts}
            if base_facts != other_facts:
                diff = sorted(f"{fid}/{topic}" for fid, topic in base_facts ^ other_facts)
                raise ScenarioError(
                    name, "key_facts", f"ids/topics differ from {files[(scenario_id, LANGUAGES[0])]}: {diff}"
                )
            base_topics, other_topics = base.topics_by_role(), other.topics_by_role()
            for role in ROLES:
                if base_topics[role] != other_topics[role]:
                    diff = sorted(base_topics[role] ^ other_topics[role])
                    raise ScenarioError(
                        name,
                        f"cards.{role}",
                        f"card topics differ from {files[(scenario_id, LANGUAGES[0])]}: {diff}",
                    )
            if set(base.topics) != set(other.topics) or set(base.conflicts) != set(other.conflicts):
                raise ScenarioError(
                    name, "topics", f"labelled topics or conflicts differ from {files[(scenario_id, LANGUAGES[0])]}"
                )
    return scenarios


SCENARIO_DIR = Path(__file__).resolve().parent / "scenarios"


def load_builtin_scenarios() -> dict[tuple[str, str], Scenario]:
    return load_scenarios(SCENARIO_DIR)
