"""What the response models cost: validating and serialising an operator snapshot through `OperatorSnapshot`
(the game validates once when it builds the view; the route serialises it), at 100 and 1 000 cards per space,
and what FastAPI's response check costs when the route returns that instance (it passes it through) instead of
a dict (it would validate it again). Prints ms per snapshot."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from fastapi.utils import create_model_field

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
        "mode": {"mode": "evidence", "reason": "no_model"},
        "scenario": {"id": "mole", "title": "t", "description": "d", "preset_questions": [], "claims": [],
                     "key_facts": [], "topic_labels": {}},
        "spaces": {space: [card(i, space) for i in range(per_space)] for space in SPACES},
        "last_trace": None,
        "answers": {},
        "knowledge": {},
    }  # fmt: skip


def per_round_ms(work: Callable[[], object]) -> float:
    started = time.perf_counter()
    for _ in range(ROUNDS):
        work()
    return (time.perf_counter() - started) / ROUNDS * 1000


def main() -> None:
    for per_space in (100, 1000):
        measure(per_space)


def measure(per_space: int) -> None:
    response_check = create_model_field("Response", OperatorSnapshot)  # what FastAPI runs on a route's result
    body = snapshot(per_space)
    view = OperatorSnapshot.model_validate(body)
    ms = per_round_ms(lambda: OperatorSnapshot.model_validate(body).model_dump(mode="json", exclude_unset=True))
    print(f"{per_space * len(SPACES)} cards: {ms:.1f} ms per snapshot (validate + serialise)")
    as_dict = per_round_ms(lambda: response_check.validate(body, {}, loc=("response",)))
    as_model = per_round_ms(lambda: response_check.validate(view, {}, loc=("response",)))
    print(f"  FastAPI's response check: {as_dict:.2f} ms on a dict, {as_model:.2f} ms on the model instance")


if __name__ == "__main__":
    main()
