"""A tiny tokenized mixture for training tests, built with plain functions (not the tokenize stage).

Everything is deterministic on any machine: the text comes from a seeded toy grammar (with enough
structure for the loss to fall), the tokenizer is a fixed word-level vocabulary, and the shards are
`tokens: list<int32>` Parquet rows of BOS + ids + EOS, laid out like `mixtures/<name>/`.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from marin_assets.data.sources.source_inventory import source_inventory
from marin_assets.data.sources.source_registry import load_sources

SPECIALS = ["<pad>", "<unk>", "<s>", "</s>"]
LINEAGE_SOURCE = "debian_licenses"  # the registered source the fixture mixture's lineage names (its text is the toy grammar)
PAD, UNK, BOS, EOS = range(4)
SUBJECTS = [f"s{i}" for i in range(40)]
VERBS = [f"v{i}" for i in range(30)]
OBJECTS = [f"o{i}" for i in range(120)]
MODIFIERS = [f"m{i}" for i in range(60)]
WORDS = SUBJECTS + VERBS + OBJECTS + MODIFIERS + [".", "and", "the"]


@dataclass(frozen=True)
class FixtureMixture:
    """The fields of the tokenize stage's MixtureInfo that training reads."""

    name: str
    train_glob: str
    validation_glob: str
    tokenizer_uri: str
    tokenizer_hash: str
    tokenizer_vocab_size: int
    seq_len: int
    pad_id: int = PAD
    bos_id: int = BOS
    eos_id: int = EOS
    train_tokens: int = 0
    validation_tokens: int = 0


def _document(rng: random.Random) -> str:
    sentences = []
    for _ in range(rng.randint(3, 12)):
        s = rng.choice(SUBJECTS)
        v = VERBS[(SUBJECTS.index(s) * 7 + rng.randint(0, 2)) % len(VERBS)]  # verbs depend on the subject
        o = OBJECTS[(VERBS.index(v) * 5 + rng.randint(0, 3)) % len(OBJECTS)]
        mods = " ".join(rng.choice(MODIFIERS[:10] if rng.random() < 0.8 else MODIFIERS) for _ in range(rng.randint(0, 2)))
        sentences.append(f"the {s} {v} {mods} the {o} .".replace("  ", " "))
    return " and ".join(sentences)


def write_tokenizer(folder: Path) -> int:
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = {tok: i for i, tok in enumerate(SPECIALS + WORDS)}
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok, pad_token="<pad>", unk_token="<unk>", bos_token="<s>", eos_token="</s>"
    )
    fast.save_pretrained(str(folder))
    return len(vocab)


def _encode(doc: str, vocab: dict[str, int]) -> list[int]:
    return [BOS] + [vocab[w] for w in doc.split()] + [EOS]


def write_shards(folder: Path, docs: list[list[int]], shards: int, sources: tuple[str, ...] = ()) -> int:
    """`sources`: name documents round-robin after them in a `source` column (as the mixture stage does)."""
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(shards):
        rows = docs[i::shards]
        columns = {"tokens": pa.array(rows, type=pa.list_(pa.int32()))}
        if sources:
            columns["source"] = pa.array([sources[j % len(sources)] for j in range(len(rows))])
        pq.write_table(pa.table(columns), folder / f"shard-{i:05d}.parquet")
    return sum(map(len, docs))


def build_mixture(root: Path, name: str = "tiny", train_docs: int = 600, validation_docs: int = 40, seq_len: int = 128,
                  validation_sources: tuple[str, ...] = ()) -> FixtureMixture:
    """Write mixtures/<name>/{train,validation,tokenizer}/ + mixture.json under a storage root."""
    base = root / "mixtures" / name
    vocab_size = write_tokenizer(base / "tokenizer")
    vocab = {tok: i for i, tok in enumerate(SPECIALS + WORDS)}
    rng = random.Random(0)
    docs = [_encode(_document(rng), vocab) for _ in range(train_docs + validation_docs)]
    train_tokens = write_shards(base / "train", docs[:train_docs], shards=2)
    validation_tokens = write_shards(base / "validation", docs[train_docs:], shards=1, sources=validation_sources)
    info = FixtureMixture(
        name=name,
        train_glob=str(base / "train" / "*.parquet"),
        validation_glob=str(base / "validation" / "*.parquet"),
        tokenizer_uri=str(base / "tokenizer"),
        tokenizer_hash="fixture-word-level-v1",
        tokenizer_vocab_size=vocab_size,
        seq_len=seq_len,
        train_tokens=train_tokens,
        validation_tokens=validation_tokens,
    )
    # The keys of the tokenize stage's mixture.json (MixtureInfo), one toy source.
    source = {"target_weight": 1.0, "realised_weight": 1.0, "epochs": 1.0,
              "train_tokens": train_tokens, "validation_tokens": validation_tokens}
    (base / "mixture.json").write_text(json.dumps({**info.__dict__, "sources": {"toy": source}}, indent=2))
    # Lineage the training gate checks: the mixture's manifest names a registered source whose raw
    # inventory (its real files, as raw_corpus would write it) passes the compliance decision.
    spec = load_sources().get(LINEAGE_SOURCE)
    (base / "_provenance.json").write_text(json.dumps({"licenses": {LINEAGE_SOURCE: spec.license}}))
    (base / "_COMMITTED").write_text("ok\n")
    raw = root / "raw" / LINEAGE_SOURCE
    raw.mkdir(parents=True, exist_ok=True)
    (raw / "inventory.json").write_text(json.dumps(source_inventory(spec)))
    (raw / "_COMMITTED").write_text("ok\n")
    return info
