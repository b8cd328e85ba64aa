"""Eval sets become token shards in the run folder, with the raw text's UTF-8 bytes (the eval itself:
test_scaling_run); a set the run cannot evaluate is listed with the reason."""

import json
import math
from types import SimpleNamespace

import pyarrow.parquet as pq
import pytest

from marin_assets.core.storage import Storage
from marin_assets.data.curate import eval_index
from marin_assets.train import eval_set_texts
from marin_assets.train.bits_per_byte import evaluation_metrics
from marin_assets_tests.train.eval_set_fixture import write_eval_set
from marin_assets_tests.train.mixture_fixture import BOS, EOS, SPECIALS, WORDS, build_mixture

TEXTS = ["the s1 v7 the o35 .", "the s2 v14 m3 the o70 . café"]  # "café" is <unk>: 1 token, 5 bytes


def _mixture(info, sources=("toy",)):
    return SimpleNamespace(tokenizer_uri=info.tokenizer_uri, bos_id=BOS, eos_id=EOS, sources=dict.fromkeys(sources))


def test_eval_sets_are_tokenized_into_the_run_folder_with_their_raw_bytes(tmp_path):
    info = build_mixture(tmp_path, train_docs=2, validation_docs=2)
    write_eval_set(tmp_path, "heldout", TEXTS)
    write_eval_set(tmp_path, "toy", ["the s1 v7 the o35 ."])  # the mixture's source is called toy too
    storage, run_dir = Storage(str(tmp_path)), str(tmp_path / "training" / "r")
    manifest = eval_set_texts.prepare(storage, _mixture(info), run_dir, names=["heldout", "absent", "toy"])
    entry = manifest["eval_sets"]["heldout"]
    assert entry["bytes"] == sum(len(t.encode("utf-8")) for t in TEXTS) and entry["documents"] == 2
    vocab = {w: i for i, w in enumerate(SPECIALS + WORDS)}
    rows = pq.read_table(tmp_path / "training" / "r" / "eval_sets" / "heldout" / "shard-00000.parquet")
    assert rows.column_names == ["tokens"]
    assert rows.column("tokens").to_pylist()[0] == [BOS, *(vocab[w] for w in TEXTS[0].split()), EOS]
    assert entry["tokens"] == sum(len(t.split()) + 2 for t in TEXTS)
    assert entry["glob"] == f"{run_dir}/eval_sets/heldout/*.parquet"
    assert "not materialized" in manifest["missing"]["absent"] and "name of a source" in manifest["missing"]["toy"]
    assert eval_set_texts.read_manifest(run_dir) == manifest  # what the trainer reads
    first = (tmp_path / "training" / "r" / "eval_sets" / "heldout" / "shard-00000.parquet").read_bytes()
    eval_set_texts.prepare(storage, _mixture(info), run_dir, names=["heldout"])
    assert (tmp_path / "training" / "r" / "eval_sets" / "heldout" / "shard-00000.parquet").read_bytes() == first


def test_an_eval_set_from_before_the_raw_text_and_a_folder_without_a_manifest_say_so(tmp_path):
    info = build_mixture(tmp_path, train_docs=2, validation_docs=2)
    write_eval_set(tmp_path, "old", TEXTS)
    (tmp_path / "eval" / "old" / eval_index.TEXTS).unlink()
    manifest = eval_set_texts.prepare(Storage(str(tmp_path)), _mixture(info), str(tmp_path / "run"), names=["old"])
    assert manifest["eval_sets"] == {} and "re-materialize" in manifest["missing"]["old"]
    assert eval_set_texts.read_manifest(str(tmp_path / "elsewhere")) == {"eval_sets": {}, "missing": {}}
    assert json.loads((tmp_path / "run" / "eval_sets" / "manifest.json").read_text()) == manifest


def test_an_eval_sets_bpb_uses_its_own_bytes_and_its_row_is_kind_eval_set(tmp_path):
    info = build_mixture(tmp_path, train_docs=2, validation_docs=4, validation_sources=("wiki",))
    counts = {"heldout": {"documents": 2, "tokens": 20, "bytes": 70}}
    result = evaluation_metrics(3.0, info.validation_glob, info.tokenizer_uri,
                                {"wiki": {"loss": 3.0, "tokens": 30.0}, "heldout": {"loss": 2.0, "tokens": 18.0}},
                                counts)
    assert result["metrics"]["bpb/heldout"] == pytest.approx(2.0 * 20 / (math.log(2) * 70))
    assert [(r["domain"], r["kind"]) for r in result["domains"]] == [
        ("all", "mixture"), ("wiki", "source"), ("heldout", "eval_set")]
    assert result["domains"][2]["bytes"] == 70 and result["domains"][2]["eval_tokens"] == 18.0


def test_both_launchers_prepare_every_registered_set_and_warn_of_each_missing_one(tmp_path):
    import logging

    from marin_assets.data.curate.eval_sets import load_eval_sets
    from marin_assets.train.registered_eval_sets import prepare_registered_eval_sets

    info = build_mixture(tmp_path, train_docs=2, validation_docs=2)
    logger, lines = logging.getLogger("launcher-test"), []
    handler = logging.Handler()
    handler.emit = lambda record: lines.append(record.getMessage())
    logger.addHandler(handler)
    manifest = prepare_registered_eval_sets(Storage(str(tmp_path)), _mixture(info), str(tmp_path / "run"), logger)
    names = load_eval_sets().names
    assert names and sorted(manifest["missing"]) == sorted(names)  # none materialized under this root
    assert lines == [f"eval set {n} will not be evaluated: {manifest['missing'][n]}" for n in sorted(names)]


def test_an_index_stored_out_of_order_is_refused(tmp_path):
    """decontaminate searches the index by bisection: an unsorted one would miss overlaps silently."""
    write_eval_set(tmp_path, "heldout", TEXTS, ngram=2)
    storage = Storage(str(tmp_path))
    index = eval_index.read_index(storage, "heldout")
    assert len(index) > 1 and (index[1:] > index[:-1]).all()
    path = tmp_path / "eval" / "heldout" / eval_index.NGRAMS
    table = pq.read_table(path)
    pq.write_table(table.take(list(range(table.num_rows))[::-1]), path)
    with pytest.raises(ValueError, match="not sorted"):
        eval_index.read_index(storage, "heldout")
