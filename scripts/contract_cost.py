"""What the response models cost: validating and serialising an operator snapshot through `OperatorSnapshot`
(what every snapshot route does on the way out), at 100 and 1 000 cards per space. Prints ms per snapshot."""

from __future__ import annotations

import time
from typing import Any

from bureau.api.responses import OperatorSnapshot

SPACES = ("detective", "informant", "suspect", "bulletin_board")
ROUNDS = 20


def card(index: int, space: str) -> dict[str, Any]:
    return {
        "id": str(782274494520623104 + index),
        "space": space,
        "content": "The safe combination is 0427.",
        "topic": "safe_combination",
        "kind": "secret",
        "visibility": "public" if space == "bulletin_board" else "private",
        "memory_type": "long_term_knowledge",
        "key": None,
        "trust": "high",
        "created_by": "operator",
        "created_at": "2026-11-29T15:59:33.448000+00:00",
        "source": None,
    }


def snapshot(per_space: int) -> dict[str, Any]:
    return {
        "case": {"id": "a" * 24, "scenario_id": "mole", "language": "en", "version": 5, "status": "active",
                 "created_at": "2026-11-29T15:59:33+00:00"},
        "scenario": {"id": "mole", "title": "t", "description": "d", "preset_questions": [], "key_facts": [],
                     "topic_labels": {}},
        "spaces": {space: [card(i, space) for i in range(per_space)] for space in SPACES},
        "last_trace": None,
        "answers": {},
        "knowledge": {},
    }  # fmt: skip


def main() -> None:
    for per_space in (100, 1000):
        body = snapshot(per_space)
        started = time.perf_counter()
        for _ in range(ROUNDS):
            OperatorSnapshot.model_validate(body).model_dump(mode="json", exclude_unset=True)
        ms = (time.perf_counter() - started) / ROUNDS * 1000
        print(f"{per_space * len(SPACES)} cards: {ms:.1f} ms per snapshot (validate + serialise)")


if __name__ == "__main__":
    main()
