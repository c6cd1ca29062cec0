"""The offline encoder on one question's batch, with its weights hot in the CPU's cache and after the cache
was flushed (as in a real interrogation, where seekdb and the rest of the request run in between): why
"encoder in the question" in `bench/interrogation.py` is about twice "embedder alone".

    .venv/bin/python bench/encoder_cache.py
"""

from __future__ import annotations

import time

import numpy as np
from harness import load_line, markdown_table, percentile
from threadpoolctl import threadpool_limits

FLUSH_BYTES = 64 << 20  # more than this machine's L2 (4 MB); reading it evicts the encoder's weights


def batch(n: int, texts: int) -> list[str]:
    """What a new question sends the encoder: the sentence, its content words, a new word."""
    return [f"What is the safe combination of locker {n}?", f"safe combination locker {n}", str(n)][:texts]


def main() -> None:
    from bureau.memory.embedders import LocalUSEEmbeddings

    threadpool_limits(limits=1, user_api="blas")  # as the gateway does
    encoder = LocalUSEEmbeddings()
    encoder.embed_documents(["warm up"])
    junk = np.ones(FLUSH_BYTES // 8)
    print(f"load: {load_line()}")
    rows, n = [], 1000
    for texts in (1, 2, 3):
        for flushed in (False, True):
            spans = []
            for _ in range(60):
                n += 1
                if flushed:
                    junk.sum()
                started = time.perf_counter()
                encoder.embed_documents(batch(n, texts))
                spans.append((time.perf_counter() - started) * 1000)
            rows.append([str(texts), "flushed" if flushed else "hot", f"{percentile(spans, 0.5):.2f}"])
    print(markdown_table(["texts in the batch", "CPU cache", "encoder p50 ms"], rows))


if __name__ == "__main__":
    main()
