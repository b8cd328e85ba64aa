"""Exact keys, MinHash signatures and LSH band keys, and deterministic cluster representatives."""

from __future__ import annotations

import random

import numpy as np
import pytest

from marin_assets.data.dedup.dedup_keys import (
    MinHasher,
    band_key_matrix,
    band_keys,
    cluster_representatives,
    exact_key,
    lsh_star_edges,
    shingle_hashes,
    word_hashes,
)


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


def test_batch_signatures_equal_one_by_one_whatever_the_batch():
    texts = [_document(s, words=w) for s, w in zip(range(12), [400, 3, 0, 1, 5, 6, 50, 4, 400, 2, 7, 90])]
    texts += ["", "   \n\t", "ΤΕΛΟΣ ΟΔΟΣ Straße", "İSTANBUL ÇAĞ Ünïcode", "naïve café “quoted” ©"]
    hasher = MinHasher(num_perm=112, shingle_size=5, seed=1)
    signatures, has_words = hasher.signatures(texts)
    for text, sig, words in zip(texts, signatures, has_words):
        one = hasher.signature(text)
        assert words == (one is not None)
        if words:
            assert np.array_equal(sig, one)
            assert np.array_equal(hasher.signatures([text, texts[0]])[0][0], one)  # batch neighbours don't matter
    assert band_key_matrix(signatures[has_words], 14, 8).tolist() == [
        band_keys(s, 14, 8) for s, words in zip(signatures, has_words) if words
    ]


def test_lower_casing_matches_str_lower_including_non_ascii():
    # byte-table lowering for ASCII, str.lower where non-ASCII letters change case (final sigma, dotted I)
    for text in ["ΟΔΟΣ ΟΔΟΣ", "İi Iı", "ÀÉÎ õü", "plain ASCII Text", "mixed “Quotes” and ÉCOLE"]:
        assert np.array_equal(shingle_hashes(text, 2), shingle_hashes(text.lower(), 2))
        words = text.lower().split()
        assert shingle_hashes(text, 1).size == len(words)
    assert not np.array_equal(shingle_hashes("ΟΔΟΣ", 1), shingle_hashes("ΟΔΟσ", 1))  # 'ς' is not 'σ'


def test_lsh_star_edges_join_every_bucket_to_its_smallest_row():
    keys = np.array([[5, 1], [7, 2], [5, 3], [9, 2], [5, 4], [8, 8]], dtype=np.int64)
    assert lsh_star_edges(keys).tolist() == [[0, 2], [0, 4], [1, 3]]
    assert lsh_star_edges(np.empty((0, 14), dtype=np.int64)).shape == (0, 2)


def test_lsh_decisions_equal_datasketch_on_the_same_signatures():
    """Given the same signatures, our banding + clustering flags exactly what datasketch MinHashLSH does."""
    from datasketch import MinHash, MinHashLSH  # the bench group, installed with the test environment

    base = [_document(s, words=120) for s in range(40)]
    light = [_edit(d, 3, i) for i, d in enumerate(base[:15])]  # near duplicates
    heavy = [_edit(d, 40, i) for i, d in enumerate(base[15:25])]  # a third of the words changed
    texts = base + light + heavy
    ids = [f"d{i:03d}" for i in range(len(texts))]
    lsh, pairs, signatures = MinHashLSH(num_perm=112, params=(14, 8)), set(), []
    for doc_id, text in zip(ids, texts):
        mh = MinHash(num_perm=112, seed=1)
        mh.update_batch([w.encode() for w in text.split()])
        pairs.update(tuple(sorted((doc_id, other))) for other in lsh.query(mh))
        lsh.insert(doc_id, mh)
        signatures.append(mh.hashvalues)
    edges = lsh_star_edges(band_key_matrix(np.stack(signatures), 14, 8))
    ours = cluster_representatives((ids[a], ids[b]) for a, b in edges.tolist())
    assert ours == cluster_representatives(pairs)
    assert set(ids[15:40]) & set(ours) == set()  # heavy edits and strangers stay
    assert len(ours) >= 10


@pytest.mark.slow
def test_in_memory_lsh_removes_what_the_spark_job_removes(spark):
    from marin_assets.data.clean.cleaning_job import near_duplicates

    rng = np.random.default_rng(0)
    keys = rng.integers(0, 3000, size=(300, 14), dtype=np.int64)  # small key space: shared buckets
    keys[:, 3:] += np.arange(300)[:, None] * 1000  # most bands unique per document
    keys[[7, 70, 170], 0], keys[[170, 250], 1] = -1, -2  # a chain: one cluster across two bands
    ids = [f"doc-{i:04d}" for i in range(300)]  # rows in id order
    docs = spark.createDataFrame(list(zip(ids, keys.tolist())), "id string, bands array<long>")
    edges = lsh_star_edges(keys)
    in_memory = sorted(cluster_representatives((ids[a], ids[b]) for a, b in edges.tolist()))
    assert {"doc-0070", "doc-0170", "doc-0250"} <= set(in_memory) and 20 < len(in_memory) < 200
    assert sorted(r["member"] for r in near_duplicates(docs).collect()) == in_memory


def test_words_are_split_where_str_split_splits_including_non_ascii_whitespace():
    # no-break space, em space, U+001C: str.split (and so shingle_set, the exact Jaccard) splits there
    text = "Alpha\xa0beta gamma\u2003delta epsilon\x1czeta ÉTÉ eta"
    spaced = " ".join(text.split())
    assert len(word_hashes(text)) == len(text.split()) == 8
    assert (word_hashes(text) == word_hashes(spaced)).all()
    hasher = MinHasher()
    signatures, _ = hasher.signatures([text, "another text", spaced.lower()])
    assert (signatures[0] == signatures[2]).all() and (hasher.signature(text) == signatures[0]).all()
