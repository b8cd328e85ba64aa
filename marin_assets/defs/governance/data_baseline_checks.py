"""Blocking checks of the nightly small-scale validation's data: cleaned sources and the mixture vs their baselines.

Blocking where the night's validation runs: in a run of the nightly chain (tagged NIGHT_TAG) a drift
fails with ERROR severity, so Dagster skips what depends on the asset in that run and the run fails,
and the chain's sensor starts no further stage: the night's tiny model never trains on drifted data.
In any other run (a researcher's materialization after an intended change to a source or a rule) the
same drift is a failed check of WARN severity with the same message: it says what moved and how to
refresh the baseline without holding up the graph until the baseline is committed. A partition with
no committed output has nothing to compare: a failed WARN check naming the missing output (the
asset's own run and its conservation check are what report a missing output), never a crash.
"""

from pathlib import Path

import dagster as dg

from marin_assets.core.storage import StorageError

from marin_assets.data.sources.partitions import source_partitions
from marin_assets.governance.data_baseline import (
    MIXTURES, SOURCES, DataVerdict, cleaned_source_statistics, judge, mixture_manifest_statistics,
)
from marin_assets.governance.nightly import NIGHT_TAG, load_nightly_plan
from marin_assets.resources.storage_resource import StorageResource
from marin_assets.tokenize.tokenize_recipe import mixture_names


def _severity(context: dg.AssetCheckExecutionContext) -> dg.AssetCheckSeverity:
    """ERROR (blocks) in the night's validation runs, WARN elsewhere."""
    return dg.AssetCheckSeverity.ERROR if NIGHT_TAG in context.run.tags else dg.AssetCheckSeverity.WARN


def _result(context: dg.AssetCheckExecutionContext, verdict: DataVerdict,
            observed: dict[str, float]) -> dg.AssetCheckResult:
    drifted = {d.statistic: {"baseline": d.baseline, "observed": d.observed, "tolerance": d.tolerance,
                             "mode": d.mode} for d in verdict.drifts}  # fmt: skip
    severity = _severity(context)
    message = verdict.message
    if not verdict.passed and severity == dg.AssetCheckSeverity.WARN:
        message += ("\n(blocking only in the nightly validation's runs: if the change is intended, run "
                    "`marin baseline refresh-data` and commit the baseline before the night)")
    return dg.AssetCheckResult(passed=verdict.passed, description=message, severity=severity,
                               metadata={"drifted": dg.MetadataValue.json(drifted),
                                         "observed": dg.MetadataValue.json(observed)})  # fmt: skip


def _nothing_to_compare(exc: StorageError) -> dg.AssetCheckResult:
    return dg.AssetCheckResult(passed=False, severity=dg.AssetCheckSeverity.WARN,
                               description=f"no committed output to compare with the data baseline: {exc}")


def build_data_baseline_checks(baselines_dir: Path | None = None) -> list[dg.AssetChecksDefinition]:
    """Checks on `cleaned_documents` and `mixture` (by key: governance imports no other stage's wiring)."""

    @dg.asset_check(asset="cleaned_documents", name="data_matches_baseline", blocking=True,
                    partitions_def=source_partitions(),
                    description="Kept/rejected/quarantined shares by rule, text-length quantiles and language "
                                "shares stay within the committed data baseline's tolerances "
                                "(recipes/data/baselines/sources/<source>.json); a source the nightly "
                                "validation uses fails without one. Blocks in the nightly validation's runs.")
    def data_matches_baseline(context: dg.AssetCheckExecutionContext, storage: StorageResource) -> dg.AssetCheckResult:
        source = context.partition_key
        try:
            observed = cleaned_source_statistics(storage.storage, source)
        except StorageError as exc:  # no committed output to compare: say so, never crash the run
            return _nothing_to_compare(exc)
        validated = source in load_nightly_plan().sources
        return _result(context, judge(SOURCES, source, observed, validated, baselines_dir), observed)

    @dg.asset_check(asset="mixture", name="tokens_match_baseline", blocking=True,
                    partitions_def=dg.StaticPartitionsDefinition(mixture_names()),
                    description="Train tokens, each source's share of them and tokens per document stay within "
                                "the committed data baseline (recipes/data/baselines/mixtures/<mixture>.json); "
                                "the nightly mixture fails without one. Blocks in the nightly validation's runs.")
    def tokens_match_baseline(context: dg.AssetCheckExecutionContext, storage: StorageResource) -> dg.AssetCheckResult:
        mixture = context.partition_key
        try:
            observed = mixture_manifest_statistics(storage.storage, mixture)
        except StorageError as exc:
            return _nothing_to_compare(exc)
        validated = mixture == load_nightly_plan().mixture
        return _result(context, judge(MIXTURES, mixture, observed, validated, baselines_dir), observed)

    return [data_matches_baseline, tokens_match_baseline]

