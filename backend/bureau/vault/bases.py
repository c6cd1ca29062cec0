"""A secret orthogonal basis per compartment, cheap to derive and to apply, at any embedding dimension.

A basis is a few rounds of: a permutation of the coordinates, a sign flip per coordinate, and a normalised
fast Walsh–Hadamard transform on blocks whose sizes are the powers of two that sum to the dimension (512 is one
block; 1 536 is 1 024 + 512; 300 is 256 + 32 + 8 + 4). Each step is orthogonal, so the whole is: dot products,
and so cosines, between two vectors in one basis equal those of the originals, while the same vector in two
bases points in unrelated directions (the permutations carry every coordinate across the blocks from one round
to the next). Deriving one costs a few tens of microseconds and about 12 KB at 512 dimensions, where the dense
Haar rotation it replaces cost ~25 ms and 2 MB (scripts/measure_compartments.py).
"""

from __future__ import annotations

import functools

import numpy as np

ROUNDS = 3


def _blocks(dims: int) -> tuple[tuple[int, int], ...]:
    """(start, size) of each power-of-two block, largest first."""
    blocks, start = [], 0
    for bit in reversed(range(dims.bit_length())):
        size = 1 << bit
        if dims & size:
            blocks.append((start, size))
            start += size
    return tuple(blocks)


_FACTOR = 32  # a block's Walsh–Hadamard matrix is the Kronecker product of ones of at most 32 x 32


@functools.lru_cache(maxsize=8)
def _hadamard(size: int) -> np.ndarray:
    """The normalised Walsh–Hadamard matrix of a power-of-two `size` (at most 32: 8 KB; shared by every basis)."""
    matrix = np.ones((1, 1))
    while matrix.shape[0] < size:
        matrix = np.block([[matrix, matrix], [matrix, -matrix]])
    return matrix / np.sqrt(size)


def _walsh_hadamard(x: np.ndarray, size: int) -> np.ndarray:
    """The normalised Walsh–Hadamard transform of the last axis of `x` (length `size`, a power of two), as a
    Kronecker product: H(size) = H(32) (x) H(size / 32), so one small matrix product on the left and the rest
    on the right, instead of one pass per bit."""
    rows = x.shape[0]
    if size <= _FACTOR:
        return x @ _hadamard(size)
    tail = size // _FACTOR
    left = np.matmul(_hadamard(_FACTOR), x.reshape(rows, _FACTOR, tail))
    return _walsh_hadamard(left.reshape(rows * _FACTOR, tail), tail).reshape(rows, size)


class Basis:
    """One compartment's basis, derived from a 32-byte seed (itself derived from the compartment key)."""

    __slots__ = ("_blocks", "_permutations", "_signs", "dims")

    def __init__(self, seed: bytes, dims: int) -> None:
        if dims < 1:
            raise ValueError("a basis needs at least one dimension")
        rng = np.random.default_rng(np.frombuffer(seed, dtype=np.uint32))
        self.dims = dims
        self._blocks = _blocks(dims)
        self._permutations = [rng.permutation(dims).astype(np.int32) for _ in range(ROUNDS)]
        self._signs = [rng.choice(np.array([-1.0, 1.0]), size=dims) for _ in range(ROUNDS)]

    def apply(self, vectors: np.ndarray) -> np.ndarray:
        """Vectors (one per row, or a single vector) in this basis, as float64."""
        values = np.asarray(vectors, dtype=np.float64)
        single = values.ndim == 1
        x = values.reshape(1, -1) if single else values
        if x.shape[1] != self.dims:
            raise ValueError(f"a vector of {x.shape[1]} dimensions in a basis of {self.dims}")
        for permutation, signs in zip(self._permutations, self._signs, strict=True):
            x = x[:, permutation]
            x *= signs
            x = self._blockwise(x)
        return x[0] if single else x

    def _blockwise(self, x: np.ndarray) -> np.ndarray:
        if len(self._blocks) == 1:
            return _walsh_hadamard(x, self.dims)
        out = np.empty_like(x)
        for start, size in self._blocks:
            out[:, start : start + size] = _walsh_hadamard(x[:, start : start + size], size)
        return out

    def undo(self, vectors: np.ndarray) -> np.ndarray:
        """The inverse transform (the transpose): what a re-seal into another basis starts from."""
        values = np.asarray(vectors, dtype=np.float64)
        single = values.ndim == 1
        x = values.reshape(1, -1) if single else values
        for permutation, signs in zip(reversed(self._permutations), reversed(self._signs), strict=True):
            x = self._blockwise(x) * signs  # each block's transform is its own inverse
            restored = np.empty_like(x)
            restored[:, permutation] = x
            x = restored
        return x[0] if single else x

    @property
    def nbytes(self) -> int:
        """What this basis holds in memory (its permutations and signs)."""
        return sum(p.nbytes for p in self._permutations) + sum(s.nbytes for s in self._signs)
