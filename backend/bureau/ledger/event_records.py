"""The outbox's plain records: an event as read back, and one to append with a change. Below both the
transaction runner (which hands committed events to `on_commit`) and the outbox's writers and readers."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any


@dataclass(frozen=True, slots=True)
class EventRecord:
    id: int
    case_id: str
    type: str
    payload: dict[str, Any]
    created_at: datetime


@dataclass(frozen=True, slots=True)
class PendingEvent:
    """An event to append in the same transaction as a change."""

    type: str
    payload: dict[str, Any]
