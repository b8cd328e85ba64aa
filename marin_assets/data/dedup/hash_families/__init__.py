"""MinHash hash families, a recipe choice (`dedup.hash_family`): how a batch of texts becomes 32-bit
shingle hashes, and which permutations x -> a * x + b mod 2**32 (odd a) MinHasher applies to them.

One module per family registers it under its recipe name (`@register(name)`); FAMILIES finds every
module of this package on its first lookup (core.registries), and MinHasher looks the family up here. A family's
signatures decide which documents are near duplicates, so changing a family's output changes results.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np

from marin_assets.core.registries import Registry


class HashFamily(Protocol):
    def shingle_hashes(self, texts: Sequence[str], shingle_size: int) -> tuple[np.ndarray, np.ndarray]:
        """uint32 hashes of every text's shingles, texts in order, and each text's shingle count (0: no words).
        texts may also be an Arrow string array (words.word_spans reads both)."""
        ...

    def permutations(self, num_perm: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
        """(a, b): num_perm uint32 each, every a odd."""
        ...


FAMILIES = Registry("MinHash hash family", package="marin_assets.data.dedup.hash_families")


def register(name: str):
    """Class decorator: the family is the recipe's `dedup.hash_family: <name>`."""
    return FAMILIES.register(name)


def family_names() -> tuple[str, ...]:
    return tuple(FAMILIES.names())


def hash_family(name: str) -> HashFamily:
    return FAMILIES.lookup(name)()
