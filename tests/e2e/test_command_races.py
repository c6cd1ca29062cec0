"""The two races of issue 32, over real HTTP into a real `bureau serve` (the session's live server), each
checked with the concurrency checker's rules (`tests/chaos.py`) over several rounds.

1. Resets and whispers at once: 30 whispers to the informant and 4 resets of a new safe-combination case from
   64 client threads. After the last committed reset the opening cards are there exactly once, every whisper
   committed after it is there, and none committed before it.
2. Every command kind racing the erase of its case: each kind sent again and again from its own thread while
   `DELETE /api/cases/{id}` lands among them. Each answers 2xx (before the erase) or 404 — never a 5xx — and
   nothing of the case is left in the store or the ledger but its tombstone.
"""

from __future__ import annotations

import itertools
import random
from collections import Counter
from collections.abc import Callable

import httpx

from chaos import (
    Answer,
    Checker,
    Command,
    Contract,
    check_answers,
    check_erased,
    cross_examine,
    delete_card,
    evaluate,
    fire,
    fire_during_erase,
    interrogate,
    promote,
    publish,
    reset,
    whisper,
)
from live_server import LiveServer

RESET_ROUNDS = 12  # on the code of issue 32, 7 of 56 rounds emptied the case (docs/faults.md)
WHISPERS, RESETS = 30, 4
ERASE_ROUNDS = 10
SEED = 32  # the number: fixed, so a failure names the same interleavings of commands again


def test_concurrent_resets_and_whispers_keep_the_opening_cards_and_every_later_whisper(
    live_server: LiveServer,
) -> None:
    checker = Checker([live_server.url], live_server.data_dir, SEED, lease_s=lease_of(live_server), log=print)
    rng = random.Random(SEED)
    failed: list[str] = []
    for round_ in range(RESET_ROUNDS):
        case = checker.new_case("safe-combination")
        commands = [
            whisper(case.case_id, "informant", f"Round {round_}, note {n}: the tide was high.") for n in range(WHISPERS)
        ]
        commands += [reset(case.case_id) for _ in range(RESETS)]
        rng.shuffle(commands)
        answers = fire([live_server.url], commands)
        found = checker.check_batch(case, answers)
        print(f"[races] reset round {round_}: {summary(answers)}; {len(found)} violations")
        failed += [f"round {round_}: {v}" for v in found]
    assert not failed, report(failed, RESET_ROUNDS)


def test_every_command_racing_the_erase_of_its_case_answers_2xx_before_it_or_404_and_writes_nothing(
    live_server: LiveServer,
) -> None:
    contract = Contract.of(live_server.url)
    rng = random.Random(SEED)
    serial = itertools.count()
    failed: list[str] = []
    codes: Counter[str] = Counter()
    for round_ in range(ERASE_ROUNDS):
        case = httpx.post(live_server.url + "/api/cases", json={"scenario_id": "night-ferry"}, timeout=60).json()
        answers = fire_during_erase(
            live_server.url, case["case"]["id"], senders_of_every_kind(case, serial), rng.uniform(0.3, 2.0)
        )
        found = [str(v) for v in check_answers(contract, answers, erasing=True)]  # no 5xx, every code declared
        found += [f"{a.command.kind} answered {a.label}" for a in answers if 300 <= a.status < 500 and a.status != 404]
        found += [str(v) for v in check_erased(live_server.data_dir, live_server.url, case["case"]["id"], answers)]
        codes.update(f"{a.command.kind} {a.label}" for a in answers if not a.ok)
        print(f"[races] erase round {round_}: {summary(answers)}; {len(found)} violations")
        failed += [f"round {round_}: {v}" for v in found]
    print(f"[races] erase rounds, every refusal: {dict(sorted(codes.items()))}")
    assert not failed, report(failed, ERASE_ROUNDS)


def senders_of_every_kind(case: dict, serial: itertools.count) -> list[Callable[[], Command]]:
    """Two threads per command kind, each sending its kind again and again. The deletions take cards the
    promoted claim does not rest on, so it qualifies until the erase (or a reset) lands."""
    case_id, spaces = case["case"]["id"], case["spaces"]
    by_topic = {c["topic"]: c for role in ("detective", "informant", "suspect") for c in spaces[role]}
    deletable = iter([by_topic["ferry_captain"]["id"], by_topic["lights_guard"]["id"], by_topic["lights_driver"]["id"]])
    shipment = by_topic["shipment_memo"]["id"]
    claim = "The grey van left the harbour at midnight."
    kinds: list[Callable[[], Command]] = [
        lambda: whisper(case_id, "suspect", f"Erase race note {next(serial)}: the ferry was late."),
        lambda: interrogate(case_id, "detective", "When did the grey van leave the harbour?"),
        lambda: publish(case_id, "detective", shipment),
        lambda: delete_card(case_id, next(deletable, shipment)),
        lambda: cross_examine(case_id, ["detective", "suspect"], "Where was the shipment moved?"),
        lambda: reset(case_id),
        lambda: evaluate(case_id, claim),
        lambda: promote(case_id, claim),
    ]
    return kinds * 2


def report(failed: list[str], rounds: int) -> str:
    """How many rounds failed, and every violation of each ("round N: [rule] …")."""
    return f"{len({f.split(':')[0] for f in failed})} of {rounds} rounds failed:\n" + "\n".join(failed)


def summary(answers: list[Answer]) -> str:
    return ", ".join(f"{k} ×{n}" for k, n in sorted(Counter(f"{a.command.kind} {a.label}" for a in answers).items()))


def lease_of(server: LiveServer) -> float:
    return float(server.env["BUREAU_PUBLICATION_LEASE_S"])
