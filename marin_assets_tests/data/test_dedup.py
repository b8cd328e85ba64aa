"""Exact keys, MinHash signatures and LSH band keys, and deterministic cluster representatives."""

from __future__ import annotations

import random

import numpy as np

from marin_assets.data.dedup import MinHasher, band_keys, cluster_representatives, exact_key, shingle_hashes


def _document(seed: int, words: int = 400) -> str:
    rng = random.Random(seed)
    return " ".join(f"w{rng.randrange(5000)}" for _ in range(words))


def _edit(text: str, changes: int, seed: int) -> str:
    rng = random.Random(seed)
    words = text.split()
    for _ in range(changes):
        words[rng.randrange(len(words))] = "CHANGED"
    return " ".join(words)


def _jaccard(a: str, b: str, n: int = 5) -> float:
    sa = {tuple(a.lower().split()[i : i + n]) for i in range(len(a.split()) - n + 1)}
    sb = {tuple(b.lower().split()[i : i + n]) for i in range(len(b.split()) - n + 1)}
    return len(sa & sb) / len(sa | sb)


def test_exact_key_ignores_case_and_whitespace_only():
    assert exact_key("Hello  World\n") == exact_key("hello world")
    assert exact_key("hello world") != exact_key("hello, world")


def test_shingles_depend_on_words_not_spacing():
    assert np.array_equal(shingle_hashes("a b c d e f", 5), shingle_hashes("A  b\nc d\te F", 5))
    assert shingle_hashes("a b", 5).size == 1  # shorter than one shingle: one shingle
    assert shingle_hashes("  ", 5).size == 0


def test_signature_estimates_jaccard_without_bias():
    hasher = MinHasher(num_perm=112, shingle_size=5, seed=3)
    errors = []
    for seed in range(40):
        a = _document(seed)
        b = _edit(a, 12, seed)
        estimate = float(np.mean(hasher.signature(a) == hasher.signature(b)))
        errors.append(estimate - _jaccard(a, b))
    assert abs(np.mean(errors)) < 0.02  # bias
    assert np.std(errors) < 0.07  # theory for J~0.7 and 112 permutations: ~0.045


def test_lsh_bands_find_near_duplicates_and_not_strangers():
    hasher = MinHasher(num_perm=112, shingle_size=5, seed=1)
    base = [_document(s) for s in range(30)]
    near = [_edit(d, 4, i) for i, d in enumerate(base)]  # 3-6 words changed, as in the benchmark corpus

    def keys(text):
        return {(band, key) for band, key in enumerate(band_keys(hasher.signature(text), 14, 8))}

    assert all(keys(a) & keys(b) for a, b in zip(base, near))
    assert not any(keys(base[i]) & keys(base[j]) for i in range(30) for j in range(i + 1, 30))


def test_signatures_are_reproducible_across_instances():
    text = _document(7)
    assert np.array_equal(MinHasher(seed=5).signature(text), MinHasher(seed=5).signature(text))
    assert not np.array_equal(MinHasher(seed=5).signature(text), MinHasher(seed=6).signature(text))


def test_cluster_representative_is_smallest_id_whatever_the_pair_order():
    pairs = [("c", "b"), ("d", "e"), ("b", "a"), ("e", "c"), ("y", "x")]
    expected = {"b": "a", "c": "a", "d": "a", "e": "a", "y": "x"}
    assert cluster_representatives(pairs) == expected
    assert cluster_representatives(reversed(pairs)) == expected
    assert cluster_representatives([(b, a) for a, b in pairs]) == expected
