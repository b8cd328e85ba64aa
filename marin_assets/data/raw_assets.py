"""Raw corpora in Dagster: one partition per source, its compliance gate, and the sensor watching it.

raw_corpus[source] writes raw/<source>/inventory.json (files, sizes, sha256, compliance verdict).
Its data version is the content hash of the source's files, so a changed file makes exactly that
source's downstream stale. The blocking `compliance` check keeps an uncleared source out of
everything downstream.
"""

import dagster as dg

from marin_assets.core import layout
from marin_assets.core.code_versions import code_version
from marin_assets.core.hashing import hash_json
from marin_assets.data import compliance as compliance_rules
from marin_assets.data import source_files as file_listing
from marin_assets.data import watch
from marin_assets.data.cleaning_recipe import load_cleaning_recipe
from marin_assets.data.compliance import (
    INVENTORY_NAME, committed_verdict, compliance_verdict, load_policy, source_inventory,
)
from marin_assets.data.partitions import SOURCE_PARTITIONS
from marin_assets.data.source_roots import require_files_within
from marin_assets.data.sources import load_sources
from marin_assets.resources.recording import record_output
from marin_assets.resources.storage import StorageResource

# The registry entry of each source is recorded per materialization (manifest recipe), not here:
# editing one source's entry must not make every source's raw_corpus look changed.
CODE_VERSION = code_version("raw_corpus", compliance_rules, file_listing)


@dg.observable_source_asset(
    partitions_def=SOURCE_PARTITIONS,
    group_name="data",
    description="The files of each registered source, as they are now; observing them records their content hash.",
)
def source_files(context) -> dg.DataVersionsByPartition:
    # Observed by `marin materialize-all` (and from the UI): a changed file gives its partition a new
    # data version, which is what makes exactly that source's raw_corpus stale in Dagster.
    return dg.DataVersionsByPartition(
        {spec.name: source_inventory(spec)["content_hash"] for spec in load_sources().sources}
    )


@dg.asset(
    partitions_def=SOURCE_PARTITIONS,
    deps=[source_files],
    group_name="data",
    code_version=CODE_VERSION,
    kinds={"python"},
    description="Inventory of one raw source (files, sha256, license verdict); data version = hash of its files.",
)
def raw_corpus(context: dg.AssetExecutionContext, storage: StorageResource) -> dg.MaterializeResult:
    registry = load_sources()
    spec = registry.get(context.partition_key)
    # A glob can reach outside the allowed roots through a symlinked folder: refuse before reading.
    require_files_within(spec.name, file_listing.list_source_files(spec), registry.allowed_roots)
    inventory = source_inventory(spec)
    verdict = compliance_verdict(spec.name, spec, inventory, load_policy())
    for problem in verdict.messages:
        context.log.warning(f"source {spec.name}: {problem}")
    with storage.storage.atomic_dir(layout.RAW, spec.name) as staged:
        staged.write_json({**inventory, "license": spec.license, "compliance": verdict.as_json()}, INVENTORY_NAME)
        return record_output(
            context,
            staged,
            recipe=spec,
            code_version=CODE_VERSION,
            stats={"files": len(inventory["files"]), "bytes": sum(f["size"] for f in inventory["files"])},
            output_hash=inventory["content_hash"],
            extra_metadata={"license": spec.license, "compliance_cleared": verdict.cleared,
                            "compliance": verdict.summary()},
            sources=[spec.name],
        )


@dg.asset_check(
    asset=raw_corpus,
    name="compliance",
    blocking=True,
    partitions_def=SOURCE_PARTITIONS,
    description="License in the allowlist, provenance filled in, files match provenance.checksum.",
)
def compliance(context: dg.AssetCheckExecutionContext, storage: StorageResource) -> dg.AssetCheckResult:
    source = context.partition_key
    storage.storage.require_committed(layout.RAW, source)
    verdict = committed_verdict(storage.storage, source)  # the same decision the cleaning and training gates use
    inventory = storage.storage.read_json(layout.RAW, source, INVENTORY_NAME)
    spec = load_sources().get(source)
    return dg.AssetCheckResult(
        passed=verdict.cleared,
        severity=dg.AssetCheckSeverity.ERROR,
        description=verdict.summary(),
        metadata={
            "license": spec.license,
            "content_hash": inventory["content_hash"],
            "declared_checksum": (spec.provenance.checksum if spec.provenance else None) or "none",
            "problems": dg.MetadataValue.json(verdict.messages),
            "reasons": dg.MetadataValue.json(verdict.as_json()["reasons"]),
        },
    )


# The per-source assets share the source's partition, so a changed source re-runs exactly its partitions.
# On by default: re-ingesting a changed source is the lineage promise, and it is cheap when nothing changed.
@dg.sensor(target=dg.AssetSelection.assets(raw_corpus, "cleaned_documents"), minimum_interval_seconds=60,
           default_status=dg.DefaultSensorStatus.RUNNING, description="Re-ingest sources whose files changed.")
def source_files_sensor(context: dg.SensorEvaluationContext):
    previous = watch.parse_cursor(context.cursor)
    current = dict(previous)
    for spec in load_sources().sources:
        try:
            current[spec.name] = watch.source_fingerprint(spec)
        except Exception as exc:  # one unreachable location must not stop watching the others
            context.log.warning(f"source {spec.name}: cannot list {spec.uri}: {exc}")
    changed = watch.changed_sources(previous, current)
    context.update_cursor(watch.dump_cursor(current))
    if not changed:
        return dg.SkipReason("no source files changed")
    requests = [dg.RunRequest(run_key=f"{name}:{current[name]}", partition_key=name) for name in changed]
    # dedup scope global: every partition's dedup reads every source, so every partition is stale.
    peers = watch.peers_to_reclean(changed, current, load_cleaning_recipe().dedup.scope)
    stamp = hash_json({name: current[name] for name in changed})
    return requests + [dg.RunRequest(run_key=f"{name}:peers:{stamp}", partition_key=name,
                                     asset_selection=[dg.AssetKey("cleaned_documents")]) for name in peers]


RAW_ASSETS = [source_files, raw_corpus]
RAW_CHECKS = [compliance]
RAW_SENSORS = [source_files_sensor]
