"""The Dagster side of provenance: turn a staged output into a MaterializeResult.

Every asset that writes files ends with `record_output(...)` inside its `atomic_dir` block, so the
manifest lands beside the output (committed with it) and in the materialization metadata, and the
output's content hash becomes its Dagster data version.
"""

from __future__ import annotations

from typing import Any

import dagster as dg

from marin_assets.core.provenance import build_manifest, manifest_metadata
from marin_assets.core.storage import MANIFEST_NAME, StagedOutput


def input_data_versions(context: dg.AssetExecutionContext) -> dict[str, str]:
    """Data versions of this step's upstream assets, as Dagster resolved them for this run."""
    step = context.get_step_execution_context()
    versions = {}
    for key in sorted(context.assets_def.keys_by_input_name.values(), key=lambda k: k.to_user_string()):
        info = step.maybe_fetch_and_get_input_asset_version_info(key)
        if info is not None and info.data_version is not None:
            versions[key.to_user_string()] = info.data_version.value
    return versions


def record_output(
    context: dg.AssetExecutionContext,
    staged: StagedOutput,
    *,
    recipe: Any,
    code_version: str,
    stats: dict | None = None,
    extra_metadata: dict[str, Any] | None = None,
    output_hash: str | None = None,
    devices: list[str] | None = None,
    manifest_extra: dict | None = None,
) -> dg.MaterializeResult:
    """Hash the staged output, write its provenance manifest beside it, return the result.

    `output_hash` overrides the file hash where file bytes are not reproducible (checkpoints).
    """
    digest = output_hash or staged.content_hash()
    manifest = build_manifest(
        asset=context.asset_key.to_user_string(),
        partition=context.partition_key if context.has_partition_key else None,
        recipe=recipe,
        code_version=code_version,
        inputs=input_data_versions(context),
        output_uri=staged.final_uri,
        output_hash=digest,
        stats=stats,
        run_id=context.run_id,
        devices=devices,
        extra=manifest_extra,
    )
    staged.write_json(manifest, MANIFEST_NAME)
    metadata = {
        **manifest_metadata(manifest),
        "provenance_manifest": dg.MetadataValue.path(f"{staged.final_uri}/{MANIFEST_NAME}"),
        **(extra_metadata or {}),
    }
    return dg.MaterializeResult(metadata=metadata, data_version=dg.DataVersion(digest))
