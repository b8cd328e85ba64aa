"""The stage through Dagster: real materializations on a small corpus written like the data stage's."""

import shutil

import dagster as dg
import pyarrow.parquet as pq
import pytest
import yaml

from marin_assets.core import layout
from marin_assets.core.recipes import PACKAGE_RECIPES
from marin_assets.core.storage import Storage
from marin_assets.resources.storage_resource import StorageResource
from marin_assets.tokenize.mixture_info import (
    MIXTURE_FILE, TokenizerCompatibilityError, check_vocab_fits, load_mixture_info,
)
from marin_assets.tokenize.mixture_plan import MixtureError
from marin_assets.tokenize.shards import read_shards, shard_table, write_shard
from marin_assets.tokenize.tokenizer_files import tokenizer_hash
from marin_assets_tests.gcs_emulator import gcs_emulator  # noqa: F401  (fixture)
from marin_assets_tests.tokenize.conftest import (
    SOURCES, build_stage, make_corpus, materialize, materialize_mixture, write_cleaned_source,
)


def _materialization(result, key: str):
    return result.asset_materializations_for_node(key)[0]


def _check(result):
    (evaluation,) = result.get_asset_check_evaluations()
    return evaluation


def _copy_stage(built_stage, tmp_path) -> str:
    root = str(tmp_path / "copy")
    shutil.copytree(built_stage[0].root_uri, root)
    return root


def _run_check_only(root: str):
    """The check on the mixture as it is on storage (no re-materialization in between)."""
    from marin_assets_tests.stage_definitions import mixture
    from marin_assets_tests.stage_definitions import tokenizer_compatible

    job = dg.define_asset_job("check_only", selection=dg.AssetSelection.checks(tokenizer_compatible))
    defs = dg.Definitions(assets=[mixture], asset_checks=[tokenizer_compatible], jobs=[job],
                          resources={"storage": StorageResource(root_uri=root)})
    # A check-only selection has no asset to take the partition from: pass it as the run tag.
    return defs.resolve_job_def("check_only").execute_in_process(tags={"dagster/partition": "sample"},
                                                                 raise_on_error=False)


def test_stage_outputs_and_metadata(built_stage):
    storage, results = built_stage
    tok = _materialization(results["tokenizer"], "tokenizer")
    folder = storage.uri(layout.TOKENIZER, "bpe1k")
    assert tok.tags["dagster/data_version"] == tokenizer_hash(folder) == tok.metadata["tokenizer_hash"].value
    assert tok.metadata["bos_id"].value == 1 and tok.metadata["vocab_size"].value > 259
    assert "Hello, world!" in [r.data["text"] for r in tok.metadata["sample_encodings"].value.records]

    for source in SOURCES:
        meta = _materialization(results[source], "tokenized_source").metadata
        assert meta["documents"].value == 400 and meta["tokens"].value > 400 * 20
        assert meta["tokenizer_hash"].value == tokenizer_hash(folder)
        assert sum(r.data["documents"] for r in meta["tokens_per_document_histogram"].value.records) == 400

    info = load_mixture_info(storage, "sample")
    assert info.tokenizer_uri == folder and info.seq_len == 128 and info.tokenizer_vocab_size == tok.metadata["vocab_size"].value
    assert info.train_tokens == sum(s.train_tokens for s in info.sources.values())
    target = yaml.safe_load((PACKAGE_RECIPES / "mixtures" / "sample.yaml").read_text())["train_tokens"]
    assert abs(info.train_tokens - target) < 2_000 and info.validation_tokens > 0
    assert {n: s.target_weight for n, s in info.sources.items()} == {"debian_handbook": 0.6, "python_docs": 0.25, "debian_licenses": 0.1,
                                                                          "dirty_web": 0.05}
    upsampled = sorted(n for n, s in info.sources.items() if s.epochs > 1)
    assert {"debian_licenses", "python_docs"} <= set(upsampled)  # the fixture corpus is far smaller than the target
    assert [w.split("'")[1] for w in info.warnings] == upsampled  # each repeat is announced
    train = read_shards(sorted(storage.fs.glob(info.train_glob)))
    validation = read_shards(sorted(storage.fs.glob(info.validation_glob)))
    assert sum(len(t) for t in train.column("tokens").to_pylist()) == info.train_tokens
    assert not set(train.column("id").to_pylist()) & set(validation.column("id").to_pylist())
    assert _check(results["mixture"]).passed
    meta = _materialization(results["mixture"], "mixture").metadata
    assert meta["train_glob"].value == info.train_glob and {r.data["source"]: r.data["target_weight"] for r in meta["sources"].records}["debian_handbook"] == 0.6


@pytest.mark.slow
def test_same_recipe_and_inputs_give_byte_identical_outputs(built_stage, tmp_path):
    storage, results = built_stage
    make_corpus(Storage(str(tmp_path)))
    again = build_stage(str(tmp_path))
    for key in ("tokenizer", "mixture"):
        assert (_materialization(again[key], key).tags["dagster/data_version"]
                == _materialization(results[key], key).tags["dagster/data_version"])
    for parts in ((layout.TOKENIZER, "bpe1k"), (layout.MIXTURES, "sample", "train"), (layout.MIXTURES, "sample", "validation"),
                  *((layout.TOKENIZED, s) for s in SOURCES)):
        files = [f for f in storage.list_files(*parts) if f != MIXTURE_FILE]
        assert files == Storage(str(tmp_path)).list_files(*parts) and files
        assert storage.content_hash(*parts) == Storage(str(tmp_path)).content_hash(*parts)


def test_mixture_refuses_sources_from_another_tokenizer(built_stage, tmp_path):
    root = _copy_stage(built_stage, tmp_path)
    storage = Storage(root)
    shard = storage.uri(layout.TOKENIZED, "dirty_web", "shard-00000.parquet")
    table = pq.read_table(shard)
    write_shard(shard_table(table["id"], table["source"], table["tokens"].combine_chunks(), "f" * 64), shard)
    with pytest.raises(TokenizerCompatibilityError, match=r"sources \['dirty_web'\] were tokenized with a "
                       r"different tokenizer .* re-materialize tokenized_source"):
        materialize_mixture(root)


def test_check_fails_on_a_tampered_shard_and_a_too_small_model_vocab(built_stage, tmp_path, monkeypatch):
    root = _copy_stage(built_stage, tmp_path)
    storage = Storage(root)
    shard = storage.uri(layout.MIXTURES, "sample", "train", "shard-00000.parquet")
    table = pq.read_table(shard)
    write_shard(shard_table(table["id"], table["source"], table["tokens"].combine_chunks(), "e" * 64), shard)
    result = _run_check_only(root)
    evaluation = _check(result)
    assert not evaluation.passed and "sources ['sample/train'] were tokenized" in evaluation.description
    assert "debian_licenses" in evaluation.description

    # A recipe whose models have fewer ids than the tokenizer: the rebuilt mixture is blocked.
    recipes = tmp_path / "recipes"
    shutil.copytree(PACKAGE_RECIPES, recipes)
    sample = yaml.safe_load((recipes / "mixtures" / "sample.yaml").read_text())
    (recipes / "mixtures" / "sample.yaml").write_text(yaml.safe_dump({**sample, "model_vocab_size": 300}))
    monkeypatch.setenv("MARIN_RECIPES_DIR", str(recipes))
    evaluation = _check(materialize_mixture(root, raise_on_error=False))
    assert not evaluation.passed and "the model's vocab_size is 300" in evaluation.description
    info = load_mixture_info(storage, "sample")
    with pytest.raises(TokenizerCompatibilityError, match="set vocab_size >= "):
        check_vocab_fits(info, 300)
    check_vocab_fits(info, 1024)


def test_an_empty_source_is_tokenized_visibly_and_refused_by_the_mixture(built_stage, tmp_path):
    from marin_assets_tests.stage_definitions import tokenized_source

    root = _copy_stage(built_stage, tmp_path)
    write_cleaned_source(Storage(root), "dirty_web", [], files=1)
    result = materialize([tokenized_source], root, partition_key="dirty_web")
    meta = _materialization(result, "tokenized_source").metadata
    assert meta["documents"].value == 0 and meta["tokens"].value == 0
    with pytest.raises(MixtureError, match="source 'dirty_web' is empty: 0 documents"):
        materialize_mixture(root)


def test_check_hashes_the_tokenizer_folder_on_gcs(built_stage, gcs_emulator):
    """The stage copied to gs:// (URIs in mixture.json rewritten): passes there, fails on a changed config."""
    storage, _ = built_stage
    remote = Storage(gcs_emulator.root("tok-check"))
    for part in ((layout.TOKENIZER, "bpe1k"), (layout.MIXTURES, "sample")):
        for rel in [*storage.list_files(*part), "_COMMITTED"]:
            remote.fs.put_file(storage.uri(*part, rel), remote.uri(*part, rel))
    info_uri = remote.uri(layout.MIXTURES, "sample", MIXTURE_FILE)
    text = storage.fs.cat_file(storage.uri(layout.MIXTURES, "sample", MIXTURE_FILE)).decode()
    remote.fs.pipe_file(info_uri, text.replace(storage.uri(), remote.uri()).encode())
    folder = remote.uri(layout.TOKENIZER, "bpe1k")
    assert load_mixture_info(remote, "sample").tokenizer_uri == folder
    assert tokenizer_hash(folder) == tokenizer_hash(storage.uri(layout.TOKENIZER, "bpe1k"))
    assert _check(_run_check_only(remote.root_uri)).passed

    remote.fs.pipe_file(f"{folder}/tokenizer_config.json", b'{"tokenizer_class": "PreTrainedTokenizerFast"}')
    evaluation = _check(_run_check_only(remote.root_uri))
    assert not evaluation.passed
    assert evaluation.description.startswith(f"the tokenizer folder {folder} now hashes to ")
    assert "but the mixture was tokenized with" in evaluation.description
    remote.fs.rm_file(f"{folder}/tokenizer.json")
    assert f"the tokenizer folder {folder} lacks tokenizer files" in _check(_run_check_only(remote.root_uri)).description
