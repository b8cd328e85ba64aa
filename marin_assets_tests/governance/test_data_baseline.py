"""The nightly validation's data baseline: statistics, drift, tolerance, a missing baseline, the refresh command."""

import json
from pathlib import Path

import dagster as dg
import pyarrow as pa
import pytest

from marin_assets import cli
from marin_assets.core import layout
from marin_assets.core.schemas import DOCUMENT_SCHEMA
from marin_assets.core.storage import Storage
from marin_assets.data.clean.cleaned_output import STATS_NAME
from marin_assets.data.spark.parquet_output import write_arrow_table
from marin_assets.data.sources.partitions import source_partitions
from marin_assets.governance.data_baseline import (
    MIXTURES, SOURCES, DataBaselineError, baseline_path, compare, load_data_baseline, mixture_manifest_statistics,
    mixture_statistics, source_statistics, write_data_baseline,
)
from marin_assets.defs.governance.data_baseline_checks import build_data_baseline_checks
from marin_assets.governance.nightly import NIGHT_TAG, load_nightly_plan
from marin_assets.tokenize.mixture_info import MIXTURE_FILE
from marin_assets.tokenize.tokenize_recipe import mixture_names
from marin_assets.tokenize.shards import shard_table, token_lists, write_shard
from marin_assets_tests.local_resources import local_resources

SOURCE = load_nightly_plan().sources[0]  # validated nightly: a missing baseline fails
STATS = {"records_in": 10, "kept": 6, "rejected": 3, "quarantined": 1, "ignored": 0,
         "rejected_by_rule": {"language": 2, "exact_dup": 1}}


def _committed_source(root: Path, stats=STATS, texts=("a" * 100,) * 6) -> None:
    storage = Storage(str(root))
    with storage.atomic_dir(layout.CLEANED, SOURCE) as staged:
        staged.write_json(stats, STATS_NAME)
        rows = [{"id": str(i), "source": SOURCE, "url": None, "text": t, "metadata": json.dumps({"language": "en"}),
                 "raw_length": len(t), "quality_score": None} for i, t in enumerate(texts)]
        write_arrow_table(pa.Table.from_pylist(rows, schema=DOCUMENT_SCHEMA), f"{staged.path}/documents/part-0.parquet")


def _check(root: Path, baselines: Path, name: str, partition: str):
    """Run the check alone outside the nightly chain: a failure is a WARN, the run goes on."""
    checks = build_data_baseline_checks(baselines)
    check = next(c for c in checks if c.check_key.name == name)
    spec = (dg.AssetSpec("cleaned_documents", partitions_def=source_partitions()) if name == "data_matches_baseline"
            else dg.AssetSpec("mixture", partitions_def=dg.StaticPartitionsDefinition(mixture_names())))
    job = dg.define_asset_job("check_only", selection=dg.AssetSelection.checks(check))
    defs = dg.Definitions(assets=[spec], asset_checks=[check], jobs=[job], resources=local_resources(str(root)))
    result = defs.resolve_job_def("check_only").execute_in_process(tags={"dagster/partition": partition},
                                                                  raise_on_error=False)
    (evaluation,) = result.get_asset_check_evaluations()
    assert result.success  # outside the night's validation a drift is a WARN: the run itself goes on
    assert evaluation.passed or evaluation.severity == dg.AssetCheckSeverity.WARN
    return evaluation


def test_source_statistics_are_shares_by_rule_lengths_and_languages():
    stats = source_statistics(STATS, [10, 20, 30, 40, 50, 60], ["en"] * 5 + ["de"])
    assert stats["share:kept"] == 0.6 and stats["share:quarantined"] == 0.1
    assert stats["rejected_share:language"] == 0.2 and stats["rejected_share:exact_dup"] == 0.1
    assert stats["length_chars:p50"] == 35.0 and stats["language_share:de"] == round(1 / 6, 6)


def test_mixture_statistics_are_token_shares_and_tokens_per_document():
    stats = mixture_statistics({"a": {"train_tokens": 300, "train_documents": 3}, "b": {"train_tokens": 100}})
    assert stats == {"train_tokens": 400.0, "tokens_share:a": 0.75, "tokens_share:b": 0.25,
                     "tokens_per_document:a": 100.0}


def test_within_tolerance_passes_and_drift_names_statistic_baseline_observed_tolerance():
    baseline = {"statistics": {"share:kept": 0.6, "length_chars:p50": 100.0}, "tolerances": {"share": 0.05}}
    assert compare({"share:kept": 0.63, "length_chars:p50": 120.0}, baseline) == []
    (drift,) = compare({"share:kept": 0.4, "length_chars:p50": 120.0}, baseline)
    assert drift.line() == "share:kept: baseline 0.6, observed 0.4, tolerance 0.05 (absolute)"
    (drift,) = compare({"share:kept": 0.6, "length_chars:p50": 200.0}, baseline)
    assert drift.line() == "length_chars:p50: baseline 100, observed 200, tolerance 0.25 (relative)"
    # a rule that starts firing is a drift from 0; a vanished length statistic is a drift of its own
    assert [d.statistic for d in compare({"share:kept": 0.6, "rejected_share:pii": 0.3}, baseline)] == [
        "length_chars:p50", "rejected_share:pii"]


def test_a_bad_baseline_file_is_refused_naming_file_and_field(tmp_path):
    path = baseline_path(SOURCES, "x", tmp_path)
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"statistics": {}, "tolerances": {"shares": 0.1}}))
    with pytest.raises(DataBaselineError, match=f"{path}: tolerances: unknown group 'shares'"):
        load_data_baseline(SOURCES, "x", tmp_path)
    path.write_text(json.dumps({"statistics": {"share:kept": "high"}}))
    with pytest.raises(DataBaselineError, match=f"{path}: statistics.share:kept: 'high' is not a number"):
        load_data_baseline(SOURCES, "x", tmp_path)
    path.write_text("{not json")
    with pytest.raises(DataBaselineError, match=f"{path}: not JSON"):
        load_data_baseline(SOURCES, "x", tmp_path)


def test_the_check_fails_without_a_baseline_for_a_validated_source(tmp_path):
    _committed_source(tmp_path / "store")
    evaluation = _check(tmp_path / "store", tmp_path / "baselines", "data_matches_baseline", SOURCE)
    assert not evaluation.passed
    assert f"{tmp_path / 'baselines' / 'sources' / SOURCE}.json is missing" in evaluation.description
    assert "marin baseline refresh-data" in evaluation.description


def test_the_check_passes_within_tolerance_and_fails_on_drift(tmp_path):
    _committed_source(tmp_path / "store")
    assert cli.main(["baseline", "refresh-data", "--source", SOURCE, "--storage-root", str(tmp_path / "store"),
                     "--out-dir", str(tmp_path / "baselines")]) == 0
    assert _check(tmp_path / "store", tmp_path / "baselines", "data_matches_baseline", SOURCE).passed
    drifted = {**STATS, "kept": 3, "rejected": 6, "rejected_by_rule": {"language": 5, "exact_dup": 1}}
    _committed_source(tmp_path / "store", drifted, texts=("a" * 100,) * 3)
    evaluation = _check(tmp_path / "store", tmp_path / "baselines", "data_matches_baseline", SOURCE)
    assert not evaluation.passed
    assert "  - rejected_share:language: baseline 0.2, observed 0.5, tolerance 0.05 (absolute)" in evaluation.description
    assert "  - share:kept: baseline 0.6, observed 0.3, tolerance 0.05 (absolute)" in evaluation.description
    assert evaluation.metadata["drifted"].value["share:kept"] == {
        "baseline": 0.6, "observed": 0.3, "tolerance": 0.05, "mode": "absolute"}


def _commit_mixture(storage: Storage, mixture: str, tokens_a: int, lengths: dict[str, list[int]]) -> None:
    """mixture.json plus one train shard whose documents have the given token counts per source."""
    with storage.atomic_dir(layout.MIXTURES, mixture) as staged:
        staged.write_json({"sources": {"a": {"train_tokens": tokens_a, "train_documents": 10},
                                       "b": {"train_tokens": 1000, "train_documents": 10}}}, MIXTURE_FILE)
        sources = [name for name, counts in lengths.items() for _ in counts]
        counts = [n for per_source in lengths.values() for n in per_source]
        offsets = [0, *[sum(counts[: i + 1]) for i in range(len(counts))]]
        tokens = token_lists(offsets, [7] * offsets[-1])
        write_shard(shard_table([str(i) for i in range(len(counts))], sources, tokens, "h"),
                    f"{staged.path}/train/shard-00000.parquet")


LENGTHS = {"a": [10, 20, 30, 40, 50], "b": [100] * 5}


def test_mixture_token_count_quantiles_come_from_its_train_documents(tmp_path):
    storage = Storage(str(tmp_path))
    _commit_mixture(storage, "m", 1000, LENGTHS)
    stats = mixture_manifest_statistics(storage, "m")
    assert stats["document_tokens:a:p10"] == 14.0 and stats["document_tokens:a:p50"] == 30.0
    assert stats["document_tokens:b:p90"] == 100.0 and stats["document_tokens:p50"] == 75.0
    assert stats["tokens_per_document:a"] == 100.0 and stats["tokens_share:a"] == 0.5


def test_the_mixture_check_compares_tokens_per_source_and_token_count_quantiles(tmp_path):
    mixture = load_nightly_plan().mixture
    storage = Storage(str(tmp_path / "store"))
    _commit_mixture(storage, mixture, 1000, LENGTHS)
    assert not _check(tmp_path / "store", tmp_path / "baselines", "tokens_match_baseline", mixture).passed
    write_data_baseline(MIXTURES, mixture, mixture_manifest_statistics(storage, mixture), tmp_path / "baselines")
    assert _check(tmp_path / "store", tmp_path / "baselines", "tokens_match_baseline", mixture).passed
    _commit_mixture(storage, mixture, 3000, LENGTHS)
    evaluation = _check(tmp_path / "store", tmp_path / "baselines", "tokens_match_baseline", mixture)
    assert not evaluation.passed and "tokens_share:a: baseline 0.5, observed 0.75" in evaluation.description
    _commit_mixture(storage, mixture, 1000, {"a": [n * 2 for n in LENGTHS["a"]], "b": LENGTHS["b"]})
    evaluation = _check(tmp_path / "store", tmp_path / "baselines", "tokens_match_baseline", mixture)
    assert "  - document_tokens:a:p50: baseline 30, observed 60, tolerance 0.25 (relative)" in evaluation.description


def test_every_validated_source_and_the_mixture_have_a_committed_baseline():
    plan = load_nightly_plan()
    for kind, names in ((SOURCES, plan.sources), (MIXTURES, [plan.mixture])):
        for name in names:
            assert load_data_baseline(kind, name) is not None, (
                f"{baseline_path(kind, name)} missing: run `marin baseline refresh-data`")


def test_the_nightly_data_and_mixture_jobs_run_the_checks():
    from marin_assets.definitions import defs

    for job, check in (("nightly_data_job", "data_matches_baseline"), ("nightly_mixture_job", "tokens_match_baseline")):
        checks = defs.resolve_job_def(job).asset_layer.asset_graph.asset_check_keys
        assert check in {key.name for key in checks}, f"{job} does not run {check}"


def _drift_run(tmp_path: Path, tags: dict[str, str]):
    """cleaned_documents (already committed, drifted) -> its blocking check -> a downstream asset, one run."""
    _committed_source(tmp_path / "store")
    assert cli.main(["baseline", "refresh-data", "--source", SOURCE, "--storage-root", str(tmp_path / "store"),
                     "--out-dir", str(tmp_path / "baselines")]) == 0
    drifted = {**STATS, "kept": 3, "rejected": 6, "rejected_by_rule": {"language": 5, "exact_dup": 1}}
    _committed_source(tmp_path / "store", drifted, texts=("a" * 100,) * 3)

    @dg.asset(name="cleaned_documents", partitions_def=source_partitions())
    def cleaned_documents() -> None:  # its output is the committed folder above
        return None

    @dg.asset(name="tokenized_source", partitions_def=source_partitions(), deps=[cleaned_documents])
    def tokenized_source() -> None:
        return None

    check = next(c for c in build_data_baseline_checks(tmp_path / "baselines")
                 if c.check_key.name == "data_matches_baseline")
    assert check.check_specs_by_output_name[next(iter(check.check_specs_by_output_name))].blocking
    return dg.materialize([cleaned_documents, tokenized_source, check], partition_key=SOURCE, tags=tags,
                          resources=local_resources(str(tmp_path / "store")), raise_on_error=False)


def test_a_drift_blocks_the_downstream_asset_in_the_night_s_validation_run(tmp_path):
    result = _drift_run(tmp_path, {NIGHT_TAG: "20261207T0300Z"})
    assert not result.success
    (evaluation,) = result.get_asset_check_evaluations()
    assert not evaluation.passed and evaluation.severity == dg.AssetCheckSeverity.ERROR
    assert "  - share:kept: baseline 0.6, observed 0.3, tolerance 0.05 (absolute)" in evaluation.description
    assert result.asset_materializations_for_node("tokenized_source") == []  # blocked: never ran


def test_outside_the_night_the_same_drift_is_a_warning_and_the_run_goes_on(tmp_path):
    result = _drift_run(tmp_path, {})
    assert result.success
    (evaluation,) = result.get_asset_check_evaluations()
    assert not evaluation.passed and evaluation.severity == dg.AssetCheckSeverity.WARN
    assert "  - share:kept: baseline 0.6, observed 0.3, tolerance 0.05 (absolute)" in evaluation.description
    assert "marin baseline refresh-data" in evaluation.description
    assert len(result.asset_materializations_for_node("tokenized_source")) == 1


def test_a_partition_without_output_is_a_failed_check_not_a_crash(tmp_path):
    evaluation = _check(tmp_path / "store", tmp_path / "baselines", "data_matches_baseline", SOURCE)
    assert not evaluation.passed and "no committed output to compare" in evaluation.description
