"""The Dagster side of provenance: turn a staged output into a MaterializeResult.

Every asset that writes files ends with `record_output(...)` inside its `atomic_dir` block, so the
manifest lands beside the output (committed with it) and in the materialization metadata, and the
output's content hash becomes its Dagster data version.
"""

from __future__ import annotations

import base64
import re
from typing import Any

import dagster as dg

from marin_assets.core.output_check import INVENTORY_FIELD, inventory
from marin_assets.core.line_preview import preview_key
from marin_assets.core.plotting import inline_thumbnail_markdown
from marin_assets.lineage.provenance import build_manifest, manifest_metadata
from marin_assets.core.storage import MANIFEST_NAME, StagedOutput
from marin_assets.data.sources.source_registry import load_sources
from marin_assets.data.sources.licenses import data_use_for_sources, licenses_for_sources, sources_behind


def input_label(key: dg.AssetKey, partition: str | None) -> str:
    """How manifests name an input: "asset" or "asset[partition]"."""
    name = key.to_user_string()
    return f"{name}[{partition}]" if partition is not None else name


def upstream_partitions(context: dg.AssetExecutionContext) -> list[tuple[dg.AssetKey, str | None]]:
    """Each upstream asset of this step, once per upstream partition this partition depends on."""
    step = context.get_step_execution_context()
    pairs: list[tuple[dg.AssetKey, str | None]] = []
    for name, key in sorted(context.assets_def.keys_by_input_name.items(), key=lambda kv: kv[1].to_user_string()):
        if not step.has_asset_partitions_for_input(name):
            pairs.append((key, None))
            continue
        try:
            pairs.extend((key, pk) for pk in sorted(context.asset_partition_keys_for_input(name)))
        except dg.DagsterInvariantViolationError as exc:  # a dep whose partition mapping does not fit
            context.log.warning(f"provenance records {key.to_user_string()} without partitions: {exc}")
            pairs.append((key, None))
    return pairs


def latest_materialization(
    instance: dg.DagsterInstance, key: dg.AssetKey, partition: str | None = None
) -> dg.AssetMaterialization | None:
    """The newest materialization of an asset (partition); None if it never was materialized."""
    records = instance.fetch_materializations(
        dg.AssetRecordsFilter(asset_key=key, asset_partitions=[partition] if partition is not None else None),
        limit=1,
    ).records
    return records[0].asset_materialization if records else None


def input_records(context: dg.AssetExecutionContext) -> tuple[dict[str, str], dict[str, str]]:
    """(data version, output URI) of the latest materialization of each upstream (asset, partition).

    Never-materialized inputs are left out: the asset's own `require_committed` reports them.
    """
    versions, uris = {}, {}
    for key, partition in upstream_partitions(context):
        materialization = latest_materialization(context.instance, key, partition)
        if materialization is None:
            continue
        label = input_label(key, partition)
        version = (materialization.tags or {}).get("dagster/data_version")
        if version:
            versions[label] = version
        uri = materialization.metadata.get("output_uri")
        if uri is not None:
            uris[label] = str(uri.value)
    return versions, uris


PNG_MARKDOWN = re.compile(r"!\[[^\]]*\]\(data:image/png;base64,([A-Za-z0-9+/=]+)\)")


def plot_previews(metadata: dict[str, Any]) -> dict[str, Any]:
    """Each plot in the metadata, full size first, then its inline preview ("<name> (preview)").

    The UI draws a Markdown value inline only under 1,000 characters (INLINE_MARKDOWN_LIMIT), so the
    full plot sits behind its row's [Show Markdown], which opens it at full size: that row comes
    first. A plot whose asset drew a legible preview from its data (core/line_preview.py, e.g. the
    loss curve) keeps it; any other gets a black-and-white thumbnail of its PNG that shows the
    plot's shape only (its text cannot be read at that size).
    """
    entries = {}
    for name, value in metadata.items():
        text = value.value if isinstance(value, dg.MarkdownMetadataValue) else None
        match = PNG_MARKDOWN.search(text or "")
        if not match or name.endswith(preview_key("")):
            continue
        drawn = metadata.get(preview_key(name))
        thumbnail = None if drawn else inline_thumbnail_markdown(base64.b64decode(match.group(1)), alt=name)
        if drawn or thumbnail:
            entries[name] = value
            entries[preview_key(name)] = drawn or dg.MetadataValue.md(thumbnail)
    return entries


def record_output(
    context: dg.AssetExecutionContext,
    staged: StagedOutput,
    *,
    recipe: Any,
    code_version: str | None = None,
    stats: dict | None = None,
    extra_metadata: dict[str, Any] | None = None,
    output_hash: str | None = None,
    devices: list[str] | None = None,
    manifest_extra: dict | None = None,
    sources: list[str] | None = None,
    extra_inputs: dict[str, tuple[str, str]] | None = None,
    previews: bool = True,
) -> dg.MaterializeResult:
    """Hash the staged output, write its provenance manifest beside it, return the result.

    `code_version` defaults to the asset's own (its definition's spec).
    `output_hash` overrides the file hash where file bytes are not reproducible (checkpoints).
    `sources` names the raw sources this output derives from: their licenses and compliance
    verdicts are recorded in the manifest and shown as `licenses` / `data_use` metadata. By
    default they are inherited from the inputs' manifests, so licenses propagate down the lineage
    without each asset naming them; pass it to start a lineage (raw_corpus) or to narrow it.
    `extra_inputs` ("label" -> (data version, output URI)) adds inputs Dagster does not pass in
    (a run's init weights: another partition of training_run), so the audit walks on through them.
    """
    if code_version is None:  # the version Dagster records for this asset (core.code_versions.versioned)
        code_version = context.assets_def.specs_by_key[context.asset_key].code_version
    digest = output_hash or staged.content_hash()
    versions, uris = input_records(context)
    for label, (version, uri) in (extra_inputs or {}).items():
        versions[label], uris[label] = version, uri
    if sources is None:
        sources = sources_behind(staged.storage, uris.values())
    licenses = data_use = None
    if sources:
        registry = load_sources()
        licenses = licenses_for_sources(registry, sources)
        data_use = data_use_for_sources(staged.storage, registry, sources, staged=staged)
    manifest = build_manifest(
        asset=context.asset_key.to_user_string(),
        partition=context.partition_key if context.has_partition_key else None,
        recipe=recipe,
        code_version=code_version,
        inputs=versions,
        input_uris=uris,
        output_uri=staged.final_uri,
        output_hash=digest,
        stats=stats,
        run_id=context.run.run_id,
        devices=devices,
        licenses=licenses,
        data_use=data_use,
        # what consumers check before reading (core/output_check.py); the hash only where it is the file hash
        extra={**(manifest_extra or {}), INVENTORY_FIELD: inventory(staged.path, None if output_hash else digest)},
    )
    staged.write_json(manifest, MANIFEST_NAME)
    # Plots first (the UI keeps this order): each full plot then its thumbnail; then stats, the asset's
    # own numbers, licenses, and what made the output as one structured entry at the end.
    flat = manifest_metadata(manifest)
    provenance = dg.MetadataValue.json(flat.pop("provenance"))
    summary = {k: flat.pop(k) for k in list(flat) if k in (stats or {})}
    metadata = {
        **(plot_previews(extra_metadata or {}) if previews else {}),
        **summary,
        **(extra_metadata or {}),
        **flat,
        "provenance": provenance,
        "provenance_manifest": dg.MetadataValue.path(f"{staged.final_uri}/{MANIFEST_NAME}"),
    }
    return dg.MaterializeResult(metadata=metadata, data_version=dg.DataVersion(digest))
