"""Blocking checks of the nightly small-scale validation's data: cleaned sources and the mixture vs their baselines."""

from pathlib import Path

import dagster as dg

from marin_assets.core.storage import StorageError

from marin_assets.data.partitions import SOURCE_PARTITIONS
from marin_assets.governance.data_baseline import (
    MIXTURES, SOURCES, DataVerdict, cleaned_source_statistics, judge, mixture_manifest_statistics,
)
from marin_assets.governance.nightly import load_nightly_plan
from marin_assets.resources.storage import StorageResource
from marin_assets.tokenize.recipes import mixture_names


def _result(verdict: DataVerdict, observed: dict[str, float]) -> dg.AssetCheckResult:
    drifted = {d.statistic: {"baseline": d.baseline, "observed": d.observed, "tolerance": d.tolerance,
                             "mode": d.mode} for d in verdict.drifts}  # fmt: skip
    return dg.AssetCheckResult(passed=verdict.passed, description=verdict.message,
                               metadata={"drifted": dg.MetadataValue.json(drifted),
                                         "observed": dg.MetadataValue.json(observed)})  # fmt: skip


# Not blocking: a blocking check stopped every materialization of a changed validated source (and its
# downstream) until the baseline was refreshed; the drift is reported as a failed check instead.
def build_data_baseline_checks(baselines_dir: Path | None = None) -> list[dg.AssetChecksDefinition]:
    """Checks on `cleaned_documents` and `mixture` (by key: governance imports no other stage's wiring)."""

    @dg.asset_check(asset="cleaned_documents", name="data_matches_baseline", blocking=False,
                    partitions_def=SOURCE_PARTITIONS,
                    description="Kept/rejected/quarantined shares by rule, text-length quantiles and language "
                                "shares stay within the committed data baseline's tolerances "
                                "(recipes/data/baselines/sources/<source>.json); a source the nightly "
                                "validation uses fails without one.")
    def data_matches_baseline(context: dg.AssetCheckExecutionContext, storage: StorageResource) -> dg.AssetCheckResult:
        source = context.partition_key
        try:
            observed = cleaned_source_statistics(storage.storage, source)
        except StorageError as exc:  # no committed output to compare: say so, never crash the run
            return dg.AssetCheckResult(passed=False, description=str(exc))
        validated = source in load_nightly_plan().sources
        return _result(judge(SOURCES, source, observed, validated, baselines_dir), observed)

    @dg.asset_check(asset="mixture", name="tokens_match_baseline", blocking=False,
                    partitions_def=dg.StaticPartitionsDefinition(mixture_names()),
                    description="Train tokens, each source's share of them and tokens per document stay within "
                                "the committed data baseline (recipes/data/baselines/mixtures/<mixture>.json); "
                                "the nightly mixture fails without one.")
    def tokens_match_baseline(context: dg.AssetCheckExecutionContext, storage: StorageResource) -> dg.AssetCheckResult:
        mixture = context.partition_key
        try:
            observed = mixture_manifest_statistics(storage.storage, mixture)
        except StorageError as exc:
            return dg.AssetCheckResult(passed=False, description=str(exc))
        validated = mixture == load_nightly_plan().mixture
        return _result(judge(MIXTURES, mixture, observed, validated, baselines_dir), observed)

    return [data_matches_baseline, tokens_match_baseline]


DATA_BASELINE_CHECKS = build_data_baseline_checks()
