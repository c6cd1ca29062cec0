"""The memory policy table: per memory type, who may write it, what it must pass, how long it lives,
whether it may be evidence and whether it may be replayed into a model prompt. Pure, no I/O.

Written once here and applied on every write (`check_write`) and every read (`read_exclusion`).
See docs/memory-policy.md.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from enum import StrEnum

from bureau.scope.content_policy import Screening
from bureau.scope.limits import MAX_CARD_CHARS
from bureau.scope.vocabulary import CreatedBy, MemoryType, PolicyCode, PreferenceKey


class WritePath(StrEnum):
    ORDINARY = "ordinary"  # whispers, scenario loading, publication copies
    SYSTEM = "system"  # records the server derives itself (session / task-state records)
    AUDIT = "audit"  # only the audit trail in the ledger


# Reason codes (`PolicyCode`) under the names the rules use. Refusals: on the wire (4xx codes) and in the
# audit trail.
MEMORY_TYPE_FORBIDDEN = PolicyCode.MEMORY_TYPE_FORBIDDEN
PREFERENCE_KEY_UNKNOWN = PolicyCode.PREFERENCE_KEY_UNKNOWN
PREFERENCE_VALUE_INVALID = PolicyCode.PREFERENCE_VALUE_INVALID
UNSAFE_INPUT = PolicyCode.UNSAFE_INPUT
# Read exclusions (shown in the X-ray as `MissReason`s of the same value, counted in the audit trail).
EXPIRED = PolicyCode.EXPIRED
FAILED_VALIDATION = PolicyCode.FAILED_VALIDATION
TYPE_NOT_EVIDENCE = PolicyCode.TYPE_NOT_EVIDENCE
OWNER_MISMATCH = PolicyCode.OWNER_MISMATCH  # counted only: nothing of a foreign record is shown


@dataclass(frozen=True, slots=True)
class PreferenceRule:
    """What an allow-listed preference takes: one of `words` in any letter case, or, without words, any text;
    at most `max_chars` characters, counted as every text limit is (`scope/limits.py`: the text as written,
    so the entry point checks it, before normalising). The request schema states both (`api/schemas.py`)."""

    max_chars: int
    words: tuple[str, ...] = ()

    def accepts(self, value: str) -> bool:
        """The value's shape (its length is the entry point's text limit, `text_limit`)."""
        return not self.words or value.casefold() in {word.casefold() for word in self.words}


PREFERENCE_KEYS: Mapping[PreferenceKey, PreferenceRule] = {
    PreferenceKey.PREFERRED_LANGUAGE: PreferenceRule(16, ("en", "zh", "english", "chinese", "中文", "英文")),
    PreferenceKey.ANSWER_STYLE: PreferenceRule(16, ("brief", "detailed", "简短", "详细")),
    PreferenceKey.DIETARY_PREFERENCE: PreferenceRule(80),
    PreferenceKey.MEETING_TIME: PreferenceRule(80),
}


@dataclass(frozen=True, slots=True)
class TypePolicy:
    memory_type: MemoryType
    path: WritePath
    min_writer: CreatedBy  # the least trusted creator that may write it (on its path)
    screened: bool  # content must pass the content policy at write time (and again on every read)
    evidence: bool  # may back an answer; otherwise context at most
    replayable: bool  # may be sent to a model at all
    retention: str | None  # name of the retention setting; None = lives until erased or reset
    needs_key: bool = False  # user_preference: a key from PREFERENCE_KEYS


_TRUSTED = CreatedBy.OPERATOR  # operator, scenario and system: the creators allowed to add knowledge
POLICY: Mapping[MemoryType, TypePolicy] = {
    # Derived from a conversation (a question may quote an injection phrase: harmless, it is never replayed).
    MemoryType.SESSION: TypePolicy(
        MemoryType.SESSION,
        WritePath.SYSTEM,
        CreatedBy.SYSTEM,
        screened=False,
        evidence=False,
        replayable=False,
        retention="session",
    ),
    MemoryType.TASK_STATE: TypePolicy(
        MemoryType.TASK_STATE,
        WritePath.SYSTEM,
        CreatedBy.SYSTEM,
        screened=False,
        evidence=False,
        replayable=False,
        retention="task_state",
    ),
    MemoryType.USER_PREFERENCE: TypePolicy(
        MemoryType.USER_PREFERENCE,
        WritePath.ORDINARY,
        _TRUSTED,
        screened=True,
        evidence=True,
        replayable=True,
        retention=None,
        needs_key=True,
    ),
    MemoryType.LONG_TERM_KNOWLEDGE: TypePolicy(
        MemoryType.LONG_TERM_KNOWLEDGE,
        WritePath.ORDINARY,
        _TRUSTED,
        screened=True,
        evidence=True,
        replayable=True,
        retention=None,
    ),
    MemoryType.OPERATIONAL_MEMORY: TypePolicy(
        MemoryType.OPERATIONAL_MEMORY,
        WritePath.ORDINARY,
        _TRUSTED,
        screened=True,
        evidence=True,
        replayable=True,
        retention=None,
    ),
    # Never through memory: only the ledger's audit trail appends policy decisions.
    MemoryType.AUDIT_RECORD: TypePolicy(
        MemoryType.AUDIT_RECORD,
        WritePath.AUDIT,
        CreatedBy.SYSTEM,
        screened=False,
        evidence=False,
        replayable=False,
        retention=None,
    ),
}
# Records below this trust never reach a model prompt, whatever their type.
REPLAY_MIN_TRUST = CreatedBy.OPERATOR


class MemoryPolicyError(ValueError):
    """A write the policy forbids. Carries a reason code only, never the text."""

    def __init__(self, code: PolicyCode, detail: str = "") -> None:
        super().__init__(code)
        self.code = code
        self.detail = detail  # reason codes of the screening, or the rule's name; never user text


def check_type(memory_type: MemoryType, creator: CreatedBy, path: WritePath, key: str | None) -> None:
    """Raise MemoryPolicyError unless this creator may write this type on this path (and, for a
    preference, with this key). Checked before the content is even looked at."""
    policy = POLICY[memory_type]
    if path is WritePath.AUDIT or path is not policy.path or not creator.at_least(policy.min_writer):
        # The audit path is the ledger's audit trail: memory never accepts it, not even from the system.
        raise MemoryPolicyError(MEMORY_TYPE_FORBIDDEN, f"{creator}:{memory_type}:{path}")
    if policy.needs_key and key not in PREFERENCE_KEYS:
        raise MemoryPolicyError(PREFERENCE_KEY_UNKNOWN)
    if not policy.needs_key and key is not None:
        raise MemoryPolicyError(PREFERENCE_KEY_UNKNOWN, "key_not_allowed_for_type")


def preference_rule(key: str | None) -> PreferenceRule | None:
    """The rule of an allow-listed key, None for any other key (or none)."""
    return PREFERENCE_KEYS[PreferenceKey(key)] if key is not None and key in PREFERENCE_KEYS else None


def text_limit(memory_type: MemoryType, key: str | None) -> int:
    """How many characters a card's text may have: a preference's own limit, else a card's."""
    spec = preference_rule(key) if POLICY[memory_type].needs_key else None
    return spec.max_chars if spec is not None else MAX_CARD_CHARS


def check_content(memory_type: MemoryType, key: str | None, content: str, screening: Screening) -> None:
    """Raise MemoryPolicyError unless the content passes what its type requires: the preference value's
    shape, the content screening. The detail names reason codes, never the text."""
    policy = POLICY[memory_type]
    spec = preference_rule(key)
    if policy.needs_key and (spec is None or not spec.accepts(content)):
        raise MemoryPolicyError(PREFERENCE_VALUE_INVALID if spec else PREFERENCE_KEY_UNKNOWN, key or "")
    if policy.screened and (reasons := screening.screen(content)):
        raise MemoryPolicyError(UNSAFE_INPUT, ",".join(reasons))


def check_write(
    memory_type: MemoryType,
    creator: CreatedBy,
    path: WritePath,
    key: str | None,
    content: str,
    screening: Screening,
) -> None:
    """The whole write rule: type, creator and path first, then the content."""
    check_type(memory_type, creator, path, key)
    check_content(memory_type, key, content, screening)


def writable_types(creator: CreatedBy, path: WritePath = WritePath.ORDINARY) -> list[MemoryType]:
    """What a creator may write on a path: the console offers exactly these."""
    return [t for t, p in POLICY.items() if p.path is path and creator.at_least(p.min_writer)]


@dataclass(frozen=True, slots=True)
class Retention:
    """How long short-lived types live. Configured (BUREAU_SESSION_RETENTION_S, BUREAU_TASK_STATE_RETENTION_S)."""

    by_name: Mapping[str, timedelta] = field(default_factory=dict)

    def expiry(self, memory_type: MemoryType, now: datetime) -> datetime | None:
        name = POLICY[memory_type].retention
        return now + self.by_name[name] if name is not None and name in self.by_name else None


@dataclass(frozen=True, slots=True)
class RecordFacts:
    """What the read policy needs to know about a stored record (no content beyond what it screens)."""

    memory_type: str
    created_by: str
    content: str
    expires_at: datetime | None


def parse_type(value: str) -> MemoryType | None:
    try:
        return MemoryType(value)
    except ValueError:
        return None


def parse_trust(value: str) -> CreatedBy:
    try:
        return CreatedBy(value)
    except ValueError:
        return CreatedBy.UNTRUSTED  # a record whose creator we cannot name is trusted least


def read_exclusion(record: RecordFacts, now: datetime, screening: Screening) -> PolicyCode | None:
    """Why a record may not be evidence now, or None. Checked on every read, so a pattern added after the
    record was written (a delayed prompt injection found later) excludes it from then on."""
    if record.expires_at is not None and record.expires_at <= now:
        return EXPIRED
    memory_type = parse_type(record.memory_type)
    if memory_type is None or not POLICY[memory_type].evidence:
        return TYPE_NOT_EVIDENCE
    if POLICY[memory_type].screened and screening.screen(record.content):
        return FAILED_VALIDATION
    return None


def may_replay(record: RecordFacts) -> bool:
    """May this record be put into a model prompt at all (type and creator trust)?"""
    memory_type = parse_type(record.memory_type)
    return (
        memory_type is not None
        and POLICY[memory_type].replayable
        and parse_trust(record.created_by).at_least(REPLAY_MIN_TRUST)
    )


# Records the server derives from a conversation ("I was asked X"): context for the X-ray, never evidence.
DERIVED_MEMORY_TYPES: frozenset[str] = frozenset(t.value for t, p in POLICY.items() if p.path is WritePath.SYSTEM)


def may_be_evidence(memory_type: str) -> bool:
    """The one evidence rule, read from the table: interrogation, the answering packet, the role voice
    fallback and publish all ask this. A type the table does not know is never evidence."""
    known = parse_type(memory_type)
    return known is not None and POLICY[known].evidence
