"""The curation steps inside the Spark cleaning job, and the dedup_precision check, on planted corpora."""

import dagster as dg
import pyarrow.parquet as pq
import pytest
import yaml

from marin_assets.core.recipes import PACKAGE_RECIPES
from marin_assets_tests.stage_definitions import cleaned_documents, dedup_precision, raw_corpus
from marin_assets.data.clean.cleaning_job import clean_source
from marin_assets.data.clean.cleaning_recipe import load_cleaning_recipe
from marin_assets.data.sources.source_inventory import source_inventory
from marin_assets.data.curate.decontaminate import build_index
from marin_assets.data.sources.source_registry import SourceSpec, load_sources
from marin_assets.resources.storage_resource import StorageResource
from marin_assets_tests.local_resources import spark_resources
from marin_assets_tests.data.planted_corpus import prose, write_jsonl
from marin_assets_tests.data.registry_fixture import source_entry, write_registry  # noqa: F401 (fixture)
from marin_assets_tests.data.test_decontaminate import PASSAGE, WORDS

pytestmark = pytest.mark.slow


def _rows(path):
    return {r["id"]: r for r in pq.read_table(path).to_pylist()}


def test_decontamination_and_pii_run_inside_the_spark_job(spark, tmp_path):
    docs = {
        "cut": f"{prose(1)} {PASSAGE} {prose(2)}",
        "mostly-eval": f"{prose(50)} Those were the notes we kept.",  # an eval item, nearly whole
        "near-miss": f"{prose(3)} {' '.join(WORDS[:12])} {prose(4)}",
        "pii": f"{prose(5)} Mail jane.doe@example.com or call +1 415-555-0132 from 93.184.216.34; "
               f"install 1.2.3.4-1 released 2023-01-15. {prose(6)}",
        "clean": prose(7),
    }  # fmt: skip
    spec = SourceSpec(name="dirty_web", uri=str(write_jsonl(tmp_path / "src" / "a.jsonl", docs)), format="jsonl",
                      license="CC0-1.0")  # fmt: skip
    shipped = load_cleaning_recipe()
    recipe = shipped.model_copy(update={"spark": shipped.spark.model_copy(update={"partitions": 2})})
    stats = clean_source(spark, spec, recipe, str(tmp_path / "out"), {"otters": build_index([PASSAGE, prose(50)], 13)})

    kept, rejected = _rows(tmp_path / "out" / "documents"), _rows(tmp_path / "out" / "rejected")
    assert stats["conserved"] and set(kept) == {"cut", "near-miss", "pii", "clean"}
    assert rejected["mostly-eval"]["reason"] == "decontamination:otters"  # too little left once cut
    assert "otters" not in kept["cut"]["text"] and kept["cut"]["text"] == f"{prose(1)} {prose(2)}"
    assert kept["near-miss"]["text"] == docs["near-miss"] and kept["clean"]["text"] == docs["clean"]
    assert "<EMAIL>" in kept["pii"]["text"] and "<PHONE>" in kept["pii"]["text"] and "<IP_ADDRESS>" in kept["pii"]["text"]
    assert "1.2.3.4-1" in kept["pii"]["text"] and "2023-01-15" in kept["pii"]["text"]
    counts = stats["curation_counts"]
    assert counts["decontamination[otters]:documents"] == 2 and counts["decontamination:documents_cut"] == 1
    assert (counts["pii:email"], counts["pii:phone"], counts["pii:ip"]) == (1, 1, 1)
    assert stats["curation_examples"]["pii:email"] == ["pii"]
    assert stats["rejected_by_rule"]["decontamination:otters"] == 1


def test_the_spark_job_names_the_eval_items_each_contaminated_document_holds(spark, tmp_path):
    from marin_assets.data.curate.decontamination_step import hits_per_item, item_key
    from marin_assets.data.curate.item_hits import EvalIndexes, build_item_index

    items = {"otter-passage": PASSAGE, "notes": prose(50)}
    docs = {"cut": f"{prose(1)} {PASSAGE} {prose(2)}", "both": f"{PASSAGE} {prose(50)}",
            "near-miss": f"{prose(3)} {' '.join(WORDS[:12])} {prose(4)}", "clean": prose(7)}
    spec = SourceSpec(name="dirty_web", uri=str(write_jsonl(tmp_path / "src" / "a.jsonl", docs)), format="jsonl",
                      license="CC0-1.0")  # fmt: skip
    shipped = load_cleaning_recipe()
    recipe = shipped.model_copy(update={"spark": shipped.spark.model_copy(update={"partitions": 2})})
    indexes = EvalIndexes({"otters": build_index(items.values(), 13)},
                          {"otters": build_item_index(((("otters", k, "text", v)) for k, v in items.items()), 13,
                                                      short_items=False)})
    stats = clean_source(spark, spec, recipe, str(tmp_path / "out"), indexes)
    counts, examples = stats["curation_counts"], stats["curation_examples"]
    assert counts[item_key("otters", "otter-passage")] == 2 and examples[item_key("otters", "otter-passage")] == ["both", "cut"]
    assert counts[item_key("otters", "notes")] == 1 and examples[item_key("otters", "notes")] == ["both"]
    assert [(r["item"], r["documents"]) for r in hits_per_item(counts, examples)] == [("otter-passage", 2), ("notes", 1)]
    assert counts["decontamination[otters]:documents"] == 2  # near-miss and clean hold no item


def _dedup_corpus(root):
    """Distinct documents that share a stock phrase, plus three true near-duplicate pairs."""
    docs = {f"doc-{i:02d}": prose(100 + i) for i in range(16)}
    for i in range(3):
        docs[f"doc-{i:02d}-copy"] = docs[f"doc-{i:02d}"].replace("The ", "A ", 1) + " Nothing else changed here."
    return write_jsonl(root / "src" / "a.jsonl", docs)


def _check(tmp_path, write_registry, spark_resource, name: str, dedup: dict):  # noqa: F811  # noqa: F811
    entry = source_entry("dirty_web", str(_dedup_corpus(tmp_path)))
    recipes = write_registry([entry])
    entry["provenance"]["checksum"] = source_inventory(load_sources().get("dirty_web"))["content_hash"]
    write_registry([entry])
    cleaning = yaml.safe_load((PACKAGE_RECIPES / "cleaning.yaml").read_text())
    cleaning["decontamination"]["enabled"] = cleaning["quality"]["score"] = False  # dedup alone here
    cleaning["dedup"].update(dedup)
    (recipes / "cleaning.yaml").write_text(yaml.safe_dump(cleaning))
    result = dg.materialize(
        [raw_corpus, cleaned_documents, dedup_precision],
        resources={"storage": StorageResource(root_uri=str(tmp_path / name)), **spark_resources(spark_resource)},
        partition_key="dirty_web",
        instance=dg.DagsterInstance.ephemeral(),
        raise_on_error=False,
    )
    [check] = [c for c in result.get_asset_check_evaluations() if c.check_name == "dedup_precision"]
    return check


def test_dedup_precision_fails_on_permissive_bands_and_passes_on_the_default(tmp_path, write_registry, spark_resource):  # noqa: F811
    bad = _check(tmp_path, write_registry, spark_resource, "bad", {"bands": 112, "rows": 1})
    assert not bad.passed and bad.metadata["precision"].value < 0.8
    assert bad.metadata["worst_pairs"].value[0]["jaccard"] < 0.7
    good = _check(tmp_path, write_registry, spark_resource, "default", {})
    assert good.passed and good.metadata["precision"].value == 1.0 and good.metadata["pairs_sampled"].value == 3


def _permissive_recipe(verify_pairs: bool | None):
    """The shipped recipe with one-row bands (every shared 5-gram makes a candidate pair); verify_pairs None:
    the shipped default."""
    shipped = load_cleaning_recipe()
    precision = shipped.dedup_precision if verify_pairs is None else shipped.dedup_precision.model_copy(
        update={"verify_pairs": verify_pairs})
    return shipped.model_copy(update={
        "spark": shipped.spark.model_copy(update={"partitions": 2}),
        "dedup": shipped.dedup.model_copy(update={"bands": 112, "rows": 1}),
        "dedup_precision": precision,
        "decontamination": shipped.decontamination.model_copy(update={"enabled": False}),
    })  # fmt: skip


def test_verified_near_dedup_is_the_default_and_removes_only_true_pairs_even_with_permissive_bands(spark, tmp_path):
    spec = SourceSpec(name="dirty_web", uri=str(_dedup_corpus(tmp_path)), format="jsonl", license="CC0-1.0")
    stats = clean_source(spark, spec, _permissive_recipe(None), str(tmp_path / "out"))
    rejected = _rows(tmp_path / "out" / "rejected")
    assert {i for i, r in rejected.items() if r["reason"] == "dedup:near_duplicate"} == {f"doc-{i:02d}-copy" for i in range(3)}
    cost = stats["near_dedup_verification"]
    assert cost["edges_scored"] > cost["edges_refused"] > 0


def test_unverified_lsh_switch_removes_the_false_positives_that_verification_keeps(spark, tmp_path):
    spec = SourceSpec(name="dirty_web", uri=str(_dedup_corpus(tmp_path)), format="jsonl", license="CC0-1.0")
    stats = clean_source(spark, spec, _permissive_recipe(False), str(tmp_path / "out"))
    near = {i for i, r in _rows(tmp_path / "out" / "rejected").items() if r["reason"] == "dedup:near_duplicate"}
    # the stock phrase's shared 5-grams make strangers candidates: raw LSH removes them with the true copies
    assert near > {f"doc-{i:02d}-copy" for i in range(3)} and "near_dedup_verification" not in stats
