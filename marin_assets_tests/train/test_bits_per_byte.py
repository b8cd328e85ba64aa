"""Bits per byte: the validation text's UTF-8 bytes recovered from its tokens, per source."""

import math

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from marin_assets.train.bits_per_byte import bits_per_byte, evaluation_metrics, validation_text_bytes

TEXTS = {"wiki": ["Héllo wörld, ça va?", "naïve café"], "code": ["def f(x):\n    return x  # 日本"]}


def _byte_level_tokenizer(folder):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.train_from_iterator([t for texts in TEXTS.values() for t in texts],
                            trainers.BpeTrainer(vocab_size=300, special_tokens=["<s>"],
                                                initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    folder.mkdir()
    tok.save(str(folder / "tokenizer.json"))
    return tok


def test_bytes_per_source_are_the_texts_utf8_bytes(tmp_path):
    tok = _byte_level_tokenizer(tmp_path / "tokenizer")
    bos = tok.token_to_id("<s>")
    rows = [(source, [bos, *tok.encode(text).ids]) for source, texts in TEXTS.items() for text in texts]
    (tmp_path / "validation").mkdir()
    for i, chunk in enumerate((rows[:2], rows[2:])):
        pq.write_table(pa.table({"source": [s for s, _ in chunk], "tokens": [t for _, t in chunk]}),
                       tmp_path / "validation" / f"shard-{i:05d}.parquet")
    glob = str(tmp_path / "validation" / "shard-*.parquet")
    counts = validation_text_bytes(glob, str(tmp_path / "tokenizer"))
    for source, texts in TEXTS.items():
        assert counts[source]["bytes"] == sum(len(t.encode("utf-8")) for t in texts)  # special tokens skipped
        assert counts[source]["documents"] == len(texts)
    assert counts["all"]["tokens"] == sum(len(t) for _, t in rows)
    result = evaluation_metrics(2.0, glob, str(tmp_path / "tokenizer"), {"code": {"loss": 1.5, "tokens": 9.0}})
    total, code = counts["all"], counts["code"]
    assert result["metrics"]["bpb"] == pytest.approx(2.0 * total["tokens"] / (math.log(2) * total["bytes"]))
    assert result["metrics"]["bpb/code"] == pytest.approx(1.5 * code["tokens"] / (math.log(2) * code["bytes"]))
    assert [(r["domain"], r["kind"]) for r in result["domains"]] == [("all", "mixture"), ("code", "source")]


def test_bits_per_byte_is_unknown_without_a_loss_or_bytes():
    assert bits_per_byte(None, 10, 10) is None and bits_per_byte(float("nan"), 10, 10) is None
    assert bits_per_byte(1.0, 10, 0) is None
    assert bits_per_byte(math.log(2), 4, 4) == pytest.approx(1.0)  # one bit per token, one token per byte
    assert evaluation_metrics(3.0, None, "unused") == {"metrics": {"loss": 3.0}, "validation_text": {}, "domains": []}
