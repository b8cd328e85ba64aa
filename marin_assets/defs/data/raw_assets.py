"""Raw corpora in Dagster: one partition per source, its compliance gate, and the sensor watching it.

raw_corpus[source] writes raw/<source>/inventory.json (files, sizes, sha256, compliance verdict).
Its data version is the content hash of the source's files, so a changed file makes exactly that
source's downstream stale. The blocking `compliance` check keeps an uncleared source out of
everything downstream.
"""

import dagster as dg

from marin_assets.core import layout
from marin_assets.lineage.code_versions import versioned
from marin_assets.core.hashing import hash_json
from marin_assets.data.sources import source_files as file_listing
from marin_assets.data.sources import watch
from marin_assets.data.clean.cleaning_recipe import load_cleaning_recipe
from marin_assets.data.sources.compliance import INVENTORY_NAME, committed_verdict, compliance_verdict, load_policy
from marin_assets.data.sources.source_inventory import source_inventory
from marin_assets.data.sources.source_roots import require_files_within
from marin_assets.data.sources.source_registry import load_sources
from marin_assets.core.metadata_tables import metadata_table
from marin_assets.lineage.recording import record_output
from marin_assets.core.stage_job_names import STAGE_JOB_TAG, run_tags
from marin_assets.resources.storage_resource import StorageResource

# The registry entry of each source is recorded per materialization (manifest recipe), not here:
FINGERPRINT_KEY = "source_fingerprint"  # raw_corpus metadata: the file listing it ingested (watch.py)
CLEANED_KEY = dg.AssetKey("cleaned_documents")
RAW_KEY = dg.AssetKey("raw_corpus")


def build_raw_assets(partitions: dg.PartitionsDefinition) -> tuple[list, list]:
    """(source_files and raw_corpus, the compliance check) over the sources' partitions."""
    observed = dg.observable_source_asset(
        partitions_def=partitions,
        group_name="data",
        description="The files of each registered source, as they are now; observing them records their content hash.",
    )(source_files)
    raw = versioned("raw_corpus")(dg.asset(
        partitions_def=partitions,
        deps=[observed],
        group_name="data",
        kinds={"python"},
        description="Inventory of one raw source (files, sha256, license verdict); data version = hash of its files.",
    )(raw_corpus))
    check = dg.asset_check(
        asset=raw,
        name="compliance",
        blocking=True,
        partitions_def=partitions,
        description="License in the allowlist, provenance filled in, files match provenance.checksum.",
    )(compliance)
    return [observed, raw], [check]


def source_files(context) -> dg.DataVersionsByPartition:
    # Observed by `marin materialize-all` (and from the UI): a changed file gives its partition a new
    # data version, which is what makes exactly that source's raw_corpus stale in Dagster.
    return dg.DataVersionsByPartition(
        {spec.name: source_inventory(spec)["content_hash"] for spec in load_sources().sources}
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
            stats={"files": len(inventory["files"]), "bytes": sum(f["size"] for f in inventory["files"])},
            output_hash=inventory["content_hash"],
            extra_metadata={"license": spec.license, "compliance_cleared": verdict.cleared,
                            "compliance": verdict.summary(),
                            # what the sensor compares with: no re-ingest of files already ingested
                            FINGERPRINT_KEY: watch.source_fingerprint(spec) or ""},
            sources=[spec.name],
        )


def reason_rows(verdict) -> list[dict]:
    """One row per reason of a compliance verdict; its values as "key=value" text ("-" when none)."""
    rows = []
    for reason in verdict.as_json()["reasons"]:
        details = {k: v for k, v in reason.items() if k not in ("code", "message")}
        text = "; ".join(f"{k}={', '.join(map(str, v)) if isinstance(v, list) else v}" for k, v in details.items())
        rows.append({"code": reason["code"], "message": reason["message"], "details": text or "-"})
    return rows


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
            # tables, not JSON: one row per problem; a reason's own values (license, fields...) in `details`
            "problems": metadata_table([{"problem": m} for m in verdict.messages], columns=["problem"]),
            "reasons": metadata_table(reason_rows(verdict), columns=["code", "message", "details"]),
        },
    )


def ingested_fingerprint(instance: dg.DagsterInstance, source: str) -> str | None:
    """The fingerprint of the files the latest raw_corpus[source] ingested; None if it never ran here."""
    records = instance.fetch_materializations(
        dg.AssetRecordsFilter(asset_key=RAW_KEY, asset_partitions=[source]), limit=1
    ).records
    value = records[0].asset_materialization.metadata.get(FINGERPRINT_KEY) if records else None
    return (str(value.value) or None) if value is not None else None  # "": it had no files


def build_source_files_sensor(job_name: str) -> dg.SensorDefinition:
    """The sensor, launching through the stage job `job_name` (the runs list and timeline name it)."""

    # The per-source assets share the source's partition, so a changed source re-runs exactly its partitions.
    # On by default: re-ingesting a changed source is the lineage promise, and it is cheap when nothing changed.
    @dg.sensor(name="source_files_sensor", job_name=job_name, minimum_interval_seconds=60,
               default_status=dg.DefaultSensorStatus.RUNNING,
               description="Re-ingest (raw_corpus + cleaned_documents) each source whose files changed since its "
               "latest raw_corpus materialization; checks every 60 s. Turn it off on the Automation page or "
               "with `dagster sensor stop source_files_sensor -m marin_assets.definitions`.")
    def source_files_sensor(context: dg.SensorEvaluationContext):
        previous = watch.parse_cursor(context.cursor)
        current = dict(previous)
        for spec in load_sources().sources:
            try:
                current[spec.name] = watch.source_fingerprint(spec)
            except Exception as exc:  # one unreachable location must not stop watching the others
                context.log.warning(f"source {spec.name}: cannot list {spec.uri}: {exc}")
                continue
            if spec.name not in previous:  # first sight (a fresh cursor): what was ingested already counts as seen
                seen = ingested_fingerprint(context.instance, spec.name)
                if seen is not None:
                    previous[spec.name] = seen
        changed = watch.changed_sources(previous, current)
        context.update_cursor(watch.dump_cursor(current))
        if not changed:
            return dg.SkipReason("no source files changed since they were last ingested")
        requests = [
            dg.RunRequest(run_key=f"{name}:{current[name]}", partition_key=name,
                          asset_selection=[RAW_KEY, CLEANED_KEY],
                          tags={**run_tags(CLEANED_KEY, name), STAGE_JOB_TAG: job_name})
            for name in changed
        ]
        # dedup scope global: every partition's dedup reads every source, so every partition is stale.
        peers = watch.peers_to_reclean(changed, current, load_cleaning_recipe().dedup.scope)
        stamp = hash_json({name: current[name] for name in changed})
        return requests + [
            dg.RunRequest(run_key=f"{name}:peers:{stamp}", partition_key=name, asset_selection=[CLEANED_KEY],
                          tags={**run_tags(CLEANED_KEY, name), STAGE_JOB_TAG: job_name})
            for name in peers
        ]

    return source_files_sensor

