"""Train or import a tokenizer and save it as an HF tokenizer folder MaxText loads offline.

The folder holds exactly `tokenizer.json` + `tokenizer_config.json` (what
`transformers.AutoTokenizer.from_pretrained(dir)` and MaxText's `tokenizer_type=huggingface` read);
its hash over those two files is the tokenizer's identity, recorded in every tokenized shard.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

from marin_assets.core import layout
from marin_assets.core.hashing import hash_json
from marin_assets.core.storage import StagedOutput, Storage, folder_hash
from marin_assets.tokenize.tokenize_recipe import TokenizerKind, TokenizerSpec

TOKENIZER_FILE = "tokenizer.json"
CONFIG_FILE = "tokenizer_config.json"
TOKENIZER_FILES = (TOKENIZER_FILE, CONFIG_FILE)
INFO_FILE = "tokenizer_info.json"  # derived summary; not part of the tokenizer's hash


class TokenizerError(ValueError):
    pass


def train_bpe(texts: Iterable[str], spec: TokenizerSpec) -> Tokenizer:
    """Byte-level BPE; the same texts in the same order and the same spec give the same merges."""
    tok = Tokenizer(models.BPE(unk_token=None))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=spec.vocab_size,
        min_frequency=spec.min_frequency,
        special_tokens=spec.special_tokens.ordered(),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(texts, trainer)
    return tok


def import_tokenizer(spec: TokenizerSpec) -> Tokenizer:
    if not spec.import_path or not os.path.exists(spec.import_path):
        raise TokenizerError(f"tokenizer.import_path: file not found: {spec.import_path}")
    try:
        tok = Tokenizer.from_file(spec.import_path)
    except Exception as exc:  # tokenizers raises a bare Exception on a bad file
        raise TokenizerError(f"tokenizer.import_path: {spec.import_path} is not a tokenizer.json: {exc}") from None
    missing = [t for t in spec.special_tokens.ordered() if tok.token_to_id(t) is None]
    if missing:
        raise TokenizerError(f"imported tokenizer {spec.import_path} lacks the special tokens {missing}")
    return tok


def hf_config(spec: TokenizerSpec, tok: Tokenizer) -> dict:
    """tokenizer_config.json for a generic fast tokenizer; no hub lookups needed to load it."""
    special = spec.special_tokens
    return {
        "tokenizer_class": "PreTrainedTokenizerFast",
        "model_max_length": 1_000_000_000,
        "pad_token": special.pad,
        "bos_token": special.bos,
        "eos_token": special.eos,
        "clean_up_tokenization_spaces": False,
        "added_tokens_decoder": {
            str(tok.token_to_id(t)): {"content": t, "special": True, "lstrip": False, "rstrip": False,
                                      "normalized": False, "single_word": False}
            for t in special.ordered()
        },
    }


def write_tokenizer_dir(tok: Tokenizer, spec: TokenizerSpec, folder: str) -> TokenizerSummary:
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, TOKENIZER_FILE), "w") as f:
        f.write(tok.to_str(pretty=True))
    with open(os.path.join(folder, CONFIG_FILE), "w") as f:
        json.dump(hf_config(spec, tok), f, indent=2, sort_keys=True)
    summary = summarize_tokenizer(folder, spec.sample_texts)
    with open(os.path.join(folder, INFO_FILE), "w") as f:
        json.dump(summary.as_dict(), f, indent=2, sort_keys=True)
    return summary


def build_tokenizer(spec: TokenizerSpec, texts: Iterable[str], folder: str) -> TokenizerSummary:
    if spec.kind == TokenizerKind.IMPORT:
        return write_tokenizer_dir(import_tokenizer(spec), spec, folder)
    seen = [0]

    def counted():
        for text in texts:
            seen[0] += 1
            yield text

    tok = train_bpe(counted(), spec)
    if seen[0] == 0:
        raise TokenizerError(f"tokenizer {spec.name!r}: no training documents (sources empty or training_fraction "
                             "kept none)")
    return write_tokenizer_dir(tok, spec, folder)


def build_tokenizer_output(spec: TokenizerSpec, texts: Iterable[str], staged: StagedOutput) -> TokenizerSummary:
    """`tokenizers` writes local files only: build locally, then copy into the (maybe remote) staging folder."""
    if staged.storage.is_local:
        return build_tokenizer(spec, texts, staged.path)
    with tempfile.TemporaryDirectory() as tmp:
        summary = build_tokenizer(spec, texts, tmp)
        for name in (*TOKENIZER_FILES, INFO_FILE):
            staged.storage.fs.put_file(os.path.join(tmp, name), staged.join(name))
        return summary


@contextlib.contextmanager
def local_tokenizer_dir(storage: Storage, name: str) -> Iterator[str]:
    """A local folder holding the committed tokenizer `name` (downloaded when storage is remote)."""
    uri = storage.require_committed(layout.TOKENIZER, name)
    if storage.is_local:
        yield uri
        return
    with tempfile.TemporaryDirectory() as tmp:
        for file in TOKENIZER_FILES:
            storage.fs.get_file(f"{uri}/{file}", os.path.join(tmp, file))
        yield tmp


def tokenizer_hash(folder: str) -> str:
    """The tokenizer's identity: the folder hash of its two files (local path or any fsspec URI)."""
    return folder_hash(folder, TOKENIZER_FILES)


@dataclass(frozen=True)
class TokenizerSummary:
    hash: str
    vocab_size: int
    pad_id: int
    bos_id: int
    eos_id: int
    sample_encodings: dict[str, list[int]]

    def as_dict(self) -> dict:
        return {"tokenizer_hash": self.hash, "vocab_size": self.vocab_size, "pad_id": self.pad_id,
                "bos_id": self.bos_id, "eos_id": self.eos_id, "sample_encodings": self.sample_encodings}


def summarize_tokenizer(folder: str, sample_texts: Iterable[str] = ()) -> TokenizerSummary:
    tok = Tokenizer.from_file(os.path.join(folder, TOKENIZER_FILE))
    with open(os.path.join(folder, CONFIG_FILE)) as f:
        config = json.load(f)
    ids = {}
    for role in ("pad", "bos", "eos"):
        token = config.get(f"{role}_token")
        token_id = tok.token_to_id(token) if token else None
        if token_id is None:
            raise TokenizerError(f"{folder}/{CONFIG_FILE}: {role}_token {token!r} is not in the vocabulary")
        ids[role] = token_id
    samples = {text: tok.encode(text, add_special_tokens=False).ids for text in sample_texts}
    return TokenizerSummary(tokenizer_hash(folder), tok.get_vocab_size(with_added_tokens=True),
                            ids["pad"], ids["bos"], ids["eos"], samples)


def sampled(texts: Iterable[tuple[str, str, str]], spec: TokenizerSpec) -> Iterator[str]:
    """Texts of (source, id, text) rows kept by a stable seeded hash when training_fraction < 1."""
    for source, doc_id, text in texts:
        if spec.training_fraction >= 1 or _unit_hash(spec.seed, source, doc_id) < spec.training_fraction:
            yield text


def _unit_hash(seed: int, source: str, doc_id: str) -> float:
    return int(hash_json([seed, source, doc_id])[:13], 16) / 16**13
