"""MinHash hash families, a recipe choice (`dedup.hash_family`): how a batch of texts becomes 32-bit
shingle hashes, and which permutations x -> a * x + b mod 2**32 (odd a) MinHasher applies to them.

One module per family registers it under its recipe name; MinHasher looks it up here. A family's
signatures decide which documents are near duplicates, so changing a family's output changes results.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np


class HashFamily(Protocol):
    def shingle_hashes(self, texts: Sequence[str], shingle_size: int) -> tuple[np.ndarray, np.ndarray]:
        """uint32 hashes of every text's shingles, texts in order, and each text's shingle count (0: no words).
        texts may also be an Arrow string array (words.word_spans reads both)."""
        ...

    def permutations(self, num_perm: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
        """(a, b): num_perm uint32 each, every a odd."""
        ...


_FAMILIES: dict[str, type] = {}


def register(name: str):
    """Class decorator: the family is the recipe's `dedup.hash_family: <name>`."""

    def add(cls: type) -> type:
        if name in _FAMILIES:
            raise ValueError(f"hash family {name!r} is registered twice")
        _FAMILIES[name] = cls
        return cls

    return add


def family_names() -> tuple[str, ...]:
    return tuple(sorted(_FAMILIES))


def hash_family(name: str) -> HashFamily:
    if name not in _FAMILIES:
        raise ValueError(f"unknown MinHash hash family {name!r}; registered: {', '.join(family_names())}")
    return _FAMILIES[name]()


# the families register themselves on import
from marin_assets.data.dedup.hash_families import datasketch_sha1, polynomial
