import json
import os

import pytest
from tokenizers import Tokenizer

from marin_assets.tokenize.tokenize_recipe import TokenizerKind, TokenizerSpec
from marin_assets.tokenize.tokenizer_files import (
    CONFIG_FILE, TOKENIZER_FILE, TokenizerError, build_tokenizer, sampled, summarize_tokenizer, tokenizer_hash,
)
from marin_assets_tests.tokenize.conftest import synthetic_texts

TEXTS = synthetic_texts("python_docs", 150) + ["héllo wörld ✓ 日本語", "def f(x):\n    return x"]


def _read(folder):
    return {name: open(os.path.join(folder, name), "rb").read() for name in sorted(os.listdir(folder))}


def test_training_is_deterministic_and_hf_loadable(tmp_path):
    spec = TokenizerSpec(name="t", vocab_size=400, sample_texts=["return value"])
    first = build_tokenizer(spec, TEXTS, str(tmp_path / "a"))
    second = build_tokenizer(spec, TEXTS, str(tmp_path / "b"))
    assert _read(tmp_path / "a") == _read(tmp_path / "b")
    assert first == second and first.hash == tokenizer_hash(str(tmp_path / "a"))
    assert (first.pad_id, first.bos_id, first.eos_id) == (0, 1, 2)
    assert 259 < first.vocab_size <= 400

    # What MaxText does with tokenizer_type=huggingface: AutoTokenizer on the folder, offline. Per call
    # (local_files_only), not HF_HUB_OFFLINE: huggingface_hub reads that variable once, when first
    # imported, so setting it here froze offline mode for every later test of this worker (the
    # stub-Hub push test then failed with OfflineModeIsEnabled whenever it ran after this one).
    from transformers import AutoTokenizer

    hf = AutoTokenizer.from_pretrained(str(tmp_path / "a"), local_files_only=True)
    assert (hf.pad_token_id, hf.bos_token_id, hf.eos_token_id) == (0, 1, 2)
    text = "héllo wörld ✓ 日本語 return value"
    raw = Tokenizer.from_file(str(tmp_path / "a" / TOKENIZER_FILE)).encode(text, add_special_tokens=False).ids
    assert hf(text, add_special_tokens=False).input_ids == raw
    assert hf.decode(raw) == text  # byte-level: lossless round trip
    assert first.sample_encodings["return value"] == hf("return value", add_special_tokens=False).input_ids


def test_a_different_recipe_gives_a_different_hash(tmp_path):
    a = build_tokenizer(TokenizerSpec(name="t", vocab_size=400), TEXTS, str(tmp_path / "a"))
    b = build_tokenizer(TokenizerSpec(name="t", vocab_size=300), TEXTS, str(tmp_path / "b"))
    assert a.hash != b.hash


def test_import_copies_a_local_tokenizer_json(tmp_path):
    trained = build_tokenizer(TokenizerSpec(name="t", vocab_size=300), TEXTS, str(tmp_path / "a"))
    spec = TokenizerSpec(name="imp", kind=TokenizerKind.IMPORT, import_path=str(tmp_path / "a" / TOKENIZER_FILE))
    imported = build_tokenizer(spec, [], str(tmp_path / "b"))
    assert imported.vocab_size == trained.vocab_size
    assert json.load(open(tmp_path / "b" / CONFIG_FILE))["bos_token"] == "<s>"


def test_import_errors_name_the_problem(tmp_path):
    with pytest.raises(TokenizerError, match="file not found"):
        build_tokenizer(TokenizerSpec(name="x", kind="import", import_path=str(tmp_path / "nope.json")), [],
                        str(tmp_path / "out"))
    build_tokenizer(TokenizerSpec(name="t", vocab_size=300, special_tokens={"pad": "[PAD]", "bos": "[B]",
                                                                            "eos": "[E]"}), TEXTS, str(tmp_path / "o"))
    spec = TokenizerSpec(name="x", kind="import", import_path=str(tmp_path / "o" / TOKENIZER_FILE))
    with pytest.raises(TokenizerError, match="lacks the special tokens"):
        build_tokenizer(spec, [], str(tmp_path / "out"))
    with pytest.raises(ValueError, match="import_path"):
        TokenizerSpec(name="x", kind="import")


def test_training_fraction_samples_by_stable_hash():
    rows = [("s", f"doc{i}", f"text {i}") for i in range(2000)]
    spec = TokenizerSpec(name="t", training_fraction=0.25, seed=3)
    kept = list(sampled(rows, spec))
    assert kept == list(sampled(reversed(rows), spec))[::-1]  # membership does not depend on order
    assert 400 < len(kept) < 600
    assert kept != list(sampled(rows, spec.model_copy(update={"seed": 4})))


def test_summary_refuses_a_config_whose_special_token_is_unknown(tmp_path):
    build_tokenizer(TokenizerSpec(name="t", vocab_size=300), TEXTS, str(tmp_path))
    config = json.load(open(tmp_path / CONFIG_FILE))
    config["eos_token"] = "<eos-missing>"
    json.dump(config, open(tmp_path / CONFIG_FILE, "w"))
    with pytest.raises(TokenizerError, match="eos_token"):
        summarize_tokenizer(str(tmp_path))


def test_training_on_no_documents_is_an_error(tmp_path):
    with pytest.raises(TokenizerError, match="no training documents"):
        build_tokenizer(TokenizerSpec(name="t"), [], str(tmp_path))
