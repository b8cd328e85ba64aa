"""MinHash hash families: the registry, the recipe setting, and the `datasketch` family's bit-identity
with datasketch's own MinHash (which the default `polynomial` family does not have, nor need: both are
judged by precision and recall against exact Jaccard in test_hash_family_quality.py)."""

from __future__ import annotations

import pickle
import random

import numpy as np
import pytest
from datasketch import MinHash
from datasketch.hashfunc import sha1_hash32
from datasketch.minhash import _fmix

from marin_assets.data.clean.cleaning_recipe import CleaningRecipe, DedupSettings, load_cleaning_recipe
from marin_assets.data.dedup.dedup_keys import MinHasher, band_key_matrix
from marin_assets.data.dedup.hash_families import family_names, hash_family, register
from marin_assets.data.dedup.hash_families.datasketch_sha1 import fmix32
from marin_assets.fastpath.hashing.sha1_kernel import CHUNKS, sha1_hash32_slices
from marin_assets.fastpath.hashing.lowercase_words import UNICODE_SPACES, lowered, space_mask, word_spans
from marin_assets.data.dedup.lsh_bands import bands_array

WORDS = ["alpha", "Beta", "GAMMA", "ΟΔΟΣ", "İSTANBUL", "naïve", "café", "“quoted”", "Straße", "ǅemal", "ﬁne",
         "日本語", "emoji🙂", "x", "Ünïcode", "\xa0nbsp", "em\u2003space", "sep\x1cx", "tab\there", "line\nbreak"]  # fmt: skip
TEXTS = ["one", "two words", "a b c d", "a b c d e", "  Leading and  trailing\n\n", "ΟΔΟΣ ΟΔΟΣ ΟΔΟΣ ΟΔΟΣ ΟΔΟΣ ΟΔΟΣ",
         "repeat repeat repeat repeat repeat repeat repeat repeat", "İ", "日本語のテキスト"]  # fmt: skip


def _random_texts(count: int, seed: int = 0) -> list[str]:
    rng = random.Random(seed)
    return [" ".join(rng.choice(WORDS) for _ in range(rng.randrange(1, 80))) for _ in range(count)]


def datasketch_signature(text: str, num_perm: int = 112, seed: int = 1, shingle_size: int = 5) -> np.ndarray:
    """What a datasketch user computes: MinHash over the word n-grams of text.lower().split()."""
    words = text.lower().split()
    grams = {" ".join(words[i : i + shingle_size]) for i in range(len(words) - shingle_size + 1)} or {" ".join(words)}
    minhash = MinHash(num_perm=num_perm, seed=seed)
    minhash.update_batch([gram.encode("utf-8") for gram in grams])
    return minhash.hashvalues


def test_datasketch_family_signatures_are_bit_identical_to_datasketch():
    texts = TEXTS + _random_texts(150)
    hasher = MinHasher(112, 5, 1, family="datasketch")
    signatures, has_words = hasher.signatures(texts)
    assert has_words.all()
    for text, signature in zip(texts, signatures):
        expected = datasketch_signature(text)
        assert np.array_equal(signature, expected), text
        assert np.array_equal(hasher.signature(text), expected)


@pytest.mark.parametrize("num_perm, seed, shingle_size", [(64, 7, 3), (128, 42, 1)])
def test_datasketch_family_matches_at_other_parameters(num_perm, seed, shingle_size):
    hasher = MinHasher(num_perm, shingle_size, seed, family="datasketch")
    for text in TEXTS + _random_texts(20, seed=seed):
        assert np.array_equal(hasher.signature(text), datasketch_signature(text, num_perm, seed, shingle_size))


def test_polynomial_family_is_not_datasketchs():
    hasher = MinHasher(112, 5, 1, family="polynomial")
    assert not any(np.array_equal(hasher.signature(t), datasketch_signature(t)) for t in TEXTS)


def test_a_text_without_words_has_no_signature_in_every_family():
    for name in family_names():
        _, has_words = MinHasher(family=name).signatures(["", " \n\t\xa0", "word"])
        assert has_words.tolist() == [False, False, True]
        assert MinHasher(family=name).signature("   ") is None


def test_sha1_kernel_is_datasketchs_sha1_hash32_at_every_padding_boundary():
    # one block holds up to 55 bytes, two up to 119 (their own kernels); longer slices take the hashlib
    # path
    buffer = bytes(range(256)) * 8 + "ΟΔΟΣ straße".encode()
    lengths = [0, 1, 54, 55, 56, 63, 64, 119, 120, 183, 184, 200, 300, 1015, 1016, 1100]
    starts = np.array([7 * i for i in range(len(lengths))] + [2048])
    ends = starts + np.array(lengths + [len("ΟΔΟΣ straße".encode())])
    expected = [sha1_hash32(buffer[s:e]) for s, e in zip(starts.tolist(), ends.tolist())]
    assert sha1_hash32_slices(buffer, starts, ends).tolist() == expected
    assert sha1_hash32_slices(buffer, starts[:0], ends[:0]).size == 0


def test_sha1_kernel_hashes_more_slices_than_one_chunk():
    rng = np.random.default_rng(3)
    buffer = rng.integers(0, 256, 50_000, dtype=np.uint8).tobytes()
    starts = rng.integers(0, 49_800, 2 * max(CHUNKS.values()) + 123)
    ends = starts + rng.integers(0, 130, starts.size)
    got = sha1_hash32_slices(buffer, starts, ends)
    sample = rng.choice(starts.size, 2000, replace=False).tolist() + [starts.size - 1]
    assert all(got[i] == sha1_hash32(buffer[starts[i] : ends[i]]) for i in sample)


def test_sha1_hashes_long_slices_of_every_block_count_mixed_with_kernel_ones():
    rng = np.random.default_rng(5)
    buffer = rng.integers(0, 256, 80_000, dtype=np.uint8).tobytes()
    lengths = rng.integers(0, 1016, 3000)  # 1 to 16 blocks each, in random order: kernels and hashlib
    starts = rng.integers(0, 80_000 - 1016, lengths.size)
    got = sha1_hash32_slices(buffer, starts, starts + lengths)
    assert got.tolist() == [sha1_hash32(buffer[s : s + n]) for s, n in zip(starts.tolist(), lengths.tolist())]


def test_fmix_step_is_datasketchs():
    values = np.array([0, 1, 0xDEADBEEF, 0xFFFFFFFF], dtype=np.uint32)
    assert np.array_equal(fmix32(values), _fmix(values, 32))


def test_registry_refuses_unknown_and_duplicate_names():
    assert {"datasketch", "polynomial"} <= set(family_names())
    with pytest.raises(ValueError, match="unknown MinHash hash family 'sha3'"):
        hash_family("sha3")
    with pytest.raises(ValueError, match="registered twice"):
        register("datasketch")(type("Another", (), {}))


def test_recipe_default_is_the_polynomial_family_and_unknown_names_fail():
    """Issue 52: the fast family by default (its quality: test_hash_family_quality.py); datasketch on request."""
    assert CleaningRecipe().dedup.hash_family == "polynomial"
    assert load_cleaning_recipe().dedup.hash_family == "polynomial"  # the shipped recipe says so too
    assert DedupSettings(hash_family="datasketch").hash_family == "datasketch"
    with pytest.raises(ValueError, match="unknown MinHash hash family"):
        DedupSettings(hash_family="sha3")


def test_hasher_pickles_small_and_hashes_the_same():
    hasher = MinHasher(family="datasketch")
    copy = pickle.loads(pickle.dumps(hasher))
    assert len(pickle.dumps(hasher)) < 100_000  # Spark pickles it into every task
    texts = _random_texts(30)
    assert np.array_equal(copy.signatures(texts)[0], hasher.signatures(texts)[0])


def test_bands_array_holds_each_documents_band_keys_and_null_without_words():
    texts = ["", "some words here for the bands", "   ", "another document with words"]
    signatures, has_words = MinHasher().signatures(texts)
    keys = band_key_matrix(signatures[has_words], 14, 8).tolist()
    assert bands_array(signatures, has_words, 14, 8).to_pylist() == [None, keys[0], None, keys[1]]


def test_unicode_spaces_are_every_non_ascii_character_str_split_splits_on():
    assert set(UNICODE_SPACES) == {c for c in range(0x80, 0x110000) if chr(c).isspace()}
    assert all(len(chr(c).encode()) in (2, 3) for c in UNICODE_SPACES)  # what space_mask looks for


def test_byte_comparisons_are_str_lower_and_str_isspace_on_ascii():
    every_byte = np.arange(256, dtype=np.uint8)
    ascii_lower = [ord(chr(b).lower()) for b in range(0x80)]
    assert lowered(every_byte).tolist() == ascii_lower + list(range(0x80, 0x100))  # non-ASCII bytes unchanged
    assert space_mask(every_byte[:0x80]).tolist() == [chr(b).isspace() for b in range(0x80)]


@pytest.mark.parametrize("as_arrow", [False, True])
def test_word_spans_are_str_lower_split_for_str_and_arrow_batches(as_arrow):
    import pyarrow as pa

    rng = random.Random(3)
    pieces = [chr(c) for c in UNICODE_SPACES] + [" ", "\n", "\x1c", "\u200b", "\u180e"] + WORDS  # \u200b: not a space
    texts = ["".join(rng.choice(pieces) for _ in range(rng.randrange(0, 30))) for _ in range(400)] + [""]
    batch = pa.array(texts + [None]) if as_arrow else texts + [""]
    spans = word_spans(batch)
    words = [bytes(lowered(spans.data[s:e])).decode() for s, e in zip(spans.starts, spans.ends)]
    expected = [text.lower().split() for text in texts + [""]]
    assert spans.counts.tolist() == [len(w) for w in expected]
    assert words == [w for ws in expected for w in ws]


def test_arrow_batches_hash_like_str_batches_in_every_family():
    import pyarrow as pa

    texts = TEXTS + _random_texts(60) + ["", " \xa0 "]
    sliced = pa.array(["leading", *texts, "trailing"])[1:-1]  # an offset into shared buffers
    for name in family_names():
        hasher = MinHasher(family=name)
        expected = hasher.signatures(texts)
        for batch in (pa.array(texts), pa.array(texts, pa.large_string()), sliced):
            got = hasher.signatures(batch)
            assert np.array_equal(got[0], expected[0]) and np.array_equal(got[1], expected[1])
